"""`pip install` gives the whole workbench under one import package: opforge's wheel, built once per
session from the repository's files and installed into a fresh venv outside the repository beside
another distribution that owns the top-level name `agents` (as OpenAI's Agents SDK does), holds
every package and data file under `opforge/` and nothing else, and verifies and runs a suite op
from there with its own copies of them while the other `agents` still imports.

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

# What ships: the opforge package whole, with opforge/ops (a link to the checkout's ops/, the suite the UI
# offers and the knowledge pairs with its kernels) as real files.
SUITE_OP = ("ops/silu.py", "opforge/backends/triton/knowledge/silu.py")  # a cheap suite op and its known-good kernel
# A distribution of another project with a top-level `agents` package, installed beside opforge.
OTHER_AGENTS = {"pyproject.toml": '[project]\nname = "other-agents"\nversion = "1.0"\n'
                                  '[tool.setuptools]\npackages = ["agents"]\n',
                "agents/__init__.py": 'WHO = "the other agents package"\n'}


def repository_files() -> list[str]:
    """What a clone holds: tracked files and untracked ones git does not ignore."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return sorted(name for name in out.split("\0") if name and ((ROOT / name).is_file() or (ROOT / name).is_symlink()))


def build_wheel(out: Path) -> Path:
    """opforge's wheel, built from a copy of the repository's files (no build/ or egg-info left in the
    checkout, nothing untracked or ignored inside), without network: setuptools from this environment."""
    source = out / "source"
    for name in repository_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_symlink():  # opforge/ops -> ../ops: setuptools follows it into the wheel
            (source / name).symlink_to(os.readlink(ROOT / name))
        else:
            shutil.copy2(ROOT / name, source / name)
    return pip_wheel(source, out / "dist", "opforge")


def pip_wheel(source: Path, dist: Path, name: str) -> Path:
    """The wheel of the project in `source`, offline: setuptools from this environment."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                    "--wheel-dir", str(dist), str(source)], check=True, capture_output=True, text=True)
    (wheel,) = dist.glob(f"{name}-*.whl")
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


def make_venv(wheels: list[Path], where: Path) -> Venv:
    """A fresh venv with only the wheels installed, and this environment's site-packages as a plain
    path line (a .pth), so its libraries import without their .pth files (opforge's editable finder)."""
    venv = Venv(where)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    for wheel in wheels:  # one at a time: pip refuses nothing when two wheels write the same file
        subprocess.run([sys.executable, "-m", "pip", "--python", str(where / "bin" / "python"), "install", "--quiet",
                        "--no-deps", "--no-index", str(wheel)], check=True, capture_output=True, text=True)
    (venv.site / "opforge_borrowed_libraries.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def other_agents(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("other_agents")
    for name, text in OTHER_AGENTS.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(text)
    return pip_wheel(source, source / "dist", "other_agents")


@pytest.fixture(scope="session")
def installed(wheel, other_agents, tmp_path_factory) -> Venv:
    """opforge first, then the other `agents`: were opforge to ship a top-level `agents`, the second
    install would overwrite it and the workbench below would fail to import its drafters."""
    return make_venv([wheel, other_agents], tmp_path_factory.mktemp("fresh") / "venv")


@pytest.fixture
def outside(tmp_path) -> Path:
    """A working directory outside the repository holding copies of the suite op's spec and kernel."""
    for name in SUITE_OP:
        shutil.copy(ROOT / name, tmp_path / name.replace("/", "_"))
    return tmp_path


def test_the_wheel_holds_every_file_of_the_package_and_nothing_else(wheel):
    """Every file under opforge/ (modules of every subpackage, templates, prompts, notes, example
    kernels, migrations, the UI's pages, the entry modules) and the op suite as opforge/ops/; no other
    top-level name in site-packages."""
    members = set(zipfile.ZipFile(wheel).namelist())
    files = [name for name in repository_files() if (ROOT / name).is_file() and not (ROOT / name).is_symlink()]
    wanted = {name for name in files if name.startswith("opforge/")}
    wanted |= {f"opforge/{name}" for name in files if name.startswith("ops/")}
    assert not wanted - members, f"missing from the wheel: {sorted(wanted - members)}"
    for data in ("codegen/__init__.py", "backends/triton/system.j2", "exporter/templates/op.py.j2",
                 "backends/triton/notes/masking.md", "backends/triton/knowledge/silu.py", "registry/alembic.ini",
                 "registry/migrations/script.py.mako", "ui/pages/request.py", "ops/silu.py", "app.py", "cli.py",
                 "harness/worker.py", "__init__.py", "__main__.py"):
        assert f"opforge/{data}" in members, data
    top = {name.split("/")[0] for name in members if not name.split("/")[0].endswith(".dist-info")}
    assert top == {"opforge"}, sorted(top)
    entry = next(n for n in members if n.endswith(".dist-info/entry_points.txt"))
    assert "opforge = opforge.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()


def test_the_installed_copy_is_what_imports(installed, outside):
    """Outside the repository every opforge module, the worker the sandbox runs and the UI's app
    resolve inside the fresh venv; the libraries come from this environment."""
    probe = ("import importlib.util, json, torch, agents\n"
             "import opforge.harness.worker as worker, opforge.codegen as expert, opforge.cli as cli\n"
             "import opforge.ui.server as server\n"
             "print(json.dumps({'modules': [m.__file__ for m in (worker, expert, cli, server)],"
             " 'app': importlib.util.find_spec('opforge.app').origin, 'server_app': str(server.APP),"
             " 'mounts': worker.mounts(), 'torch': torch.__file__, 'agents': agents.WHO}))")
    done = installed.run("python", "-I", "-c", probe, cwd=outside)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    for path in [*found["modules"], found["app"], found["server_app"], found["mounts"][0]]:
        assert Path(path).is_relative_to(installed.site), path
    assert not any(Path(path).is_relative_to(ROOT / "opforge") for path in found["mounts"])
    assert found["agents"] == "the other agents package"  # the other distribution's `agents`, untouched
    assert Path(found["torch"]).is_relative_to(sysconfig.get_paths()["purelib"])
    assert installed.run("opforge", "ui", "--help", cwd=outside).returncode == 0


def test_the_installed_app_serves_its_pages(installed, outside):
    """The app and its pages from the venv, under Streamlit's AppTest: the request page renders."""
    pytest.importorskip("streamlit")
    script = ("import sys, opforge.ui.server as server\nfrom streamlit.testing.v1 import AppTest\n"
              "at = AppTest.from_file(str(server.APP), default_timeout=60).run()\n"
              "assert not at.exception, [e.value for e in at.exception]\n"
              "print(at.title[0].value if at.title else '', '|', ' '.join(c.value for c in at.sidebar.caption))")
    done = installed.run("python", "-c", script, cwd=outside, env={"OPFORGE_DB": str(outside / "opforge.ui.db")})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Request a kernel" in done.stdout and str(outside / "opforge.ui.db") in done.stdout, done.stdout


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
