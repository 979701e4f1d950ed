"""The AscendC emulator's vector APIs (include/asc_vector.h) case by case, straight on the C++: each case of
tests/data/ascendc/emu/vector_cases.cpp compares an API with a reference loop written from the documented semantics
(mask/repeat addressing, rounding modes, where a reduction puts its result and index), or expects the emulator's
error with the API and line, beside a control that passes. One g++ build per module (cached under the temp dir)."""
from __future__ import annotations

import ctypes
import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INCLUDE = ROOT / "opforge/backends/ascendc/emulator/include"
CASES = ROOT / "tests/data/ascendc/emu/vector_cases.cpp"
OK, WRONG, E_OOB, E_RACE, E_ALIGN, E_BADARG = 0, -1, 1, 2, 5, 8

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the AscendC emulator builds with g++")


@pytest.fixture(scope="module")
def lib():
    digest = hashlib.sha256(CASES.read_bytes())
    for header in sorted(INCLUDE.glob("*.h")):
        digest.update(header.read_bytes())
    out = Path(tempfile.gettempdir()) / f"opforge-asc-vector-{digest.hexdigest()[:16]}.so"
    if not out.exists():
        tmp = out.with_suffix(f".{id(out)}.tmp.so")
        # -fno-gnu-unique: this library's machine is its own, not shared with another emulated library in the process
        subprocess.run(["g++", "-std=c++20", "-O0", "-shared", "-fPIC", "-fno-gnu-unique", f"-I{INCLUDE}", str(CASES),
                        "-o", str(tmp)], check=True, capture_output=True, text=True)
        tmp.rename(out)
    return ctypes.CDLL(str(out))


def run(lib, name: str) -> tuple[int, str]:
    msg = ctypes.create_string_buffer(2048)
    code = lib.vcase(name.encode(), msg, 2048)
    return code, msg.value.decode()


@pytest.mark.parametrize("name", [
    "add_count_float", "add_count_half", "add_count_int32", "binary_mask_repeat", "binary_bitmask_half",
    "binary_bitmask_float", "unary_count_float", "unary_rep_strides", "scalar_ops", "fused_ops", "bitwise_int16",
    "duplicate_forms", "math_library", "brcb_blocks", "cast_float_to_half_modes", "cast_float_to_int32_modes", "cast_other_directions",
    "reduce_sum_float", "reduce_sum_half_pairwise", "reduce_max_index", "whole_reduce_sum", "whole_reduce_max_orders",
    "block_reduce_sum", "compare_select", "count_exactly_fits",
])
def test_api_computes_what_the_documentation_says(lib, name):
    code, msg = run(lib, name)
    assert (code, msg) == (OK, ""), f"{name}: {msg}"


@pytest.mark.parametrize("name,code,words", [
    ("count_past_tensor", E_OOB, ["Add", "vector_cases.cpp:", "388 bytes", "4 bytes past its end"]),
    ("repeat_past_tensor", E_OOB, ["Exp", "256 bytes past its end"]),
    ("repeat_stride_past_tensor", E_OOB, ["Abs", "writes", "192 bytes past its end"]),
    ("reduce_work_too_small", E_OOB, ["ReduceSum", "writes 64 bytes", "32 bytes past its end"]),
    ("unaligned_operand", E_ALIGN, ["Add", "src0 starts 12 bytes past a 32-byte boundary"]),
    ("mask_too_large", E_BADARG, ["Add", "mask 65 > 64"]),
    ("cast_odd_to_int", E_BADARG, ["Cast", "CAST_ODD"]),
    ("compare_count_not_256_bytes", E_BADARG, ["Compare", "count 40", "256 bytes"]),
    ("vector_after_copy_in_without_sync", E_RACE, ["Adds on pipe V", "DataCopy on pipe MTE2"]),
])
def test_misuse_is_refused_with_the_api_and_line(lib, name, code, words):
    got, msg = run(lib, name)
    assert got == code, f"{name}: code {got}, want {code}: {msg}"
    for word in words:
        assert word in msg, f"{name}: {word!r} not in {msg!r}"
