"""The jail without bubblewrap: util-linux `unshare` plus a small root built by a shell script.

New network (loopback down: nothing is reachable), PID (the worker is PID 1: the namespace dies
with it), IPC, UTS and mount namespaces. Inside the new mount namespace a tmpfs root is assembled
from read-only bind mounts of the exposed host paths, the job directory, tmpfs scratch and /tmp, a
private /proc and a minimal /dev; then `chroot` and `setpriv` drop to the job's uid with no
capabilities and no new privileges. The caller's rlimits apply as for bubblewrap."""
from __future__ import annotations

import shlex

from opforge.sandbox.exposure import exposure, symlinked_system_dirs

DEVICES = ("null", "zero", "full", "random", "urandom")


def _script(root: str, job_dir: str, scratch_bytes: int, tmp_bytes: int, env: dict[str, str], uid: int,
            mounts: tuple[str, ...], command: list[str]) -> str:
    exp = exposure(mounts)
    q = shlex.quote
    # Every tmpfs has a size: the root and /dev are root's (mount points only), /tmp and scratch the job's.
    lines = ["set -e", f"R={q(root)}", 'mount -t tmpfs -o size=8m,mode=755 tmpfs "$R"',
             # /tmp first: an exposed path may live under the host's /tmp and must stay visible
             'mkdir -p "$R/tmp"', f'mount -t tmpfs -o size={tmp_bytes},mode=1777 tmpfs "$R/tmp"']
    for path in exp.read_only:
        lines += [f'if [ -d {q(path)} ]; then mkdir -p "$R"{q(path)}; else mkdir -p "$(dirname "$R"{q(path)})"; '
                  f'touch "$R"{q(path)}; fi',
                  f'mount --bind {q(path)} "$R"{q(path)}', f'mount -o remount,bind,ro "$R"{q(path)}']
    lines += [f'ln -s {q(target)} "$R"{q(link)}' for link, target in symlinked_system_dirs().items()]
    lines += ['mkdir -p "$R/job" "$R/scratch" "$R/proc" "$R/dev"',
              f'mount --bind {q(job_dir)} "$R/job"',
              f'mount -t tmpfs -o size={scratch_bytes},mode=1777 tmpfs "$R/scratch"',
              'mount -t proc proc "$R/proc"', 'mount -t tmpfs -o size=1m,mode=755 tmpfs "$R/dev"']
    for device in [f"/dev/{d}" for d in DEVICES] + list(exp.devices):
        lines.append(f'touch "$R"{q(device)} && mount --bind {q(device)} "$R"{q(device)}')
    assignments = " ".join(q(f"{k}={v}") for k, v in env.items())
    drop = (f"setpriv --reuid={uid} --regid={uid} --clear-groups --inh-caps=-all --bounding-set=-all "
            "--no-new-privs")
    lines.append(f'exec chroot "$R" /usr/bin/env -i {assignments} {drop} '
                 + " ".join(q(c) for c in command))
    return "\n".join(lines)


def unshare_argv(root: str, job_dir: str, scratch_bytes: int, tmp_bytes: int, env: dict[str, str], uid: int,
                 mounts: tuple[str, ...], command: list[str]) -> list[str]:
    """`mounts`: the job's own read-only paths (Job.mounts), bound beside the system and Python."""
    return ["unshare", "--net", "--pid", "--ipc", "--uts", "--mount", "--propagation", "private", "--fork",
            "--kill-child", "sh", "-c", _script(root, job_dir, scratch_bytes, tmp_bytes, env, uid, mounts, command)]
