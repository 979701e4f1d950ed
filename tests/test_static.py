"""Static checks read the candidate's AST (it is never imported by the harness)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import KERNELS, ROOT
from opforge.backends.triton.static import check_source

GOOD = (KERNELS / "good.py").read_text()


def reasons(source: str, float32: bool = True) -> list[str]:
    return check_source(source, float32_spec=float32).reasons


def test_good_kernel_is_clean_and_its_kernels_are_found():
    report = check_source(GOOD, float32_spec=True)
    assert report.reasons == []
    assert report.kernels == ["_softmax_kernel"] and report.has_model_new


def test_syntax_error_and_missing_parts():
    assert reasons("def f(:")[0].startswith("syntax-error")
    missing = reasons("import torch\n")
    assert any(r.startswith("no-model-new") for r in missing)
    assert any(r.startswith("no-kernel") for r in missing)


def test_forbidden_imports_calls_and_attributes():
    for snippet, code in [
        ("import os", "forbidden-import: os"),
        ("from subprocess import Popen", "forbidden-import: subprocess"),
        ("import numpy as np", "forbidden-import: numpy"),
        ("from . import x", "forbidden-import: <relative import>"),
        ("eval('1')", "forbidden-call: eval()"),
        ("open('/etc/passwd')", "forbidden-call: open()"),
        ("getattr(torch, 'allclose')", "forbidden-call: getattr()"),
        ("torch.manual_seed(0)", "forbidden-attribute: .manual_seed"),
        ("torch._C._set_grad_enabled(False)", "forbidden-attribute: ._C"),
        ("(lambda: 0).__globals__", "forbidden-attribute: .__globals__"),
        ("torch.multiprocessing.Process", "forbidden-attribute: .multiprocessing"),
        ("torch.allclose = None", "patches-module: assigns torch.allclose"),
        ("torch.Tensor.__eq__ = None", "patches-module: assigns torch.Tensor.__eq__"),
    ]:
        found = reasons(GOOD + "\n" + snippet + "\n")
        assert any(r.startswith(code) for r in found), (snippet, found)


def test_allowed_imports_pass():
    source = "from triton.language.extra import libdevice\nimport math\nfrom torch import nn\n" + GOOD
    assert reasons(source) == []


def test_precision_rules_apply_to_float32_specs_only():
    half = GOOD.replace("e / tl.sum(e, axis=0)", "(e / tl.sum(e, axis=0)).to(tl.float16)")
    assert any(r.startswith("low-precision: uses float16") for r in reasons(half))
    assert reasons(half, float32=False) == []
    dot = GOOD + "\n@triton.jit\ndef _mm(a, b):\n    return tl.dot(a, b)\n"
    assert any("defaults to TF32" in r for r in reasons(dot))
    assert not any("TF32" in r for r in reasons(dot.replace("tl.dot(a, b)", 'tl.dot(a, b, input_precision="ieee")')))
    assert any("input_precision='tf32'" in r for r in reasons(dot.replace("tl.dot(a, b)", 'tl.dot(a, b, input_precision="tf32")')))


# -- the allow-list over resolved names ----------------------------------------------------------------
# Each case is a snippet appended to the good kernel; the reason code it must produce is named.

def codes(snippet: str, float32: bool = True) -> list[str]:
    return [r.split(":")[0] for r in reasons(GOOD + "\n" + snippet + "\n", float32)]


def assert_rejected(snippet: str, code: str, float32: bool = True) -> None:
    found = reasons(GOOD + "\n" + snippet + "\n", float32)
    assert any(r.startswith(code + ":") for r in found), (snippet, found)


@pytest.mark.parametrize("snippet", [
    "from torch import _C",
    "from torch import multiprocessing",
    "from torch import os",
    "from torch import sys as s",
    "from torch import builtins",
    "from torch import importlib",
    "from torch import load",
    "from torch import utils",
    "from torch.cuda import Event",
    "from torch.cuda import synchronize as sync",
    "from triton.language import core",
    "from triton import runtime",
    "from torch import *",
    "import torch.utils.cpp_extension",
    "import triton.language.core",
    "class A:\n    import math",
    "import builtins\nbuiltins.__import__('os')",
    "from builtins import getattr",
])
def test_names_imported_from_allowed_modules_are_resolved(snippet):
    assert_rejected(snippet, "forbidden-import")


@pytest.mark.parametrize("snippet", [
    "g = getattr\ng(torch, 'allclose')",
    "h = [setattr][0]",
    "import functools\nfunctools.partial(delattr)",
    "import operator\nf = operator.attrgetter('x')",
    "import operator as op\nop.methodcaller('x')",
    "from operator import attrgetter as ag",
    "from operator import methodcaller",
    "O = __import__('operator')",
    "x = eval",
    "def f(run=exec):\n    pass",
    "vars(torch)",
    "dir()",
    "import typing\ntyping.get_type_hints(print)",
    "import functools\nfunctools.update_wrapper",
    "import dataclasses\ndataclasses.make_dataclass('X', [])",
    "X = type('X', (), {})",
    "t = type",
    "class A:\n    @classmethod\n    def m(cls):\n        pass",
    "import enum\nE = enum.Enum('E', 'A B')",
])
def test_getattr_likes_are_rejected_however_referenced(snippet):
    assert_rejected(snippet, "forbidden-call")


@pytest.mark.parametrize("snippet", [
    "torch.os.system('true')",
    "T = torch\nT.os.getcwd()",
    "import torch.nn.functional as F\nF.torch.utils.cpp_extension",
    "torch.nn.functional.torch._C",
    "torch.utils.cpp_extension.load_inline",
    "torch.onnx",
    "torch.ops.aten.add",
    "torch.cuda._sleep(100)",
    "tl.core.dot",
    "torch.load('cached.pt')",
    "torch.set_float32_matmul_precision('high')",
    "torch.default_generator.get_state()",
    "__builtins__",
    "x = __loader__",
    "__spec__",
    "(lambda: 0).__code__",
    "torch.empty(1).__class__",
    "import functools\nf = [functools]",
    "x = [torch]",
    "print(torch.nn)",
    "import dataclasses\ndataclasses.dataclass(torch.Tensor)",
    "class M(torch.nn.Module):\n    def __init__(self):\n        self.t = torch.Tensor",
    "class A:\n    T = torch",
    "x = 'no' + '__torch_function__'",
])
def test_attribute_chains_are_followed_on_the_live_modules(snippet):
    assert_rejected(snippet, "forbidden-attribute")


@pytest.mark.parametrize("name", [
    "numpy", "tolist", "apply_", "map_", "map2_", "__array__", "__array_interface__", "storage",
    "untyped_storage", "_typed_storage", "data_ptr", "share_memory_", "set_", "_make_subclass",
    "as_subclass", "register_hook", "register_forward_hook", "register_forward_pre_hook",
    "register_full_backward_hook", "register_module_forward_hook",
])
def test_below_the_dispatcher_tensor_access_is_rejected(name):
    assert_rejected(f"x = torch.empty(1)\ny = x.{name}", "forbidden-attribute")


@pytest.mark.parametrize("name", ["Event", "synchronize", "graphs", "graph", "CUDAGraph", "_sleep", "Stream",
                                  "stream", "current_stream", "manual_seed_all"])
def test_cuda_timing_stream_and_rng_attributes_are_rejected(name):
    assert_rejected(f"torch.cuda.{name}", "forbidden-attribute")


@pytest.mark.parametrize("snippet", [
    "x = torch.empty(1)\nx.__dict__['y'] = 1",
    "torch.nn.functional.__dict__['gelu'] = print",
    "vars(torch)['allclose'] = print",
    "globals()['torch'] = None",
])
def test_writes_through_namespaces_are_rejected(snippet):
    assert {"forbidden-attribute", "forbidden-call"} & set(codes(snippet)), reasons(GOOD + snippet)


@pytest.mark.parametrize("snippet", [
    "T = torch\nT.Tensor.any = print",
    "nn = torch.nn\nnn.Module.forward = print",
    "T = torch\nT.allclose += 1",
    "T: object = torch\nT.allclose = print",
    "if (T := torch):\n    T.allclose = print",
    "a, T = 1, torch\nT.allclose = print",
    "del torch.allclose",
    "for torch.allclose in [print]:\n    pass",
    "with torch.no_grad() as torch.allclose:\n    pass",
    "x = [0 for torch.allclose in [print]]",
    "a, torch.allclose = 1, print",
    "a, *torch.allclose = 1, print",
    "torch.Tensor[0] = 1",
    "x = torch.empty(1)\nx.add = print",
    "def f(self):\n    self.allclose = print",
    "class A:\n    @staticmethod\n    def m(self):\n        self.allclose = print",
    "class A:\n    def m(self):\n        self = torch\n        self.allclose = print",
    "class A:\n    def m(self):\n        def g(self):\n            self.allclose = print",
    "class A:\n    def m(self):\n        self.allclose = print\n    n = staticmethod(m)",
    "class A:\n    def m(self, x):\n        self.t = x\n        self.t.allclose = print",
    "class A:\n    def m(self):\n        self.t = torch.nn.Module()\n        self.t.a.b = 1",
    "import functools\nclass A:\n    @functools.partial\n    def m(self):\n        self.allclose = print",
    "def deco(cls):\n    return cls\n@deco\nclass A:\n    def m(self):\n        self.allclose = print",
])
def test_attribute_stores_only_on_a_methods_own_instance(snippet):
    assert_rejected(snippet, "patches-module")


@pytest.mark.parametrize("snippet", [
    "class A:\n    def m(self):\n        self.allclose = print\nA.m(1)",
    "C = ModelNew",
    "x = [ModelNew]",
    "class Sub(ModelNew):\n    def f(self):\n        return super(Sub, Sub).forward",
    "class Sub(ModelNew):\n    def f(self):\n        return type(self).forward",
])
def test_methods_cannot_be_reached_unbound(snippet):
    """Called unbound, a method would take any object (torch.Tensor) as `self` and patch it."""
    assert {"forbidden-attribute", "forbidden-call"} & set(codes(snippet)), reasons(GOOD + snippet)


@pytest.mark.parametrize("snippet", [
    "class A(torch.Tensor):\n    __torch_function__ = staticmethod(print)",
    "class A(torch.Tensor):\n    __torch_dispatch__ = print",
    "class A:\n    __getattr__ = print",
    "class A:\n    __init_subclass__ = print",
    "class A:\n    for __call__ in [print]:\n        pass",
    "class A:\n    __array__: object = print",
    "class A:\n    def __new__(cls):\n        pass",
    "class A:\n    def __reduce__(self):\n        pass",
    "class A:\n    def __del__(self):\n        pass",
    "def __getattr__(name):\n    return 1",
    "__builtins__ = {}",
])
def test_dunder_bindings_are_rejected_like_dunder_defs(snippet):
    assert_rejected(snippet, "forbidden-def")


@pytest.mark.parametrize("snippet, code", [
    ("class A:\n    def m(self):\n        def g():\n            nonlocal self\n            self = torch\n"
     "        g()\n        self.allclose = print", "forbidden-global"),
    ("import enum\nclass M(enum.EnumMeta):\n    pass\nclass A(metaclass=M):\n    pass", "forbidden-construct"),
    ("import torch\nx = torch" + ".nn" * 900, "forbidden-construct"),
    ("x = a" + ".b" * 5000, "syntax-error"),
])
def test_what_the_reading_cannot_follow_is_refused(snippet, code):
    assert_rejected(snippet, code)


DOT = "\n@triton.jit\ndef _mm(a, b, acc, **kw):\n    return {call}\n"


@pytest.mark.parametrize("prelude, call", [
    ('PREC = "tf32"', "tl.dot(a, b, input_precision=PREC)"),
    ('PREC = "ieee"', "tl.dot(a, b, input_precision=PREC)"),
    ("", 'tl.dot(a, b, None, "tf32")'),
    ('PREC = "tf32"', "tl.dot(a, b, acc, PREC)"),
    ("", "tl.dot(a, b, **kw)"),
    ('ARGS = (None, "tf32")', "tl.dot(a, b, *ARGS)"),
    ("", 'tl.dot(a, b, input_precision="ieee", allow_tf32=True)'),
    ("FLAG = False", 'tl.dot(a, b, input_precision="ieee", allow_tf32=FLAG)'),
    ("", 'tl.dot(a, b, None, "ieee", 0)'),
    ("from triton.language import dot", "dot(a, b)"),
    ("from triton.language import dot as d", 'd(a, b, input_precision="tf32")'),
    ("d = tl.dot", 'd(a, b, input_precision="ieee")'),
    ("import triton.language as tl2\nL = tl2", "L.dot(a, b)"),
    ("", "(d := tl.dot)(a, b, input_precision=\"ieee\")"),
    ("", "tl.dot_scaled(a, None, 'e4m3', b, None, 'e4m3')"),
    ("from triton.language import float16", "a.to(float16)"),
    ("", "a.to(tl.bfloat16)"),
    ("", "a.to(tl.float8e4nv)"),
    ("", 'a.to(tl.dtype("fp16"))'),
    ("", 'tl.inline_asm_elementwise("cvt.rn.f16.f32 $0, $1;", "=h,r", [a], dtype=tl.float32, is_pure=True, pack=1)'),
])
def test_tl_dot_precision_is_judged_however_tl_dot_is_named(prelude, call):
    source = GOOD + "\n" + prelude + DOT.format(call=call)
    assert any(r.startswith("low-precision") for r in reasons(source)), (call, reasons(source))
    assert not any(r.startswith("low-precision") for r in reasons(source, float32=False))


@pytest.mark.parametrize("snippet", [
    "x = torch.empty(1).half()",
    "x = torch.empty(1).to(torch.half)",
    "from torch import bfloat16\nx = torch.empty(1, dtype=bfloat16)",
    "T = torch\nx = torch.empty(1, dtype=T.float16)",
])
def test_low_precision_types_are_resolved_through_aliases(snippet):
    assert_rejected(snippet, "low-precision")
    assert codes(snippet, float32=False) == []


@pytest.mark.parametrize("prelude, call", [
    ("", 'tl.dot(a, b, input_precision="ieee")'),
    ("", 'tl.dot(a, b, acc, "ieee")'),
    ("", 'tl.dot(a, b, None, "ieee", False)'),
    ("", 'tl.dot(a, b, acc, input_precision="ieee", out_dtype=tl.float32)'),
    ("from triton.language import dot as d", 'd(a, b, input_precision="ieee")'),
    ("import triton.language as tl2", 'tl2.dot(a, b, input_precision="ieee")'),
])
def test_literal_ieee_dots_pass(prelude, call):
    assert reasons(GOOD + "\n" + prelude + DOT.format(call=call)) == []


LEGIT = '''
import functools
import itertools
import math
import numbers
import operator
import dataclasses
import enum
from typing import Optional

import torch.nn.functional as F
from torch import nn
from torch.nn import functional as F2
from triton import language as tl2
from triton.language.extra import libdevice
from triton.language.extra.cuda import libdevice as cuda_libdevice


@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4)], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % 128 == 0})
@triton.jit
def _act_kernel(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    y = libdevice.erf(x) + tl.math.erf(x) + cuda_libdevice.erf(x) + tl.extra.cuda.libdevice.erf(x)
    for _ in tl.static_range(2):
        y = tl2.maximum(y, tl.full((BLOCK,), 0, tl.float32))
    y = tl.max(y, axis=0, propagate_nan=tl.PropagateNan.ALL) + y
    tl.store(x_ptr + offs, tl.where(offs < n, y, 0.0), mask=offs < n)


@dataclasses.dataclass(frozen=True)
class Config:
    BLOCK: int = 128


class Mode(enum.Enum):
    EXACT = 1


def launch(x: torch.Tensor, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    assert isinstance(x, (torch.Tensor, numbers.Number)) and type(x) is torch.Tensor
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    scale = math.sqrt(x.stride(0)) * math.prod(x.shape) * functools.reduce(operator.mul, x.shape, 1)
    for _, _ in itertools.product(range(2), range(2)):
        pass
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    _act_kernel[grid](out, n)
    device = torch.cuda.current_device() if torch.cuda.is_available() else None
    try:
        pass
    except torch.cuda.OutOfMemoryError:
        pass
    finish = functools.partial(F.gelu, approximate="tanh")
    return finish(out) + F2.relu(out) * scale + Config.BLOCK + Mode.EXACT.value + Mode(1).value


class Helper(nn.Module):
    pass


class ModelNew2(torch.nn.Module):
    def __init__(self, n):
        super(ModelNew2, self).__init__()
        self.weight = torch.nn.Parameter(torch.randn(n))
        torch.nn.init.kaiming_uniform_(self.weight.view(1, -1), a=math.sqrt(5))
        self.helper = Helper()
        self.ln = torch.nn.LayerNorm(n)
        self.ln.weight = torch.nn.Parameter(torch.ones(n))
        self.scale = 1.0
        self.scale *= 2
        self.register_buffer("running", torch.zeros(n))

    @torch.no_grad()
    def forward(self, x):
        self.last_shape = x.shape
        with torch.no_grad():
            return launch(x) * triton.next_power_of_2(x.shape[-1])


if __name__ == "__main__":
    print(ModelNew2(3))
'''


def test_legit_kernel_idioms_pass():
    assert reasons(GOOD + LEGIT) == []


def _verified_part(text: str) -> str:
    """An exported op file: only the candidate source it carries, between the export's markers."""
    if "# ---- kernel source" not in text:
        return text
    return text.split("# ---- kernel source", 1)[1].split("\n", 1)[1].split("# ---- entry points", 1)[0]


