"""Print the fastest Python that `make setup` may build the venv from: among the interpreters of the
same major.minor version as the one running this script (so the same wheels install), each able to
make a venv with pip, the one that runs a fixed pure-Python workload in the least time.

Builds of one version differ a lot: on this project's 2-core VM pyenv's 3.11.7 (no PGO, no LTO,
--enable-shared) ran the Triton interpreter's verification 1.3-1.6x slower than Debian's 3.11.2,
and nearly everything the harness runs on a CPU is pure Python. Candidates: every `python3.X`
and `python3` on PATH, and the usual system locations. Each is timed in a child process, best
of three, on the same work, in three rounds over all of them (the best kept: builds a few percent
apart were picked by whichever the machine's load hit); one that fails the checks is left out. Prints the pick, and a line
per candidate on stderr; with no usable candidate it prints the running interpreter.

    python3 scripts/fastest_python.py            # -> /usr/bin/python3.11
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

SYSTEM_DIRS = ("/usr/bin", "/usr/local/bin", "/opt/python/bin")

# What a candidate runs: its version, whether it can make a venv with pip, and the best of three
# timings of a workload of calls, attribute reads, small objects, dicts and strings (what the
# Triton interpreter and the harness do most).
PROBE = r"""
import sys, time
try:
    import ensurepip, venv  # a Debian Python without python3.X-venv lacks ensurepip
    able = 1
except Exception:
    able = 0

class Cell:
    def __init__(self, x):
        self.x = x
    def add(self, y):
        return self.x + y

def work():
    total = 0
    for i in range(120000):
        c = Cell(i)
        total += c.add(i) if i % 3 else len(str(i))
    table = {}
    for i in range(60000):
        table[str(i)] = [i, (i, i)]
    return total + len(table)

best = float("inf")
for _ in range(3):
    began = time.perf_counter()
    work()
    best = min(best, time.perf_counter() - began)
print(sys.version_info[0], sys.version_info[1], able, best)
"""


def candidates(path: str) -> list[str]:
    """Interpreter paths, each once (by its resolved file), in PATH order then the system dirs."""
    minor = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    dirs = [d for d in path.split(os.pathsep) if d] + list(SYSTEM_DIRS)
    found: dict[str, str] = {}
    for directory in dirs:
        for name in (minor, "python3"):
            exe = shutil.which(name, path=directory)
            if exe and "/shims/" not in exe:  # pyenv's shims are scripts; the one it runs is this one
                found.setdefault(str(Path(exe).resolve()), exe)
    found.setdefault(str(Path(sys.executable).resolve()), sys.executable)
    return list(found.values())


def measure(exe: str) -> float | None:
    """Seconds of the workload under `exe`, or None when it is another version or cannot make a venv."""
    try:
        out = subprocess.run([exe, "-I", "-c", PROBE], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    try:
        major, minor, able, seconds = out.stdout.split()
        version, seconds = (int(major), int(minor)), float(seconds)
    except ValueError:  # not a Python that ran the probe
        return None
    return seconds if version == sys.version_info[:2] and able == "1" else None


ROUNDS = 3  # every candidate once per round, the best round kept: a busy moment hits one round, not one candidate


def main() -> int:
    found = candidates(os.environ.get("PATH", ""))
    best: dict[str, float | None] = {}
    for _ in range(ROUNDS):
        for exe in found:
            if exe in best and best[exe] is None:
                continue  # not usable: once is enough
            seconds = measure(exe)
            best[exe] = None if seconds is None else min(seconds, best.get(exe) or float("inf"))
    timed = []
    for exe in found:
        seconds = best[exe]
        print(f"  {exe}: " + (f"{seconds:.3f} s" if seconds is not None else "not usable (version or venv)"),
              file=sys.stderr)
        if seconds is not None:
            timed.append((seconds, exe))
    pick = min(timed)[1] if timed else sys.executable
    print(f"make: building the venv from {pick}", file=sys.stderr)
    print(pick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
