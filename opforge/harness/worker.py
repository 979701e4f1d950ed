"""The evaluation worker: `python -m harness.worker JOB.json` runs one job on candidate code.

This is the only process that imports a candidate, and it holds neither the reference nor the
comparison (see harness/checker.py and harness/judge.py). It is started by a sandbox runtime
(sandbox/) with a time limit, a scrubbed environment and a scratch directory; it writes what the
candidate did as JSON to the path named in the job, and the outputs to `outputs.pt`. Only the
standard library and the backend table are imported before the job's backend plugin sets up the
process (Triton's TRITON_INTERPRET has to be set before Triton is imported).

Job fields: mode ("build" | "run" | "verify"), backend (a backends name), candidate_path, inputs_path, outputs_path, result_path,
device ("cpu" | "cuda"), arch, float32. The sandbox knows none of this: the caller names the module
(MODULE) and what it imports from (mounts()) in each sandbox.Job.
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback
from functools import lru_cache
from pathlib import Path

MODULE = "opforge.harness.worker"  # what a sandbox runs: python -I -B -m opforge.harness.worker JOB.json


@lru_cache(maxsize=1)
def mounts() -> tuple[str, ...]:
    """The host paths the worker imports from, for a sandbox to bind read-only: the opforge package
    and the site directories of torch, numpy and the backends' libraries (inside the running environment as a rule, but an
    environment may borrow another's site-packages through a .pth line)."""
    import importlib.util

    from opforge.backends import candidate_libraries

    sites = []
    for name in ("torch", *candidate_libraries(), "numpy"):  # what the worker and its candidates import
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            sites.append(str(Path(list(spec.submodule_search_locations)[0]).resolve().parent))
    return (str(Path(__file__).resolve().parent.parent), *dict.fromkeys(sites))  # the opforge package: its __init__ too


def run_job(job: dict) -> dict:
    """mode "build": AOT-compile the launches; "run": the trials; "verify": both, in one process on a
    device, in two forks of this one on the CPU (run_phases)."""
    if job["mode"] == "verify" and job.get("device", "cpu") == "cpu":
        return run_phases(job)
    from opforge.backends import DEFAULT, plugin

    plugin(job.get("backend", DEFAULT)).prepare_worker(job["mode"], job.get("device", "cpu"), job)
    from opforge.harness import checker, guards

    guards.install_tripwires()
    result: dict = {"build": None, "run": None}
    if job["mode"] == "build":
        result["build"] = checker.build_job(job)
        return result
    snapshot = guards.ModuleSnapshot()  # before any candidate code runs, so import-time patches show
    if job["mode"] == "verify":
        result["build"] = checker.build_job(job)
        if result["build"]["reasons"]:
            return result
    result["run"] = checker.run_plan(job, snapshot)
    return result


# A CPU verification: the build's forward (kernels recorded, then compiled for the target; Triton not
# interpreted), then the interpreted run. Triton reads TRITON_INTERPRET when it is first imported, for
# its own library functions too, so the two cannot share a process; they share this one's import of
# torch instead (most of a short job's time), each phase a fork of it made before any backend library
# or candidate code was loaded.
PHASES = ("build", "run")


def run_phases(job: dict) -> dict:
    """The phases in turn, each a fork with its own session and scratch directory, stopped at
    `phase_timeout_s`; the run only after a build without reasons. `phases` records each one's
    usage and how it ended; a phase that died or ran out of time leaves its part None and stops the
    job. With `own_tmp` (the sandbox gave this job private /tmp and processes), what the build left
    (processes, files) is removed before the run starts, as between two jobs."""
    from opforge.backends import DEFAULT, plugin

    plugin(job.get("backend", DEFAULT)).prepare_phases(job)
    import torch  # noqa: F401  (the shared import; nothing of a backend, see above)

    result: dict = {"build": None, "run": None, "phases": {}}
    for phase in PHASES:
        # the run knows what the build compiled (a backend that interprets only compiled launches)
        built = {k: (result["build"] or {}).get(k) for k in ("launch_keys", "reasons")} if phase == "run" else None
        part, record = _fork_phase({**job, "mode": phase, **({"built": built} if built else {})},
                                   float(job.get("phase_timeout_s") or 0) or None)
        result["phases"][phase] = record
        if part is None and not record["timed_out"]:
            raise PhaseDied(record["status"])
        if part is None:
            break
        result[phase] = part.get(phase)
        if "error" in part:  # the phase's own process failed on its way: its words, as a worker's
            result.update(error=part["error"], traceback=part.get("traceback"))
            break
        _write_json(job["result_path"], result)  # so far: a job killed from outside still leaves the build's report
        if phase == "build" and (not isinstance(part.get("build"), dict) or part["build"].get("reasons")):
            break
        if problem := _clear_after(record["scratch"], bool(job.get("own_tmp"))):
            result["error"] = f"sandbox: {problem}"
            break
    return result


