"""`opforge reward SPEC ANSWER`: one answer scored from the command line. Bad input is one line and
exit 2 before torch loads; a scored answer prints its tier, reward and seed (exit 0)."""
from __future__ import annotations

import json
import subprocess
import sys

from conftest import KERNELS, ROOT, TINY
from test_cli_frictions import OPFORGE, refused


def test_bad_reward_input_is_one_line_before_torch(tmp_path):
    line, torch = refused("reward", str(TINY), str(tmp_path / "missing.md"))
    assert "answer file not found" in line and torch == "torch imported: False"
    line, torch = refused("reward", str(TINY), str(KERNELS / "good.py"), "--backend", "nope")
    assert "unknown backend" in line and torch == "torch imported: False"


def test_a_reply_is_scored_with_its_tier_seed_and_reasons(tmp_path):
    reply = tmp_path / "reply.md"
    reply.write_text("Here it is:\n```python\n" + (KERNELS / "cheat_torch_compute.py").read_text() + "```\n")
    done = subprocess.run([OPFORGE, "reward", str(TINY), str(reply), "--seed", "5", "--json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    reward = json.loads(done.stdout)
    assert (reward["tier"], reward["reward"], reward["seed"]) == ("cheat", -1.0, 5)
    assert "torch-compute" in reward["why"] and reward["verdict"]["anticheat"]["torch-compute"] == "fail"
