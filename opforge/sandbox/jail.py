"""The `jail` runtime: bubblewrap namespaces around the worker, no Docker engine needed (without
bubblewrap, the same isolation from util-linux `unshare`: sandbox/jail_unshare.py).

What it isolates: a new network namespace (only its own loopback), new PID, IPC, UTS and mount
namespaces; a root of read-only binds (system, Python runtime and its environment, the job's
mounts: its worker's package and libraries) plus size-capped private tmpfs scratch and /tmp, and the job directory (a tmpfs the host
mounts, sized for the job's files and declared outputs) as the only writable paths; the job runs
as a fresh unprivileged uid with every capability dropped and no new privileges, under rlimits
(address space, CPU seconds, processes, file size, open files); the whole namespace dies with it
on timeout. What it does not: cgroup memory/CPU accounting (rlimits bound it instead; on
a GPU machine there is no address-space cap, since the CUDA driver maps huge virtual ranges), and
the kernel is shared, so a kernel exploit is out of scope."""
from __future__ import annotations

import functools
import logging
import os
import resource
import shutil
from pathlib import Path

from opforge.sandbox import mounts, warm
from opforge.sandbox.base import Job, JobResult, StagedJob, job_env, sandbox_uid
from opforge.sandbox.exposure import exposure, symlinked_system_dirs
from opforge.sandbox.jail_unshare import unshare_argv
from opforge.sandbox.process import run_process, worker_argv

log = logging.getLogger("opforge.sandbox")
JAIL_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"  # the only PATH the jail's own tools are looked up on
SCRATCH = "/scratch"
JOB_DIR = "/job"
LIMITS = {  # per job; NPROC counts every process and thread of the sandbox user on the host
    resource.RLIMIT_NPROC: 512,
    resource.RLIMIT_FSIZE: 256 << 20,
    resource.RLIMIT_NOFILE: 1024,
    resource.RLIMIT_CORE: 0,
}


def memory_limit_bytes() -> int:
    """OPFORGE_SANDBOX_MEMORY ("8g", "512m"), shared with the docker runtime; default 8 GiB."""
    text = os.environ.get("OPFORGE_SANDBOX_MEMORY", "8g").strip().lower()
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(text[-1:], 1)
    return int(float(text.rstrip("kmg")) * scale)


def tool() -> str | None:
    """bubblewrap when installed, else util-linux unshare (OPFORGE_JAIL=unshare forces the fallback)."""
    if os.environ.get("OPFORGE_JAIL") != "unshare" and shutil.which("bwrap"):
        return "bwrap"
    return "unshare" if shutil.which("unshare") and shutil.which("chroot") else None


def unavailable() -> str | None:
    if tool() is None:
        return "neither bubblewrap (apt-get install bubblewrap) nor util-linux unshare is installed"
    if not shutil.which("setpriv"):
        return "setpriv (util-linux) is not installed"
    if os.geteuid() != 0:
        return "the jail drops to an unprivileged uid and needs to start as root"
    return cannot_start(tool(), JAIL_PATH)


# A container or VM can ship the jail's tools and refuse what they do (seen on a GPU machine: the
# namespaces worked, a mount inside the jail failed with exit 32). Without a try, every candidate
# would be judged "crashed" there, the sandbox's failure blamed on the kernel. The try is the jail
# itself, once per process: the same argv, binds, devices and rlimits as a candidate's job, running
# the jail's Python on nothing (`-c pass`), so no mount of the caller's is needed.


@functools.lru_cache(maxsize=None)
def cannot_start(which: str | None, path: str) -> str | None:
    """Why a jail built with `which` (tools looked up on `path`) cannot run a job on this machine, or
    None when the try worked."""
    try:
        result = JailSandbox().run(Job(payload={}, timeout_s=60, worker="probe"),
                                   command=[exposure().python, "-I", "-c", "pass"])
    except OSError as exc:
        return f"{which} could not be started ({exc})"
    if result.exit_code == 0:
        return None
    last = (result.stderr.strip().splitlines() or [f"exit {result.exit_code}"])[-1]
    return f"{which} cannot set up the jail on this machine ({last.strip()[:200]})"


