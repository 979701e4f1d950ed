"""Every isolation guarantee of the `docker` and `jail` runtimes (the jail with bubblewrap and with
its util-linux `unshare` fallback), each with a hostile candidate and, where the harness's own
checks could stop a candidate first, a hostile job: the worker process itself is the attacker (what
a candidate that took it over at import could do), `python -I -B -c CODE /job/job.json` run through
the runtime alone.

Static checks are skipped (`skip_static=True`) so the hostile code reaches the sandbox: these tests
prove the sandbox holds on its own. After each, the host is checked and the harness must still
verify a good kernel. With OPFORGE_REQUIRE_SANDBOXES=1 (set by .ci/run) an unavailable runtime
fails the test instead of skipping it."""
from __future__ import annotations

import os
import resource
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import threading
import tracemalloc
import uuid
from pathlib import Path

import pytest

import opforge.harness as harness
from opforge.harness.worker import mounts as worker_mounts
from conftest import KERNELS, TINY, require_runtime, write
from opforge.harness.verify import VerifyOptions, prepare, verify, verify_source
from opforge.harness import worker
from opforge.harness import ladder
from opforge.sandbox import Job, JobResult, docker_runtime, get_sandbox, jail, mounts, process, warm

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


@pytest.fixture
def sandbox(runtime):
    sb = get_sandbox(runtime)
    yield sb
    sb.close()


def reported(result: JobResult) -> dict:
    assert result.payload is not None, result
    return result.payload


def hostile_job(monkeypatch, sb, code: str, timeout: float = 60) -> JobResult:
    """Run `code` as the job's worker; it finds its job file in sys.argv[1] and reports through
    `report(dict)` (its result.json)."""
    report = ("import json, os, sys\n"
              "sys.argv[1:] = sys.argv[-1:]  # `-c CODE MODULE JOB`: the job file where the worker has it\n"
              "def report(data):\n"
              "    open(json.load(open(sys.argv[1]))['result_path'], 'w').write(json.dumps(data))\n")
    with monkeypatch.context() as patch:
        patch.setattr(process, "WORKER", ["-I", "-B", "-c", report + code])
        # what the real worker's job sees: its module's name (unused: WORKER runs the code), mounts and
        # preload (the bubblewrap jail forks it from its warm zygote, as it does a verification's worker)
        return sb.run(Job({"mode": "hostile"}, {}, timeout, worker=worker.MODULE, mounts=worker.mounts(),
                          preload=("torch",)))


def test_network_is_unreachable_even_on_loopback(tmp_path, runtime):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    v = hostile(tmp_path, runtime, f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=5)")
    assert not v["correct"] and (v["failed_step"], ladder.failed_check(v)) == ("compile", "build")
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
                forward=loop if where == "forward" else "", timeout=8)
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
        # What can land hits only the job's own processes. In Docker the worker's parent is the
        # job's own shell (its uid), so the job dies with it; in the jail the parent is out of reach
        # (bubblewrap, root's) or absent (the unshare fallback's worker is PID 1), so nothing lands.
        if runtime == "docker":
            assert not v["correct"] and "the job died" in reasons(v), reasons(v)
        else:
            assert v["correct"], reasons(v)
    finally:
        victim.kill()
        victim.wait()
    still_works(runtime)


def test_stdout_flood_is_capped(tmp_path, runtime):
    prelude = "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(chunk)\n"
    v = hostile(tmp_path, runtime, prelude, timeout=300)
    assert v["correct"], reasons(v)  # 1 GB of output is not a failure; it just does not reach us


FLOOD_MB = 50  # on each of stdout and stderr: 800 times what a JobResult keeps of either


def test_output_flood_keeps_a_capped_head_and_tail_and_costs_the_host_nothing(sandbox, monkeypatch):
    """What comes back of a job's stdout and stderr is STDIO_CAP bytes of each, its first and last
    halves, with a marker saying how many bytes were cut; the host's reader never holds the flood
    (its Python allocations, traced over the whole job, stay far below one stream's size)."""
    code = f"""
for stream in (sys.stdout.buffer, sys.stderr.buffer):
    stream.write(b'BEGIN')
    chunk = b'x' * (1 << 20)
    for _ in range({FLOOD_MB}):
        stream.write(chunk)
    stream.write(b'END')
    stream.flush()
report({{'flooded': True}})
"""
    quiet_peak, _quiet = traced_peak(lambda: hostile_job(monkeypatch, sandbox, "report({'flooded': False})\n"))
    peak, result = traced_peak(lambda: hostile_job(monkeypatch, sandbox, code, timeout=300))
    assert reported(result) == {"flooded": True}
    marker = f"\n[... {(FLOOD_MB << 20) + 8 - 64 * 1024} bytes cut ...]\n"
    for name, text in (("stdout", result.stdout), ("stderr", result.stderr)):
        assert text.startswith("BEGIN") and text.endswith("END"), (name, text[:40], text[-40:])
        assert marker in text, (name, text[32760:32840])
        assert len(text.encode()) == 64 * 1024 + len(marker), (name, len(text.encode()))
    grown = peak - quiet_peak  # staging a job costs a few MB of its own, flood or not
    assert grown < 4 << 20, f"the host held {grown >> 20} MB more while the job flooded its output"


