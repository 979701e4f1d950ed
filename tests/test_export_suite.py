"""The issue's end-to-end export test: fill a registry from the standard suite, export, check the
committed kernels_generated/ is exactly what that export writes, build the wheel offline (twice,
byte-identical), install it into a fresh virtual environment that has only torch and Triton, and
there call every op under Triton's interpreter with fallback forbidden, opcheck every op, and see an
unsupported dtype fall back and say so. The session's `suite_export` fixture (conftest.py) pays for the suite once."""
from __future__ import annotations

import json
import subprocess
import sys
import venv
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from conftest import ROOT
from opforge.exporter.library import MARKER, build_wheel
from opforge.exporter.suite import suite_pairs

# The first test here pays for the session fixture suite_export (26 verifications: the 19 suite ops and 7 serving engine ops, and a wheel):
# 7.5 minutes on an idle 2-core machine, past the default 600 s when the other worker is busy.
pytestmark = [pytest.mark.xdist_group("export_suite"), pytest.mark.timeout(1800)]
COMMITTED = ROOT / "kernels_generated"
OPS = len(suite_pairs())  # the 19 suite ops and the serving specs that implement an engine op


@pytest.fixture(scope="module")
def exported(suite_export):
    assert suite_export.error is None, suite_export.error
    return suite_export.result


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and "dist" not in p.relative_to(root).parts and "__pycache__" not in p.parts}


def test_committed_kernels_generated_is_up_to_date(exported):
    fresh, committed = tree(exported.out), tree(COMMITTED)
    stale = sorted(k for k in fresh.keys() | committed.keys() if fresh.get(k) != committed.get(k))
    assert not stale, f"kernels_generated/ is out of date (run `make kernels`): {stale[:8]}"
    assert len(exported.ops) == OPS >= 19 + 4 and (COMMITTED / MARKER).is_file()


def test_the_wheel_builds_offline_and_byte_identically(exported, tmp_path):
    first = exported.wheel.read_bytes()
    again = build_wheel(exported.out, exported.name)
    assert again.read_bytes() == first


def _closure(names: list[str]) -> list[metadata.Distribution]:
    """The installed distributions that `names` need at run time (their requirements, recursively)."""
    seen: dict[str, metadata.Distribution] = {}
    todo = list(names)
    while todo:
        dist = metadata.distribution(todo.pop())
        key = dist.metadata["Name"].lower().replace("_", "-")
        if key in seen:
            continue
        seen[key] = dist
        for req in map(Requirement, dist.requires or []):
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return list(seen.values())


def fresh_venv(root: Path) -> Path:
    """A new virtual environment that sees only torch, Triton and what they need: their installed
    files linked into one directory named by a .pth file (no download, works offline)."""
    venv.EnvBuilder(with_pip=False).create(root / "venv")  # this pip installs into it (--python): no ensurepip, ~4 CPU-s
    deps = root / "deps"
    deps.mkdir()
    # numpy too: Triton's interpreter imports it without declaring it (the package's
    # `interpreter` extra names it).
    for dist in _closure(["torch", "triton", "numpy"]):
        site = Path(dist.locate_file(""))
        tops = {Path(f).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in tops:
            if (site / top).exists() and not (deps / top).exists():
                (deps / top).symlink_to(site / top)
    python = root / "venv" / "bin" / "python"
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "torch_and_triton.pth").write_text(str(deps) + "\n")
    return python


@pytest.fixture(scope="module")
def installed(exported, tmp_path_factory):
    root = tmp_path_factory.mktemp("fresh")
    python = fresh_venv(root)
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q",
                          str(exported.wheel)], capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr
    return python, root


def run_in(installed, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    python, root = installed
    base = {"PATH": "/usr/bin:/bin", "HOME": str(root), "TRITON_INTERPRET": "1"}
    return subprocess.run([python, *args], cwd=root, env=base | (env or {}), capture_output=True, text=True,
                          timeout=900)


def test_fresh_environment_has_only_torch_triton_and_the_library(installed):
    probe = ("import importlib.util as u, kernels_generated as k, torch; "
             "print(k.__file__); print(all(u.find_spec(m) is None for m in ('opforge', 'harness', 'cli', 'sqlalchemy'))); "
             "print(len(k.OPS), all(hasattr(torch.ops.kernels_generated, op) for op in k.OPS)); "
             "from importlib.metadata import entry_points as e; "
             "print(sorted(p.value for g in ('vllm.general_plugins', 'sglang.srt.plugins') for p in e(group=g)))")
    out = run_in(installed, "-c", probe)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert "/venv/" in lines[0] and lines[1] == "True" and lines[2] == f"{OPS} True"
    assert lines[3] == "['kernels_generated.plugins:register', 'kernels_generated.plugins:register']"


def test_every_op_runs_its_kernel_matches_the_reference_and_passes_opcheck(installed):
    out = run_in(installed, "-m", "kernels_generated.check", "--opcheck", "--json",
                 env={"KERNELS_GENERATED_NO_FALLBACK": "1"})
    report = json.loads(out.stdout or "{}")
    failed = [r for r in report.get("results", []) if not r["ok"]]
    assert out.returncode == 0 and not failed, failed or out.stderr[-3000:]
    assert len(report["results"]) == OPS and all(r["fallbacks"] == 0 and "skipped" not in r for r in report["results"])


def test_an_unsupported_dtype_falls_back_and_says_so(installed):
    code = ("import torch, kernels_generated as k\n"
            "x = torch.randn(4, 33, dtype=torch.float64)\n"
            "y = k.softmax(x)\n"
            "assert y.dtype == torch.float64 and torch.allclose(y, torch.softmax(x, -1))\n"
            "print(k.fallbacks)\n"
            "import os; os.environ['KERNELS_GENERATED_NO_FALLBACK'] = '1'\n"
            "try:\n    k.softmax(x)\nexcept k.FallbackForbidden as exc:\n    print('forbidden:', exc)\n")
    out = run_in(installed, "-c", code)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "{'softmax': 1}" in out.stdout and "forbidden:" in out.stdout
    assert "softmax: using the PyTorch reference: x is float64, verified for float32" in out.stderr


def test_exported_package_own_tests_pass(exported):
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", "-k", "falls_back"],
                         cwd=exported.out, capture_output=True, text=True, timeout=900,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(exported.out), "HOME": str(exported.out)})
    assert out.returncode == 0 and " passed" in out.stdout, out.stdout[-3000:] + out.stderr[-2000:]
