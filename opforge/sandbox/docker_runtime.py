"""The `docker` runtime: jobs run in a container on the real Docker engine (docker SDK).

What it isolates: no network at all (`network_mode=none`), a read-only root, size-capped tmpfs
scratch, /tmp and /dev/shm, and the job directory (a tmpfs the host mounts per job, sized for its
files and declared outputs, seen through the jobs root bound with `rslave` propagation) as the
only writable paths; memory (swap included), CPU and pids limits from cgroups, a fresh
unprivileged uid, every capability dropped, no new privileges; GPUs are passed in with a device
request when the host has them. Between jobs in the warm container nothing of a job survives: each
job has its own scratch directory, and afterwards every process of the uid is killed, every
writable place is made writable again and emptied, and checked empty — a container whose wipe
fails is discarded, never reused. PID 1 is a zombie reaper that no job can ptrace. The image is
built from local files — no registry is needed: `docker import` of a skeleton root (a few empty
directories and a passwd file), with the system, the Python runtime and its environment, and the
job's mounts (its worker's package and libraries) bound read-only when the container starts.
What it does not: the kernel is shared (as with every container runtime).

A self-contained image for a GPU server, instead of host binds: build FROM an image with CUDA and
Python, `pip install` the workbench into it, and set OPFORGE_DOCKER_IMAGE to its tag; the runtime
then binds only the job directory."""
from __future__ import annotations

import atexit
import hashlib
import io
import logging
import os
import shutil
import tarfile
import tempfile
import threading
import time
from functools import lru_cache
from pathlib import Path

from opforge.sandbox import interrupt, mounts
from opforge.sandbox.base import (STDIO_CAP, CappedText, Job, JobResult, StagedJob, job_env, sandbox_uid,
                                  uncapped_warning)
from opforge.sandbox.exposure import exposure, symlinked_system_dirs
from opforge.sandbox.process import worker_argv

log = logging.getLogger("opforge.sandbox")
JOBS = "/jobs"
SCRATCH = "/scratch"
WRITABLE = "/scratch /tmp /dev/shm /dev/mqueue"  # every path the sandbox uid can write in the container
# Each job runs in a scratch directory of its own, made by the job's first process.
IN_OWN_SCRATCH = 'mkdir -m 700 "$0" && cd "$0" && exec "$@"'
# After each job, as the job's uid: kill every process of it (kill -1 spares PID 1 and the caller;
# loop until none is left), give back the write permission a job may have taken from its own
# directories (a 0555 directory survives `rm -rf`), delete everything, and prove it: exit non-zero
# when a file, an IPC object or a process is left, and the container is discarded. {select} steps
# around read-only binds that lie under a writable place (reset_script).
RESET = """
n=0
while kill -9 -1 2>/dev/null; do
  n=$((n + 1)); [ $n -lt 100 ] || {{ echo "processes survive kill" >&2; exit 3; }}; sleep 0.02
done
ipcrm --all 2>/dev/null
find {writable} -mindepth 1 {select} -exec chmod u+rwX {{}} + 2>/dev/null
find {writable} -mindepth 1 -maxdepth 1 {select} -exec rm -rf {{}} + 2>/dev/null
left=$(find {writable} -mindepth 1 {select} -print 2>/dev/null | head -5; tail -q -n +2 /proc/sysvipc/*)
[ -z "$left" ] || {{ echo "left after the wipe: $left" >&2; exit 4; }}
"""


def reset_script(read_only: list[str] | tuple[str, ...]) -> str:
    """RESET for a container whose read-only binds are `read_only` (see wipe_select)."""
    return RESET.format(writable=WRITABLE, select=wipe_select(read_only))


def wipe_select(read_only: list[str] | tuple[str, ...]) -> str:
    """The find selection of what a wipe may touch. A bind under a writable place (a checkout or
    venv under /tmp) sits on a mount point docker made in that tmpfs: the bind is pruned (never
    walked: it may be a whole site-packages) and the directories docker made above it (root's,
    0755: the job cannot write in them) are left alone; everything else is removed and checked."""
    import shlex

    roots = tuple(root + "/" for root in WRITABLE.split())
    binds = sorted({os.path.normpath(p) for p in read_only if os.path.normpath(p).startswith(roots)})
    above = sorted({str(d) for b in binds for d in Path(b).parents if str(d).startswith(roots)} - set(binds))
    if not binds:
        return ""
    pruned = " -o ".join(f"-path {shlex.quote(b)}" for b in binds)
    return f"\\( {pruned} \\) -prune -o " + " ".join(f"! -path {shlex.quote(a)}" for a in above)