def _fork_phase(job: dict, timeout_s: float | None) -> tuple[dict | None, dict]:
    """(the phase's result or None, its record: wall_s, cpu_s, max_rss_mb, exit, timed_out, scratch)."""
    from opforge.sandbox.process import kill_group, wait_until

    base = os.environ.get("TMPDIR") or os.getcwd()  # the job's scratch (a jail may leave the cwd at /)
    scratch = os.path.join(base, f"phase-{job['mode']}")
    os.mkdir(scratch, 0o700)
    path = f"{job['result_path']}.{job['mode']}"
    began = time.perf_counter()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the phase: nothing returns from here
        try:
            os.setsid()
            die_with_parent()
            _apart_from_the_worker()
            if os.getcwd() == base:
                os.chdir(scratch)
            for key, value in list(os.environ.items()):  # HOME, TMPDIR, caches: into this phase's scratch
                if value == base or value.startswith(base + "/"):
                    os.environ[key] = scratch + value[len(base):]
            owner = os.getpid()
            try:
                part = run_job(job)
            except BaseException as exc:
                part = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-4000:]}
            if os.getpid() == owner:  # not a process the candidate forked that returned here
                _write_json(path, part)
                sys.stdout.flush()
                sys.stderr.flush()
        finally:
            os._exit(0)
    timed_out, status, usage = wait_until(pid, began + timeout_s if timeout_s is not None else float("inf"))
    kill_group(pid)  # whatever the phase left running in its session
    record = {"wall_s": time.perf_counter() - began, "cpu_s": usage.ru_utime + usage.ru_stime,
              "max_rss_mb": usage.ru_maxrss / 1024, "exit": os.waitstatus_to_exitcode(status), "status": status,
              "timed_out": timed_out, "scratch": scratch}
    part = None if timed_out else _read_part(path)
    return part, record


CLONE_NEWUSER, CLONE_NEWPID = 0x10000000, 0x20000000


def _apart_from_the_worker() -> None:
    """In a phase's process, before any candidate code: where the sandbox lets an unprivileged
    process make a user and PID namespace (a bubblewrap jail does; a container's seccomp and a chroot
    do not), the phase goes on in a new one, in a session of its own under the namespace's init. The
    worker is then out of its reach (its parent is that init, which its signals cannot kill), and
    whatever the phase leaves dies with the namespace. The processes in between only wait and end as
    the phase ended (its exit code, or the same signal)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0:
        return  # not allowed here: the sandbox's own PID namespace and kill(-1) (_clear_after) stand
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w", encoding="ascii") as fh:  # the same ids inside: files stay ours
            fh.write(text)
    read_end, write_end = os.pipe()
    init = os.fork()
    if init != 0:  # outside: wait for the namespace's init, end as its phase did
        os.close(write_end)
        os.waitpid(init, 0)
        with os.fdopen(read_end, "rb") as fh:
            told = fh.read(16)
        _end_as(int(told) if told.strip().lstrip(b"-").isdigit() else 1 << 8)
    os.close(read_end)
    die_with_parent()  # the namespace's init: the phase dies with it, so with the worker too
    phase = os.fork()
    if phase == 0:  # the phase
        os.close(write_end)
        os.setsid()
        return
    while True:  # the namespace's init: reap what the phase orphans until the phase itself ends
        pid, status = os.wait()
        if pid == phase:
            os.write(write_end, str(status).encode())
            os._exit(0)


def die_with_parent() -> None:
    """SIGKILL this process when its parent dies (PR_SET_PDEATHSIG): a phase does not outlive a
    worker killed with its caller (the `none` runtime has no container or jail to end it)."""
    import ctypes
    import signal

    ctypes.CDLL(None).prctl(1, signal.SIGKILL)


def _end_as(status: int) -> None:
    """Leave as a process with this wait status did: the same signal, or the same exit code."""
    import signal

    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


class PhaseDied(Exception):
    """A phase ended without a report: the job ends as it did, its result file left as it is."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _read_part(path: str) -> dict | None:
    """The phase's report: None when it left none, or not a JSON object within the cap (read as
    the sandbox reads result.json: no link followed, the size checked first)."""
    from opforge.sandbox.base import RESULT_CAP, read_capped

    data, _problem = read_capped(Path(path), RESULT_CAP)
    try:
        os.unlink(path)
        part = json.loads(data.decode("utf-8", "replace")) if data is not None else None
    except (OSError, ValueError):
        return None
    return part if isinstance(part, dict) else None


