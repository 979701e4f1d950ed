"""The expert's generated Triton is byte-identical to what agents/expert rendered before its move to
opforge/codegen/ (tests/data/expert_golden.json, written at 8472527 by scripts/codegen_golden.py): every
configuration of every suite op (ops/) and of the top-level benchmarks/expert_specs (new specs
added with their first digests; about 40 s in all)."""
from __future__ import annotations

import importlib.util
import json

from conftest import ROOT

GOLDEN = json.loads((ROOT / "tests" / "data" / "expert_golden.json").read_text())


def _script():
    spec = importlib.util.spec_from_file_location("codegen_golden", ROOT / "scripts" / "codegen_golden.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = _script()


def _mismatches(paths) -> list[str]:
    bad = []
    for path in paths:
        key = str(path.relative_to(ROOT))
        now = SCRIPT.digests(path)
        if now != GOLDEN.get(key):
            bad.append(f"{key}: {now} != {GOLDEN.get(key)}")
    return bad


def test_every_suite_op_renders_the_golden_triton():
    paths = SCRIPT.spec_paths("ops/")
    assert len(paths) == sum(k.startswith("ops/") for k in GOLDEN) >= 19
    assert not _mismatches(paths)


def test_every_expert_spec_renders_the_golden_triton():
    paths = SCRIPT.spec_paths("benchmarks/expert_specs/")
    assert len(paths) == sum(k.startswith("benchmarks/") for k in GOLDEN) >= 80
    assert not _mismatches(paths)


def test_a_changed_byte_is_caught(monkeypatch):
    """The digests see one changed character of one configuration."""
    import opforge.backends.triton.emit.pointwise as pointwise
    monkeypatch.setattr(pointwise, "SPACE", ({**pointwise.SPACE[0], "BLOCK": 256},) + pointwise.SPACE[1:])
    assert _mismatches([ROOT / "ops" / "silu.py"])


def test_every_elementwise_op_has_a_triton_formatter():
    from opforge.backends.triton.emit.exprs import EXPR
    from opforge.codegen.exprs import ELEMENTWISE
    assert EXPR.keys() == ELEMENTWISE
