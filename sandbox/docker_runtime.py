"""The `docker` runtime: jobs run in a container on the real Docker engine (docker SDK).

What it isolates: no network at all (`network_mode=none`), a read-only root, a size-capped tmpfs
as scratch and the job directory as the only writable paths, memory (swap included), CPU and pids
limits from cgroups, the a fresh unprivileged uid, every capability dropped, no new privileges; GPUs are passed
in with a device request when the host has them. The image is built from local files — no registry
is needed: `docker import` of a skeleton root (a few empty directories and a passwd file), with the
system, the Python runtime, the workbench's environment and the harness bound read-only at run time.
What it does not: the kernel is shared (as with every container runtime).

A self-contained image for a GPU server, instead of host binds: build FROM an image with CUDA and
Python, `pip install` the workbench into it, and set OPFORGE_DOCKER_IMAGE to its tag; the runtime
then binds only the job directory."""
from __future__ import annotations

import atexit
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
import threading
import time
from functools import lru_cache
from pathlib import Path

from sandbox.base import STDIO_CAP, Job, JobResult, StagedJob, cause_of, job_env, sandbox_uid
from sandbox.exposure import exposure, symlinked_system_dirs
from sandbox.process import WORKER

JOBS = "/jobs"
SCRATCH = "/scratch"
RESET = "kill -9 -1 2>/dev/null; rm -rf /scratch/* /scratch/.[!.]* /tmp/* /tmp/.[!.]* 2>/dev/null; true"
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
    it (`docker exec`), after which every process the job left is killed and scratch is wiped.
    The container is re-created after any timeout or crash, and removed by `close()`."""

    name = "docker"

    def __init__(self, memory: str = os.environ.get("OPFORGE_SANDBOX_MEMORY", "8g"), pids: int = 512,
                 scratch: str = "512m", cpus: float | None = None) -> None:
        self.memory, self.pids, self.scratch = memory, pids, scratch
        self.cpus = cpus or float(os.cpu_count() or 1)
        self.container = None
        self.jobs_root: Path | None = None
        self.uid = sandbox_uid()

    def run(self, job: Job) -> JobResult:
        started = time.perf_counter()
        staged = None
        try:
            self._ensure_container()
            staged = StagedJob(job, owner=self.uid, parent=self.jobs_root, inside_parent=JOBS)
            code, timed_out, out, err = self._exec(staged, job.timeout_s)
            return self._result(staged, job, code, timed_out, out, err, time.perf_counter() - started)
        except Exception as exc:  # the engine refused the job (bad image, daemon gone): never raise
            self.close()
            return JobResult(exit_code=None, payload=None, stderr=f"docker: {type(exc).__name__}: {exc}",
                             wall_s=time.perf_counter() - started, cause="denied", runtime=self.name)
        finally:
            if staged is not None:
                staged.cleanup()

    def close(self) -> None:
        if self.container is not None:
            _remove(self.container)
            self.container = None
        if self.jobs_root is not None:
            shutil.rmtree(self.jobs_root, ignore_errors=True)
            self.jobs_root = None

    def _ensure_container(self) -> None:
        if self.container is not None:
            return
        _reap_orphans()
        self.uid = sandbox_uid()  # a fresh container, a fresh uid
        self.jobs_root = Path(tempfile.mkdtemp(prefix="opforge-jobs-"))
        os.chown(self.jobs_root, self.uid, self.uid)
        self.container = client().containers.create(**self._spec())
        atexit.register(self.close)  # never leave a container behind a crashed caller
        self.container.start()

    def _spec(self) -> dict:
        import docker.types as types

        exp = exposure()
        own_image = "OPFORGE_DOCKER_IMAGE" in os.environ
        volumes = {} if own_image else {p: {"bind": p, "mode": "ro"} for p in exp.read_only}
        volumes[str(self.jobs_root)] = {"bind": JOBS, "mode": "rw"}
        gpu = [types.DeviceRequest(count=-1, capabilities=[["gpu"]])] if exp.devices else None
        return dict(
            image=ensure_image(), command=["sleep", "infinity"], user=f"{self.uid}:{self.uid}",
            network_mode="none", read_only=True, cap_drop=["ALL"], security_opt=["no-new-privileges"],
            mem_limit=self.memory, memswap_limit=self.memory, pids_limit=self.pids,
            nano_cpus=int(self.cpus * 1e9), tmpfs={SCRATCH: f"size={self.scratch},mode=1777", "/tmp": "size=64m,mode=1777"},
            volumes=volumes, working_dir=SCRATCH, device_requests=gpu, labels={"opforge": "sandbox", "opforge.pid": str(os.getpid())},
            ulimits=[types.Ulimit(name="core", soft=0, hard=0), types.Ulimit(name="nofile", soft=1024, hard=1024)],
            log_config=types.LogConfig(type="json-file", config={"max-size": "1m", "max-file": "1"}),
        )

    def _exec(self, staged: StagedJob, timeout_s: float) -> tuple[int | None, bool, str, str]:
        api = client().api
        exec_id = api.exec_create(self.container.id, [exposure().python, *WORKER, staged.job_file],
                                  user=f"{self.uid}:{self.uid}", environment=job_env(SCRATCH),
                                  workdir=SCRATCH)["Id"]
        reader = _ExecReader(api.exec_start(exec_id, stream=True, demux=True))
        reader.start()
        deadline = time.perf_counter() + timeout_s
        while (info := api.exec_inspect(exec_id))["Running"] or info["ExitCode"] is None:
            if time.perf_counter() > deadline:
                self.close()  # a timed-out job takes its container with it
                return None, True, *reader.text()
            time.sleep(0.05)
        code = info["ExitCode"]
        if code is not None and code >= 128:  # killed by a signal: start the next job in a fresh container
            self.close()
        else:
            self._reset()
        return code, False, *reader.text()

    def _reset(self) -> None:
        """Kill whatever the job left running (kill -1 spares PID 1) and wipe scratch and /tmp."""
        api = client().api
        exec_id = api.exec_create(self.container.id, ["/bin/sh", "-c", RESET], user=f"{self.uid}:{self.uid}")["Id"]
        api.exec_start(exec_id)

    def _result(self, staged: StagedJob, job: Job, code: int | None, timed_out: bool, out: str, err: str,
                wall: float) -> JobResult:
        payload, unreadable = staged.result()
        files, file_errors = staged.outputs(job.outputs)
        usage = (payload or {}).get("usage", {})
        signalled = -(code - 128) if code is not None and code >= 128 else code
        # SIGKILL that we did not send: the cgroup's OOM killer (nothing else in the container kills)
        oom = signalled == -9 and not timed_out
        return JobResult(exit_code=signalled, payload=payload, stdout=out, stderr=err, wall_s=wall,
                         cpu_s=usage.get("cpu_s", 0.0), peak_rss_mb=usage.get("max_rss_mb", 0.0),
                         cause=cause_of(signalled, payload, unreadable, timed_out, oom), runtime=self.name,
                         outputs=files, output_errors=file_errors)


class _ExecReader(threading.Thread):
    """Drains a demuxed exec stream, keeping the last STDIO_CAP bytes of each side."""

    def __init__(self, stream) -> None:
        super().__init__(daemon=True)
        self.stream, self.out, self.err = stream, bytearray(), bytearray()

    def run(self) -> None:
        try:
            for out, err in self.stream:
                if out:
                    self.out = (self.out + out)[-STDIO_CAP:]
                if err:
                    self.err = (self.err + err)[-STDIO_CAP:]
        except Exception:  # the container was removed under the stream (timeout): keep what came
            return

    def text(self) -> tuple[str, str]:
        self.join(timeout=5)
        return self.out.decode("utf-8", "replace"), self.err.decode("utf-8", "replace")


def _reap_orphans() -> None:
    """Remove warm containers whose owning process died without closing them (SIGKILL skips atexit)."""
    for container in client().containers.list(all=True, filters={"label": "opforge=sandbox"}):
        try:
            pid = int(container.labels.get("opforge.pid", "0"))
            if pid <= 0:
                raise ProcessLookupError
            os.kill(pid, 0)
        except (ProcessLookupError, ValueError):
            _remove(container)
        except PermissionError:  # alive, owned by someone else
            pass


def _remove(container) -> None:
    try:
        container.remove(force=True)
    except Exception:  # already gone with the engine: nothing left to clean
        pass
