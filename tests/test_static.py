"""Static checks read the candidate's AST (it is never imported by the harness)."""
from __future__ import annotations

from conftest import KERNELS
from harness.static_checks import check_source

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
