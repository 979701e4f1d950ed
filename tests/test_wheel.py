"""`pip install` gives the whole workbench: opforge's wheel, built once per session from the
repository's files and installed into a fresh venv outside the repository, holds every package and
data file, and verifies and runs a suite op from there with its own copies of them.

The fresh venv borrows this environment's libraries (torch, triton...) through a .pth line instead
of reinstalling them: a path a .pth line adds is not scanned for .pth files of its own, so this
environment's editable install of opforge stays inactive there and the wheel's copy is what imports.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.xdist_group("wheel")  # one worker builds the wheel and the venv, once

# Top-level folders that ship whole (ops/: the suite the UI offers and the knowledge pairs with its kernels).
PACKAGES = ("agents", "exporter", "harness", "knowledge", "ops", "registry", "sandbox", "ui")
ENTRY_MODULES = ("cli.py", "app.py")  # top-level modules: app.py sits beside ui/, whose pages it names by path
SUITE_OP = ("ops/silu.py", "knowledge/triton/silu.py")  # a cheap suite op and its known-good kernel


def repository_files() -> list[str]:
    """What a clone holds: tracked files and untracked ones git does not ignore."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return sorted(name for name in out.split("\0") if name and (ROOT / name).is_file())


def build_wheel(out: Path) -> Path:
    """opforge's wheel, built from a copy of the repository's files (no build/ or egg-info left in the
    checkout, nothing untracked or ignored inside), without network: setuptools from this environment."""
    source = out / "source"
    for name in repository_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                    "--wheel-dir", str(out / "dist"), str(source)], check=True, capture_output=True, text=True)
    (wheel,) = (out / "dist").glob("opforge-*.whl")
    return wheel


@dataclass(frozen=True)
class Venv:
    root: Path

    @property
    def site(self) -> Path:
        (site,) = (self.root / "lib").glob("python*/site-packages")
        return site

    def run(self, program: str, *args: str, cwd: Path, env: dict[str, str] | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess:
        """`program` (python, opforge...) from the venv's bin/, in `cwd` (outside the repository)."""
        path = f"{self.root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
        return subprocess.run([str(self.root / "bin" / program), *args], cwd=cwd, capture_output=True, text=True,
                              env={**os.environ, "PATH": path, "VIRTUAL_ENV": str(self.root), **(env or {})},
                              timeout=timeout)


def make_venv(wheel: Path, where: Path) -> Venv:
    """A fresh venv with only the wheel installed, and this environment's site-packages as a plain
    path line (a .pth), so its libraries import without their .pth files (opforge's editable finder)."""
    venv = Venv(where)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(where / "bin" / "python"), "install", "--quiet",
                    "--no-deps", "--no-index", str(wheel)], check=True, capture_output=True, text=True)
    (venv.site / "opforge_borrowed_libraries.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def installed(wheel, tmp_path_factory) -> Venv:
    return make_venv(wheel, tmp_path_factory.mktemp("fresh") / "venv")


@pytest.fixture
def outside(tmp_path) -> Path:
    """A working directory outside the repository holding copies of the suite op's spec and kernel."""
    for name in SUITE_OP:
        shutil.copy(ROOT / name, tmp_path / name.replace("/", "_"))
    return tmp_path


def test_the_wheel_holds_every_file_of_the_packages_and_nothing_else(wheel):
    """Every file under the packages (modules of every subpackage, templates, prompts, notes, example
    kernels, migrations, the UI's pages, the op suite) and the two entry modules; no other top-level name."""
    members = set(zipfile.ZipFile(wheel).namelist())
    wanted = {name for name in repository_files() if name.startswith(tuple(f"{p}/" for p in PACKAGES))}
    wanted |= set(ENTRY_MODULES)
    assert not wanted - members, f"missing from the wheel: {sorted(wanted - members)}"
    for data in ("agents/expert/__init__.py", "agents/prompts/system.j2", "exporter/templates/op.py.j2",
                 "knowledge/notes/triton/masking.md", "knowledge/triton/silu.py", "registry/alembic.ini",
                 "registry/migrations/script.py.mako", "ui/pages/request.py", "ops/silu.py", "app.py"):
        assert data in members, data
    top = {name.split("/")[0] for name in members if not name.split("/")[0].endswith(".dist-info")}
    assert top == set(PACKAGES) | set(ENTRY_MODULES), sorted(top)


def test_the_installed_copy_is_what_imports(installed, outside):
    """Outside the repository every opforge module, the worker the sandbox runs and the UI's app
    resolve inside the fresh venv; the libraries come from this environment."""
    probe = ("import importlib.util, json, harness.worker, agents.expert, cli, torch, ui.server\n"
             "print(json.dumps({'modules': [m.__file__ for m in (harness.worker, agents.expert, cli, ui.server)],"
             " 'app': importlib.util.find_spec('app').origin, 'server_app': str(ui.server.APP),"
             " 'mounts': harness.worker.mounts(), 'torch': torch.__file__}))")
    done = installed.run("python", "-I", "-c", probe, cwd=outside)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    for path in [*found["modules"], found["app"], found["server_app"], found["mounts"][0]]:
        assert Path(path).is_relative_to(installed.site), path
    assert not any(Path(path).is_relative_to(ROOT / "harness") for path in found["mounts"])
    assert Path(found["torch"]).is_relative_to(sysconfig.get_paths()["purelib"])
    assert installed.run("opforge", "ui", "--help", cwd=outside).returncode == 0


def test_the_installed_app_serves_its_pages(installed, outside):
    """The app and its pages from the venv, under Streamlit's AppTest: the request page renders."""
    pytest.importorskip("streamlit")
    script = ("import sys, ui.server\nfrom streamlit.testing.v1 import AppTest\n"
              "at = AppTest.from_file(str(ui.server.APP), default_timeout=60).run()\n"
              "assert not at.exception, [e.value for e in at.exception]\n"
              "print(at.title[0].value if at.title else '', '|', ' '.join(c.value for c in at.sidebar.caption))")
    done = installed.run("python", "-c", script, cwd=outside, env={"OPFORGE_DB": str(outside / "ui.db")})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Request a kernel" in done.stdout and str(outside / "ui.db") in done.stdout, done.stdout


def test_the_installed_workbench_verifies_in_an_isolating_sandbox(installed, outside, default_sandbox):
    """`opforge verify` from the venv in the session's sandbox runtime: in the jail or the container
    the job sees the venv, the borrowed libraries and the system, never the repository's sources, so
    only the wheel's worker can have run."""
    if default_sandbox == "none":  # the fixture fails instead where CI promises a runtime
        pytest.skip("no isolating sandbox runtime here (docker or bubblewrap)")
    spec, kernel = (name.replace("/", "_") for name in SUITE_OP)
    done = installed.run("opforge", "verify", spec, kernel, "--json", "--device", "cpu", "--trials", "1",
                         "--sandbox", default_sandbox, cwd=outside, env={"OPFORGE_DB": str(outside / "reg.db")})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    verdict = json.loads(done.stdout)
    assert verdict["correct"] and verdict["sandbox"] == default_sandbox, verdict["reasons"]


def test_the_installed_workbench_runs_the_offline_expert(installed, outside):
    """`opforge run --drafter expert` from the venv drafts, verifies and records a kernel for the op."""
    spec = SUITE_OP[0].replace("/", "_")
    done = installed.run("opforge", "run", spec, "--drafter", "expert", "--budget", "1", "--candidates", "1",
                         "--device", "cpu", "--trials", "1", "--sandbox", "none", "--json", cwd=outside,
                         env={"OPFORGE_DB": str(outside / "reg.db")})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["best_candidate_id"] is not None, summary
