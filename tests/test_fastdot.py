"""The CPU worker's tl.dot through BLAS (backends/triton/fastdot.py): the same fp32 product
as Triton's own interpreter path, the other dtypes on that path, and installed before the snapshot."""
from __future__ import annotations

import numpy as np
import pytest

from opforge.backends.triton import fastdot


class _Handle:
    def __init__(self, data, scalar="acc"):
        self.data = data
        self.dtype = type("T", (), {"scalar": scalar, "primitive_bitwidth": data.dtype.itemsize * 8,
                                    "is_floating": lambda self: data.dtype.kind == "f"})()


@pytest.fixture()
def builder(monkeypatch):
    from triton.runtime import interpreter

    calls = []
    original = interpreter.InterpreterBuilder.create_dot

    def counting(self, a, b, d, input_precision, max_num_imprecise_acc):
        calls.append(a.data.dtype)
        return original(self, a, b, d, input_precision, max_num_imprecise_acc)

    monkeypatch.setattr(interpreter.InterpreterBuilder, "create_dot", counting)
    monkeypatch.setattr(interpreter, "TensorHandle", lambda data, scalar: _Handle(data, scalar))
    assert fastdot.install() and fastdot.install()  # once: the second call finds it installed
    return interpreter.InterpreterBuilder.__new__(interpreter.InterpreterBuilder), calls


def test_fp32_dots_go_through_blas_with_the_same_result(builder):
    b, calls = builder
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((64, 128), dtype=np.float32), rng.standard_normal((128, 96), dtype=np.float32)
    acc = rng.standard_normal((64, 96), dtype=np.float32)
    out = b.create_dot(_Handle(x), _Handle(w), _Handle(acc), "ieee", 0)
    assert calls == [] and out.data.dtype == np.float32
    want = (x.astype(np.float64) @ w.astype(np.float64) + acc).astype(np.float32)
    assert np.abs(out.data - want).max() < 1e-4 * np.abs(want).max()


def test_mixed_and_integer_dots_keep_tritons_path(builder):
    b, calls = builder
    i8 = np.full((16, 32), 100, dtype=np.int8)  # 100 * 100 * 32 overflows int8 and int16: needs the int32 path
    out = b.create_dot(_Handle(i8), _Handle(i8.T.copy()), _Handle(np.zeros((16, 16), np.int32)), "ieee", 0)
    assert calls == [np.int8] and int(out.data[0, 0]) == 320000
    half = np.ones((16, 16), np.float16)
    b.create_dot(_Handle(half), _Handle(half), _Handle(np.zeros((16, 16), np.float32)), "ieee", 0)
    assert calls == [np.int8, np.float16]


BF16_KERNEL = '''
import os, sys
os.environ["TRITON_INTERPRET"] = "1"
import torch, triton, triton.language as tl
from opforge.backends.triton import fastdot
if sys.argv[1] == "installed":
    fastdot.install()

@triton.jit
def dot(a, b, c, N: tl.constexpr):
    r = tl.arange(0, N)
    x = tl.load(a + r[:, None] * N + r[None, :])
    y = tl.load(b + r[:, None] * N + r[None, :])
    tl.store(c + r[:, None] * N + r[None, :], tl.dot(x, y))

torch.manual_seed(0)
a, b, c = torch.randn(16, 16).bfloat16(), torch.randn(16, 16).bfloat16(), torch.empty(16, 16)
dot[(1,)](a, b, c, 16)
print(float((c - a.float() @ b.float()).abs().max()))
'''


@pytest.mark.parametrize("mode", ["installed", "plain"])
def test_a_bf16_dot_is_right_only_with_the_fix(mode, tmp_path):
    """Triton's interpreter keeps bf16 as raw uint16 bits and multiplies the integers."""
    import subprocess
    import sys

    script = tmp_path / "bf16_dot.py"
    script.write_text(BF16_KERNEL)
    ran = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr[-2000:]
    err = float(ran.stdout.strip().splitlines()[-1])
    assert (err < 1e-5) if mode == "installed" else (err > 1.0)


