"""The guarantee map (tests/guarantees.py) stays honest without running a mutation: each row's
mutation still applies to the tree exactly once per edit, each mapped test id exists, and the
mechanisms no other test isolates have a test here."""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch

from conftest import KERNELS, ROOT, TINY, require_runtime
from guarantees import GUARANTEES, apply_mutation, mapped_files
from opforge.exporter import export_library
from opforge.harness import guards, worker
from opforge.harness.compare import compare_tensor
from opforge.registry import Registry
from opforge.sandbox import Job, get_sandbox, jail, process


def test_the_map_covers_at_least_30_guarantees_with_unique_ids():
    ids = [row.id for row in GUARANTEES]
    assert len(ids) >= 30 and len(set(ids)) == len(ids)


@pytest.mark.parametrize("row", GUARANTEES, ids=[row.id for row in GUARANTEES])
def test_every_mutation_still_applies(row):
    apply_mutation(row, ROOT, write=False)


def _missing(collected: set[str]) -> list[str]:
    functions = {node.split("[", 1)[0] for node in collected}
    return [t for row in GUARANTEES for t in row.tests if t not in collected and t not in functions]


def test_every_mapped_test_exists(request):
    # First against what this run collected (make test: every file, already collected here, so
    # the ~10 CPU-s of a second collection are saved); whatever it lacks (a run narrowed by -k or
    # to one file) is asked of a fresh collection of the mapped files, which decides.
    ids = {item.nodeid.rsplit("@", 1)[0] if item.get_closest_marker("xdist_group") else item.nodeid
           for item in request.session.items}  # under --dist loadgroup, xdist appends "@group"
    if not (missing := _missing(ids)):
        return
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          *mapped_files()], cwd=ROOT, capture_output=True, text=True, timeout=300)
    missing = _missing({line.strip() for line in out.stdout.splitlines() if "::" in line})
    assert not missing, f"mapped tests that do not exist: {missing}\n{out.stderr[-2000:]}"


def test_module_snapshot_notices_an_added_tensor_attribute():
    snapshot = guards.ModuleSnapshot()
    torch.Tensor.opforge_added = property(lambda self: 0)
    try:
        assert "torch.Tensor.opforge_added (added)" in snapshot.changes()
    finally:
        del torch.Tensor.opforge_added
    assert snapshot.changes() == []


def test_an_error_below_the_floor_answers_to_the_rms_scaled_atol():
    """Elements whose reference is 0 escape the small-element bound (it checks |ref| above a floor
    of the RMS): only the atol scaled by the RMS (7e-4 here) catches 1e-4 written there, which an
    atol of 1e-2 taken as absolute would accept."""
    ref = torch.randn(64, 64, generator=torch.Generator().manual_seed(0)) * 1e-3
    ref[:, ::2] = 0.0
    out = ref.clone()
    out[:, ::2] = 1e-4
    assert torch.allclose(out, ref, atol=1e-2, rtol=1e-2)
    problem = compare_tensor(0, ref, out, 1e-2, 1e-2).problem
    assert problem is not None and "x rms" in problem, problem
    assert compare_tensor(0, ref, ref.clone(), 1e-2, 1e-2).problem is None


FORBIDDEN_CALL = """import torch, tiny_lib
try:
    tiny_lib.tiny_softmax(torch.randn(5, 37))
    print('ran')
except tiny_lib.FallbackForbidden as exc:
    print('forbidden:', exc)
print(dict(tiny_lib.fallbacks))
"""


def test_no_fallback_turns_a_fallback_into_fallback_forbidden(tmp_path):
    """A CPU without TRITON_INTERPRET=1 cannot run the kernel: the library would use the reference,
    and <NAME>_NO_FALLBACK=1 refuses instead (the cheap twin of the suite export's check)."""
    from test_export import run_python, verified

    with Registry(tmp_path / "reg.db") as reg:
        reg.promote(verified(reg, TINY, (KERNELS / "good.py").read_text()))
        export_library(reg, tmp_path / "lib", name="tiny_lib")
    env = {"TINY_LIB_NO_FALLBACK": "1", "TRITON_INTERPRET": "0"}
    ran = run_python(FORBIDDEN_CALL, cwd=tmp_path / "lib", env=env)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.startswith("forbidden: tiny_lib.tiny_softmax: the kernel does not apply"), ran.stdout
    assert ran.stdout.strip().endswith("{}"), ran.stdout  # refused, not counted as a fallback


WRITE_INTO_MOUNT = """import json, sys
sys.argv[1:] = sys.argv[-1:]
job = json.load(open(sys.argv[1]))
try:
    open(job['target'], 'w').write('escaped')
    said = 'wrote'
except OSError as exc:
    said = exc.strerror
open(job['result_path'], 'w').write(json.dumps({'said': said}))
"""


@pytest.mark.parametrize("jail_kind", ["bwrap", "unshare"])
def test_a_jobs_mounts_are_read_only_even_where_the_host_lets_anyone_write(jail_kind, monkeypatch):
    """The fresh uid could write into a world-writable mounted directory; only the read-only bind
    stops it (the adversarial write test's targets are closed to that uid by permissions alone)."""
    require_runtime("jail", jail.unavailable())
    if jail_kind == "unshare":
        monkeypatch.setenv("OPFORGE_JAIL", "unshare")
    with tempfile.TemporaryDirectory() as tmp:
        shared = Path(tmp)
        shared.chmod(0o777)
        target = shared / "escape.txt"
        monkeypatch.setattr(process, "WORKER", ["-I", "-B", "-c", WRITE_INTO_MOUNT])
        sb = get_sandbox("jail")
        try:
            result = sb.run(Job({"mode": "hostile", "target": str(target)}, {}, 60, worker=worker.MODULE,
                                mounts=(*worker.mounts(), str(shared))))
        finally:
            sb.close()
        assert not target.exists(), "a job wrote into a mounted host directory"
        assert result.payload == {"said": "Read-only file system"}, result
