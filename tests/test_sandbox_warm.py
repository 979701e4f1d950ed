"""The jail's warm start (sandbox/warm.py, sandbox/zygote.py): a job forked from a zygote that has
torch imported sees exactly what a cold job sees (uid, capabilities, environment, root, mounts,
namespaces, descriptors, interpreter flags), a job cannot change what the next one starts from,
and a zygote that cannot serve makes jobs run cold. The isolation tests of test_sandbox_adversarial
run their jail cases warm as well (verification jobs preload torch)."""
from __future__ import annotations

import json

import pytest

from conftest import require_runtime
from opforge.harness import worker
from opforge.sandbox import Job, jail, process, warm

# What a job can see of its process and its jail, gathered first thing at its start.
LOOK = r'''
import json, os, sys
job = json.load(open(sys.argv[-1]))
def status(pid):
    fields = dict(l.split(":", 1) for l in open(f"/proc/{pid}/status").read().splitlines() if ":" in l)
    return {k: v.strip() for k, v in fields.items()}
me = status("self")
others = sorted((status(p)["Name"], status(p)["Uid"].split()[0]) for p in os.listdir("/proc")
                if p.isdigit() and int(p) != os.getpid())
seen = {
    "torch_before_import": "torch" in sys.modules,
    "uid_zero": os.getuid() == 0 or os.geteuid() == 0, "gid_zero": os.getgid() == 0,
    "caps": {k: me[k] for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")},
    "no_new_privs": me["NoNewPrivs"], "groups": me["Groups"],
    "signals": {k: me[k] for k in ("SigIgn", "SigBlk")},
    "environ": dict(os.environ), "initial_environ": sorted(open("/proc/self/environ", "rb").read().decode().split("\0")),
    "cwd": os.getcwd(), "root": sorted(os.listdir("/")),
    "mounts": sorted(l.split()[4] for l in open("/proc/self/mountinfo")),
    "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
    "flags": [sys.flags.isolated, sys.flags.dont_write_bytecode, sys.flags.no_user_site, sys.flags.safe_path],
    "path": sys.path, "argv": sys.argv[1:], "others": others,
    "interfaces": sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]),
    "hostname": os.uname().nodename, "writable": [p for p in ("/job", "/scratch", "/tmp", "/usr", "/etc") if os.access(p, os.W_OK)],
    "limits": __import__("resource").getrlimit(__import__("resource").RLIMIT_NPROC),
}
open(job["result_path"], "w").write(json.dumps(seen))
'''


@pytest.fixture
def bwrap_jail():
    require_runtime("jail", jail.unavailable())
    if jail.tool() != "bwrap":
        pytest.skip("the warm start is bubblewrap's (the unshare fallback starts cold)")
    return jail.JailSandbox()


def look(monkeypatch, sandbox, code: str = LOOK, warm_on: bool = True) -> dict:
    monkeypatch.setenv("OPFORGE_WARM", "1" if warm_on else "0")
    with monkeypatch.context() as patch:
        patch.setattr(process, "WORKER", ["-I", "-B", "-c", code])
        result = sandbox.run(Job({"mode": "look"}, {}, 120, worker=worker.MODULE, mounts=worker.mounts(),
                                 preload=("torch",)))
    assert result.payload is not None, (result.cause, result.stderr[-2000:])
    return result.payload


def test_a_warm_job_sees_what_a_cold_job_sees(bwrap_jail, monkeypatch):
    monkeypatch.setattr(jail, "_warm_broken", None)
    cold, hot = look(monkeypatch, bwrap_jail, warm_on=False), look(monkeypatch, bwrap_jail)
    assert hot.pop("torch_before_import") is True and cold.pop("torch_before_import") is False  # it is warm
    assert not hot["uid_zero"] and not hot["gid_zero"]
    assert set(hot["caps"].values()) == {"0000000000000000"} and hot["no_new_privs"] == "1" and hot["groups"] == ""
    assert hot["fds"] == [0, 1, 2, 3]  # stdio and the directory being listed: nothing of the zygote's or the host's
    assert hot["others"] == [["python", "0"]]  # the jail's PID 1 (root's placeholder) and nothing else
    assert cold["others"] == [["bwrap", "0"]]
    hot.pop("others"), cold.pop("others")
    assert hot == cold


