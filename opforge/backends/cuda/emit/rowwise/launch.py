"""The launchers of a row-wise CUDA candidate: an extern "C" launcher per kernel (its block size
fitted to the row: the config's THREADS at most, whole warps, no more than the row needs), and the
Python launcher that places each input in the row layout, allocates the outputs, calls them and
returns views in the reference's shape.

An input reaches a kernel as a contiguous tensor and the (row, column) strides of its [rows, cols]
view into it: 0 where it repeats, so a broadcast weight is never copied out to the row's length."""
from __future__ import annotations

from opforge.backends.cuda.emit.rowwise.kernel import MAX_BLOCKS, KernelText
from opforge.codegen.emit.rows import AS_ROWS_PY, head_lines, leaf_names, output_allocations, return_lines
from opforge.codegen.families.rowwise.layout import COMBINE, Plan, acc_dtype

LOCALS = {"shape", "dims", "kept", "n_rows", "n_cols", "dev", "math", "torch"}
ROWS_ARG_PY = AS_ROWS_PY + '''
def _rows_arg(t, shape, dims):
    """`t` as a kernel argument in the row layout: a contiguous tensor and the row and column strides
    of its [rows, cols] view (a copy only where the view's strides cannot reach into it)."""
    base = t.contiguous()
    view = _as_rows(base, shape, dims)  # a copy (when reshape needs one) is contiguous: it is the argument
    return (view if view.is_contiguous() else base), view.stride(0), view.stride(1)

'''


def c_launcher(kernel: KernelText, threads: int) -> str:
    params = ", ".join(f"{t} {n}" for t, n, _ in kernel.params)
    args = ", ".join(n for _, n, _ in kernel.params)
    fit = "n_rows" if kernel.grid == "one" else "n_cols"
    blocks = "1" if kernel.grid == "one" else f"(unsigned)(n_rows < {MAX_BLOCKS} ? n_rows : {MAX_BLOCKS})"
    return f'''
extern "C" void {kernel.name.removesuffix("_kernel")}_launch({params}, cudaStream_t stream) {{
    if (n_rows <= 0) return;
    // whole warps, no more than the {fit.removeprefix("n_")} need
    const int threads = {fit} < {threads} ? (int)(({fit} + 31) / 32) * 32 : {threads};
    {kernel.name}<<<{blocks}, threads, 0, stream>>>({args});
}}
'''


def launcher(plan: Plan, kernels: list[KernelText]) -> str:
    args, names = leaf_names(plan, LOCALS)
    passed = {value for k in kernels for _, _, value in k.params}
    used = [n for n in names if plan.is_leaf(n) and f"{n.name}_2d" in passed]
    lines = head_lines(plan, args, names, used)
    lines += [f"    {n.name}_2d, {n.name}_2d_sr, {n.name}_2d_sc = _rows_arg({names[n]}, "
              f"{'shape' if plan.cv[n] else 'kept'}, dims)" for n in used]
    lines += output_allocations(plan) + _partials(plan, kernels)
    counts = {"numel": "n_rows * n_cols", "size0": "shape[0]"}
    for k in kernels:
        call = [counts.get(value, value) for _, _, value in k.params]
        lines.append(f"    _lib.{k.name.removesuffix('_kernel')}_launch({', '.join(call)})")
    return "\n".join(lines + return_lines(plan)) + "\n"


def _partials(plan: Plan, kernels: list[KernelText]) -> list[str]:
    lines = []
    parts = {value for k in kernels if k.grid == "rows" for _, _, value in k.params if value.startswith("part_")}
    for node, red in plan.reduces.items():
        if red.full and f"part_{node.name}" in parts:
            dtype = acc_dtype(COMBINE[red.kind], red.source, node)
            lines.append(f"    part_{node.name} = torch.empty(n_rows, dtype={dtype}, device=dev)  # per-row partials")
    return lines
