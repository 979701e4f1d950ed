"""Choosing a runtime and what every runtime reports about a job."""
from __future__ import annotations

import os

import pytest

from conftest import KERNELS, TINY, require_runtime, write
from opforge.harness import judge, worker
from opforge.harness.verify import VerifyOptions, prepare, verify
from opforge.sandbox import Job, docker_runtime, get_sandbox, jail, mounts, process
from opforge.sandbox.errors import SandboxUnavailable


@pytest.fixture(scope="module")
def BUILD(tmp_path_factory) -> Job:
    """The build job verify() sends for the good kernel, its inputs made by the judge as verify's are."""
    spec, _hardware = prepare(TINY, VerifyOptions(device="cpu"))
    inputs = tmp_path_factory.mktemp("build") / "inputs.pt"
    inputs.write_bytes(judge.prepare(spec, 1, 1, "cpu").payload())
    return Job({"mode": "build", "device": "cpu", "arch": 90, "float32": spec.is_float32},
               {"candidate.py": str(KERNELS / "good.py"), "inputs.pt": str(inputs)}, 120,
               worker=worker.MODULE, mounts=worker.mounts())


def require(name: str) -> None:
    require_runtime(name, {"docker": docker_runtime.unavailable, "jail": jail.unavailable}[name]())


def test_unknown_runtime_is_an_error():
    with pytest.raises(SandboxUnavailable, match="sandbox runtime 'vm' is not available"):
        get_sandbox("vm")


def test_auto_prefers_docker_when_an_engine_answers(monkeypatch):
    require("docker")
    monkeypatch.delenv("OPFORGE_SANDBOX")
    assert get_sandbox().name == "docker"


def test_explicit_docker_without_engine_fails_loudly_and_auto_falls_back(monkeypatch, tmp_path):
    require("jail")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    docker_runtime.client.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="'docker' is unavailable: no Docker engine answers"):
            get_sandbox("docker")
        assert get_sandbox("auto").name == "jail"
    finally:
        monkeypatch.delenv("DOCKER_HOST")
        docker_runtime.client.cache_clear()


@pytest.mark.skipif(os.geteuid() != 0, reason="the jail needs root; without it it is unavailable for that reason first")
def test_a_jail_that_cannot_set_up_here_is_unavailable_not_a_crash(monkeypatch, tmp_path):
    """Where the tools are installed but the machine refuses their namespaces or mounts (a GPU VM
    did: every mount failed, exit 32), the jail is unavailable with the reason, so auto falls back
    and `--sandbox jail` is one line; the control: on this machine the real jail starts."""
    require("jail")
    assert jail.cannot_start(jail.tool(), jail.JAIL_PATH) is None
    fake = tmp_path / "bin"
    fake.mkdir()
    for name in ("bwrap", "unshare"):
        (fake / name).write_text("#!/bin/sh\necho 'mount: failed mount system call' >&2\nexit 32\n")
        (fake / name).chmod(0o755)
    monkeypatch.setattr(jail, "JAIL_PATH", f"{fake}:{jail.JAIL_PATH}")
    why = jail.unavailable()
    assert why and "cannot set up" in why and "failed mount system call" in why, why
    with pytest.raises(SandboxUnavailable, match="'jail' is unavailable: .*cannot set up"):
        get_sandbox("jail")


def test_an_unavailable_runtime_is_one_line_from_the_cli(monkeypatch, tmp_path, capsys):
    """The sandbox's errors have a root of their own (SandboxError, not the harness's): the CLI
    catches it beside the harness's and the registry's errors."""
    from opforge import cli

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    docker_runtime.client.cache_clear()
    try:
        code = cli.main(["verify", str(TINY), str(KERNELS / "good.py"), "--sandbox", "docker", "--device", "cpu"])
    finally:
        docker_runtime.client.cache_clear()
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "sandbox runtime 'docker' is unavailable" in err[0], err


@pytest.mark.parametrize("name", ["none", "jail", "docker"])
def test_every_runtime_returns_the_result_and_its_cost(name, BUILD):
    if name != "none":
        require(name)
    sandbox = get_sandbox(name)
    try:
        result = sandbox.run(BUILD)
    finally:
        sandbox.close()
    assert result.ok and result.cause is None and result.runtime == name
    assert result.payload["build"]["kernels"][0]["kernel"] == "_softmax_kernel"
    assert result.cpu_s > 0.5 and result.peak_rss_mb > 100 and result.wall_s > 0


def test_docker_keeps_one_warm_container_per_sandbox_and_resets_between_jobs(BUILD):
    require("docker")
    sandbox = get_sandbox("docker")
    try:
        first = sandbox.run(BUILD)
        container = sandbox.container.id
        second = sandbox.run(BUILD)
        assert first.ok and second.ok
        assert sandbox.container.id == container  # the same container served both jobs
    finally:
        sandbox.close()
    assert sandbox.container is None


