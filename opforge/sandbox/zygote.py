"""A warm interpreter for the jail: `python -I -B .../zygote.py FD MODULE...` imports the
named modules (torch: most of a short job's time) once, then for each job the host sends it forks a
process that enters that job's jail, drops to the job's uid as the cold path's `setpriv` does, and
runs the job's command line (`-m MODULE ARGS` or `-c CODE ARGS`) as a fresh `python -I -B` would.

The zygote never runs a job's code: it is the clean image every job starts from, and whatever a
job does dies with its fork. It is started with the jobs' own scrubbed environment (what a job can
read of its process's initial environment is a job's), in a session of its own, and talks to the
host only on the SOCK_SEQPACKET socket FD.

Per job the host sends one message, JSON {target, argv, env, cwd, uid, limits}, with three
descriptors (the job's connection, its stdout, its stderr). The zygote forks a manager for it and
goes back to waiting. The manager enters the namespaces of `target` (the init of the bubblewrap
jail the host started for this job: network, IPC, UTS, cgroup, PID and mount, so its root too),
forks the job there and waits for it, then answers on the job's connection {"status", "cpu_s",
"max_rss_kb"} (the wait status and usage of the job and what it reaped), or {"error"} when the job
could not be started. When the jail's init dies (the host kills it at the deadline, or the host
itself died) the PID namespace goes with it, the job included.

Standard library only: this runs before anything of a backend is imported.
"""
from __future__ import annotations

import ctypes
import importlib
import json
import os
import resource
import runpy
import signal
import socket
import sys
import traceback
import types

NAMESPACES = ("ipc", "uts", "net", "cgroup", "pid", "mnt")  # mnt last: /proc/TARGET is read before it
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 4, 24, 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
CAPABILITY_VERSION_3 = 0x20080522
FLAGS = ["-I", "-B"]  # the interpreter flags a job's command line must have to be started warm
_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_to(uid: int) -> None:
    """What the cold path's `setpriv --reuid=UID --regid=UID --clear-groups --inh-caps=-all
    --bounding-set=-all --no-new-privs` does: no groups, the uid and gid for good, an empty bounding,
    ambient and inheritable set (so no exec can gain a capability back), no new privileges; then
    dumpable, as a process that exec'd as this uid is."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    for cap in range(64):  # every capability the kernel knows; past the last, EINVAL
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:
            _check(-1, f"dropping capability {cap} from the bounding set")
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # absent on old kernels: nothing to clear
    os.setresuid(uid, uid, uid)  # clears the effective and permitted sets
    empty = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(_CapHeader(CAPABILITY_VERSION_3, 0)), empty), "clearing the inheritable set")
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    # The uid change made this process undumpable (its /proc files root's); the cold path's exec made
    # the worker dumpable again, as any process of its uid: the same here (the phases map their ids).
    _check(_libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "dumpable")


def _enter(target: int) -> None:
    """Join every namespace of `target`; the mount namespace's root and cwd become this process's."""
    fds = [(name, os.open(f"/proc/{target}/ns/{name}", os.O_RDONLY)) for name in NAMESPACES]
    for name, fd in fds:
        _check(_libc.setns(fd, 0), f"entering the jail's {name} namespace")
        os.close(fd)


def _fresh_seeds() -> None:
    """A cold job's libraries seed their global generators at import, from the OS: so does each warm
    job (Python's `random` reseeds itself after a fork; torch and NumPy do not). Only the str hash
    secret, fixed when an interpreter starts, is the zygote's for all of its jobs."""
    if "torch" in sys.modules:
        sys.modules["torch"].seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()


def _run_command(argv: list[str]) -> int:
    """`python -I -B -m MODULE ARGS` or `-c CODE ARGS` in this (already imported) interpreter: the
    exit code that Python would leave with."""
    mode, target, args = argv[len(FLAGS)], argv[len(FLAGS) + 1], argv[len(FLAGS) + 2:]
    try:
        if mode == "-m":
            sys.argv = [target, *args]
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.argv = ["-c", *args]
            main = types.ModuleType("__main__")
            sys.modules["__main__"] = main
            exec(compile(target, "<string>", "exec"), main.__dict__)  # noqa: S102 (the job's own command)
    except SystemExit as exc:
        code = exc.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1
    except BaseException:  # noqa: BLE001 (as the interpreter would: the traceback, exit 1)
        traceback.print_exc()
        return 1
    return 0


def _start_job(request: dict, out_fd: int, err_fd: int) -> None:
    """In the fork that became the job (inside the jail's PID namespace): never returns."""
    code = 1
    try:
        os.setsid()
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])  # nothing of the zygote's or the host's
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        for limit, value in request["limits"]:
            resource.setrlimit(limit, (value, value))
        _fresh_seeds()
        drop_to(int(request["uid"]))
    except BaseException as exc:  # noqa: BLE001 (the job never ran: say why on its stderr)
        os.write(2, f"zygote: could not start the job: {exc}\n".encode())
        os._exit(126)
    try:
        code = _run_command(request["argv"])
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001
                pass
        os._exit(code)


def _manage(request: dict, conn: socket.socket, out_fd: int, err_fd: int) -> None:
    """In the zygote's fork for one job: enter the jail, fork the job, wait, report. Never returns."""
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the zygote ignores it; this process waits
        _enter(int(request["target"]))
        os.chdir("/")
        pid = os.fork()
        if pid == 0:
            conn.close()
            signal.signal(signal.SIGINT, signal.default_int_handler)  # as a fresh interpreter has it
            _start_job(request, out_fd, err_fd)
        os.close(out_fd)
        os.close(err_fd)
        _, status, usage = os.wait4(pid, 0)
        answer = {"status": status, "cpu_s": usage.ru_utime + usage.ru_stime, "max_rss_kb": usage.ru_maxrss}
    except BaseException as exc:  # noqa: BLE001
        answer = {"error": f"{type(exc).__name__}: {exc}"}
    try:
        conn.send(json.dumps(answer).encode())
    finally:
        os._exit(0)


def main(argv: list[str]) -> None:
    control = socket.socket(fileno=int(argv[1]))
    for name in argv[2:]:
        importlib.import_module(name)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # managers are reaped by the kernel
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    control.send(b"ready")
    while True:
        try:
            message, fds, _flags, _addr = socket.recv_fds(control, 1 << 20, 3)
        except OSError:
            break
        if not message:  # the host closed its end (or died)
            break
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() == 0:
            control.close()
            _manage(json.loads(message), socket.socket(fileno=fds[0]), fds[1], fds[2])
        for fd in fds:
            os.close(fd)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
