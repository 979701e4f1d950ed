"""What the Triton-Ascend emitters share: the vector-core count their 1-D grids are sized to, the
unified-buffer rule their tiles are sized by, and the header.

The rule: a tile's live bytes per element (every value a block keeps at once, counted by its
emitter), times 2 for the multi-buffering bishengir-compile enables by default, times the block,
stay within half of the 192 KB unified buffer; the other half is left to the compiler's own
temporaries, which the emitters do not model. Measured with bishengir-compile 1.2.0 (Ascend910B3,
its "requires N bits" at 16-32x each block): the suite's first configurations need 6 to 28 KB of
the 192 KB (softmax 28, cross_entropy 25, add_mul_relu 20, silu 8), so the rule is safe with room;
a column read through a run-time stride needs about 8 times more than a unit-stride one (224 vs 28
bytes per element for a three-pass softmax), which is why the launchers give every column-varying
input stride 1."""
from __future__ import annotations

from opforge.backends.triton.emit.common import header as triton_header
from opforge.codegen.lower import Lowered, Unsupported
from opforge.backends.triton_ascend import toolchain

TARGET = toolchain.DEFAULT_TARGET
NUM_CORES = toolchain.AI_CORES[TARGET] * toolchain.VECTOR_PER_AI_CORE  # 40 vector cores on Ascend910B3
RULE_BYTES = toolchain.UB_BYTES // 2  # live bytes x 2 (multi-buffering) x block must fit this
# Blocks are powers of two from 64 elements (a 32-byte aligned last axis for every dtype up to 4 bytes)
# to 8192 (a larger block only lengthens the tail a program waits on).
MIN_BLOCK, MAX_BLOCK = 64, 8192
SPACE_SIZE = 3  # the largest block the rule allows, then its half and quarter


def blocks(bytes_per_element: int, what: str) -> tuple[int, ...]:
    """The tuning space's block sizes, largest first: each satisfies the unified-buffer rule."""
    block = MAX_BLOCK
    while block > MIN_BLOCK and 2 * bytes_per_element * block > RULE_BYTES:
        block //= 2
    if 2 * bytes_per_element * block > RULE_BYTES:
        raise Unsupported(f"{what} keeps {bytes_per_element} bytes per element live: even a {MIN_BLOCK}-element "
                          "tile breaks the unified-buffer rule")
    return tuple(block >> k for k in range(SPACE_SIZE) if block >> k >= MIN_BLOCK)


def header(title: str, family: str, lowered: Lowered) -> str:
    """The Triton header (Triton-Ascend is imported as `triton`), math, and the core count."""
    return (triton_header(title, family, lowered) + "import math\n\n"
            f"# {TARGET}: {toolchain.AI_CORES[TARGET]} AI cores x {toolchain.VECTOR_PER_AI_CORE} vector units. "
            "A 1-D grid of at most this many\n# programs, each looping over blocks, avoids launching waves.\n"
            f"NUM_CORES = {NUM_CORES}\n")


def value_bytes(dtype) -> int:
    """A value's bytes in a kernel: math runs in fp32 (half types are upcast on load), 64-bit stays 8."""
    return 8 if dtype.itemsize == 8 else 4
