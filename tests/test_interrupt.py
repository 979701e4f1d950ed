"""A stopped run stops its work (issue 36): SIGINT or SIGTERM ends the job the sandbox is running
(docker: its container removed; jail, warm or cold, and `none`: the job's processes killed), a
container whose owner was SIGKILLed ends its jobs by itself, and `opforge run` records the run as
interrupted, says so in one line with the shell's exit status, resumes it, and `opforge cancel`
stops the process driving it mid-job. The controls: an uninterrupted job runs to its end in a
sandbox that stays warm, and a container keeps its job while its owner lives."""
from __future__ import annotations

import os
import secrets
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import KERNELS, ROOT, TINY, default_sigint, require_runtime
from llm_server import ScriptedLLM
from opforge.registry import Registry
from opforge.sandbox import Job, docker_runtime, get_sandbox, jail, process
from opforge.sandbox.base import SANDBOX_UID_BASE
from opforge.sandbox.interrupt import Interrupted, raise_on_signals

OPFORGE = str(Path(sys.executable).parent / "opforge")
SPINS = (KERNELS / "spins.py").read_text()
GONE_S = 5.0  # how long the processes of a stopped job may take to leave


def uid_of(pid: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def job_pids(uid: int, marker: str) -> list[int]:
    """The live processes of a job: its sandbox uid's (docker, jail) or its command line's (none)."""
    return [int(p) for p in filter(str.isdigit, os.listdir("/proc"))
            if (uid_of(p) == uid or marker in cmdline(p)) and Path(f"/proc/{p}/stat").exists()
            and Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[-1].split()[0] != "Z"]


def left_after(uid: int, marker: str, stopped: float) -> list[int]:
    """The job's processes still there GONE_S after it was stopped (a killed process takes a moment to go)."""
    while job_pids(uid, marker) and time.monotonic() - stopped < GONE_S:
        time.sleep(0.05)
    return job_pids(uid, marker)


def wait_for(predicate, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if found := predicate():
            return found
        time.sleep(0.05)
    pytest.fail(f"{what} within {timeout_s} s")


def require(name: str) -> None:
    if name != "none":
        require_runtime(name, {"docker": docker_runtime.unavailable, "jail": jail.unavailable}[name]())


def test_the_first_signal_interrupts_and_a_second_does_not_cut_the_cleanup_short():
    cleaned = []
    with pytest.raises(Interrupted) as caught:
        with raise_on_signals():
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
            finally:
                os.kill(os.getpid(), signal.SIGINT)  # a second Ctrl-C while the job is being stopped
                time.sleep(0.05)
                cleaned.append(True)
    assert caught.value.signum == signal.SIGTERM and caught.value.exit_code == 143 and cleaned == [True]


@pytest.mark.parametrize("runtime", ["docker", "jail", "jail-warm", "none"])
def test_an_interrupted_job_leaves_no_process_and_an_uninterrupted_one_runs_to_its_end(runtime, monkeypatch):
    name = runtime.split("-")[0]
    require(name)
    uid, marker = SANDBOX_UID_BASE + 700_000 + secrets.randbelow(99_999), f"spin{secrets.token_hex(6)}"
    for module in (docker_runtime, jail):  # the job's uid, to find its processes
        monkeypatch.setattr(module, "sandbox_uid", lambda: uid)
    monkeypatch.setenv("OPFORGE_WARM", "1" if runtime == "jail-warm" else "0")
    preload = ("json",) if runtime == "jail-warm" else ()
    sandbox = get_sandbox(name)
    previous = signal.signal(signal.SIGTERM, lambda *_: None)  # a signal sent late must not end pytest
    try:
        monkeypatch.setattr(process, "WORKER", ["-I", "-B", "-c", "import time\ntime.sleep(0.2)\nprint('ended')"])
        done = sandbox.run(Job({}, timeout_s=60, worker="w", preload=preload))
        assert done.exit_code == 0 and "ended" in done.stdout, done.stderr  # the control
        warm = getattr(sandbox, "container", None)
        assert (warm is not None) == (name == "docker")  # not closed: the next job reuses it

        monkeypatch.setattr(process, "WORKER", ["-I", "-B", "-c", f"# {marker}\nwhile True:\n    pass"])

        def stop_once_running() -> None:
            if wait_for_quietly(lambda: job_pids(uid, marker), 30):
                os.kill(os.getpid(), signal.SIGTERM)

        stopper = threading.Thread(target=stop_once_running, daemon=True)
        with pytest.raises(Interrupted) as caught, raise_on_signals():
            stopper.start()
            sandbox.run(Job({}, timeout_s=60, worker="w", preload=preload))
        stopped = time.monotonic()
        stopper.join()
        assert caught.value.signum == signal.SIGTERM
        assert left_after(uid, marker, stopped) == [], "the job's processes outlived it"
        if name == "docker":
            assert not docker_runtime.client().containers.list(all=True, filters={"id": warm.id})
    finally:
        sandbox.close()
        signal.signal(signal.SIGTERM, previous)
        for pid in job_pids(uid, marker):  # a failed check leaves nothing spinning behind it
            os.kill(pid, signal.SIGKILL)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_signal_whose_exception_python_lost_still_stops_the_job(monkeypatch):
    """A handler's exception raised where Python can only print it (a __del__ here; an at-fork hook
    when Popen forks) is lost; the sandbox's wait sees the signal all the same (interrupt.check)."""
    marker = f"spin{secrets.token_hex(6)}"
    monkeypatch.setattr(process, "WORKER", ["-I", "-B", "-c", f"# {marker}\nwhile True:\n    pass"])

    class Lost:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.01)  # the handler runs here, and its exception is only printed

    previous = signal.signal(signal.SIGTERM, lambda *_: None)
    try:
        with pytest.raises(Interrupted), raise_on_signals():
            Lost()  # collected at once
            result = get_sandbox("none").run(Job({}, timeout_s=5, worker="w"))
            pytest.fail(f"the job ran on to its end: {result.cause}")
        assert left_after(-1, marker, time.monotonic()) == []
    finally:
        signal.signal(signal.SIGTERM, previous)
        for pid in job_pids(-1, marker):
            os.kill(pid, signal.SIGKILL)


def wait_for_quietly(predicate, timeout_s: float):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if found := predicate():
            return found
        time.sleep(0.05)
    return None


OWNER = """
import sys
from opforge.sandbox import Job, process
from opforge.sandbox.docker_runtime import DockerSandbox
process.WORKER = ["-I", "-B", "-c", "# {marker}\\nwhile True:\\n    pass"]
sandbox = DockerSandbox()
sandbox._ensure_container(())
print(sandbox.container.id, flush=True)
sandbox.run(Job({{}}, timeout_s=600, worker="w"))
"""


def test_a_container_whose_owner_is_killed_ends_its_job_by_itself():
    """SIGKILL skips every `finally`: the container's PID 1 sees its stdin (the owner's attach
    socket) close and exits, which ends the job; the control: while the owner lives, it runs on."""
    require("docker")
    marker = f"spin{secrets.token_hex(6)}"
    owner = subprocess.Popen([sys.executable, "-c", OWNER.format(marker=marker)], cwd=ROOT, stdout=subprocess.PIPE,
                             text=True)
    container_id = owner.stdout.readline().strip()
    try:
        assert container_id, "the owner made no container"
        wait_for(lambda: [p for p in filter(str.isdigit, os.listdir("/proc")) if marker in cmdline(p)], 30,
                 "the job did not start")
        time.sleep(1.0)
        container = docker_runtime.client().containers.get(container_id)
        assert container.status == "running" and any(marker in " ".join(row) for row in container.top()["Processes"])
        owner.kill()
        owner.wait()
        wait_for(lambda: docker_runtime.client().containers.get(container_id).status == "exited", GONE_S,
                 "the orphaned container did not end")
        assert not [p for p in filter(str.isdigit, os.listdir("/proc")) if marker in cmdline(p)]
    finally:
        owner.kill()
        try:
            docker_runtime.client().api.remove_container(container_id, force=True)
        except Exception:  # never made, or removed already
            pass


NONE_OWNER = """
from opforge.sandbox import Job, process
from opforge.sandbox.process import ProcessSandbox
process.WORKER = ["-I", "-B", "-c", "# {marker}\\nwhile True:\\n    pass"]
ProcessSandbox().run(Job({{}}, timeout_s=600, worker="w"))
"""


def test_under_none_a_job_dies_with_its_killed_owner():
    """`none` has no container or jail to end a job: the worker dies with its caller (PDEATHSIG)."""
    marker = f"spin{secrets.token_hex(6)}"
    owner = subprocess.Popen([sys.executable, "-c", NONE_OWNER.format(marker=marker)], cwd=ROOT)
    try:
        wait_for(lambda: job_pids(-1, marker), 30, "the job did not start")
        time.sleep(0.5)
        assert job_pids(-1, marker), "the job ended while its owner lived"  # the control
        owner.kill()
        owner.wait()
        assert left_after(-1, marker, time.monotonic()) == []
    finally:
        owner.kill()
        for pid in job_pids(-1, marker):
            os.kill(pid, signal.SIGKILL)


# -- opforge run: interrupted, resumed, cancelled --------------------------------------------------


def _fenced(source: str) -> str:
    return f"Here is my kernel.\n\n```python\n{source}```\n"


def _containers(pid: int, running_only: bool = False) -> list:
    return docker_runtime.client().containers.list(all=not running_only, filters={"label": f"opforge.pid={pid}"})


def _worker_running(pid: int) -> bool:
    return any("opforge.harness.worker" in " ".join(row) for c in _containers(pid, running_only=True)
               for row in (c.top().get("Processes") or []))


def _start(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([OPFORGE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=default_sigint)


def test_ctrl_c_stops_the_job_the_run_resumes_and_cancel_stops_it_again(isolated_registry, monkeypatch):
    require("docker")
    from opforge.agents.run import cancel_run

    procs = []
    with ScriptedLLM(default=_fenced(SPINS)) as server:
        monkeypatch.setenv("OPFORGE_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("OPFORGE_LLM_MODEL", "scripted")
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        try:
            run = _start(["run", str(TINY), "--drafter", "llm", "--sandbox", "docker", "--device", "cpu", "--trials", "1",
                          "--candidates", "1", "--budget", "2"])
            procs.append(run)
            wait_for(lambda: _worker_running(run.pid) or run.poll() is not None, 60, "no job ran")
            os.killpg(run.pid, signal.SIGINT)  # Ctrl-C
            _out, err = run.communicate(timeout=GONE_S + 10)
            assert run.returncode == 130, err
            assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
            key = err.strip().split("opforge run --resume ")[1]
            assert err.strip() == f"opforge: SIGINT: run {key} interrupted; resume with: opforge run --resume {key}"
            assert _containers(run.pid) == []  # removed, with the job in it
            with Registry(isolated_registry) as reg:
                row = reg.get_run(key)
            assert (row.status, row.stop_reason) == ("interrupted", "interrupted by SIGINT")

            resumed = _start(["run", "--resume", key])
            procs.append(resumed)
            wait_for(lambda: _worker_running(resumed.pid) or resumed.poll() is not None, 60, "the resumed run ran no job")
            with Registry(isolated_registry) as reg:
                assert reg.get_run(key).status == "running"  # continued, evaluating its candidate again
                assert cancel_run(key, reg).status == "cancelled"
            _out, err = resumed.communicate(timeout=GONE_S + 10)
            assert resumed.returncode == 143 and err.strip() == f"opforge: SIGTERM: run {key} cancelled", err
            assert _containers(resumed.pid) == []
            with Registry(isolated_registry) as reg:
                assert reg.get_run(key).status == "cancelled"
        finally:
            for proc in procs:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                for container in _containers(proc.pid):
                    container.remove(force=True)


def test_migration_0007_allows_interrupted_and_its_downgrade_reopens_such_runs(tmp_path):
    from alembic import command

    from opforge.registry.db import alembic_config

    path = tmp_path / "r.db"
    with Registry(path) as reg:
        spec_id = reg.record_spec("op", "op.py", "x = 1")
        reg.create_run("k1", "op", spec_id, "triton", "expert", "cpu", {})
        reg.update_run("k1", status="interrupted", stop_reason="interrupted by SIGTERM")
    command.downgrade(alembic_config(path), "0006_evaluation_steps")
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT status, finished_at FROM runs").fetchall() == [("running", None)]
        with pytest.raises(sqlite3.IntegrityError, match="ck_runs_status"):
            conn.execute("UPDATE runs SET status = 'interrupted'")
    with Registry(path) as reg:  # upgraded in place again
        assert reg.update_run("k1", status="interrupted").status == "interrupted"