# PID 1: reaps the orphans a job leaves (a zombie still counts against the pids limit), and is not
# dumpable (PR_SET_DUMPABLE 0), so a job of the same uid cannot ptrace it or write its memory to
# outlive the wipe; SIGINT ignored, the only signal Python would let a job stop it with. Its stdin is
# the owner's attach socket (StdinOnce): at EOF the owner is gone, even by SIGKILL, and PID 1 exits,
# which ends every job in the container with it.
REAPER = """
import ctypes, os, select, signal
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    if select.select([0], [], [], 0.25)[0] and not os.read(0, 65536):
        os._exit(0)
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass
"""
SKELETON_DIRS = ("jobs", "scratch", "tmp", "proc", "dev", "sys", "etc", "root", "work", "home", "opt", "usr")
PASSWD = "root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/scratch:/usr/sbin/nologin\n"
GROUP = "root:x:0:\nnogroup:x:65534:\n"


@lru_cache(maxsize=1)
def client():
    import docker

    return docker.from_env(timeout=30)


def unavailable() -> str | None:
    try:
        import docker  # noqa: F401
    except ImportError:
        return "the docker Python package is not installed"
    try:
        client().ping()
    except Exception as exc:  # the SDK raises several types for "no engine"; all mean unavailable
        client.cache_clear()
        return f"no Docker engine answers ({type(exc).__name__})"
    return None


def _skeleton() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name in SKELETON_DIRS:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o1777 if name in ("tmp", "scratch") else 0o755, 0
            tar.addfile(info)
        for link, target in symlinked_system_dirs().items():
            info = tarfile.TarInfo(link.lstrip("/"))
            info.type, info.linkname, info.mtime = tarfile.SYMTYPE, target, 0
            tar.addfile(info)
        for name, text in (("etc/passwd", PASSWD), ("etc/group", GROUP)):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def ensure_image() -> str:
    """The skeleton image, imported once per content hash: `opforge-sandbox:<hash>`."""
    override = os.environ.get("OPFORGE_DOCKER_IMAGE")
    if override:
        return override
    data = _skeleton()
    tag = hashlib.sha256(data).hexdigest()[:12]
    name = f"opforge-sandbox:{tag}"
    try:
        client().images.get(name)
    except Exception:  # docker.errors.ImageNotFound: import it from the tarball
        client().api.import_image_from_data(data, repository="opforge-sandbox", tag=tag)
    return name


