"""Warm starts for the jail: the host's half of sandbox/zygote.py.

A cold job is a fresh `python -I -B` in a fresh bubblewrap jail, and a short job spends most of its
time importing torch. A warm job gets the same jail (the same bwrap command line: namespaces, binds,
tmpfs, rlimits), holding only a placeholder (root's, so nothing of the job's uid can end it); a
zygote that imported the job's `preload` modules once forks a process into that jail's namespaces,
which drops to the job's fresh uid and runs the job's command line there. What the job sees is what
the cold job saw, with its imports already done; the zygote never runs job code (zygote.py).

One zygote per host process and (python, preload, environment), started on first use and ended
when the host closes its end (or dies). A zygote that cannot start or answer makes the job run cold.
`OPFORGE_WARM=0` turns warm starts off.
"""
from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import tempfile
import threading
import time
from typing import Callable

from opforge.sandbox import interrupt
from opforge.sandbox.base import CappedReader, Job, JobResult, StagedJob
from opforge.sandbox.process import kill_group
from opforge.sandbox import zygote as zygote_module
from opforge.sandbox.zygote import FLAGS

# The jail's command, its PID 1 (bwrap --as-pid-1), root's: it says it is ready, then holds the jail
# open until the host closes its stdin. It ignores SIGCHLD, so what a job orphans is reaped at once:
# a job's kill(-1) then finds nothing left, as in a cold jail whose only other process is bwrap's init.
HOLD = ("import os, signal, sys; signal.signal(signal.SIGCHLD, signal.SIG_IGN); "
        "sys.stdout.write('ready\\n'); sys.stdout.flush(); os.read(0, 1)")


START_TIMEOUT_S = 120.0  # a zygote's imports (torch: seconds)
SETTLE_S = 15.0  # after the jail was killed, how long the zygote may take to report the job's end


def placeholder(python: str) -> list[str]:
    return [python, "-I", "-S", "-c", HOLD]


def enabled() -> bool:
    return os.environ.get("OPFORGE_WARM", "1") != "0"


def startable(argv_tail: list[str], preload: tuple[str, ...]) -> bool:
    """Whether a job's command line (after the interpreter) can be run by a zygote: `-I -B -m MODULE
    ...` or `-I -B -c CODE ...`, with something to preload."""
    return bool(preload) and argv_tail[:len(FLAGS)] == FLAGS and argv_tail[len(FLAGS):len(FLAGS) + 1] in (["-m"], ["-c"])


class ZygoteGone(Exception):
    """The zygote could not start or stopped answering: run the job cold."""


class Zygote:
    def __init__(self, python: str, preload: tuple[str, ...], env: dict[str, str]) -> None:
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.errors = tempfile.TemporaryFile()
        self.lock = threading.Lock()
        try:
            # as a script, not `-m`: nothing of opforge is imported into what every job starts from
            self.proc = subprocess.Popen([python, *FLAGS, zygote_module.__file__, str(theirs.fileno()), *preload],
                                         env=env, cwd="/", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=self.errors, pass_fds=(theirs.fileno(),), start_new_session=True)
        finally:
            theirs.close()
        self.control.settimeout(START_TIMEOUT_S)
        try:
            ready = self.control.recv(16)
        except OSError:
            ready = b""
        self.control.settimeout(None)
        if ready != b"ready":
            self.close()
            raise ZygoteGone(f"the zygote did not start: {self.stderr_tail()}")

    def stderr_tail(self) -> str:
        self.errors.seek(0)
        return self.errors.read().decode("utf-8", "replace").strip()[-300:] or f"exit {self.proc.poll()}"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def start(self, request: dict, out_fd: int, err_fd: int) -> socket.socket:
        """Ask for one job; the returned connection carries the zygote's one answer about it."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            with self.lock:
                socket.send_fds(self.control, [json.dumps(request).encode()], [theirs.fileno(), out_fd, err_fd])
        except OSError as exc:
            ours.close()
            raise ZygoteGone(f"the zygote stopped taking jobs ({exc})") from None
        finally:
            theirs.close()
        return ours

    def close(self) -> None:
        self.control.close()  # the zygote ends at this EOF
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.errors.close()


_zygotes: dict[tuple, Zygote] = {}
_zygotes_lock = threading.Lock()


def _key(python: str, preload: tuple[str, ...], env: dict[str, str]) -> tuple:
    return os.getpid(), python, preload, tuple(sorted(env.items()))


def zygote(python: str, preload: tuple[str, ...], env: dict[str, str]) -> Zygote:
    """This process's zygote for these imports and this environment (a forked host process makes its own)."""
    key = _key(python, preload, env)
    with _zygotes_lock:
        found = _zygotes.get(key)
        if found is not None and found.alive():
            return found
        _zygotes[key] = made = Zygote(python, preload, env)
        return made