HELPER_KERNEL = '''
import os, sys, json
os.environ["TRITON_INTERPRET"] = "1"
import torch, triton, triton.language as tl
from triton.runtime import interpreter
from opforge.backends.triton import fastlang
repeats = []
original = interpreter._patch_lang
interpreter._patch_lang = lambda fn: repeats.append(fn.__name__) or original(fn)
if sys.argv[1] == "installed":
    assert fastlang.install() and fastlang.install()

@triton.jit
def scale(x, s):
    return x * s + tl.sum(x, axis=0) * 0.0

@triton.jit
def rows(x_ptr, y_ptr, N: tl.constexpr):
    pid = tl.program_id(0)
    r = tl.arange(0, N)
    x = tl.load(x_ptr + pid * N + r)
    y = tl.softmax(scale(x, 2.0))  # a helper of triton.language.standard (it sees tl.core), then a user's
    tl.store(y_ptr + pid * N + r, scale(y, 0.5) + tl.max(x, axis=0) * 0.0)

torch.manual_seed(0)
x = torch.randn(8, 32)
y = torch.empty_like(x)
rows[(8,)](x, y, 32)
rows[(8,)](x, y, 32)
err = float((y - torch.softmax(2 * x, -1) * 0.5).abs().max())
after = [tl.core.is_builtin(m.load) for m in (tl, tl.core)] + [tl.core.is_builtin(tl.tensor.__add__)]
print(json.dumps({"err": err, "patches": len(repeats), "after": after}))
'''


def test_jitted_helpers_patch_the_language_once_per_launch_with_the_same_values(tmp_path):
    """fastlang.py: Triton re-patches triton.language at every helper call in every program; with
    the wrapper only the launch patches it (and a helper seeing a module the launch did not patch,
    tl.softmax's tl.core), the values are the same, and the language is left after the launches as
    Triton leaves it (tl restored; tl.core as Triton's own helper patch leaves it)."""
    import json
    import subprocess
    import sys

    script = tmp_path / "helpers.py"
    script.write_text(HELPER_KERNEL)
    got = {}
    for mode in ("installed", "plain"):
        ran = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, ran.stderr[-2000:]
        got[mode] = json.loads(ran.stdout.strip().splitlines()[-1])
    assert got["installed"]["err"] < 1e-6 and got["plain"]["err"] < 1e-6, got
    assert got["installed"]["after"] == got["plain"]["after"] and got["plain"]["after"][0], got
    # plain: one per launch, and per program each helper call (scale, softmax and its own, scale, max)
    assert got["installed"]["patches"] <= 4 and got["plain"]["patches"] > 8 * 2 * 4, got


OVERFLOW_KERNEL = '''
import os, sys, dataclasses
os.environ["TRITON_INTERPRET"] = "1"
import torch, triton, triton.language as tl
from triton.runtime import interpreter
from opforge.backends.triton import fastlang
if sys.argv[1] == "installed":
    fastlang.install()
builder = interpreter.interpreter_builder
builder.options = dataclasses.replace(builder.options, debug=sys.argv[2] == "debug")

@triton.jit
def big(x_ptr, y_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(y_ptr + r, tl.load(x_ptr + r) * 1000000)

x = torch.full((8,), 5000, dtype=torch.int32)
y = torch.empty_like(x)
try:
    big[(1,)](x, y, 8)
    print("ran", int(y[0]))
except Exception as exc:
    print("raised", "overflow detected" in str(exc))
'''


def test_the_overflow_checks_are_skipped_only_where_their_assert_is_off(tmp_path):
    """fastlang.py: the interpreter computes int32 overflow checks and hands them to a device_assert
    that ignores them unless debug is on; skipping them changes nothing (the product wraps, as in
    plain Triton), and with debug on the check still runs and fails the launch."""
    import subprocess
    import sys

    script = tmp_path / "overflow.py"
    script.write_text(OVERFLOW_KERNEL)
    got = {}
    for mode in ("installed", "plain"):
        for debug in ("debug", "nodebug"):
            ran = subprocess.run([sys.executable, str(script), mode, debug], capture_output=True, text=True, timeout=120)
            assert ran.returncode == 0, ran.stderr[-2000:]
            got[mode, debug] = ran.stdout.strip().splitlines()[-1]
    wrapped = f"ran {(5000 * 1000000 + 2**31) % 2**32 - 2**31}"
    assert got == {("installed", "debug"): "raised True", ("plain", "debug"): "raised True",
                   ("installed", "nodebug"): wrapped, ("plain", "nodebug"): wrapped}, got