def traced_peak(run):
    """(peak bytes of Python allocations while `run()` ran, its result)."""
    tracemalloc.start()
    try:
        result = run()
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


def test_the_jail_runs_the_tool_it_was_asked_for(sandbox, monkeypatch, request):
    """Seen from inside the job: under bubblewrap the job's PID 1 is the warm start's placeholder
    (sandbox/warm.py; the job was forked into the jail), while the unshare fallback
    (OPFORGE_JAIL=unshare) execs down to the worker, which is PID 1 itself; Docker's PID 1 is the
    container's reaper. So a jail that ignored OPFORGE_JAIL and ran bubblewrap for the
    [jail-unshare] cases fails here."""
    result = hostile_job(monkeypatch, sandbox, """
argv = open('/proc/1/cmdline', 'rb').read().split(b'\\0')
report({'pid': os.getpid(), 'init': os.path.basename(argv[0].decode()), 'held': argv[-2].decode()})
""")
    seen = reported(result)
    which = request.node.callspec.params["runtime"]
    if which == "jail":
        assert seen["held"] == warm.HOLD and seen["pid"] != 1, seen
    elif which == "jail-unshare":
        assert seen["pid"] == 1 and seen["init"].startswith("python"), seen
    else:
        assert seen["pid"] != 1 and seen["init"].startswith("python"), seen


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
    # the harness's tripwire refuses the spawn at import, or its check finds the children after forward
    assert any(r.startswith("subprocess: forward left child process") or "may not start processes" in r
               for r in v["reasons"]), reasons(v)
    assert not sleepers(marker), "background processes survived the job"


def test_background_processes_of_a_job_are_killed(sandbox, monkeypatch):
    """Without the harness's tripwire in the way: the job itself leaves detached processes behind."""
    marker = f"{300 + int(uuid.uuid4().int % 1000) / 1000:.3f}"
    result = hostile_job(monkeypatch, sandbox, f"""
import subprocess
subprocess.Popen(['sleep', '{marker}'], start_new_session=True)
subprocess.Popen(['sh', '-c', 'nohup sleep {marker} >/dev/null 2>&1 &'], start_new_session=True)
report({{'spawned': True}})
""")
    assert reported(result) == {"spawned": True}
    assert not sleepers(marker), "background processes survived the job"


def sleepers(marker: str) -> list[str]:
    threading.Event().wait(1.0)  # let the runtime's kill land
    return subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True).stdout.split()


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


FILL = """
def fill(directory, total_mb, chunk=b'x' * (1 << 20)):
    '''Write up to total_mb MB in 64 MB files (the jail's RLIMIT_FSIZE is per file): (MB written, errno).'''
    for i in range(total_mb):
        try:
            with open(os.path.join(directory, f'fill{i // 64}'), 'ab') as fh:
                fh.write(chunk)
                fh.flush()
        except OSError as exc:
            return i, exc.errno
    return total_mb, 0
"""


class DiskWatch(threading.Thread):
    """Samples the used bytes of the host file system holding `path` while a job runs."""

    def __init__(self, path) -> None:
        super().__init__(daemon=True)
        self.path, self.start_used, self.peak, self.done = path, shutil.disk_usage(path).used, 0, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.02):
            self.peak = max(self.peak, shutil.disk_usage(self.path).used - self.start_used)

    def stop(self) -> int:
        self.done.set()
        self.join()
        return self.peak