def test_a_job_cannot_change_what_the_next_job_starts_from(bwrap_jail, monkeypatch):
    monkeypatch.setattr(jail, "_warm_broken", None)
    spoil = r'''
import json, sys, torch
SEED = [torch.initial_seed(), __import__("numpy").random.get_state()[1][:4].tolist()]
torch.add = lambda *a, **k: "spoiled"
torch.manual_seed(1234)
sys.modules["opforge_planted"] = sys
import builtins
builtins.planted = True
open(json.load(open(sys.argv[-1]))["result_path"], "w").write(json.dumps({"spoiled": torch.add(1, 2), "seed": SEED}))
'''
    check = r'''
import json, sys, builtins, torch
seen = {"add": torch.add(torch.tensor(1), 2).item(), "planted": "opforge_planted" in sys.modules or hasattr(builtins, "planted"),
        "seed": [torch.initial_seed(), __import__("numpy").random.get_state()[1][:4].tolist()]}
open(json.load(open(sys.argv[-1]))["result_path"], "w").write(json.dumps(seen))
'''
    first = look(monkeypatch, bwrap_jail, spoil)
    second = look(monkeypatch, bwrap_jail, check)
    assert first["spoiled"] == "spoiled" and {k: second[k] for k in ("add", "planted")} == {"add": 3, "planted": False}
    # each job's torch and NumPy generators seeded afresh, as a cold job's are: not the zygote's
    assert first["seed"][0] != second["seed"][0] and first["seed"][1] != second["seed"][1]


def test_a_zygote_that_cannot_start_makes_jobs_run_cold(bwrap_jail, monkeypatch):
    monkeypatch.setattr(jail, "_warm_broken", None)

    def broken(*_args, **_kwargs):
        raise warm.ZygoteGone("the zygote did not start: no torch here")

    monkeypatch.setattr(warm, "Zygote", broken)
    monkeypatch.setattr(warm, "_zygotes", {})
    seen = look(monkeypatch, bwrap_jail)
    assert seen["torch_before_import"] is False and seen["others"] == [["bwrap", "0"]]  # ran, cold
    assert jail._warm_broken and "no torch here" in jail._warm_broken
    assert look(monkeypatch, bwrap_jail)["torch_before_import"] is False  # and stays cold in this process


def test_a_warm_job_past_its_deadline_is_stopped_with_its_jail(bwrap_jail, monkeypatch):
    monkeypatch.setattr(jail, "_warm_broken", None)
    monkeypatch.setenv("OPFORGE_WARM", "1")
    with monkeypatch.context() as patch:
        patch.setattr(process, "WORKER", ["-I", "-B", "-c", "import os, sys\nos.fork()\nwhile True: pass"])
        result = bwrap_jail.run(Job({"mode": "spin"}, {}, 3, worker=worker.MODULE, mounts=worker.mounts(),
                                    preload=("torch",)))
    assert result.cause == "timeout" and result.wall_s < 3 + 5  # the jail killed at the deadline, not left to settle


def test_the_command_lines_a_zygote_runs():
    assert warm.startable(["-I", "-B", "-m", "opforge.harness.worker", "/job/job.json"], ("torch",))
    assert warm.startable(["-I", "-B", "-c", "pass", "x"], ("torch",))
    assert not warm.startable(["-I", "-B", "-m", "opforge.harness.worker", "/job/job.json"], ())
    assert not warm.startable(["-I", "-c", "pass"], ("torch",))  # bytecode would be written: not this interpreter
    assert not warm.startable(["-B", "-I", "-m", "x"], ("torch",))
    assert json.loads(json.dumps(warm.placeholder("/usr/bin/python3")))[-1] == warm.HOLD