def test_none_runtime_verdict_carries_a_warning():
    v = verify(TINY, KERNELS / "good.py", VerifyOptions(seed=2, trials=1, device="cpu", sandbox="none"))
    assert v["correct"] and v["sandbox"] == "none"
    assert any("not isolated" in w for w in v["warnings"])


def test_verdict_names_the_runtime():
    require("jail")
    v = verify(TINY, KERNELS / "good.py", VerifyOptions(seed=2, trials=1, device="cpu", sandbox="jail"))
    assert v["correct"] and v["sandbox"] == "jail" and "warnings" not in v


def test_docker_reaps_containers_left_by_a_killed_process(BUILD):
    require("docker")
    import subprocess
    import sys

    from opforge.sandbox.docker_runtime import client, ensure_image

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # its pid now names no process
    orphan = client().containers.create(ensure_image(), command=["sleep", "infinity"], network_mode="none",
                                        labels={"opforge": "sandbox", "opforge.pid": str(dead.pid)})
    sandbox = get_sandbox("docker")
    try:
        assert sandbox.run(BUILD).ok
    finally:
        sandbox.close()
    remaining = [c.id for c in client().containers.list(all=True, filters={"label": "opforge=sandbox"})]
    assert orphan.id not in remaining


def test_docker_discards_a_container_whose_wipe_fails(BUILD):
    """A file the job's uid cannot delete (here root's, in the sticky scratch) fails the wipe's check:
    that container is never used again."""
    require("docker")
    sandbox = get_sandbox("docker")
    try:
        assert sandbox.run(BUILD).ok
        container = sandbox.container
        api = docker_runtime.client().api
        api.exec_start(api.exec_create(container.id, ["touch", "/scratch/stuck"], user="0:0")["Id"])
        assert sandbox.run(BUILD).ok  # this job is unaffected; the wipe after it fails
        assert sandbox.container is None
        assert sandbox.run(BUILD).ok and sandbox.container.id != container.id
    finally:
        sandbox.close()


def test_worker_ignores_a_poisoned_working_directory(monkeypatch):
    """Even started in a directory holding a planted `harness` package, the worker imports the real one."""
    require("docker")
    plant = 'mkdir harness && echo "raise SystemExit(\'POISONED\')" > harness/__init__.py && '
    monkeypatch.setattr(docker_runtime, "IN_OWN_SCRATCH", docker_runtime.IN_OWN_SCRATCH.replace("exec", plant + "exec"))
    sandbox = get_sandbox("docker")
    try:
        # the real worker, on a job it rejects
        result = sandbox.run(Job({"mode": "build"}, {}, 60, worker=worker.MODULE, mounts=worker.mounts()))
    finally:
        sandbox.close()
    assert "POISONED" not in result.stderr and "error" in result.payload, result


@pytest.mark.parametrize("name", ["jail", "docker"])
def test_a_job_sees_the_mounts_its_caller_names_and_no_package_of_its_own(name, monkeypatch, tmp_path):
    """The sandbox exposes no workbench package by itself: the harness's folder is visible to a
    job only when the job names it, as verify's jobs do (worker.mounts())."""
    require(name)
    named = tmp_path / "named"
    named.mkdir()
    harness_dir = worker.mounts()[0]
    probe = (f"import json, os, sys\nseen = {{p: os.path.isdir(p) for p in ({str(named)!r}, {harness_dir!r})}}\n"
             "seen['imported'] = 'opforge' in sys.modules\n"
             "json.dump(seen, open(json.load(open(sys.argv[-1]))['result_path'], 'w'))")
    monkeypatch.setattr(process, "WORKER", ["-I", "-B", "-c", probe])
    sandbox = get_sandbox(name)
    try:
        # warm in the bubblewrap jail (preload): what the zygote holds is not a package of the job's either
        only_named = sandbox.run(Job({"mode": "probe"}, {}, 60, worker=worker.MODULE, mounts=(str(named),),
                                     preload=("torch",)))
        harness_too = sandbox.run(Job({"mode": "probe"}, {}, 60, worker=worker.MODULE, mounts=worker.mounts()))
    finally:
        sandbox.close()
    assert only_named.payload == {str(named): True, harness_dir: False, "imported": False}, only_named
    assert harness_too.payload == {str(named): False, harness_dir: True, "imported": False}, harness_too


