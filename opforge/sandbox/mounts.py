"""Host mounts that bound what a job can write outside its scratch: a size-capped tmpfs per job
directory (the job directory is the one writable path a job shares with the host, so without one a
job could fill the host's disk), and the shared jobs root through which the docker runtime's warm
container sees each job's tmpfs. Mounting needs root; without it the callers run uncapped and say so.

Mount points carry the owning process id (`opforge-job-<pid>-...`), so mounts left by a process
that died without cleaning up (SIGKILL) are found and removed by the next one."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

_OWNED = re.compile(r"opforge-jobs?-(\d+)-")


def prefix(kind: str) -> str:
    """`opforge-job-<pid>-` or `opforge-jobs-<pid>-` (read at each call: a forked child has its own pid)."""
    return f"opforge-{kind}-{os.getpid()}-"


def _run(argv: list[str]) -> str | None:
    """None when the command succeeded, else why not (one line)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{argv[0]}: {exc}"
    return None if done.returncode == 0 else (done.stderr.strip() or f"{argv[0]} exited {done.returncode}")


def mount_tmpfs(path: Path, size_bytes: int, mode: int = 0o700, inodes: int = 4096) -> str | None:
    """Mount a tmpfs of `size_bytes` over the (empty) directory `path`; None on success, else why not."""
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root"
    options = f"size={size_bytes},nr_inodes={inodes},mode={mode:o},nosuid,nodev"
    return _run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)])


def make_shared(path: Path) -> str | None:
    """Turn `path` into a mount point of its own with shared propagation, so mounts made under it
    later reach a container that binds it with `rslave`; None on success, else why not."""
    if os.geteuid() != 0:
        return "making a shared mount needs root"
    return _run(["mount", "--bind", str(path), str(path)]) or _run(["mount", "--make-shared", str(path)])


def unmount(path: Path, recursive: bool = False) -> None:
    """Unmount `path` (and everything under it); detach it lazily when something still holds it."""
    flags = ["-R"] if recursive else []
    if _run(["umount", *flags, str(path)]) is not None:
        _run(["umount", "-l", *flags, str(path)])


def is_mount(path: Path) -> bool:
    return str(path) in mount_points()


def mount_points() -> list[str]:
    """Every mount point of this mount namespace (octal escapes in /proc/self/mountinfo decoded)."""
    with open("/proc/self/mountinfo", encoding="utf-8") as fh:
        fields = [line.split()[4] for line in fh if line.strip()]
    return [re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), f) for f in fields]


def reap_stale() -> None:
    """Unmount and delete the job directories and jobs roots of opforge processes that are gone."""
    if os.geteuid() != 0:
        return
    temp = os.path.realpath(tempfile.gettempdir())
    for point in sorted(set(mount_points()), key=len):
        found = _OWNED.match(os.path.basename(point))
        if not found or os.path.dirname(point) != temp or _alive(int(found.group(1))):
            continue
        unmount(Path(point), recursive=True)
        shutil.rmtree(point, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
