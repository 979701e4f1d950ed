"""scripts/fastest_python.py, which `make setup` builds the venv from: of the interpreters of this
version it finds, the fastest one that can make a venv; never another version or one without venv."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "fastest_python.py"
MINOR = f"python{sys.version_info[0]}.{sys.version_info[1]}"
REAL = str(Path(sys.executable).resolve())


def fake(directory: Path, body: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    exe = directory / MINOR
    exe.write_text("#!/bin/sh\n" + body + "\n")
    exe.chmod(0o755)
    return exe


def pick(tmp_path: Path, *dirs: Path) -> tuple[str, str]:
    env = {**os.environ, "PATH": os.pathsep.join(map(str, dirs))}
    out = subprocess.run([REAL, str(SCRIPT)], capture_output=True, text=True, env=env, timeout=120, check=True)
    return out.stdout.strip(), out.stderr


def test_the_fastest_usable_build_of_this_version_is_picked(tmp_path):
    major, minor = sys.version_info[:2]
    other = fake(tmp_path / "other", f"echo {major} {minor - 1} 1 0.00001")  # fastest, another version
    no_venv = fake(tmp_path / "novenv", f"echo {major} {minor} 0 0.00001")  # no ensurepip
    garbage = fake(tmp_path / "garbage", "echo not a python")
    fast = fake(tmp_path / "fast", f"echo {major} {minor} 1 0.0001")
    chosen, report = pick(tmp_path, other.parent, no_venv.parent, garbage.parent, fast.parent)
    assert chosen == str(fast), report
    assert report.count("not usable") == 3


def test_a_slowed_interpreter_loses_to_the_same_one_at_full_speed(tmp_path):
    # the same real Python with a profile hook on every call: several times slower on the workload
    slow = fake(tmp_path / "slow", f'exec {REAL} -I -c "import sys; sys.setprofile(lambda *a: None); '
                                   f'exec(sys.argv[1])" "$3"')
    chosen, report = pick(tmp_path, slow.parent)
    # a real interpreter, not the slowed one (which real one: the machine may hold several builds of
    # this version a few percent apart, e.g. Debian's and pyenv's, and the faster of those varies)
    assert chosen != str(slow) and str(Path(chosen).resolve()) != str(slow.resolve()), report
    times = {line.split(": ")[0].strip(): float(line.split(": ")[1].split()[0])
             for line in report.splitlines() if line.startswith("  ") and line.endswith(" s")}
    assert times[str(slow)] > times[chosen], report  # it was timed, and lost