class DockerSandbox:
    """One warm container per sandbox instance (an op run): each job is a fresh worker process in
    it (`docker exec`) in its own scratch directory, after which every process the job left is
    killed and every writable place wiped and checked empty. The container is re-created after any
    timeout, crash or failed wipe, and for a job whose mounts differ from those it was started with
    (its binds are fixed at creation); `close()` removes it."""

    name = "docker"

    def __init__(self, memory: str = os.environ.get("OPFORGE_SANDBOX_MEMORY", "8g"), pids: int = 512,
                 scratch: str = "512m", cpus: float | None = None) -> None:
        self.memory, self.pids, self.scratch = memory, pids, scratch
        self.cpus = cpus or float(os.cpu_count() or 1)
        self.container = None
        self._read_only: list[str] = []  # the container's read-only binds (set by _spec)
        self.jobs_root: Path | None = None
        self.uncapped: str | None = None  # why job directories cannot be size-capped, if they cannot
        self.uid = sandbox_uid()
        self.mounts: tuple[str, ...] = ()  # the Job.mounts the warm container binds
        self.owner = None  # the attach socket that is PID 1's stdin (_ensure_container)

    def run(self, job: Job) -> JobResult:
        started = time.perf_counter()
        staged = None
        try:
            if self.container is not None and job.mounts != self.mounts:
                self.close()
            self._ensure_container(job.mounts)
            staged = StagedJob(job, owner=self.uid, parent=self.jobs_root, inside_parent=JOBS,
                               capped=self.uncapped is None)
            code, timed_out, out, err = self._exec(staged, job)
            # killed by a signal or by the deadline, or anything left after the wipe: the next job
            # gets a fresh container (discarded only now: its job directory holds the result)
            reusable = not timed_out and code is not None and code < 128 and self._wipe()
            result = self._result(staged, job, code, timed_out, out, err, time.perf_counter() - started)
            if not reusable:
                self.close()
            return result
        except Exception as exc:  # the engine refused the job (bad image, daemon gone): never raise
            self.close()
            return JobResult(exit_code=None, payload=None, stderr=f"docker: {type(exc).__name__}: {exc}",
                             wall_s=time.perf_counter() - started, cause="denied", runtime=self.name)
        except BaseException:  # interrupted (Ctrl-C, SIGTERM): the job must not outlive its caller
            self.close()
            raise
        finally:
            if staged is not None:
                staged.cleanup()

    def close(self) -> None:
        """Remove the container, and with it any job still running in it (close() from another
        thread, or a `finally` unwinding an interrupt, stops a job mid-run)."""
        if self.container is not None:
            _remove(self.container)
            self.container = None
        if self.owner is not None:
            self.owner.close()
            self.owner = None
        if self.jobs_root is not None:
            mounts.unmount(self.jobs_root, recursive=True)
            shutil.rmtree(self.jobs_root, ignore_errors=True)
            self.jobs_root = None

    def _ensure_container(self, job_mounts: tuple[str, ...]) -> None:
        if self.container is not None:
            return
        self.mounts = job_mounts
        _reap_orphans()
        mounts.reap_stale()
        self.uid = sandbox_uid()  # a fresh container, a fresh uid
        # The jobs root is not the job's: 0711, so it can reach its own directory and write nothing else.
        self.jobs_root = Path(tempfile.mkdtemp(prefix=mounts.prefix("jobs")))
        self.jobs_root.chmod(0o711)
        self.uncapped = mounts.make_shared(self.jobs_root)
        self.container = client().containers.create(**self._spec())
        atexit.register(self.close)  # never leave a container behind a crashed caller
        # PID 1's stdin, held open as long as this process lives (REAPER): the kernel closes it at
        # any death of ours, SIGKILL included, and the container then ends its jobs by itself
        self.owner = client().api.attach_socket(self.container.id, params={"stdin": 1, "stream": 1})
        self.container.start()
        if self.uncapped is None:
            self.uncapped = self._probe_propagation()

    def _probe_propagation(self) -> str | None:
        """None when a tmpfs mounted under the jobs root now is seen by the container, else why not."""
        probe = self.jobs_root / "probe"
        probe.mkdir()
        try:
            if problem := mounts.mount_tmpfs(probe, 1 << 16, mode=0o755):
                return problem
            (probe / "seen").write_text("")
            seen = self._run_as_job(["test", "-e", f"{JOBS}/probe/seen"])[0] == 0
            mounts.unmount(probe)
            return None if seen else "a mount under the jobs root does not reach the container"
        finally:
            shutil.rmtree(probe, ignore_errors=True)

    def _spec(self) -> dict:
        import docker.types as types

        exp = exposure(self.mounts)
        own_image = "OPFORGE_DOCKER_IMAGE" in os.environ
        volumes = {} if own_image else {p: {"bind": p, "mode": "ro"} for p in exp.read_only}
        self._read_only = list(volumes)  # what the wipe must step around
        volumes[str(self.jobs_root)] = {"bind": JOBS, "mode": "rw" if self.uncapped else "rw,rslave"}
        nvidia = [d for d in exp.devices if d.startswith("/dev/nvidia")]
        gpu = [types.DeviceRequest(count=-1, capabilities=[["gpu"]])] if nvidia else None
        npu = [f"{d}:{d}:rw" for d in exp.devices if d not in nvidia]  # Ascend's nodes, passed as they are
        return dict(
            image=ensure_image(), command=[exp.python, "-I", "-S", "-c", REAPER], user=f"{self.uid}:{self.uid}",
            network_mode="none", read_only=True, cap_drop=["ALL"], security_opt=["no-new-privileges"],
            mem_limit=self.memory, memswap_limit=self.memory, pids_limit=self.pids,
            nano_cpus=int(self.cpus * 1e9), shm_size="64m",
            # exec on scratch: the CUDA emulator dlopens the library it builds there for the candidate
            tmpfs={SCRATCH: f"size={self.scratch},mode=1777,exec", "/tmp": "size=64m,mode=1777"},
            volumes=volumes, working_dir=SCRATCH, device_requests=gpu, devices=npu or None, labels={"opforge": "sandbox", "opforge.pid": str(os.getpid())},
            stdin_open=True,  # with StdinOnce (the SDK sets both): PID 1 sees EOF once the owner is gone
            ulimits=[types.Ulimit(name="core", soft=0, hard=0), types.Ulimit(name="nofile", soft=1024, hard=1024)],
            log_config=types.LogConfig(type="json-file", config={"max-size": "1m", "max-file": "1"}),
        )

    def _exec(self, staged: StagedJob, job: Job) -> tuple[int | None, bool, str, str]:
        """(exit code, timed out, stdout, stderr) of the job's worker; a job past its deadline is
        killed with its container."""
        api = client().api
        scratch = f"{SCRATCH}/{staged.host.name}"
        command = ["/bin/sh", "-c", IN_OWN_SCRATCH, scratch, *worker_argv(exposure().python, job, staged.job_file)]
        exec_id = api.exec_create(self.container.id, command, user=f"{self.uid}:{self.uid}",
                                  environment=job_env(scratch), workdir=SCRATCH)["Id"]
        reader = _ExecReader(api.exec_start(exec_id, stream=True, demux=True))
        reader.start()
        deadline = time.perf_counter() + job.timeout_s
        while (info := api.exec_inspect(exec_id))["Running"] or info["ExitCode"] is None:
            if time.perf_counter() > deadline:
                _remove(self.container)
                return None, True, *reader.text()
            interrupt.check()
            time.sleep(0.05)
        return info["ExitCode"], False, *reader.text()

    def _wipe(self) -> bool:
        """Kill what the job left and empty every writable place (RESET); True when that held."""
        code, output = self._run_as_job(["/bin/sh", "-c", reset_script(self._read_only)])
        if code != 0:
            log.info("sandbox: discarding the warm container, its wipe failed (%s): %s", code, output.strip()[-300:])
        return code == 0

    def _run_as_job(self, argv: list[str]) -> tuple[int | None, str]:
        """(exit code, output) of a short command run in the container as the job's uid; None when
        it could not run (the container is gone, or no pid is left to start it)."""
        api = client().api
        try:
            exec_id = api.exec_create(self.container.id, argv, user=f"{self.uid}:{self.uid}")["Id"]
            output = api.exec_start(exec_id).decode("utf-8", "replace")[-STDIO_CAP:]
            return api.exec_inspect(exec_id)["ExitCode"], output
        except Exception as exc:  # the engine's errors for a dead container or a failed exec: no answer
            return None, f"{type(exc).__name__}: {exc}"

    def _result(self, staged: StagedJob, job: Job, code: int | None, timed_out: bool, out: str, err: str,
                wall: float) -> JobResult:
        signalled = -(code - 128) if code is not None and code >= 128 else code
        # SIGKILL that we did not send: the cgroup's OOM killer (nothing else in the container kills)
        result = staged.job_result(job, self.name, signalled, out, err, wall, timed_out=timed_out,
                                   oom_killed=signalled == -9 and not timed_out)
        if self.uncapped:
            result.warnings.append(uncapped_warning(self.uncapped))
        return result


