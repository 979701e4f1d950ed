"""Every op of the standard suite has a known-good Triton kernel that passes the full pipeline:
static checks, an sm_90 AOT build, seeded trials per input variant under the interpreter (5 in
`make kernels`, conftest.SUITE_TRIALS here), and
every anti-cheat check. The verdicts are the suite export's (conftest.suite_export: one
verification per op, shared with test_export_suite.py, in the same xdist group)."""
from __future__ import annotations

import pytest

from conftest import ROOT, SUITE_TRIALS
from opforge.exporter.suite import suite_pairs

# The first test here pays for the session fixture suite_export (26 verifications: the 19 suite ops and 7 serving engine ops, and a wheel):
# 7.5 minutes on an idle 2-core machine, past the default 600 s when the other worker is busy.
pytestmark = [pytest.mark.xdist_group("export_suite"), pytest.mark.timeout(1800)]
OPS = sorted(p.stem for p in (ROOT / "ops").glob("*.py"))
# The serving specs that implement an engine op (exporter/suite.py): verified and exported beside them.
ENGINE_OPS = sorted(spec.stem for spec, _ in suite_pairs() if spec.parent.name == "serving")


def test_suite_is_complete():
    assert len(OPS) >= 16
    for op in OPS:
        assert (ROOT / "opforge" / "backends" / "triton" / "knowledge" / f"{op}.py").is_file(), op


@pytest.mark.parametrize("op", OPS + ENGINE_OPS)
def test_known_good_kernel_verifies(op, suite_export):
    assert op in suite_export.verified, f"{op} was not verified by the suite export"
    v = suite_export.verified[op].verdict
    assert v["correct"], v["reasons"]
    assert v["trials"] == SUITE_TRIALS and all(var["trials"] == SUITE_TRIALS for var in v["variants"])
    assert len(v["variants"]) >= 3
    assert v["build"]["kernels"] and all(k["registers"] for k in v["build"]["kernels"])
    assert v["timings"] is None and v["timings_note"].startswith("no GPU")
