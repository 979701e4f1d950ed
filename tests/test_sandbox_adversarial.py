"""Every isolation guarantee of the `docker` and `jail` runtimes (the jail with bubblewrap and with
its util-linux `unshare` fallback), each with a hostile candidate.

Static checks are skipped (`skip_static=True`) so the hostile code reaches the sandbox: these tests
prove the sandbox holds on its own. After each, the host is checked and the harness must still
verify a good kernel. With OPFORGE_REQUIRE_SANDBOXES=1 (set by .ci/run) an unavailable runtime
fails the test instead of skipping it."""
from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import threading
import uuid

import pytest

from conftest import KERNELS, TINY, require_runtime, write
from harness.verify import VerifyOptions, verify
from sandbox import docker_runtime, jail

GOOD = (KERNELS / "good.py").read_text()
RUNTIMES = {"docker": docker_runtime.unavailable, "jail": jail.unavailable, "jail-unshare": jail.unavailable}


@pytest.fixture(params=sorted(RUNTIMES))
def runtime(request, monkeypatch):
    """docker, jail (bubblewrap) and jail-unshare (the jail's fallback when bubblewrap is missing)."""
    if request.param == "jail-unshare":
        monkeypatch.setenv("OPFORGE_JAIL", "unshare")
    require_runtime(request.param, RUNTIMES[request.param]())
    return request.param.split("-")[0]


def hostile(tmp_path, runtime, prelude: str, forward: str = "", timeout: float = 120) -> dict:
    """Verify the good kernel with `prelude` run at import and `forward` at the top of forward()."""
    source = prelude + "\n" + GOOD
    if forward:
        indented = "\n".join("        " + line for line in forward.strip().splitlines())
        source = source.replace("    def forward(self, x):\n", "    def forward(self, x):\n" + indented + "\n")
    kernel = write(tmp_path / f"hostile_{uuid.uuid4().hex[:6]}.py", source)
    options = VerifyOptions(seed=11, trials=1, device="cpu", sandbox=runtime, timeout_s=timeout, skip_static=True)
    return verify(TINY, kernel, options)


def still_works(runtime) -> None:
    v = verify(TINY, KERNELS / "good.py", VerifyOptions(seed=12, trials=1, device="cpu", sandbox=runtime))
    assert v["correct"], v["reasons"]


def reasons(v: dict) -> str:
    return " | ".join(v["reasons"])


def test_network_is_unreachable_even_on_loopback(tmp_path, runtime):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    v = hostile(tmp_path, runtime, f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=5)")
    assert not v["correct"] and v["stage"] == "build"
    assert "ConnectionRefusedError" in reasons(v) or "Network is unreachable" in reasons(v), reasons(v)
    with pytest.raises(TimeoutError):
        server.accept()  # nothing ever reached the host's listener
    server.close()
    still_works(runtime)


def test_writes_outside_scratch_do_not_reach_the_host(tmp_path, runtime):
    target = tmp_path / f"escape-{uuid.uuid4().hex}"
    project_file = KERNELS.parent / f"escape-{uuid.uuid4().hex}"
    prelude = f"""
for path in ({str(target)!r}, {str(project_file)!r}, '/usr/escape'):
    try:
        open(path, 'w').write('escaped')
    except OSError:
        pass
open('/scratch/ok', 'w').write('scratch is writable')
"""
    v = hostile(tmp_path, runtime, prelude)
    assert v["correct"], reasons(v)  # the writes failed quietly; scratch worked
    assert not target.exists() and not project_file.exists()
    assert not os.path.exists("/usr/escape")


def test_secrets_in_environment_and_files_are_invisible(tmp_path, runtime, monkeypatch):
    secret = f"sk-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    planted = write(tmp_path / "secret.txt", secret)
    home_secret = write(tmp_path / "home" / ".netrc", secret)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    prelude = f"""
found = [k for k, v in __import__('os').environ.items() if {secret!r} in v]
for path in ({str(planted)!r}, {str(home_secret)!r}):
    try:
        found.append(open(path).read())
    except OSError:
        pass
if found:
    raise RuntimeError('LEAKED ' + repr(found))
raise RuntimeError('nothing to steal: env keys ' + ','.join(sorted(__import__('os').environ)))
"""
    v = hostile(tmp_path, runtime, prelude)
    assert "nothing to steal" in reasons(v), reasons(v)
    assert secret not in reasons(v) and "OPENAI_API_KEY" not in reasons(v)


