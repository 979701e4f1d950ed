"""benchmarks/kernelbench_style.py and benchmarks/capped_child.py: a capped child's whole tree dies
at the cap (a re-parented grandchild in a session of its own too) while a quick child is left to
finish; one tiny problem through the arguments, the capped worker and the tables; the summaries
(median, p90, timeouts at the cap, ratios to a baseline) and the broken copy of a kernel."""
from __future__ import annotations

import ast
import importlib.util
import json
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


KB = _script("kernelbench_style")
CAPPED = _script("capped_child")

# The child starts a middle process that starts a sleeper in a session of its own and exits at
# once: the sleeper is re-parented away from the child's tree before the cap.
DAEMONIZING_CHILD = """
import subprocess, sys, time
sleeper = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(120)"
middle = ("import subprocess, sys; subprocess.Popen([sys.executable, '-c', sys.argv[1], sys.argv[2]], "
          "start_new_session=True)")
subprocess.run([sys.executable, "-c", middle, sleeper, sys.argv[1]])
time.sleep(120)
"""

TINY_SPEC = '''
import torch
import torch.nn as nn

batch_size = 4
dim = 32


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''

KERNEL = '''
import torch
import triton
import triton.language as tl


@triton.jit
def _k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, tl.maximum(v, 0.0), mask=offs < n)
    tl.store(pointer=y_ptr + offs, value=v + 1, mask=offs < 0)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return x
'''


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_cap_kills_a_reparented_grandchild_and_leaves_a_quick_child_alone(tmp_path):
    pid_file = tmp_path / "sleeper.pid"
    started = time.perf_counter()
    done = CAPPED.run_capped([sys.executable, "-c", DAEMONIZING_CHILD, str(pid_file)], cap=2.0)
    assert done["timed_out"] and done["rc"] is None
    assert time.perf_counter() - started < 15
    sleeper = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(sleeper) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(sleeper), "the sleeper the child left behind outlived the cap"
    assert done["leftover"] == []
    # Control: a child that finishes within the cap keeps its exit status and output.
    quick = CAPPED.run_capped([sys.executable, "-c", "print('done')"], cap=30.0)
    assert (quick["timed_out"], quick["rc"], quick["stdout"].strip(), quick["leftover"]) == (False, 0, "done", [])


def test_one_tiny_problem_past_a_tiny_cap_is_a_timeout_row_with_nothing_left(tmp_path, capsys):
    spec = tmp_path / "kb_level1" / "tiny_relu.py"
    spec.parent.mkdir()
    spec.write_text(TINY_SPEC)
    out = tmp_path / "out.json"
    assert KB.main(["--specs", str(spec), "--cap", "1.5", "--reject", "1", "--sandbox", "none", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    [row] = report["results"]
    assert (row["set"], row["problem"], row["outcome"], row["verified"], row["leftover"]) == (
        "kb_level1", "tiny_relu", "timeout", False, [])
    assert report["sets"]["kb_level1"]["timeouts"] == 1 and report["sets"]["kb_level1"]["median_s"] <= 1.5
    assert report["reject"] == []  # no kernel came out of a killed run
    printed = capsys.readouterr().out
    assert "tiny_relu" in printed and "timeout" in printed and "per set" in printed
    workers = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _alive(int(p.name))
               and str(spec).encode() in _cmdline(p)]
    assert workers == []


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""


@pytest.mark.parametrize("argv", [["--cap", "0"], ["--tree", "/nonexistent"], ["--reject", "-1"],
                                  ["--specs", "/nonexistent.py"], ["--merge", "/nonexistent.json"]])
def test_bad_arguments_exit_2(argv):
    with pytest.raises(SystemExit) as exc:
        KB.parse_args(argv)
    assert exc.value.code == 2


def _row(problem: str, seconds: float, outcome: str = "verified", set_name: str = "kb_level2") -> dict:
    return {"set": set_name, "problem": problem, "wall_s": seconds, "outcome": outcome,
            "verified": outcome == "verified", "leftover": []}


def test_summary_median_p90_timeouts_at_the_cap_and_ratio_to_a_baseline():
    rows = [_row(f"p{i}", float(s)) for i, s in enumerate((5, 1, 3, 9, 7, 2, 4, 8, 6))]
    rows.append(_row("slow", 190.0, "timeout"))  # killed a little after the cap: counts as the cap
    sets = KB.summarize(rows, cap=100.0)["kb_level2"]
    assert (sets["problems"], sets["verified"], sets["timeouts"]) == (10, 9, 1)
    assert (sets["median_s"], sets["p90_s"], sets["verified_fraction"]) == (5.5, 9.0, 0.9)
    assert KB.p90([1.0]) == 1.0 and KB.p90([float(v) for v in range(1, 21)]) == 18.0
    baseline = {"sets": {"kb_level2": {"median_s": 11.0}}}
    assert KB.summarize(rows, cap=100.0, baseline=baseline)["kb_level2"]["median_ratio"] == 0.5


def test_broken_copy_scales_every_stored_value_and_none_without_a_store():
    broken = KB.broken_copy(KERNEL)
    stores = [n for n in ast.walk(ast.parse(broken)) if isinstance(n, ast.Call) and ast.unparse(n.func) == "tl.store"]
    values = [ast.unparse(s.args[1]) if len(s.args) > 1 else ast.unparse(s.keywords[1].value) for s in stores]
    assert values == ["tl.maximum(v, 0.0) * 1.001", "(v + 1) * 1.001"]
    assert broken.replace("(v + 1) * 1.001", "v + 1").replace("(tl.maximum(v, 0.0)) * 1.001",
                                                              "tl.maximum(v, 0.0)") == KERNEL
    assert KB.broken_copy("class ModelNew:\n    pass\n") is None