def _parents(path: str) -> list[str]:
    parts = Path(path).parts[1:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def bwrap_argv(staged: StagedJob, job: Job, scratch_bytes: int, tmp_bytes: int, env: dict[str, str],
               uid: int, command: list[str] | None = None, info_fd: int | None = None) -> list[str]:
    """The jail's bwrap command line. With `info_fd` (a warm job, sandbox/warm.py) bwrap reports its
    child's pid there and `command` runs as the jail's PID 1 and as root, not dropped to `uid`: the
    placeholder that holds the jail open for the job the zygote forks into it, out of its reach."""
    exp = exposure(job.mounts)
    argv = ["bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    if info_fd is not None:
        argv += ["--info-fd", str(info_fd), "--as-pid-1"]
    # tmpfs /tmp first: an exposed path may live under the host's /tmp (a checkout there), and a
    # later mount would hide it
    argv += ["--size", str(tmp_bytes), "--perms", "1777", "--tmpfs", "/tmp"]
    made: set[str] = {"/tmp"}
    for path in exp.read_only:
        for parent in _parents(path):  # bwrap would create these 0700, unreadable for the job
            if parent not in made and parent not in exp.read_only:
                argv += ["--perms", "0755", "--dir", parent]
                made.add(parent)
        argv += ["--ro-bind", path, path]
    for link, target in symlinked_system_dirs().items():
        argv += ["--symlink", target, link]
    for device in exp.devices:
        argv += ["--dev-bind", device, device]
    argv += ["--bind", str(staged.host), JOB_DIR, "--size", str(scratch_bytes), "--perms", "1777",
             "--tmpfs", SCRATCH, "--proc", "/proc", "--dev", "/dev", "--chdir", SCRATCH, "--clearenv"]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    if info_fd is not None:
        return argv + ["--", *(command or [])]
    # Inside the namespaces, drop to the job's own uid for good: no capabilities, no way back.
    argv += ["--", "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
             "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]
    return argv + (command or worker_argv(exp.python, job, staged.job_file))


class JailSandbox:
    """Nothing stays warm: each job is a fresh process."""

    name = "jail"

    def __init__(self, scratch_bytes: int = 512 << 20, memory_bytes: int | None = None,
                 tmp_bytes: int = 64 << 20) -> None:
        self.scratch_bytes, self.tmp_bytes = scratch_bytes, tmp_bytes
        self.memory_bytes = memory_bytes or memory_limit_bytes()

    def run(self, job: Job, command: list[str] | None = None) -> JobResult:
        """`command` replaces the worker's command line (cannot_start's try runs the bare Python)."""
        uid = sandbox_uid()
        mounts.reap_stale()
        staged = StagedJob(job, inside=JOB_DIR, owner=uid, capped=True)
        cpu_s = int(job.timeout_s) + 30

        limits_now = {**LIMITS, resource.RLIMIT_CPU: cpu_s}
        if not exposure().devices:  # the CUDA driver maps huge virtual ranges: no address-space cap on a GPU
            limits_now[resource.RLIMIT_AS] = self.memory_bytes

        def limits() -> None:  # in the child before exec; bwrap and the worker inherit them
            for limit, value in limits_now.items():
                resource.setrlimit(limit, (value, value))

        root = staged.host.parent / f"{staged.host.name}-root"  # mount point of the fallback's root
        try:
            if command is None and (result := self._run_warm(staged, job, uid, limits_now, limits)) is not None:
                return result
            if tool() == "bwrap":
                argv = bwrap_argv(staged, job, self.scratch_bytes, self.tmp_bytes, job_env(SCRATCH), uid, command)
            else:
                root.mkdir()
                argv = unshare_argv(str(root), str(staged.host), self.scratch_bytes, self.tmp_bytes, job_env(SCRATCH),
                                    uid, job.mounts, command or worker_argv(exposure().python, job, staged.job_file))
            return run_process(argv, staged, job, {"PATH": JAIL_PATH}, self.name, preexec=limits)
        finally:
            staged.cleanup()
            if root.exists():
                root.rmdir()

    def _run_warm(self, staged: StagedJob, job: Job, uid: int, limits_now: dict[int, int],
                  preexec) -> JobResult | None:
        """The job forked from a warm zygote into its bwrap jail (sandbox/warm.py), or None when it
        runs cold: warm starts off or broken here, not bubblewrap, a command line a zygote cannot
        run, nothing to preload, or accelerator devices (forking a CUDA- or CANN-aware process is
        untried there)."""
        global _warm_broken
        exp = exposure()
        python = exp.python
        tail = worker_argv(python, job, staged.job_file)[1:]
        if (_warm_broken or not warm.enabled() or tool() != "bwrap" or exp.devices
                or not warm.startable(tail, job.preload)):
            return None
        env = {**job_env(SCRATCH), "PWD": SCRATCH}  # as bubblewrap's --chdir leaves it for a cold job
        try:
            return warm.run(lambda fd: bwrap_argv(staged, job, self.scratch_bytes, self.tmp_bytes, env, uid,
                                                  warm.placeholder(python), info_fd=fd),
                            {"PATH": JAIL_PATH}, staged, job, tail, env, SCRATCH, uid, limits_now, preexec, self.name,
                            lambda: warm.zygote(python, job.preload, env))
        except (warm.ZygoteGone, OSError) as exc:
            _warm_broken = str(exc)
            warm.forget(python, job.preload, env)
            log.warning("sandbox: jobs start cold from now on in this process (%s)", exc)
            return None

    def close(self) -> None:
        pass


_warm_broken: str | None = None  # why warm starts failed in this process: they are not tried again
