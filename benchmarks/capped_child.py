"""A child process capped in time whose whole tree stops at the cap: run in a session of its own,
and past the cap SIGKILLed with every process it started (found by its process tree and by a marker
in their environment, so re-parented and setsid'd ones too) and the opforge sandbox containers
labelled with their pids. Each run reports what is left of it afterwards (`leftover`: should be
empty). Used by benchmarks/kernelbench_style.py."""
from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

MARKER = "OPFORGE_BENCH_TAG"


def _ppid_and_state(pid: int) -> tuple[int, str] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[1]), fields[0]


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def descendants(root: int) -> set[int]:
    """Every live process under `root` (its process tree, read from /proc)."""
    children: dict[int, list[int]] = {}
    for pid in _pids():
        info = _ppid_and_state(pid)
        if info:
            children.setdefault(info[0], []).append(pid)
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def tagged(tag: str) -> set[int]:
    """Processes whose environment carries MARKER=tag (a child's descendants, even re-parented ones)."""
    needle = f"{MARKER}={tag}".encode()
    found = set()
    for pid in _pids():
        try:
            if needle in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                found.add(pid)
        except OSError:
            continue
    return found


def alive(pid: int) -> bool:
    info = _ppid_and_state(pid)
    return info is not None and info[1] not in ("Z", "X")


def _containers(pids: set[int]) -> list[str]:
    """Ids of the opforge sandbox containers labelled with one of `pids` ([] without docker)."""
    ids = []
    for pid in sorted(pids):
        try:
            done = subprocess.run(["docker", "ps", "-aq", "--filter", f"label=opforge.pid={pid}"],
                                  capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return ids
        ids += done.stdout.split()
    return ids


def _kill_tree(child: subprocess.Popen, tag: str) -> set[int]:
    """SIGKILL the child's session, its process tree and its tagged processes until none is left;
    returns every pid killed."""
    killed: set[int] = set()
    for _ in range(20):
        pids = ({child.pid} | descendants(child.pid) | tagged(tag)) - {os.getpid()}
        pids = {p for p in pids if alive(p)}
        if not pids:
            break
        killed |= pids
        for pid in pids:
            for kill in (lambda p: os.killpg(p, signal.SIGKILL), lambda p: os.kill(p, signal.SIGKILL)):
                try:
                    kill(pid)
                except (ProcessLookupError, PermissionError):
                    pass
        time.sleep(0.1)
    child.wait()
    return killed | {child.pid}


def run_capped(argv: list[str], cap: float, env: dict | None = None, cwd: str | None = None) -> dict:
    """Run argv in a session of its own for at most `cap` seconds. Returns rc (None when killed),
    timed_out, seconds, stdout, stderr and leftover (processes or containers of it still there)."""
    tag = uuid.uuid4().hex
    env = {**(env or os.environ), MARKER: tag}
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=cwd, start_new_session=True)
        try:
            rc, timed_out = child.wait(timeout=cap), False
            pids = {child.pid}
        except subprocess.TimeoutExpired:
            rc, timed_out = None, True
            pids = _kill_tree(child, tag)
        seconds = time.perf_counter() - started
        containers = _containers(pids)
        if containers:
            subprocess.run(["docker", "rm", "-f", *containers], capture_output=True, timeout=60)
        left = [f"pid {p}" for p in sorted(pids | tagged(tag)) if alive(p)]
        left += [f"container {c[:12]}" for c in _containers(pids)]
        out.seek(0)
        err.seek(0)
        return dict(rc=rc, timed_out=timed_out, seconds=seconds, stdout=out.read().decode(errors="replace"),
                    stderr=err.read().decode(errors="replace"), leftover=left)
