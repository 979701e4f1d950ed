"""The outputs file (`outputs.pt`) is the one thing the judge's process reads that the candidate's
process wrote besides result.json: it is parsed by the safe unpickler only (tensors and plain data,
never code), and read only within a cap sized from what a correct candidate writes
(judge.Material.output_cap), so a candidate can neither run code in the judge nor make it read
megabytes of junk."""
from __future__ import annotations

import io

import pytest
import torch

from conftest import KERNELS, TINY
from opforge.harness import judge, ladder
from opforge.harness.verify import VerifyOptions, prepare, verify
from opforge.sandbox.base import read_capped


class _OpensAFile:
    """Unpickled by a full unpickler, this opens (creates) a file in the judge's process."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def _saved(value) -> bytes:
    buf = io.BytesIO()
    torch.save(value, buf)
    return buf.getvalue()


def test_outputs_are_loaded_as_tensors_and_plain_data():
    outputs = [[torch.arange(6.0).reshape(2, 3)], [torch.tensor(3), 1.5, None]]
    loaded = judge.load_outputs(_saved({"outputs": outputs}))
    assert len(loaded) == 2 and torch.equal(loaded[0][0], outputs[0][0]) and loaded[1][1:] == [1.5, None]


def test_a_forged_outputs_file_that_would_run_code_is_refused_and_runs_nothing(tmp_path):
    marker = tmp_path / "ran"
    forged = _saved({"outputs": [[torch.ones(2)], [_OpensAFile(str(marker))]]})
    assert judge.load_outputs(forged) is None
    assert not marker.exists(), "unpickling the candidate's file ran code in the judge's process"


@pytest.mark.parametrize("data", [b"", b"not a pickle", _saved([torch.ones(1)]), _saved({"outputs": "x"})])
def test_a_truncated_or_malformed_outputs_file_is_no_outputs(data):
    assert judge.load_outputs(data) is None


def _material():
    spec, _ = prepare(TINY, VerifyOptions(seed=3, device="cpu"))
    return judge.prepare(spec, seed=3, trials=2, device="cpu")


def test_what_a_correct_candidate_writes_fits_the_cap_and_megabytes_more_do_not(tmp_path):
    material = _material()
    cap = material.output_cap()
    correct = [[t.clone() for t in material.cases[step["case"]].expected] for step in material.plan]
    path = tmp_path / "outputs.pt"
    torch.save({"outputs": correct}, path)
    size = path.stat().st_size
    data, why = read_capped(path, cap)
    assert why == "" and len(judge.load_outputs(data)) == len(material.plan)
    # the same file with 8 MiB of junk beside the outputs: a few MiB of slack, never more
    torch.save({"outputs": correct, "junk": torch.empty(2 << 20)}, path)
    assert path.stat().st_size <= size + (9 << 20)
    data, why = read_capped(path, cap)
    assert data is None and why.startswith("too large:"), (size, cap, path.stat().st_size)


def test_a_candidate_bloating_its_outputs_file_is_refused_by_the_cap(monkeypatch):
    # fail fast (harness/early.py) stops it at its first call (an extra output), before the junk of
    # every later call piles up; with the cap under that one call's junk the file is still refused
    v = verify(TINY, KERNELS / "hostile_bloated_outputs.py", VerifyOptions(seed=7, device="cpu"))
    assert not v["correct"] and v["not_run"]["calls"] == len(judge.prepare(prepare(TINY, VerifyOptions(
        device="cpu"))[0], 7, 5, "cpu").plan) - 1 and v["reasons"][0].startswith("mismatch:"), v["reasons"]
    monkeypatch.setattr(judge.Material, "output_cap", lambda self: 64 << 10)
    v = verify(TINY, KERNELS / "hostile_bloated_outputs.py", VerifyOptions(seed=7, device="cpu"))
    assert ladder.exit_code(v) == 1 and (v["failed_step"], ladder.failed_check(v)) == ("cpu_run", "run"), v["reasons"]
    assert any(r.startswith("runtime-error:") and "outputs.pt too large" in r for r in v["reasons"]), v["reasons"]
