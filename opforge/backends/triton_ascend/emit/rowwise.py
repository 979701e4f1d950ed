"""The Triton-Ascend emitter of a row-wise Plan: the Triton writer's passes, accumulators, finish
kernel and launcher (emit/triton/rowwise/), with Ascend's program mapping. A row kernel runs on a
grid of at most NUM_CORES programs, each looping over blocks of ROWS rows
(`for blk in tl.range(pid, n_row_blocks, NUM_CORES)`); every column-varying input reaches it with
column stride 1 (the launcher copies a strided one once), so its loads are contiguous row segments;
TILE (elements per [ROWS, BLOCK] tile) comes from the unified-buffer rule (common.py)."""
from __future__ import annotations

import re

from opforge.codegen.candidate import Kernel, model_new
from opforge.codegen.emit.rows import AS_ROWS_PY, reduced_lines
from opforge.backends.triton.emit.rowwise import identifier
from opforge.backends.triton.emit.rowwise import kernel as rowwise_kernel
from opforge.backends.triton.emit.rowwise.accs import wrap
from opforge.backends.triton.emit.rowwise.kernel import TritonRowWriter
from opforge.backends.triton.emit.rowwise.launch import (PART_HELPER, KernelText, LaunchStyle, jit_source, launch_args,
                                                        launcher)
from opforge.backends.triton_ascend.emit.common import blocks, header
from opforge.codegen.families.rowwise.plan import analyse
from opforge.backends.triton.emit.rowwise.scans import HELPERS as SCAN_HELPERS
from opforge.codegen.lower import Lowered, Unsupported

HELPERS_PY = AS_ROWS_PY + '''def _tiles(n_rows, n_cols):
    """Column block and rows per program for a TILE-element tile."""
    block = min(TILE, max(16, triton.next_power_of_2(n_cols)))
    return block, max(1, min(TILE // block, triton.next_power_of_2(n_rows)))


def _unit_cols(t):
    """`t` ([rows, cols]) with column stride 1: Ascend moves contiguous row segments into the unified
    buffer, and a column read through a run-time stride costs the kernel ~8x the buffer."""
    return t if t.shape[1] <= 1 or t.stride(1) == 1 else t.contiguous()

'''
# An assignment in a kernel's lines, its targets before the `=`.
ASSIGN = re.compile(r"^\s*([A-Za-z_][\w, ]*?)\s*(?:\+=|\*=|=)\s")
OFFSET_BYTES = 8  # a load's or store's int64 offsets (rows * stride + column)


class AscendRowWriter(TritonRowWriter):
    """A row kernel whose programs loop over row blocks; records each column pass's lines, from
    which tile_bytes() counts what one [ROWS, BLOCK] tile element keeps live."""

    CONSTEXPRS = TritonRowWriter.CONSTEXPRS + ("NUM_CORES: tl.constexpr",)
    UNIT_COLS = True
    WIDE_SCANS = False  # Atlas A2/A3 have no fp64 (backends/triton_ascend/dtypes.py): fp32 scans

    def __init__(self, plan, name: str) -> None:
        super().__init__(plan, name)
        self.passes: list[list[str]] = []

    def _program(self, code: list[str]) -> list[str]:
        head = ["    cols = tl.arange(0, BLOCK)[None, :]  # [1, BLOCK]",
                "    # a program per vector core, each taking every NUM_CORES-th block of ROWS rows",
                "    for blk in tl.range(tl.program_id(0), tl.cdiv(n_rows, ROWS), NUM_CORES):",
                "        rows = tl.cast(blk, tl.int64) * ROWS + tl.arange(0, ROWS)[:, None]  # [ROWS, 1]",
                "        row_mask = rows < n_rows"]
        return head + ["        " + line if line else "" for line in code]

    def _loop(self, comment: str, fill) -> None:
        start = len(self.code)
        super()._loop(comment, fill)
        self.passes.append(self.code[start:])  # its accumulators' set-up and the loop

    def tile_bytes(self) -> int:
        """Bytes per tile element of the heaviest pass: each value it assigns (4, or 8 when 64-bit),
        each load's and store's offsets."""
        return max((sum(_line_bytes(line) for line in lines) for lines in self.passes), default=0)


def _line_bytes(line: str) -> int:
    found = ASSIGN.match(line)
    values = (found.group(1).count(",") + 1) * (8 if "64" in line else 4) if found else 0
    return values + OFFSET_BYTES * (line.count("tl.load(") + line.count("tl.store("))


def generate(lowered: Lowered, title: str, shapes: dict) -> Kernel:
    """A candidate per tuning configuration; raises Unsupported naming the ops or pattern it cannot fuse."""
    plan = analyse(lowered, identifier(title))
    paired = sorted(set(plan.scans.values()) & SCAN_HELPERS.keys())
    if paired:  # their block scans read lanes with tl.gather, which triton-ascend 3.2 does not have
        raise Unsupported(f"{', '.join(paired)} in a Triton-Ascend row kernel (no tl.gather)")
    writers: list[AscendRowWriter] = []

    def writer(plan, name: str) -> AscendRowWriter:
        writers.append(AscendRowWriter(plan, name))
        return writers[-1]

    kernels = rowwise_kernel.write(plan, writer)
    per_element = max(w.tile_bytes() for w in writers)
    space = tuple({"TILE": t} for t in blocks(per_element, f"the row kernel of {title}"))

    def render(config: dict) -> str:
        return (header(f"Row-wise kernels for {title} (Triton-Ascend)", "rowwise", lowered)
                + _source(plan, kernels, config) + model_new(lowered, plan.title, shapes))

    return Kernel("rowwise", space, render)


def _source(plan, kernels: list[KernelText], config: dict) -> str:
    config_lines = (reduced_lines(plan) + "# One of the expert's tuning configurations: elements per [ROWS, BLOCK] tile, "
                    "within the unified-buffer rule.\n" f"TILE = {config['TILE']}\n")
    helpers_py = HELPERS_PY + (PART_HELPER if plan.partial else "")
    style = LaunchStyle("    block, rows = _tiles(n_rows, n_cols)", _launch, unit_cols=True)
    return "\n\n" + jit_source(kernels) + config_lines + "\n" + helpers_py + "\n" + launcher(plan, kernels, style)


def _launch(kernel: KernelText) -> str:
    args = launch_args(kernel)
    if kernel.grid == "one":  # the finish kernel: one program combines the per-row partials
        return wrap(f"{kernel.name}[(1,)]", args + ["BLOCK=min(1024, max(16, triton.next_power_of_2(n_rows)))"], "",
                    indent="    ")
    return wrap(f"{kernel.name}[(min(NUM_CORES, triton.cdiv(n_rows, rows)),)]",
                args + ["BLOCK=block", "ROWS=rows", "NUM_CORES=NUM_CORES"], "", indent="    ")
