"""`opforge reward-server` over real HTTP (urllib against a server on port 0): concurrent batches come
back in request order with the right tiers, a full queue answers 503 with Retry-After and loses
nothing, a worker killed under a hanging candidate costs only its own request's result, and the
Ray mode scores through Ray tasks."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from conftest import KERNELS, TINY
from opforge.reward.server import RewardServer, make_pool

SPEC = TINY.read_text()
SYNTAX = "import torch\nclass ModelNew(torch.nn.Module:\n    pass\n"
OPTIONS = {"trials": 1, "timeout_s": 8.0}


def request(kernel: str | None = None, text: str | None = None, seed: int = 7) -> dict:
    answer = text if text is not None else (KERNELS / kernel).read_text()
    return {"task": {"spec": SPEC, "op": "tiny_softmax", "backend": "triton"}, "answer": answer, "seed": seed,
            "raw": True}


def post(url: str, body, timeout: float = 120.0):
    """(status, JSON body, headers); an HTTP error status is returned, not raised."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(url + "/score", data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read()), resp.headers
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), exc.headers


def health(url: str) -> dict:
    with urllib.request.urlopen(url + "/health", timeout=10) as resp:
        return json.loads(resp.read())


def wait_for(url: str, cond, limit_s: float = 60.0) -> dict:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        state = health(url)
        if cond(state):
            return state
        time.sleep(0.05)
    raise AssertionError(f"the server never reached the state; last: {state}")


class Served:
    def __init__(self, executor: str, workers: int | None, queue: int, options: dict = OPTIONS) -> None:
        pool = make_pool(executor, workers, queue, options, request_timeout_s=120.0)
        self.server = RewardServer(("127.0.0.1", 0), pool)
        self.server.start()
        self.url = self.server.url

    def __enter__(self) -> "Served":
        return self

    def __exit__(self, *exc) -> None:
        self.server.close()


def in_thread(fn, *args) -> tuple[threading.Thread, list]:
    out: list = []
    thread = threading.Thread(target=lambda: out.append(fn(*args)))
    thread.start()
    return thread, out


@pytest.fixture(scope="module")
def local(default_sandbox):
    """One local server (2 workers, warm after the first request) for the tests below; a test that
    narrows its queue puts the capacity back."""
    options = OPTIONS | {"sandbox": default_sandbox, "timeout_s": 60.0}
    with Served("local", 2, 16, options) as served:
        yield served


def test_concurrent_batches_come_back_in_order_with_their_tiers(local):
    s = local
    assert post(s.url, {"requests": "nope"})[0] == 400
    status, body, _ = post(s.url, b"{not json")
    assert status == 400 and "not JSON" in body["error"]
    first = in_thread(post, s.url, {"requests": [request("good.py"), request("cheat_torch_compute.py"),
                                                 request(text=SYNTAX)]})
    second = in_thread(post, s.url, {"requests": [request(text="no code here at all", seed=3),
                                                  request("good.py", seed=3) | {"verdict": True}]})
    for thread, _ in (first, second):
        thread.join(120)
    (status1, body1, _), (status2, body2, _) = first[1][0], second[1][0]
    state = health(s.url)
    assert status1 == status2 == 200
    assert [r["tier"] for r in body1["results"]] == ["correct", "cheat", "unusable"]
    assert [r["tier"] for r in body2["results"]] == ["unusable", "correct"]
    assert [r["seed"] for r in body2["results"]] == [3, 3]
    assert "verdict" not in body1["results"][0] and body2["results"][1]["verdict"]["correct"] is True
    assert state["queued"] == state["inflight"] == 0 and state["executor"] == "local"


def test_a_full_queue_answers_503_with_retry_after_and_loses_nothing(local):
    s, capacity = local, local.server.pool.capacity
    local.server.pool.capacity = 1
    try:
        running = in_thread(post, s.url, {"requests": [request("good.py"), request("good.py", seed=2)]})
        wait_for(s.url, lambda h: h["inflight"] == 2)
        waiting = in_thread(post, s.url, {"requests": [request(text=SYNTAX)]})
        wait_for(s.url, lambda h: h["queued"] == 1)
        status, body, headers = post(s.url, {"requests": [request("cheat_torch_compute.py")]})
        assert status == 503 and int(headers["Retry-After"]) >= 1 and "queue full" in body["error"]
        for thread, _ in (running, waiting):
            thread.join(120)
        retried = post(s.url, {"requests": [request("cheat_torch_compute.py")]})  # the client's retry gets in
    finally:
        local.server.pool.capacity = capacity
    assert [r[0][0] for r in (running[1], waiting[1])] == [200, 200]
    assert [r["tier"] for r in running[1][0][1]["results"]] == ["correct", "correct"]
    assert waiting[1][0][1]["results"][0]["tier"] == "unusable"
    assert retried[0] == 200 and retried[1]["results"][0]["tier"] == "cheat"


def test_a_worker_killed_under_a_hanging_candidate_costs_only_its_own_request(local):
    s = local
    before = health(s.url)
    batch = in_thread(post, s.url, {"requests": [request("hang.py"), request("good.py")]})
    busy = wait_for(s.url, lambda h: len(h["busy_pids"]) == 2)["busy_pids"]
    time.sleep(0.5)
    os.kill(busy[0], signal.SIGKILL)  # the worker scoring the hang (the first request goes to the first worker)
    batch[0].join(60)
    assert batch[1], "the killed worker's request was never answered"
    state = health(s.url)
    status, body, _ = batch[1][0]
    hang, good = body["results"]
    assert status == 200 and hang["scored"] is False and "worker process died" in hang["error"], hang
    assert good["tier"] == "correct"
    assert state["replaced"] == before["replaced"] + 1 and state["scored"] == before["scored"] + 2
    assert state["workers"] == 2 and busy[0] not in state["busy_pids"]  # workers: the live ones


def test_the_cli_refuses_bad_flags_in_one_line_and_sigterm_stops_its_workers(tmp_path, capsys):
    from opforge import cli

    assert cli.main(["reward-server", "--workers", "0"]) == 2
    assert capsys.readouterr().err.strip() == "opforge: error: --workers 0 is out of range"
    proc = subprocess.Popen([sys.executable, "-m", "opforge.cli", "reward-server", "--port", "0", "--workers", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        line = proc.stdout.readline()
        url = line.split()[2]
        pids = wait_for(url, lambda h: h["workers"] == 1)["pids"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 128 + signal.SIGTERM, proc.stderr.read()
    finally:
        proc.kill()
    assert "interrupted" in proc.stderr.read()
    deadline = time.monotonic() + 10
    while any(os.path.exists(f"/proc/{pid}") for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(os.path.exists(f"/proc/{pid}") for pid in pids), "a worker outlived the server"


@pytest.mark.xdist_group("ray")  # beside test_batch_ray.py: one local Ray instance, shared (conftest.local_ray)
def test_ray_mode_scores_through_ray_tasks(default_sandbox, local_ray):
    with Served("ray", None, 8, OPTIONS | {"sandbox": default_sandbox}) as s:
        status, body, _ = post(s.url, {"requests": [request("good.py"), request("cheat_torch_compute.py")]})
        state = health(s.url)
    assert status == 200 and [r["tier"] for r in body["results"]] == ["correct", "cheat"]
    assert state["executor"] == "ray" and state["workers"] == 2 and state["scored"] == 2