def test_fork_bomb_is_contained(tmp_path, runtime):
    marker = new_marker()
    prelude = name_process(marker) + "import os\nwhile True:\n    os.fork()\n"
    v = hostile(tmp_path, runtime, prelude, timeout=60)
    assert not v["correct"]
    # Which limit trips first (pids, memory for the copies, time) depends on the runtime and the load.
    assert any(r.startswith(("load-error", "timeout", "killed", "crashed", "oom")) for r in v["reasons"]), reasons(v)
    assert not survivors(marker), "fork bomb processes outlived the job"
    still_works(runtime)


def test_allocating_64_gib_is_stopped_as_oom(tmp_path, runtime):
    v = hostile(tmp_path, runtime, "", forward="torch.ones(64 << 30, dtype=torch.uint8)")
    assert not v["correct"]
    assert v["reasons"][0].startswith("oom"), reasons(v)
    still_works(runtime)


@pytest.mark.parametrize("where", ["import", "forward"])
def test_infinite_loops_are_timed_out(tmp_path, runtime, where):
    marker = new_marker()
    loop = "while True:\n    pass\n"
    v = hostile(tmp_path, runtime, name_process(marker) + (loop if where == "import" else ""),
                forward=loop if where == "forward" else "", timeout=15)
    assert v["reasons"][0].startswith("timeout:"), reasons(v)
    assert not survivors(marker), "the looping worker outlived its time limit"


def test_killing_parent_and_host_processes_fails(tmp_path, runtime):
    victim = subprocess.Popen(["sleep", "300"])
    prelude = f"""
import os, signal
for pid in ({victim.pid}, {os.getpid()}, os.getppid(), 1, -1):
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
"""
    try:
        v = hostile(tmp_path, runtime, prelude)
        assert victim.poll() is None, "a host process was killed from inside the sandbox"
        assert isinstance(v["reasons"], list)  # and this test process is alive to read the verdict
    finally:
        victim.kill()
        victim.wait()
    still_works(runtime)


def test_stdout_flood_is_capped(tmp_path, runtime):
    prelude = "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(chunk)\n"
    v = hostile(tmp_path, runtime, prelude, timeout=300)
    assert v["correct"], reasons(v)  # 1 GB of output is not a failure; it just does not reach us


def test_registry_database_cannot_be_touched(tmp_path, runtime, isolated_registry):
    isolated_registry.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(isolated_registry) as db:
        db.execute("create table canary (v text)")
        db.execute("insert into canary values ('alive')")
    prelude = f"""
import os
for path in ({str(isolated_registry)!r}, os.environ.get('OPFORGE_DB', '')):
    try:
        os.remove(path)
    except OSError:
        pass
    try:
        open(path, 'wb').write(b'corrupted')
    except OSError:
        pass
"""
    hostile(tmp_path, runtime, prelude)
    with sqlite3.connect(isolated_registry) as db:
        assert db.execute("select v from canary").fetchall() == [("alive",)]
        assert db.execute("pragma integrity_check").fetchone() == ("ok",)


def test_background_processes_do_not_outlive_the_job(tmp_path, runtime):
    marker = f"{300 + int(uuid.uuid4().int % 1000) / 1000:.3f}"
    prelude = f"""
import subprocess
subprocess.Popen(['sleep', '{marker}'], start_new_session=True)
subprocess.Popen(['sh', '-c', 'nohup sleep {marker} &'], start_new_session=True)
"""
    v = hostile(tmp_path, runtime, prelude)
    assert any(r.startswith("subprocess: forward left child process") for r in v["reasons"]), reasons(v)
    threading.Event().wait(1.0)  # let the runtime's kill land
    survivors = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True).stdout.split()
    assert not survivors, f"background processes survived the job: {survivors}"


def new_marker() -> str:
    return "opf" + uuid.uuid4().hex[:10]  # process names (comm) hold 15 characters


def name_process(marker: str) -> str:
    """Hostile prelude that renames the worker (prctl PR_SET_NAME), so its survivors can be found."""
    return f"import ctypes\nctypes.CDLL(None).prctl(15, {marker.encode()!r}, 0, 0, 0)\n"


def survivors(marker: str) -> list[str]:
    """Live processes named `marker`: zombies (dead, waiting for the host's init to reap them) are not."""
    threading.Event().wait(1.0)  # let the runtime's kill land
    pids = subprocess.run(["pgrep", "-x", marker], capture_output=True, text=True).stdout.split()
    states = {pid: subprocess.run(["ps", "-o", "stat=", "-p", pid], capture_output=True, text=True).stdout.strip()
              for pid in pids}
    return [pid for pid, state in states.items() if state and not state.startswith("Z")]
