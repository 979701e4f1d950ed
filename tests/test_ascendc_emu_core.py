"""The AscendC emulator's core (include/asc_core.h, asc_tensor.h, asc_copy.h) case by case, straight on the C++:
each wrong kernel of tests/data/ascendc/core/core_cases.cpp is refused with its code and a message naming the API and
the line, beside its correct control, which must pass. One g++ build per module (cached under the temp dir)."""
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
CASES = ROOT / "tests/data/ascendc/core/core_cases.cpp"
N = 1024
OK, E_OOB, E_RACE, E_UAF, E_DEADLOCK, E_ALIGN, E_UB = 0, 1, 2, 3, 4, 5, 6

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the AscendC emulator builds with g++")


@pytest.fixture(scope="module")
def lib():
    digest = hashlib.sha256(CASES.read_bytes())
    for header in sorted(INCLUDE.glob("*.h")):
        digest.update(header.read_bytes())
    out = Path(tempfile.gettempdir()) / f"opforge-asc-core-{digest.hexdigest()[:16]}.so"
    if not out.exists():
        tmp = out.with_suffix(".tmp.so")
        subprocess.run(["g++", "-std=c++20", "-O1", "-shared", "-fPIC", "-fno-gnu-unique", f"-I{INCLUDE}", str(CASES), "-o", str(tmp)],
                       check=True, capture_output=True, text=True)
        tmp.rename(out)
    return ctypes.CDLL(str(out))


def run(lib, name: str, schedule: int = 0) -> tuple[int, str, list[float]]:
    out, msg = (ctypes.c_float * (4 * N))(), ctypes.create_string_buffer(2048)
    code = lib.run_case(name.encode(), schedule, out, msg, 2048)
    return code, msg.value.decode(), list(out)


@pytest.mark.parametrize("wrong,control,code,words", [
    ("tbuf_nosync", "tbuf_sync", E_RACE, ["Adds on pipe V", "DataCopy on pipe MTE2", "line 22", "core_cases.cpp:24"]),
    ("reduce_nosync", "reduce_sync", E_RACE, ["GetValue on pipe S", "ReduceSum on pipe V", "line 42"]),
    ("pipeline_no_enque", "pipeline", E_RACE, ["Muls on pipe V", "DataCopy on pipe MTE2"]),
    ("pipeline_no_free", "pipeline", E_DEADLOCK, ["AllocTensor", "all 2 buffers", "InitBuffer at line 54"]),
    ("pipeline_free_early", "pipeline", E_UAF, ["DataCopy", "after FreeTensor", "core_cases.cpp:70"]),
    ("pipeline_write_freed", "pipeline", E_UAF, ["Duplicate", "writes"]),
    ("pipeline_deque_empty", "pipeline", E_DEADLOCK, ["DeQue", "empty"]),
    ("ub_over", "ub_fits", E_UB, ["InitBuffer", "198656 bytes", "196608", "ascend910b", "2048 bytes over"]),
    ("gm_overlap", "gm_ok", E_RACE, ["output z", "core 0 wrote", "concurrently"]),
    ("gm_misaligned", "gm_ok", E_ALIGN, ["UB address 16", "32-byte"]),
    ("gm_past_end", "gm_ok", E_OOB, ["output z", "16384 bytes", "past its end"]),
    ("gm_readback_nosync", "gm_readback_sync", E_RACE, ["MTE2", "MTE3", "output z"]),
    ("plain_add", "atomic_add", E_RACE, ["core 0 wrote"]),
    ("wait_unset", "reduce_sync", E_DEADLOCK, ["WaitFlag", "no SetFlag"]),
    ("tail_read_far", "tail_read", E_OOB, ["reads 96 bytes", "argument w, which has 40 bytes"]),
    ("tail_write", "tail_read", E_OOB, ["writes 64 bytes", "argument w"]),
    ("store_nosync", "store_sync", E_RACE, ["DataCopy on pipe MTE3", "LocalTensor::SetValue on pipe S (scalar store)"]),
])
def test_wrong_kernel_refused_beside_its_control(lib, wrong, control, code, words):
    got, msg, _ = run(lib, wrong)
    assert got == code, msg
    for word in words:
        assert word in msg, (word, msg)
    got, msg, _ = run(lib, control)
    assert got == OK, msg


@pytest.mark.parametrize("schedule", [0, 1, 2])
def test_controls_compute_the_same_under_every_core_order(lib, schedule):
    code, msg, out = run(lib, "pipeline", schedule)
    assert code == OK, msg
    assert out[: 4 * N] == [2.0 * (i % 97) for i in range(4 * N)]
    code, msg, out = run(lib, "atomic_add", schedule)
    assert code == OK, msg
    assert out[:N] == [float(sum((c * N + i) % 97 for c in range(4))) for i in range(N)]


def test_a_ragged_datacopy_is_refused_and_datacopypad_is_exact(lib):
    """10 floats: DataCopy moves whole 32-byte blocks, so the hardware would drop the last 8 bytes: refused, naming
    DataCopy and its line; DataCopyPad moves the 40 bytes."""
    code, msg, _ = run(lib, "ragged_copy")
    assert code == E_ALIGN and "DataCopy" in msg and "40 bytes" in msg and "last 8 bytes" in msg, msg
    _, _, out = run(lib, "ragged_pad")
    assert out[:10] == [float(i) for i in range(10)] and all(v != v for v in out[10:16])