def _float32_op(path: Path) -> bool:
    """Whether the kernel's op is a float32 op (its precision tricks are judged against float32): an
    exported op by the dtypes it was verified for (configs/<op>.json); the suite's own kernels are."""
    config = path.parent.parent / "configs" / f"{path.stem}.json"
    if path.parent.name != "ops" or not config.is_file():
        return True
    dtypes = {d for dts in json.loads(config.read_text())["dtype_sets"] for d in dts if d}
    return all(d in ("float32", "float64") or not d.startswith(("float", "bfloat")) for d in dtypes)


COMMITTED = sorted((ROOT / "opforge" / "backends" / "triton" / "knowledge").glob("*.py")) + sorted(
    p for p in (ROOT / "kernels_generated" / "kernels_generated" / "ops").glob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("path", COMMITTED + [KERNELS / n for n in (
    "good.py", "interpreter_only.py", "rms_norm_fixed_size.py", "wrong_no_mask.py")], ids=lambda p: p.stem)
def test_the_repos_kernels_pass(path):
    assert len(COMMITTED) > 30
    report = check_source(_verified_part(path.read_text()), float32_spec=_float32_op(path))
    assert report.reasons == [] and report.has_model_new and report.kernels


EXPERT_SPECS = ["ops/matmul.py", "ops/layer_norm.py", "ops/gelu_tanh.py", "ops/cumsum.py",
                "ops/cross_entropy.py", "benchmarks/expert_specs/max_pool2d_ceil.py",
                "benchmarks/expert_specs/batch_norm_eval.py"]


@pytest.mark.parametrize("spec", EXPERT_SPECS)
def test_expert_generated_kernels_pass(spec):
    """Generated, not verified: every configuration the offline expert would draft must be clean
    (the whole suite, 106 specs, passed when this allow-list was written)."""
    from opforge.codegen import generate
    path = ROOT / spec
    kernel = generate(path.read_text(), path.stem, {})
    for config in kernel.space:
        assert check_source(kernel.render(config), float32_spec=True).reasons == [], (spec, config)


@pytest.mark.parametrize("name, code", [
    ("static_from_torch_import_os", "forbidden-import: torch.os"),
    ("static_attrgetter", "forbidden-call: operator.attrgetter()"),
    ("static_alias_patch", "patches-module: assigns _T.allclose"),
    ("static_precision_name", "low-precision: tl.dot(input_precision=_PRECISION)"),
])
def test_static_only_cheats_are_caught(name, code):
    report = check_source((KERNELS / f"{name}.py").read_text(), float32_spec=True)
    assert report.has_model_new and report.kernels
    assert any(r.startswith(code) for r in report.reasons), report.reasons