def _reap() -> None:
    """Collect exited children (as a namespace's PID 1, the orphans the phase left are ours)."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def _clear_after(scratch: str, own_tmp: bool) -> str | None:
    """What one phase left is not the next one's: its scratch directory; with a private /tmp and
    process namespace (own_tmp, never as root: kill(-1) would reach the host), every other process
    of this uid and everything in /tmp and /dev/shm."""
    import shutil
    import signal

    shutil.rmtree(scratch, ignore_errors=True)
    if not own_tmp or os.geteuid() == 0:
        return None
    for tries in range(101):  # kill(-1) spares this process and the namespace's init
        try:
            os.kill(-1, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):  # nothing of this uid left to signal
            break
        if tries == 100:
            return "processes the build left survive kill"
        _reap()
        time.sleep(0.02)
    for where in ("/tmp", "/dev/shm"):
        try:
            names = os.listdir(where)
        except OSError:
            continue
        for name in names:
            target = os.path.join(where, name)
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target, ignore_errors=True)
            else:
                try:
                    os.unlink(target)
                except OSError:
                    pass
    return None


def _write_json(path: str, data: dict) -> None:
    """Whole or not at all: written beside, then renamed over `path`."""
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(data, fh, default=str)
    os.replace(path + ".tmp", path)


def job_timeout(timeout_s: float, phased: bool) -> float:
    """A phased job stops each phase at timeout_s itself; its sandbox deadline is the backstop."""
    return timeout_s * len(PHASES) + 10 if phased else timeout_s


def phase_results(whole):  # (JobResult) -> [(phase, JobResult)]: the host side of run_phases
    """A CPU "verify" job as the build and run jobs it stands for (worker.run_phases): each phase's
    usage, report and failure, as if it had been a job of its own. A failure of the job itself (its
    deadline, the sandbox, a death outside the phases) is the first phase that has no record."""
    from dataclasses import replace

    from opforge.sandbox.base import cause_of

    payload = whole.payload if isinstance(whole.payload, dict) else {}
    records = payload.get("phases") if isinstance(payload.get("phases"), dict) else {}
    done = [phase for phase in PHASES if isinstance(records.get(phase), dict)]
    out = []
    for phase in done:
        record, last = records[phase], phase == done[-1]
        part = {phase: payload.get(phase)} if isinstance(payload.get(phase), dict) else None
        if last and "error" in payload:
            part = {**(part or {}), "error": payload["error"]}
        exit_code = record.get("exit") if isinstance(record.get("exit"), int) else None
        oom = str((part or {}).get("error", "")).startswith("MemoryError")
        cause = cause_of(exit_code, part, False, bool(record.get("timed_out")), oom)
        out.append((phase, replace(
            whole, payload=part, exit_code=exit_code, cause=cause, wall_s=_number_or(record.get("wall_s")),
            cpu_s=_number_or(record.get("cpu_s")), peak_rss_mb=_number_or(record.get("max_rss_mb")),
            outputs=whole.outputs if phase == "run" else {}, output_errors=whole.output_errors if phase == "run" else {})))
        if cause is not None or part is None or "error" in part:
            return out
    if whole.cause is not None or not done:
        out.append((PHASES[len(done)] if len(done) < len(PHASES) else done[-1], whole))
    elif len(done) < len(PHASES) and not (payload.get(done[-1]) or {}).get("reasons"):
        # the next phase ended without a report and the job with it (PhaseDied): its exit is the job's
        out.append((PHASES[len(done)], replace(whole, payload=None,
                                               cause=cause_of(whole.exit_code, None, False, False, False))))
    return out


def _number_or(value, default: float = 0.0) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def _usage() -> dict:
    """The job's own CPU time and peak memory: runtimes that cannot wait4 the worker read these."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"cpu_s": own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime,
            "max_rss_mb": max(own.ru_maxrss, kids.ru_maxrss) / 1024}


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as fh:
        job = json.load(fh)
    owner = os.getpid()
    try:
        result = run_job(job)
    except PhaseDied as died:
        sys.stdout.flush()
        _end_as(died.status)
    except BaseException as exc:  # a worker must always leave a result for the parent to read
        result = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-4000:]}
    if os.getpid() != owner:
        # A process the candidate forked got here (its fork bomb or pool returned): only the worker
        # itself writes the verdict, or racing children would overwrite or break it.
        os._exit(1)
    result["usage"] = _usage()
    _write_json(job["result_path"], result)
    sys.stdout.flush()
    # Skip interpreter teardown: candidate objects' finalizers have no business running after the verdict.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
