"""The CUDA emitter of the row-wise family: reductions and scans with their elementwise prologue
and epilogue fused, reading the same Plan as the Triton emitter (families/rowwise). kernel.py writes
the row kernel (a block per row), finish.py the single-block kernel of full reductions (a loss's
mean), reduce.py the accumulators and block reductions, launch.py the launchers.

Not emitted here (Unsupported, so the Triton emitter or an LLM takes them): cummax, cummin and
logcumsumexp (scans of pairs), flips, inputs that repeat along part of the row (GroupNorm's weight),
outputs that need a full reduction per element (the apply kernel), float64 and Python-number inputs."""
from __future__ import annotations

from opforge.codegen.candidate import Kernel, model_new
from opforge.backends.cuda.emit.common import c_name, check_inputs, cuda_module, header
from opforge.backends.cuda.emit.exprs import prelude
from opforge.backends.cuda.emit.rowwise.finish import FinishWriter
from opforge.backends.cuda.emit.rowwise.kernel import CudaRowWriter, KernelText
from opforge.backends.cuda.emit.rowwise.launch import ROWS_ARG_PY, c_launcher, launcher
from opforge.backends.cuda.emit.rowwise.reduce import PRELUDE as REDUCE_PRELUDE
from opforge.codegen.emit.rows import reduced_lines
from opforge.codegen.families.rowwise.layout import FLIP, MOMENTS, Plan
from opforge.codegen.families.rowwise.plan import analyse
from opforge.codegen.lower import Lowered, Unsupported

# Best guess first: 256 threads (8 warps) per row; wider blocks for long rows, narrower for short ones.
SPACE = ({"THREADS": 256}, {"THREADS": 512}, {"THREADS": 1024}, {"THREADS": 128})


def generate(lowered: Lowered, title: str, shapes: dict) -> Kernel:
    """A candidate per tuning configuration; raises Unsupported naming what this emitter cannot fuse."""
    check_inputs(lowered)
    plan = analyse(lowered, c_name(title, "rows"))
    _check(plan)
    write(plan, SPACE[0]["THREADS"])  # every Unsupported is raised here, before any render

    def render(config: dict) -> str:
        kernels = write(plan, config["THREADS"])
        code = ("".join("\n" + k.source for k in kernels)
                + "".join(c_launcher(k, config["THREADS"]) for k in kernels))
        source = prelude(code) + REDUCE_PRELUDE + code
        return (header(f"Row-wise CUDA kernels for {title}", "rowwise", lowered) + cuda_module(source)
                + _constants(plan, config) + "\n" + ROWS_ARG_PY + "\n" + launcher(plan, kernels)
                + model_new(lowered, plan.title, shapes))

    return Kernel("rowwise", SPACE, render)


def _check(plan: Plan) -> None:
    if any(str(n.target) == FLIP for n in plan.lowered.graph.nodes):
        raise Unsupported("aten.flip in a CUDA row kernel")
    if plan.partial:
        raise Unsupported("an input that repeats along part of the row in a CUDA row kernel")
    if any(o.late for o in plan.outputs):
        raise Unsupported("an output that needs a full reduction per element (the apply kernel)")
    moments = sorted({str(n.target) for n, r in plan.reduces.items() if r.full and r.kind in MOMENTS})
    if moments:
        raise Unsupported(f"{', '.join(moments)} over every dim in a CUDA row kernel (its finish kernel "
                          "combines one partial per row, var/std need two)")
    pairs = sorted(kind for kind in set(plan.scans.values()) if kind not in ("cumsum", "cumprod"))
    if pairs:
        raise Unsupported(f"{', '.join(pairs)} in a CUDA row kernel (its block scan carries one value)")


def write(plan: Plan, threads: int) -> list[KernelText]:
    """The kernels in launch order: the row kernel, then the finish kernel when there are full reductions."""
    fulls = [n for n, r in plan.reduces.items() if r.full]
    rows = [(i, o) for i, o in enumerate(plan.outputs) if o.kind != "scalar"]
    kernels = [CudaRowWriter(plan, f"{plan.title}_row_kernel", threads).write(rows, fulls)]
    if fulls:
        kernels.append(FinishWriter(plan, f"{plan.title}_finish_kernel").write(threads))
    return kernels


def _constants(plan: Plan, config: dict) -> str:
    return (reduced_lines(plan)
            + f"# THREADS={config['THREADS']}: one of the expert's tuning configurations (threads per row at most).\n")
