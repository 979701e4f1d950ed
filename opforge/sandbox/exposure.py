"""What a sandboxed job may see of the host: the system's programs and libraries, the Python
runtime and the environment it runs in, and the paths the job's caller names for its worker (its
package, its libraries) — read-only — and GPU device nodes when there are any. Never the project's
other files, the registry, or home."""
from __future__ import annotations

import glob
import sys
from dataclasses import dataclass
from pathlib import Path

SYSTEM = ("/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc/ld.so.cache", "/etc/alternatives")
# Accelerator device nodes: NVIDIA GPUs, and Ascend NPUs (davinciN, their manager, the shared-memory
# and host-device channels CANN's runtime opens).
DEVICE_NODES = ("/dev/nvidia*", "/dev/davinci*", "/dev/devmm_svm", "/dev/hisi_hdc")


@dataclass(frozen=True)
class Exposure:
    read_only: tuple[str, ...]  # host paths bound at the same place, read-only
    devices: tuple[str, ...]  # GPU and NPU device nodes
    python: str


def _outermost(paths: list[str]) -> tuple[str, ...]:
    """Drop paths already inside another exposed path (binding both would shadow nothing useful)."""
    keep: list[str] = []
    for path in sorted(set(paths), key=len):
        if not any(path == k or path.startswith(k.rstrip("/") + "/") for k in keep):
            keep.append(path)
    return tuple(sorted(keep))


def exposure(mounts: tuple[str, ...] = ()) -> Exposure:
    """The host paths a job sees: the system, this Python and its environment, and a Job's `mounts`
    (one that does not exist is left out: Docker would create it on the host)."""
    paths = [p for p in SYSTEM if Path(p).exists() and not Path(p).is_symlink()]
    paths += [str(Path(sys.base_prefix).resolve()), str(Path(sys.prefix).absolute())]
    paths += [str(Path(m).resolve()) for m in mounts if Path(m).exists()]
    devices = tuple(sorted(d for pattern in DEVICE_NODES for d in glob.glob(pattern)))
    return Exposure(read_only=_outermost(paths), devices=devices, python=sys.executable)


def symlinked_system_dirs() -> dict[str, str]:
    """Merged-/usr systems make /lib, /bin... symlinks into /usr: recreate them as symlinks."""
    return {p: str(Path(p).readlink()) for p in ("/lib", "/lib64", "/bin", "/sbin") if Path(p).is_symlink()}
