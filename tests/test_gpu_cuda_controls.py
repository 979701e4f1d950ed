"""On a CUDA GPU: the memory model's correct controls (tests/data/cuda/memory_model.cu) run on the
device and in the emulator, and must agree: a control the emulator passes but the device computes
differently would be the emulator's error (scripts/gpu_check.sh runs this file)."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from opforge.backends.cuda.emulator.build import compiler
from opforge.backends.cuda.runtime import load_cuda

SOURCE = (Path(__file__).parent / "data" / "cuda" / "memory_model.cu").read_text()
pytestmark = [
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU: the controls run on the device and "
                                                              "in the emulator, and are compared"),
    pytest.mark.skipif(compiler() is None, reason="the CUDA emulator builds with g++, and there is none"),
]


def _ints(n: int = 1) -> torch.Tensor:
    return torch.zeros(n, dtype=torch.int32)


def _inputs(name: str) -> tuple[list, list[int]]:
    """The launcher's arguments (CPU) and which of them are outputs to compare."""
    g = torch.Generator().manual_seed(7)
    x = torch.randn(1000, generator=g)
    if name == "last_block_fenced":
        return [x, torch.zeros(4), _ints(), torch.zeros(1), 1000], [3]
    if name == "scan_fenced":
        return [x, torch.zeros(1000), torch.zeros(8), _ints(8), _ints(), 1000], [1]
    if name == "split_k_atomic":
        return [torch.randn(32, 64, generator=g), torch.randn(64, generator=g), torch.zeros(32)], [2]
    if name == "scratch_per_block":
        return [torch.randn(6, 40, generator=g), torch.zeros(6, 40), torch.zeros(240), 6, 40], [1]
    if name == "sum_syncthreads":
        return [torch.randn(384, generator=g), torch.zeros(3), 3], [1]
    if name == "max_atomic":
        return [torch.randint(-1000, 1000, (256,), generator=g, dtype=torch.int32), _ints(2), 2], [1]
    if name == "same_value_launch":
        return [torch.randn(320, generator=g), torch.zeros(5), 5], [1]
    if name == "warp_tree_synced":
        return [torch.randn(128, generator=g), torch.zeros(4), 4], [1]
    if name == "copy4_launch":
        return [torch.randn(260, generator=g), torch.zeros(256), 64, 0], [1]
    if name == "wait_for_next_launch":
        return [torch.zeros(6 * 32), _ints(6), torch.zeros(6), 6], [0]
    raise KeyError(name)


CONTROLS = ["last_block_fenced", "scan_fenced", "split_k_atomic", "scratch_per_block", "sum_syncthreads",
            "max_atomic", "same_value_launch", "warp_tree_synced", "copy4_launch", "wait_for_next_launch"]


@pytest.mark.parametrize("name", CONTROLS)
def test_a_control_agrees_on_the_device_and_in_the_emulator(name):
    lib = load_cuda(SOURCE, "memory_model")
    emulated, outputs = _inputs(name)
    on_device = [a.cuda() if isinstance(a, torch.Tensor) else a for a in _inputs(name)[0]]
    getattr(lib, name)(*emulated)
    getattr(lib, name)(*on_device)
    torch.cuda.synchronize()
    for i in outputs:
        torch.testing.assert_close(on_device[i].cpu(), emulated[i], rtol=1e-4, atol=1e-4,
                                   msg=lambda m: f"{name}: argument {i}: emulator and device disagree: {m}")