@pytest.mark.parametrize("name", ["jail", "docker"])
def test_uncapped_job_directory_is_flagged(name, monkeypatch):
    """Where no tmpfs can be mounted (not root), the job still runs and its result says it was uncapped."""
    require(name)
    monkeypatch.setattr(mounts, "mount_tmpfs", lambda *args, **kwargs: "simulated: no root")
    monkeypatch.setattr(mounts, "make_shared", lambda *args, **kwargs: "simulated: no root")
    monkeypatch.setattr(process, "WORKER", ["-I", "-B", "-c", "import json, sys\n"
                        "json.dump({'ran': True}, open(json.load(open(sys.argv[-1]))['result_path'], 'w'))"])
    sandbox = get_sandbox(name)
    try:
        result = sandbox.run(Job({"mode": "build"}, {}, 60, worker=worker.MODULE, mounts=worker.mounts()))
    finally:
        sandbox.close()
    assert result.ok and result.payload == {"ran": True}, result
    assert result.warnings == ["job directory not size-capped (simulated: no root): the job could fill the host's disk"]


def test_mounts_left_by_a_killed_process_are_reaped(tmp_path, monkeypatch):
    """A job tmpfs whose owner died mid-job (SIGKILL skips every cleanup) goes with the next job."""
    require("jail")
    import subprocess
    import sys
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    left = tmp_path / f"opforge-job-{dead.pid}-x1"
    left.mkdir()
    assert mounts.mount_tmpfs(left, 1 << 20) is None and mounts.is_mount(left)
    mounts.reap_stale()
    assert not mounts.is_mount(left) and not left.exists()


def test_the_docker_wipe_steps_around_read_only_binds_under_a_writable_place():
    """A checkout or venv under /tmp is bound read-only on directories docker makes in the
    container's /tmp: the wipe prunes each such bind and skips the directories above it, and only
    those (a bind elsewhere changes nothing), so the container stays warm and nothing else is kept."""
    script = docker_runtime.reset_script(["/tmp/co/opforge", "/tmp/co/.venv/lib/site-packages", "/usr/lib/x"])
    for line in [ln for ln in script.splitlines() if ln.startswith(("find", "left"))]:
        assert "\\( -path /tmp/co/.venv/lib/site-packages -o -path /tmp/co/opforge \\) -prune -o" in line, line
        assert "! -path /tmp/co ! -path /tmp/co/.venv ! -path /tmp/co/.venv/lib" in line, line
        assert "/usr/lib" not in line
    plain = docker_runtime.reset_script(["/usr/lib/x", "/opt/venv"])
    assert "-path" not in plain and "find /scratch /tmp /dev/shm /dev/mqueue -mindepth 1  -print" in plain


# A CPU verification is one sandbox job whose build and interpreted run are two forks of one worker
# (worker.run_phases). The build's forward runs candidate code with the inputs in reach: what it
# leaves (files in scratch, /tmp or /dev/shm, a process in a session of its own) must be gone when the
# run starts, as between two jobs, or the build could compute on the host and the run hand it back.
PHASE_LEAK = '''
import os
import time

_RUN = os.environ.get("TRITON_INTERPRET") == "1"
_PLACES = ("/tmp/opforge-stash", "/dev/shm/opforge-stash", os.path.join(os.getcwd(), "stash"),
           os.path.join(os.environ["HOME"], "stash2"))
if not _RUN:
    for _where in _PLACES:
        try:
            with open(_where, "w") as _fh:
                _fh.write("answers")
        except OSError:
            pass
    import ctypes  # a sleeper in a session of its own, outliving the build (libc's fork: no audit event)

    _libc = ctypes.CDLL(None)
    if _libc.fork() == 0:
        _libc.setsid()
        _libc.execv(b"/bin/sleep", (ctypes.c_char_p * 3)(b"sleep", b"55", None))
        _libc._exit(0)
else:
    _left = [p for p in _PLACES if os.path.exists(p)]
    _alive = []
    for _pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{_pid}/cmdline", "rb") as _fh:
                if _fh.read().startswith(b"sleep\\x0055"):
                    _alive.append(_pid)
        except OSError:
            pass
    if _left or _alive:
        raise RuntimeError(f"the build left {_left} and processes {_alive}")
'''


@pytest.mark.parametrize("runtime", ["jail", "none"])
def test_the_run_starts_without_what_the_build_left(runtime, tmp_path):
    if runtime != "none":
        require(runtime)
    source = PHASE_LEAK + (KERNELS / "good.py").read_text()
    options = VerifyOptions(seed=3, trials=1, device="cpu", sandbox=runtime, skip_static=True)
    v = verify(TINY, write(tmp_path / "leak.py", source), options)
    if runtime == "none":  # not isolated: only the phase's own scratch directory (cwd, HOME) is its own
        left = v["reasons"][0].split("the build left ")[1].split(" and processes")[0] if v["reasons"] else ""
        assert left == "['/tmp/opforge-stash', '/dev/shm/opforge-stash']", v["reasons"]
        for path in ("/tmp/opforge-stash", "/dev/shm/opforge-stash"):
            os.unlink(path)
    else:
        assert v["correct"], v["reasons"]
    assert set(v["jobs"]) == {"build", "run"} and v["jobs"]["build"]["runtime"] == runtime
