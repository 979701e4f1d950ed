"""verl's reward function (opforge/reward/verl.py): a reply scored from a dataset row's ground truth
alone (no spec file on disk), in verl's per-response and batched signatures, with the same keys for
every response; a bad ground truth is an unscored 0.0, never a crash; OPFORGE_REWARD_URL sends the
batch to a reward server by its contract, waiting out a full queue (a stand-in server here: the real one
is tested in test_reward_server.py)."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import KERNELS, TINY
from opforge.reward import verl
from opforge.reward.dataset import ground_truth
from opforge.reward.score import Task

NO_KERNEL = "import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n"


def reply(source: str) -> str:
    return f"Here is my kernel.\n\n```python\n{source}```\nIt masks the ragged row.\n"


@pytest.fixture
def truth(tmp_path) -> str:
    """A ground truth made from a spec file that is then deleted: scoring must not need it."""
    spec = tmp_path / "tiny_softmax.py"
    spec.write_text(TINY.read_text())
    gt = ground_truth(Task.from_path(spec, data_source="opforge/specs"))
    spec.unlink()
    return gt


@pytest.fixture(autouse=True)
def closed_scorer(monkeypatch):
    monkeypatch.delenv(verl.URL_ENV, raising=False)
    yield
    verl.close()


def test_a_batch_is_scored_from_the_ground_truth_alone(truth):
    answers = [reply((KERNELS / "good.py").read_text()), "I would use a softmax kernel.", reply(NO_KERNEL)]
    results = verl.compute_score(data_sources=["opforge/specs"] * 3, solution_strs=answers,
                                 ground_truths=[truth] * 3, extra_infos=[{"seed": 7}, {}, None])
    assert [(r["tier"], r["score"]) for r in results] == [("correct", 1.0), ("unusable", 0.0), ("static", 0.1)]
    assert all(tuple(r) == verl.KEYS for r in results)  # verl appends each key per response: the same keys
    assert all(v is not None for r in results for v in r.values())  # and averages numbers: never None
    assert results[0]["seed"] == 7 and results[0]["correct"] and results[0]["level"]  # the row's seed
    assert isinstance(results[1]["seed"], int) and results[1]["seed"] >= 0  # else a fresh one, returned
    assert results[2]["why"] == "no-kernel" and results[2]["op"] == "tiny_softmax"


def test_the_single_response_signature_and_a_bare_float(truth):
    one = verl.compute_score("opforge/specs", reply(NO_KERNEL), truth, {"seed": 3})
    assert (one["tier"], one["score"], one["seed"]) == ("static", 0.1, 3)
    assert verl.compute_score("opforge/specs", reply(NO_KERNEL), truth, None, as_float=True) == 0.1


def test_a_bad_ground_truth_is_an_unscored_zero_not_a_crash(truth):
    bad = [json.dumps({"format": "opforge-task/1", "op": "x"}), "the answer is 42", None]
    results = verl.compute_score(data_sources=["d"] * 3, solution_strs=[reply(NO_KERNEL)] * 3, ground_truths=bad)
    assert [(r["tier"], r["scored"], r["score"]) for r in results] == [("error", False, 0.0)] * 3
    assert "lacks spec" in results[0]["error"] and "not JSON" in results[1]["error"]


class StandIn(BaseHTTPRequestHandler):
    """The reward server's contract: POST /score {"requests": [...]} -> {"results": [...]} in order."""

    bodies: list = []
    busy = 1  # the first POST finds the queue full: 503 with Retry-After, as the real server says

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if StandIn.busy:
            StandIn.busy -= 1
            self.send_response(503)
            self.send_header("Retry-After", "0")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        StandIn.bodies.append((self.path, body))
        results = [{"scored": True, "tier": "wrong", "tier_rank": 4, "reward": 0.3 + 0.1 * i, "seed": r["seed"],
                    "op": r["task"]["op"], "why": ["mismatch"]} for i, r in enumerate(body["requests"])]
        data = json.dumps({"results": results}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_with_a_reward_url_the_batch_goes_to_the_server_in_order(truth, monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv(verl.URL_ENV, f"http://127.0.0.1:{server.server_address[1]}/")
        results = verl.compute_score(data_sources=["d"] * 3, solution_strs=["a", "b", "c"],
                                     ground_truths=[truth, "not a task", truth], extra_infos=[{"seed": 1}, {}, {}])
    finally:
        server.shutdown()
    (path, body), = StandIn.bodies
    assert path == "/score" and [r["answer"] for r in body["requests"]] == ["a", "c"]  # the bad row never left
    assert body["requests"][0] == {"task": {"spec": TINY.read_text(), "op": "tiny_softmax", "backend": "triton",
                                            "data_source": "opforge/specs", "task_id": "opforge/specs/tiny_softmax"},
                                   "answer": "a", "seed": 1}  # after one 503, waited out
    assert [(r["tier"], r["score"]) for r in results] == [("wrong", 0.3), ("error", 0.0), ("wrong", 0.4)]
    monkeypatch.setenv(verl.URL_ENV, "http://127.0.0.1:9")  # nothing listens: every result says so, no crash
    down = verl.compute_score(data_sources=["d"], solution_strs=["a"], ground_truths=[truth])
    assert down[0]["tier"] == "error" and "reward server" in down[0]["error"]