def test_job_directory_is_a_size_capped_tmpfs(runtime, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # every job directory and mount lands here
    sb = get_sandbox(runtime)
    watch = DiskWatch(tmp_path)
    watch.start()
    try:
        result = hostile_job(monkeypatch, sb, FILL + """
job_dir = os.path.dirname(sys.argv[1])
written, errno = fill(job_dir, 600)
for name in os.listdir(job_dir):
    if name.startswith('fill'):
        os.remove(os.path.join(job_dir, name))
report({'written_mb': written, 'errno': errno})
""")
    finally:
        grown = watch.stop()
        sb.close()
    assert result.payload == {"written_mb": result.payload["written_mb"], "errno": 28}, result  # ENOSPC
    assert result.payload["written_mb"] < 64 and not result.warnings  # the cap: inputs, outputs, result.json
    assert grown < 300 << 20, f"the host's disk grew by {grown >> 20} MB during the job"
    assert not [m for m in mounts.mount_points() if m.startswith(str(tmp_path))], "a job tmpfs was left mounted"


def test_tmp_and_shared_memory_are_size_capped(sandbox, monkeypatch):
    result = hostile_job(monkeypatch, sandbox, FILL + """
found = {}
for place in ('/tmp', '/dev/shm'):
    if os.access(place, os.W_OK):
        found[place] = fill(place, 1024)
report(found)
""")
    assert "/tmp" in result.payload, result
    for place, (written_mb, errno) in result.payload.items():
        assert errno == 28 and written_mb <= 64, f"{place}: {written_mb} MB written, errno {errno}"


@pytest.mark.parametrize("kind", ["sparse", "symlink"])
def test_oversized_or_linked_result_is_refused_unread(sandbox, monkeypatch, kind):
    make = {"sparse": """
for size in (1 << 30, 250 << 20):  # the jail's RLIMIT_FSIZE stops a 1 GB file (still 30x the cap)
    try:
        with open(job['result_path'], 'wb') as fh:
            fh.truncate(size)
        break
    except OSError:
        pass
""", "symlink": "os.symlink('/etc/hostname', job['result_path'])\n"}[kind]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = hostile_job(monkeypatch, sandbox, "job = json.load(open(sys.argv[1]))\n" + make + "os._exit(0)\n")
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    why = {"sparse": "too large", "symlink": "symbolic link"}[kind]
    assert result.cause == "crashed" and result.payload is None, result
    assert why in result.output_errors["result.json"], result
    assert "result.json refused" in result.stderr and why in result.stderr.splitlines()[-1]  # the verdict's line
    assert grown_mb < 200, f"reading the result cost {grown_mb:.0f} MB"


PLANT = """
poison = 'import json, os, sys\\nprint(\"POISONED\", file=sys.stderr)\\nos._exit(0)\\n'
places = {os.getcwd(), os.environ['HOME'], os.environ['TMPDIR'], '/tmp', '/scratch', '/dev/shm',
          os.path.dirname(os.path.dirname(sys.argv[1])), os.environ.get('TRITON_CACHE_DIR', '/scratch')}
planted = []
for place in sorted(places):
    try:
        package = os.path.join(place, 'harness')
        os.makedirs(os.path.join(package, 'locked', 'sealed'))
        for name in ('__init__.py', 'worker.py', 'checker.py'):
            open(os.path.join(package, name), 'w').write(poison)
        for name in ('sitecustomize.py', 'usercustomize.py', 'torch.py', 'triton.py', 'plain.txt'):
            open(os.path.join(place, name), 'w').write(poison)
        os.chmod(os.path.join(package, 'locked', 'sealed'), 0)
        os.chmod(os.path.join(package, 'locked'), 0o555)
        os.chmod(package, 0o555)
        planted.append(place)
    except OSError:
        pass
try:
    open('/proc/1/mem', 'wb')  # PID 1 outlives every job: owning it would outlive the wipe
    planted.append('PID 1')
except OSError:
    pass
"""


def test_a_job_leaves_nothing_in_the_warm_container(monkeypatch):
    require_runtime("docker", docker_runtime.unavailable())
    sb = get_sandbox("docker")
    try:
        planted = reported(hostile_job(monkeypatch, sb, PLANT + "report({'planted': planted})\n"))["planted"]
        container = sb.container.id
        seen = reported(hostile_job(monkeypatch, sb, """
import importlib.util
left = {p: sorted(os.listdir(p)) for p in ('/scratch', '/tmp', '/dev/shm')}
harness = importlib.util.find_spec('opforge.harness').origin
report({'left': left, 'cwd': os.getcwd(), 'own': os.listdir('.'), 'harness': harness})
"""))
        same = sb.container.id == container
    finally:
        sb.close()
    assert {"/scratch", "/tmp", "/dev/shm"} <= set(planted) and "PID 1" not in planted, planted
    assert "/jobs" not in planted  # the jobs root is not the job's to write
    own = os.path.basename(seen["cwd"])
    # a checkout or venv under /tmp is bound read-only on directories docker made in the container's /tmp
    above = sorted({Path(p).parts[2] for p in worker_mounts() if Path(p).is_relative_to("/tmp")})
    assert seen["left"] == {"/scratch": [own], "/tmp": above, "/dev/shm": []} and seen["own"] == [], seen
    assert seen["harness"] == harness.__file__ and same, seen  # the wipe held: the container was kept


def test_poisoned_warm_container_still_judges_the_next_candidates(tmp_path):
    require_runtime("docker", docker_runtime.unavailable())
    options = VerifyOptions(seed=13, trials=1, device="cpu", sandbox="docker", timeout_s=120, skip_static=True)
    spec, hardware = prepare(TINY, options)
    sb = get_sandbox("docker")
    try:
        verify_source(spec, hardware, "import json, os, sys\n" + PLANT + "\n" + GOOD, options, sandbox=sb)
        wrong = verify_source(spec, hardware, (KERNELS / "wrong_no_mask.py").read_text(), options, sandbox=sb)
        good = verify_source(spec, hardware, GOOD, options, sandbox=sb)
        # still warm: it was wiped and checked after every job (else it would have been re-created)
        # what the wipe leaves, seen as the wipe sees it: read-only binds under /tmp (a checkout there) are not the job's
        probe = f"find /scratch /tmp /dev/shm -mindepth 1 {docker_runtime.wipe_select(sb._read_only)} -print"
        left = sb._run_as_job(["/bin/sh", "-c", probe]) if sb.container else (0, "")
    finally:
        sb.close()
    assert not wrong["correct"], reasons(wrong)
    assert good["correct"], reasons(good)
    assert left == (0, ""), left


def test_candidate_filling_its_job_directory_and_tmp_is_stopped(tmp_path, runtime, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # every job directory and mount lands here
    prelude = "import os, sys\n" + FILL + """
job_dir = os.path.dirname(sys.argv[1])
done = [fill(job_dir, 600), fill('/tmp', 1024)]
for place in (job_dir, '/tmp'):
    for name in os.listdir(place):
        if name.startswith('fill'):
            os.remove(os.path.join(place, name))
raise RuntimeError('FILLED %d %d %d %d' % (*done[0], *done[1]))
"""
    watch = DiskWatch(tmp_path)
    watch.start()
    try:
        v = hostile(tmp_path, runtime, prelude)
    finally:
        grown = watch.stop()
    numbers = reasons(v).split("FILLED ", 1)[1].split()[:4]
    job_mb, job_errno, tmp_mb, tmp_errno = (int(n.strip("'\")")) for n in numbers)
    assert job_errno == 28 and job_mb < 64 and tmp_errno == 28 and tmp_mb <= 64, reasons(v)
    assert grown < 300 << 20, f"the host's disk grew by {grown >> 20} MB during the job"
    assert not [m for m in mounts.mount_points() if m.startswith(str(tmp_path))], "a job tmpfs was left mounted"


def test_candidate_planting_a_sparse_result_gets_a_clear_failure(tmp_path, runtime):
    prelude = """
import json, os, sys
with open(json.load(open(sys.argv[1]))['result_path'], 'wb') as fh:
    fh.truncate(250 << 20)  # sparse: nothing on disk, 30x the cap (the jail's RLIMIT_FSIZE stops 1 GB)
os._exit(0)
"""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    v = hostile(tmp_path, runtime, prelude)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert not v["correct"] and "result.json refused: too large" in reasons(v), reasons(v)
    assert grown_mb < 200, f"reading the result cost {grown_mb:.0f} MB"


def test_worker_runs_in_isolated_mode(tmp_path, runtime):
    """Neither its working directory nor PYTHON* variables can change what the worker imports."""
    prelude = """
import os, sys
isolated = sys.flags.isolated and sys.flags.dont_write_bytecode and not {'', os.getcwd()} & set(sys.path)
raise RuntimeError('ISOLATED' if isolated else 'NOT ISOLATED: %s %s' % (sys.flags, sys.path))
"""
    v = hostile(tmp_path, runtime, prelude)
    assert "ISOLATED" in reasons(v) and "NOT ISOLATED" not in reasons(v), reasons(v)
