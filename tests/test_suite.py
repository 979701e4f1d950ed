"""Every op of the standard suite has a known-good Triton kernel that passes the full pipeline:
static checks, an sm_90 AOT build, 5 seeded trials per input variant under the interpreter, and
every anti-cheat check."""
from __future__ import annotations

import pytest

from conftest import ROOT
from harness.verify import VerifyOptions, verify

OPS = sorted(p.stem for p in (ROOT / "ops").glob("*.py"))


def test_suite_is_complete():
    assert len(OPS) >= 16
    for op in OPS:
        assert (ROOT / "knowledge" / "triton" / f"{op}.py").is_file(), op


@pytest.mark.parametrize("op", OPS)
def test_known_good_kernel_verifies(op):
    v = verify(ROOT / "ops" / f"{op}.py", ROOT / "knowledge" / "triton" / f"{op}.py", VerifyOptions(device="cpu"))
    assert v["correct"], v["reasons"]
    assert v["trials"] == 5 and all(var["trials"] == 5 for var in v["variants"])
    assert len(v["variants"]) >= 3
    assert v["build"]["kernels"] and all(k["registers"] for k in v["build"]["kernels"])
    assert v["timings"] is None and v["timings_note"].startswith("no GPU")
