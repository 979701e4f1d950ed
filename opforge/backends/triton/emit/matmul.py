"""The Triton emitter of the matmul family: the tuning space, the launcher (operand views replayed
from run-time sizes, epilogue tensors expanded to the result) and the candidate."""
from __future__ import annotations

import re

from opforge.codegen.candidate import Kernel, model_new
from opforge.backends.triton.emit.common import header
from opforge.backends.triton.emit.matmul_epilogue import Epilogue
from opforge.backends.triton.emit.matmul_kernel import fill, kernel_source
from opforge.codegen.families.matmul.plan import Plan
from opforge.codegen.families.matmul.shapes import replay, unreplay
from opforge.codegen.lower import Lowered

# Best guess first; fp32 timings on an H200 (do_bench median, L2 flushed), one run each, from the
# sweep in benchmarks/expert_matmul_sweep.py.
# 64x64x32 / 4 warps: the all-rounder, and best of 7 tiles on matrix-vector [8192, 8192] @ [8192, 1]
#   (0.26 ms; 64x16x32 took 0.37); small tiles also keep the CPU interpreter quick (512^3: ~5 s).
# 128x128x32 / 8 warps: 1.5x over 64x64 on Linear 4096 + GELU (6.5 vs 9.9 ms); even on 2048^3 mm.
# 64x128: wide N, 6.6 ms on that Linear; 128x128x64 / 2 stages: 6.3 ms there, 5% behind on a plain mm.
# 32x32: more programs for small problems. SKINNY_M goes first when M <= 16: 2.4x over 64x64 on
#   [1, 8192] @ [8192, 8192] (0.114 vs 0.272 ms).
SPACE = (
    {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 2},
    {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 2},
)
SKINNY_M = {"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 1, "num_warps": 4, "num_stages": 3}


# -- rendering -------------------------------------------------------------------------------------------

def _launcher_source(plan: Plan, config: dict) -> str:
    s, b = plan.sizes, "batch, " if plan.batched else ""
    final = f"out.reshape(*{plan.rows}_rows, N)" if plan.rows else replay(plan.out, s)  # the reference's shape
    lines = []
    if plan.rows:
        r = plan.rows
        lines += ["# Leading dims beyond the traced 2-D input fold into rows (nn.Linear, torch.matmul).",
                  f"{r}_rows = {r}.shape[:-1]", f"{r} = {r}.reshape(-1, {r}.shape[-1])"]
    lines += [f"lhs = {replay(plan.lhs, s, {})}  # [{b}M, K]", f"rhs = {replay(plan.rhs, s, {})}  # [{b}K, N]",
              f"{b}M, K = lhs.shape", "N = rhs.shape[-1]",
              f"out = torch.empty(({b}M, N), dtype={plan.out_dtype}, device=lhs.device)",
              "if out.numel() == 0:", f"    return {final}"]
    if plan.epilogue.leaves:
        lines.append("# Epilogue tensors broadcast to the result's shape: stride 0 where they repeat.")
    for leaf in plan.epilogue.leaves:
        frame = ", ".join(s.dim(d) for d in leaf.frame.dims)
        t = leaf.tracked.base
        tensor = f"{t}.reshape(-1, {t}.shape[-1])" if plan.folds_rows(leaf) else replay(leaf.tracked, s, {})
        lines.append(f"{leaf.name} = {tensor}.expand({frame}){unreplay(leaf.frame, s)}")
    tensors = ["lhs", "rhs", "out"] + [leaf.name for leaf in plan.epilogue.leaves]
    c = config
    tiles = f"triton.cdiv(M, {c['BLOCK_M']}) * triton.cdiv(N, {c['BLOCK_N']})"
    launch = tensors + ["M", "N", "K"] + [f"*{t}.stride()" for t in tensors]
    launch += [f"{k}={c[k]}" for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages")]
    lines += [f"grid = ({tiles}, batch)" if b else f"grid = ({tiles},)", f"{plan.kernel}[grid](",
              fill(launch, "    ") + ")", f"return {final}"]
    head = (f"\n\n# Tiles {c['BLOCK_M']}x{c['BLOCK_N']}x{c['BLOCK_K']}, GROUP_M={c['GROUP_M']}, "
            f"{c['num_warps']} warps, {c['num_stages']} stages: one configuration of the tuning space.\n")
    body = "\n".join("    " + line for item in lines for line in item.split("\n"))
    return head + f"def {plan.launcher}({', '.join(plan.args)}):\n" + body + "\n"


def generate(lowered: Lowered, title: str, shapes: dict) -> Kernel:
    """A fused matmul kernel for a graph with one aten.mm/aten.bmm; Unsupported names what is not."""
    name = re.sub(r"\W", "_", title).strip("_") or "op"
    plan = Plan(lowered, "op_" + name if name[0].isdigit() else name, Epilogue)

    def render(config: dict) -> str:
        return (header(f"Matmul kernel for {title}", "matmul", lowered) + kernel_source(plan)
                + _launcher_source(plan, config) + model_new(lowered, plan.launcher, shapes))

    space = (SKINNY_M,) + SPACE if plan.skinny else SPACE + (SKINNY_M,)
    return Kernel("matmul", space, render)