class _ExecReader(threading.Thread):
    """Drains a demuxed exec stream into a CappedText per side (head, tail and what was cut)."""

    def __init__(self, stream) -> None:
        super().__init__(daemon=True)
        self.stream, self.out, self.err = stream, CappedText(), CappedText()

    def run(self) -> None:
        try:
            for out, err in self.stream:
                if out:
                    self.out.add(out)
                if err:
                    self.err.add(err)
        except Exception:  # the container was removed under the stream (timeout): keep what came
            return

    def text(self) -> tuple[str, str]:
        self.join(timeout=5)
        return self.out.text(), self.err.text()


def _reap_orphans() -> None:
    """Remove warm containers whose owning process died without closing them (SIGKILL skips atexit).
    The engine's one listing call, not the SDK's list-then-inspect-each: another process's
    container removed between the two would make the inspect a 404 and fail this job."""
    api = client().api
    for summary in api.containers(all=True, filters={"label": "opforge=sandbox"}):
        try:
            pid = int((summary.get("Labels") or {}).get("opforge.pid", "0"))
            if pid <= 0:
                raise ProcessLookupError
            os.kill(pid, 0)
        except (ProcessLookupError, ValueError):
            try:
                api.remove_container(summary["Id"], force=True)
            except Exception:  # removed meanwhile by its owner or another reaper
                pass
        except PermissionError:  # alive, owned by someone else
            pass


def _remove(container) -> None:
    try:
        container.remove(force=True)
    except Exception:  # already gone with the engine: nothing left to clean
        pass
