"""The launcher of a row-wise candidate: place each input in the row layout (views; a copy only when
strides cannot express it), allocate outputs, launch the kernels, return views in the reference's shape.

A configuration is {"TILE": elements per program, "num_warps": the most warps}: BLOCK is the row's
next power of two capped at TILE, and rows shorter than TILE share a program (ROWS = TILE // BLOCK),
so a [4096, 16384] softmax gets one row per program and a [129, 3] one gets 64 rows per program."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from opforge.codegen.emit.rows import (AS_ROWS_PY, head_lines, leaf_names, output_allocations, reduced_lines,
                                      return_lines)
from opforge.backends.triton.emit.exprs import FP8_HELPERS
from opforge.backends.triton.emit.rowwise.accs import HELPERS, wrap
from opforge.backends.triton.emit.rowwise.scans import HELPERS as SCAN_HELPERS
from opforge.backends.triton.emit.rowwise.text import KernelText, safe, view_name
from opforge.codegen.families.rowwise.layout import COMBINE, Plan, acc_dtype

# Best guess first: 1024 fp32 per program keeps 4 warps at 8 values per thread.
SPACE = ({"TILE": 1024, "num_warps": 4}, {"TILE": 2048, "num_warps": 8}, {"TILE": 4096, "num_warps": 8},
         {"TILE": 512, "num_warps": 4}, {"TILE": 256, "num_warps": 2})
LOCALS = {"shape", "dims", "kept", "n_rows", "n_cols", "block", "rows", "warps", "glob", "dev", "math", "torch", "triton"}

HELPERS_PY = AS_ROWS_PY + '''def _tiles(n_rows, n_cols):
    """Column block, rows per program and warps for a TILE-element program."""
    block = min(TILE, max(16, triton.next_power_of_2(n_cols)))
    rows = max(1, min(TILE // block, triton.next_power_of_2(n_rows)))
    return block, rows, max(1, min(NUM_WARPS, block * rows // 256))

'''
PART_HELPER = '''
def _as_part_rows(t, shape, dims, k, outer):
    """Like _as_rows for a `t` that varies along only the first k (outer) or last k (inner) of the
    reduced dims: [rows, the columns it varies along], and how many columns each one repeats over
    (outer: read at c // inner) or how many there are (inner: read at c % inner). No copy of the
    repeats; only the varying part is made rows-major."""
    t = t.expand(shape).movedim(dims, tuple(range(len(shape) - len(dims), len(shape))))
    lead = len(shape) - len(dims)
    keep = set(range(lead, lead + k) if outer else range(len(shape) - k, len(shape)))
    drop = [d for d in range(lead, len(shape)) if d not in keep]
    inner = math.prod(t.shape[d] for d in (drop if outer else keep))
    t = t[tuple(0 if d in drop else slice(None) for d in range(len(shape)))]
    return t.reshape(-1, math.prod(t.shape[lead:])), inner

'''


def source(plan: Plan, kernels: list[KernelText], config: dict) -> str:
    """Helpers, kernels and the launcher: everything between the header and ModelNew."""
    config_lines = (reduced_lines(plan) + "# One of the expert's tuning configurations: elements per program, most warps.\n"
                    f"TILE, NUM_WARPS = {config['TILE']}, {config['num_warps']}\n")
    helpers_py = HELPERS_PY + (PART_HELPER if plan.partial else "")
    return "\n\n" + jit_source(kernels) + config_lines + "\n" + helpers_py + "\n" + launcher(plan, kernels)


def jit_source(kernels: list[KernelText]) -> str:
    """The @triton.jit helpers the kernels call, then the kernels."""
    helpers = sorted({h for k in kernels for h in k.helpers})
    return "\n\n".join([{**HELPERS, **SCAN_HELPERS, **FP8_HELPERS}[h] for h in helpers] + [k.source for k in kernels])


@dataclass(frozen=True)
class LaunchStyle:
    """What differs between the Triton-language backends' row-wise launchers."""

    tiles: str  # the line that sets block and rows (and what `launch` uses besides)
    launch: Callable[[KernelText], str]  # one kernel's launch line
    unit_cols: bool = False  # column-varying inputs are passed with column stride 1 (_unit_cols)


def launcher(plan: Plan, kernels: list[KernelText], style: LaunchStyle | None = None) -> str:
    style = style or TRITON
    args, names = leaf_names(plan, LOCALS)
    used = [n for n in names if plan.is_leaf(n) and any(view_name(n) == v for k in kernels for _, v in k.params)]
    cv = {n: plan.cv[n] for n in used}
    lines = head_lines(plan, args, names, used)
    for n in used:
        if n in plan.partial:
            k, outer = plan.partial[n]
            lines.append(f"    {view_name(n)}, {view_name(n)}_inner = _as_part_rows({names[n]}, shape, dims, {k}, {outer})")
        else:
            lines.append(f"    {view_name(n)} = _as_rows({names[n]}, {'shape' if cv[n] else 'kept'}, dims)")
        if style.unit_cols and cv[n]:
            lines.append(f"    {view_name(n)} = _unit_cols({view_name(n)})")
    lines += output_allocations(plan) + _buffers(plan, kernels)
    lines.append(style.tiles)
    lines += [style.launch(k) for k in kernels]
    return "\n".join(lines + return_lines(plan)) + "\n"


def _buffers(plan: Plan, kernels: list[KernelText]) -> list[str]:
    """The per-row partials of the full reductions, and the global values the apply kernel loads."""
    lines = []
    for k in kernels:
        for param, value in k.params:
            if value.startswith("part_") and k.grid == "rows":
                dtype = _partial_dtype(plan, param)
                lines.append(f"    {value} = torch.empty(n_rows, dtype={dtype}, device=dev)  # per-row partials")
    n_glob = max((len(k.globals) for k in kernels), default=0)
    if n_glob:
        lines.append(f"    glob = torch.empty({n_glob}, dtype=torch.float32, device=dev)  # full reductions, for the apply kernel")
    return lines


def _partial_dtype(plan: Plan, param: str):
    for node, red in plan.reduces.items():
        if red.full and param in (f"{safe(node.name)}_part_ptr", f"{safe(node.name)}_mean_part_ptr"):
            return acc_dtype(COMBINE[red.kind], red.source, node)
    raise KeyError(param)


def launch_args(kernel: KernelText) -> list[str]:
    """What the launcher passes for each of the kernel's parameters, in order."""
    counts = {"numel": "n_rows * n_cols", "size0": "shape[0]"}
    return [counts.get(value, value) for _, value in kernel.params]


def _launch(kernel: KernelText) -> str:
    args = launch_args(kernel)
    if kernel.grid == "one":
        return wrap(f"{kernel.name}[(1,)]", args + ["BLOCK=min(1024, max(16, triton.next_power_of_2(n_rows)))",
                                                    "num_warps=4"], "", indent="    ")
    return wrap(f"{kernel.name}[(triton.cdiv(n_rows, rows),)]", args + ["BLOCK=block", "ROWS=rows", "num_warps=warps"],
                "", indent="    ")


TRITON = LaunchStyle("    block, rows, warps = _tiles(n_rows, n_cols)", _launch)
