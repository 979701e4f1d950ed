"""The Python side of a pointwise launcher, shared by every backend: the inputs viewed and broadcast
to the output's shape, the outputs allocated, and the index-mapped region's inputs, shapes and
kernel arguments. A backend's pointwise.py writes how the kernel is launched."""
from __future__ import annotations

from opforge.codegen.families.pointwise.plan import MAX_RANK, Plan


def prologue(plan: Plan, leaves: list, out_dtypes: list, region: str, roots: str, result: str) -> str:
    """The launcher's lines from its inputs to `dims`: the inputs viewed (x0, x1...; `region`: the
    region's lines) and broadcast to `shape` (with the region's `roots`, at most MAX_RANK dims), the
    outputs allocated, `result` returned at once when there are no elements."""
    views = "\n".join(f"    x{i} = {plan.leaves[leaf][1]}" for i, leaf in enumerate(leaves))
    views = "\n".join(filter(None, [views, region]))
    xs = ", ".join(f"x{i}" for i in range(len(leaves)))
    device = "x0" if leaves else "g0"
    allocs = "\n".join(f"    out{i} = torch.empty(shape, dtype={t}, device={device}.device)"
                       for i, t in enumerate(out_dtypes))
    return f'''{views}
    leaves = [{xs}]
    shape = torch.broadcast_shapes(*(x.shape for x in leaves){roots})
    if len(shape) > {MAX_RANK}:
        raise ValueError("pointwise kernel supports up to {MAX_RANK} dims")
{allocs}
    n = math.prod(shape)
    if n == 0:
        return {result}
    dims = [1] * ({MAX_RANK} - len(shape)) + list(shape)
'''


def region_params(plan: Plan) -> list[str]:
    """Sizes and strides of the region's inputs (gz, gs), sizes of its nodes (z), in that order."""
    region = plan.region
    if not region:
        return []
    out = []
    for j, leaf in enumerate(region.leaves):
        rank = region.rank[leaf]
        out += [f"gz{j}_{d}" for d in range(rank)] + [f"gs{j}_{d}" for d in range(rank)]
    return out + [f"z{k}_{d}" for k, node in enumerate(region.nodes) for d in range(region.rank[node])]


def region_launch(plan: Plan, contiguous: bool = False) -> tuple[str, str, str, str]:
    """The launcher's part for index maps: (lines viewing the region's inputs, checking their ranks
    and computing every node's shape; the roots' shapes for the broadcast; the inputs' names; the
    kernel's size and stride arguments, as region_params orders them). `contiguous`: the inputs are
    copied contiguous (the CUDA launcher contract), else read through their strides."""
    region = plan.region
    if not region:
        return "", "", "", ""
    lines, extra = [], []
    for j, leaf in enumerate(region.leaves):
        rank = region.rank[leaf]
        lines += [f"    g{j} = {plan.leaves[leaf.name][1]}{'.contiguous()' if contiguous else ''}",
                  f"    if g{j}.dim() != {rank}:",
                  f"        raise ValueError(f\"index-mapped input {j} has {{g{j}.dim()}} dims; this kernel was built for {rank}\")"]
        extra += [f"*g{j}.shape", f"*g{j}.stride()"]
    lines += [f"    {name} = {code}" for name, code in region.shapes()]
    extra += [f"*z{k}" for k, node in enumerate(region.nodes) if region.rank[node]]
    roots = "".join(f", z{region.nodes.index(r)}" for r in region.roots)
    pointers = ", ".join(f"g{j}" for j in range(len(region.leaves)))
    return "\n".join(lines), roots, pointers, "".join(f", {e}" for e in extra)
