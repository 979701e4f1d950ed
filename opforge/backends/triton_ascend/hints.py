"""What the reflect node tells the next Triton-Ascend draft: the hint for a front-end build error and one
per finding phrase (static checks, the front end's messages as the verdict quotes them)."""
from __future__ import annotations

import re

from opforge.harness.plugin import matched_hints

BUILD = ("Huawei's front end (triton-adapter-opt, then bishengir-compile) rejected a "
         "launch before anything ran: fix the construct its message names.")
# Triton-Ascend's findings (static checks, the front end's messages as the verdict quotes them), by a
# phrase anywhere in the reason: the leftmost phrase of a reason picks its hint.
REASON_HINTS = {
    "ub overflow": "The kernel's live tiles do not fit the 192 KB unified buffer (multi-buffering doubles the "
                   "loads): halve BLOCK (or SUB_M), cap it with a constant instead of next_power_of_2 of a "
                   "run-time length, and loop over sub-blocks of long rows, storing each before the next.",
    "grid-too-large": "An Ascend launch takes at most 65535 programs: launch one program per vector core "
                      "(40) and loop inside the kernel, for i in tl.range(tl.program_id(0), n, tl.num_programs(0)).",
    "ascend-unsupported": "Ascend has no PTX and no CUDA device library: drop inline asm and tl.extra.cuda, "
                          "write it with tl ops (tl.exp, tl.sqrt, tl.math.*).",
    "fails triton-adapter-opt": "triton-adapter-opt could not analyse a pointer or mask: keep every pointer a "
                                "base plus affine offsets (no tl.where between two pointers: load both masked "
                                "and select the values), and prefer strides to % or loaded indices.",
    "unsupported-dtype": "Atlas A2/A3 have no fp64 (not even to load and narrow) and no int64 atomic_add/max/min: "
                         "compute in fp32 (or split into two fp32 terms), take fp32/int32 inputs, and accumulate "
                         "int32 partial sums atomically (or reduce in one program).",
    "does not lower for": "Triton-Ascend's lowering refused a construct: no fp64 anywhere (compute in fp32), "
                          "only Triton 3.2 APIs, no GPU-only ops.",
}
_PHRASE = re.compile("(" + "|".join(map(re.escape, REASON_HINTS)) + ")")


def reason_hints(reasons: list[str]) -> list[str]:
    from opforge.backends.triton import memory  # the CPU run's bounds and races, shared with NVIDIA Triton

    return matched_hints(_PHRASE, REASON_HINTS, reasons) + memory.reason_hints(reasons)
