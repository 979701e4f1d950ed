"""The known-good Triton-Ascend kernels the drafter reads (opforge/backends/triton_ascend/knowledge/<op>.py)
are what they claim: every one has a suite spec, passes the Ascend static checks without a warning
and is retrieved for its own op; three representative ones (a row loop with sub-blocks, a 2-D tile
of short rows, a flattened block loop) go through the whole `verify --backend triton_ascend` ladder
here, in one shared sandbox. All eight: benchmarks/triton_ascend_knowledge.py (~4 min on 2 cores)."""
from __future__ import annotations

import os

import pytest

from conftest import ROOT
from opforge.backends import get_backend
from opforge.knowledge import load_examples, retrieve

KNOWLEDGE = ROOT / "opforge" / "backends" / "triton_ascend" / "knowledge"
OPS = sorted(p.stem for p in KNOWLEDGE.glob("*.py") if not p.stem.startswith("_"))
VERIFIED_HERE = ("softmax", "row_sum", "silu")


def test_every_example_has_a_suite_spec_and_is_loaded():
    assert len(OPS) >= 6 and set(VERIFIED_HERE) <= set(OPS)
    assert all((ROOT / "ops" / f"{op}.py").is_file() for op in OPS), OPS
    assert [e.op for e in load_examples("triton_ascend")] == OPS


@pytest.mark.parametrize("op", OPS)
def test_an_example_passes_the_ascend_static_checks_without_warnings(op):
    out = get_backend("triton_ascend").plugin().static((KNOWLEDGE / f"{op}.py").read_text(), float32_spec=True)
    assert not out.reasons and not out.warnings, (out.reasons, out.warnings)


@pytest.mark.parametrize("op", OPS)
def test_an_example_is_retrieved_first_for_its_own_op(op):
    items = retrieve((ROOT / "ops" / f"{op}.py").read_text(), backend="triton_ascend")
    code = [i for i in items if i.kind == "example"]
    assert code and code[0].source == f"backends/triton_ascend/knowledge/{op}.py", [i.source for i in items]


def test_representative_examples_verify_with_the_real_front_end_and_interpreter():
    from opforge.backends.triton_ascend import toolchain
    from opforge.harness.verify import VerifyOptions, prepare, verify_source
    from opforge.sandbox import get_sandbox

    chain, reason = toolchain.find()
    if chain is None:
        if os.environ.get("OPFORGE_CI"):
            pytest.fail(f"triton-ascend is required in CI: {reason}")
        pytest.skip(reason)
    options = VerifyOptions(backend="triton_ascend", device="cpu", sandbox="none", trials=2)
    sandbox = get_sandbox("none")
    try:
        verdicts = {}
        for op in VERIFIED_HERE:
            spec, hardware = prepare(ROOT / "ops" / f"{op}.py", options)
            verdicts[op] = verify_source(spec, hardware, (KNOWLEDGE / f"{op}.py").read_text(), options, sandbox)
    finally:
        sandbox.close()
    for op, verdict in verdicts.items():
        assert verdict["correct"], (op, verdict["reasons"])
        assert verdict["level"] == "emulated" and verdict["steps"]["frontend_compile"]["status"] == "passed", op
        assert all(k["pipeline"] == "hivmc-missing" for k in verdict["build"]["kernels"]), op
        assert not [w for w in verdict.get("warnings", []) if w.startswith("ascend-")], (op, verdict["warnings"])


def test_a_run_plans_with_its_own_backends_past_successes_only(tmp_path):
    """NVIDIA Triton and Triton-Ascend kernels are the same language, so retrieval cannot tell them
    apart by their text: the plan node reads the registry's successes of the run's backend only.
    A registry holding a verified softmax of each: each backend's run is shown its own."""
    from types import SimpleNamespace

    from opforge.agents.nodes.plan import plan
    from opforge.registry import Registry

    spec = (ROOT / "ops" / "softmax.py").read_text()
    kernels = {name: (ROOT / "opforge" / "backends" / name / "knowledge" / "softmax.py").read_text()
               + f"\n# recorded by a {name} run\n" for name in ("triton", "triton_ascend")}
    with Registry(tmp_path / "opforge.db") as reg:
        spec_id = reg.record_spec("softmax", "ops/softmax.py", spec)
        for name, source in kernels.items():
            cand = reg.record_candidate(spec_id, source, name, "llm")
            reg.record_evaluation(cand, "cpu", {}, {"correct": True, "failed_step": None, "steps": {},
                                                    "reasons": [], "timings": None})
        for name, source in kernels.items():
            ctx = SimpleNamespace(registry=reg, backend=name, spec=SimpleNamespace(source=spec), emit=lambda e: None)
            history = [k for k in plan({}, SimpleNamespace(context=ctx))["knowledge"] if k["kind"] == "history"]
            assert [k["text"] for k in history] == [source], (name, [k["title"] for k in history])
