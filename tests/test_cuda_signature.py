"""Launcher signatures of a CUDA_SRC: names, parameter kinds and dtypes, lines, clear errors."""
from __future__ import annotations

import pytest
import torch

from opforge.backends.cuda.signature import TORCH_DTYPES, Param, SignatureError, parse_launchers

SOURCE = """#include <cuda_runtime.h>
// extern "C" void commented_out(float* x, cudaStream_t s) {}
extern "C" __global__ void kernel_with_c_linkage(float* y) { y[0] = 1; }
__global__ void k(const float* __restrict__ x, float* y) {}

extern "C" void softmax_launch(const float* __restrict__ x, float* __restrict__ y,
                               int rows, int64_t cols, cudaStream_t stream) {
    k<<<rows, 256, 0, stream>>>(x, y);
}
extern "C" {
void declared_only(float* y, cudaStream_t stream);
void mixed(__half const* a, __nv_bfloat16* b, bool* m, size_t n, unsigned u, double eps, cudaStream_t s) {
    if (n) { mixed(a, b, m, n - 1, u, eps, s); }
}
}
"""


def test_launchers_with_kinds_dtypes_and_lines():
    launchers = parse_launchers(SOURCE)
    assert sorted(launchers) == ["mixed", "softmax_launch"]
    softmax = launchers["softmax_launch"]
    assert softmax.line == 6
    assert softmax.params == (Param("x", "pointer", "float32", True), Param("y", "pointer", "float32", False),
                              Param("rows", "scalar", "int32", False), Param("cols", "scalar", "int64", False),
                              Param("stream", "stream", "stream", False))
    mixed = launchers["mixed"]
    assert mixed.line == 12
    assert [(p.kind, p.ctype, p.const) for p in mixed.params[:-1]] == [
        ("pointer", "float16", True), ("pointer", "bfloat16", False), ("pointer", "bool", False),
        ("scalar", "uint64", False), ("scalar", "uint32", False), ("scalar", "float64", False)]


@pytest.mark.parametrize("params, message", [
    ("float* x", "the last parameter must be `cudaStream_t stream`"),
    ("cudaStream_t s, float* x", "cudaStream_t may only be the last parameter"),
    ("unsigned* x, cudaStream_t s", "unsigned is not a supported pointer type"),
    ("float** x, cudaStream_t s", "pointers to pointers cannot be passed"),
    ("const float& x, cudaStream_t s", "must be a plain pointer or scalar"),
])
def test_bad_launchers_name_the_line(params, message):
    source = f'\n\nextern "C" void bad({params}) {{ }}\n'
    with pytest.raises(SignatureError, match=rf"^line 3: launcher bad: .*{message.replace('*', '[*]')}"):
        parse_launchers(source)


def test_a_launcher_returns_void():
    with pytest.raises(SignatureError, match=r"^line 1: launcher f: a launcher returns void"):
        parse_launchers('extern "C" int f(cudaStream_t s) { return 0; }')


def test_every_pointer_dtype_is_a_torch_dtype():
    assert all(isinstance(getattr(torch, name), torch.dtype) for name in TORCH_DTYPES.values())
    assert set(TORCH_DTYPES) == {"float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16", "int32",
                                 "int64", "bool"}