def forget(python: str, preload: tuple[str, ...], env: dict[str, str]) -> None:
    with _zygotes_lock:
        found = _zygotes.pop(_key(python, preload, env), None)
    if found is not None:
        found.close()


def _read_line(stream, deadline: float) -> bytes:
    """One line from a pipe, or b"" at EOF or past the deadline."""
    line = b""
    while not line.endswith(b"\n"):
        left = deadline - time.perf_counter()
        if left <= 0 or not select.select([stream], [], [], left)[0]:
            return b""
        chunk = os.read(stream.fileno(), 1)
        if not chunk:
            return b""
        line += chunk
    return line


def _child_pid(fd: int, deadline: float) -> int | None:
    """bubblewrap's --info-fd report: the host pid of the jail's init."""
    text = b""
    while b"}" not in text:
        left = deadline - time.perf_counter()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        text += chunk
    try:
        return int(json.loads(text.decode())["child-pid"])
    except (ValueError, KeyError, TypeError):
        return None


def run(jail_argv: Callable[[int], list[str]], jail_env: dict[str, str], staged: StagedJob, job: Job,
        argv_tail: list[str], env: dict[str, str], cwd: str, uid: int, limits: dict[int, int],
        preexec: Callable[[], None], runtime: str, zygote_of: Callable[[], Zygote]) -> JobResult:
    """One job in a jail whose command is PLACEHOLDER (`jail_argv(info_fd)`, started with `jail_env`),
    its process forked by the zygote. Raises ZygoteGone when the zygote could not start the job
    (nothing of it ran)."""
    started = time.perf_counter()
    deadline = started + job.timeout_s
    info_read, info_write = os.pipe()
    try:
        jail = subprocess.Popen(jail_argv(info_write), env=jail_env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, preexec_fn=preexec, pass_fds=(info_write,))
    finally:
        os.close(info_write)
    jail_errors = CappedReader(jail.stderr)
    jail_errors.start()
    out_read = err_read = None
    try:
        ready = _read_line(jail.stdout, deadline)
        target = _child_pid(info_read, deadline) if ready == b"ready\n" else None
        if target is None:  # bubblewrap could not build the jail: as a cold job that died there
            kill_group(jail.pid)
            code = jail.wait()
            return staged.job_result(job, runtime, code, "", jail_errors.text(), time.perf_counter() - started,
                                     timed_out=time.perf_counter() > deadline)
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        request = {"target": target, "argv": argv_tail, "env": env, "cwd": cwd, "uid": uid,
                   "limits": sorted(limits.items())}
        try:
            conn = zygote_of().start(request, out_write, err_write)
        finally:
            os.close(out_write)
            os.close(err_write)
        readers = [CappedReader(os.fdopen(out_read, "rb")), CappedReader(os.fdopen(err_read, "rb"))]
        out_read = err_read = None  # the readers own them now
        for reader in readers:
            reader.start()
        with conn:
            answer, timed_out = _answer(conn, deadline)
            if timed_out:
                kill_group(jail.pid)  # the jail's init dies, its PID namespace with it: the job too
                answer, _ = _answer(conn, time.perf_counter() + SETTLE_S)
        wall = time.perf_counter() - started
        kill_group(jail.pid)  # what the job left running goes with its jail, before its output is read
        stdout, stderr = (r.text() for r in readers)
        if answer is not None and "error" in answer:  # the manager failed before it forked the job
            raise ZygoteGone(f"the zygote could not start the job: {answer['error']}")
        if answer is None:  # the job ran, but how it ended is lost: a death the verdict reports as such
            stderr = f"{stderr.rstrip()}\nsandbox: the zygote lost the job's exit status".lstrip()
            return staged.job_result(job, runtime, None, stdout, stderr, wall, timed_out=timed_out)
        return staged.job_result(job, runtime, os.waitstatus_to_exitcode(int(answer["status"])), stdout, stderr,
                                 wall, timed_out=timed_out, cpu_s=float(answer.get("cpu_s") or 0.0),
                                 peak_rss_mb=float(answer.get("max_rss_kb") or 0.0) / 1024)
    finally:
        for fd in (info_read, out_read, err_read):
            if fd is not None:
                os.close(fd)
        kill_group(jail.pid)
        jail.stdin.close()
        jail.wait()
        jail.stdout.close()


def _answer(conn: socket.socket, deadline: float) -> tuple[dict | None, bool]:
    """(the zygote's answer or None, whether the deadline passed first); waits in slices, so that
    an interrupt stops the job (interrupt.check)."""
    while not select.select([conn], [], [], min(0.25, max(deadline - time.perf_counter(), 0)))[0]:
        if time.perf_counter() >= deadline:
            return None, True
        interrupt.check()
    try:
        data = conn.recv(1 << 16)
        return (json.loads(data.decode()) if data else None), False
    except (OSError, ValueError):
        return None, False
