"""verl's custom reward function: the model's answer scored by opforge's judge.

    custom_reward_function:
      path: <site-packages>/opforge/reward/verl.py   # python -c "import opforge.reward.verl as m; print(m.__file__)"
      name: compute_score

verl loads this file by path and calls `compute_score(data_source=, solution_str=, ground_truth=,
extra_info=)` once per response (reward managers `naive`, `dapo`; `prime` passes the same four
positionally), or, with `reward_model.reward_manager=batch`, `compute_score(data_sources=,
solution_strs=, ground_truths=, extra_infos=)` once per batch: both are answered here.

`ground_truth` is a dataset row's reward_model.ground_truth (opforge/reward/dataset.py): the task's
spec source, op and backend as JSON, so a reward worker needs no checkout of the tasks. The seed is
extra_info["seed"] when the row has one, else a fresh one, returned beside the score.

Each call returns {"score": float, ...} with the same keys every time (verl appends each key to a
list per batch and averages the numeric ones in validation, so no value is ever None): `score` is
the tier's reward, 0.0 for an answer that could not be scored (`scored` False: a task that does not
load here, a verdict that reached no numerics on this machine) with the reason in `why`/`error`.
With reward_kwargs `as_float: true` the score alone (the `prime` manager reads only a number).

Scoring runs in this process: one Scorer (one warm sandbox), made on first use and closed at exit,
calls serialized. With OPFORGE_REWARD_URL set (an `opforge reward-server`), each call or batch is
POSTed to <url>/score instead and scored there, concurrently (a full queue, 503, is retried after its
Retry-After)."""
from __future__ import annotations

import atexit
import json
import numbers
import os
import sys
import threading
import time
import urllib.error
import urllib.request

URL_ENV = "OPFORGE_REWARD_URL"
TIMEOUT_ENV = "OPFORGE_REWARD_TIMEOUT_S"
HTTP_TIMEOUT_S = 3600.0  # one batch of slow tasks on a busy server; a dead server fails at connect
MAX_RETRY_WAIT_S = 30.0  # the longest wait between tries when the server's queue is full (503)
# The keys of every result, in this order (verl needs the same keys for every response of a batch).
KEYS = ("score", "tier", "tier_rank", "scored", "correct", "level", "fraction_passed", "speed_term", "seed",
        "op", "backend", "why", "error", "elapsed_s", "version")

_lock = threading.Lock()
_scorer = None
_scorer_pid = None


def compute_score(data_source=None, solution_str=None, ground_truth=None, extra_info=None, *, data_sources=None,
                  solution_strs=None, ground_truths=None, extra_infos=None, as_float: bool = False, **kwargs):
    """One response's reward (a dict, see the module's docstring), or a list of them for a batch."""
    if solution_strs is not None:
        return compute_score_batched(data_sources, solution_strs, ground_truths, extra_infos, as_float=as_float)
    return compute_score_batched([data_source], [solution_str], [ground_truth], [extra_info], as_float=as_float)[0]


def compute_score_batched(data_sources, solution_strs, ground_truths, extra_infos=None, as_float: bool = False,
                          **kwargs) -> list:
    """The rewards of a batch, in order (`name: compute_score_batched` for the batch manager works too)."""
    extra_infos = [None] * len(solution_strs) if extra_infos is None else list(extra_infos)
    seeds = [_seed(info) for info in extra_infos]
    url = os.environ.get(URL_ENV)
    rewards = (_remote(url, solution_strs, ground_truths, seeds) if url
               else [_local(answer, truth, seed) for answer, truth, seed in zip(solution_strs, ground_truths, seeds)])
    results = [verl_result(reward) for reward in rewards]
    return [r["score"] for r in results] if as_float else results


def verl_result(reward: dict) -> dict:
    """A reward JSON (score.py's, or task_error's) as verl's flat dict: KEYS, numbers never None."""
    tier = reward.get("tier")
    scored = bool(reward.get("scored")) and reward.get("reward") is not None
    return {
        "score": float(reward["reward"]) if scored else 0.0,
        "tier": tier or ("error" if reward.get("error") else "unscored"),
        "tier_rank": reward.get("tier_rank") if isinstance(reward.get("tier_rank"), int) else -1,
        "scored": scored, "correct": bool(reward.get("correct")), "level": reward.get("level") or "",
        "fraction_passed": _number(reward.get("fraction_passed"), 1.0 if reward.get("correct") else 0.0),
        "speed_term": _number(reward.get("speed_term"), 0.0), "seed": _number(reward.get("seed"), -1),
        "op": reward.get("op") or "", "backend": reward.get("backend") or "",
        "why": "; ".join(str(w) for w in reward.get("why") or []), "error": reward.get("error") or "",
        "elapsed_s": _number(reward.get("elapsed_s"), 0.0), "version": reward.get("version") or "",
    }


def scorer():
    """This process's Scorer, made on first use (a forked child makes its own), closed at exit."""
    global _scorer, _scorer_pid
    if _scorer is None or _scorer_pid != os.getpid():
        from opforge.reward.score import Scorer

        _scorer, _scorer_pid = Scorer(), os.getpid()
        atexit.register(_close, _scorer)
    return _scorer


def close() -> None:
    """Close this process's Scorer now (exit does it too); the next call makes a fresh one."""
    if _scorer is not None:
        _close(_scorer)


def _close(which) -> None:
    global _scorer
    which.close()
    if _scorer is which:
        _scorer = None


def _local(answer, ground_truth, seed: int | None) -> dict:
    from opforge.harness.errors import OpforgeError
    from opforge.reward.dataset import task_of
    from opforge.reward.score import task_error

    try:
        task = task_of(ground_truth)
        with _lock:
            return scorer().score(task, answer, seed=seed)
    except OpforgeError as exc:
        print(f"opforge reward: {exc}", file=sys.stderr)
        return task_error(_task_name(ground_truth), exc)


def _remote(url: str, answers, ground_truths, seeds) -> list[dict]:
    """The batch scored by an `opforge reward-server` (POST /score), in order."""
    from opforge.harness.errors import OpforgeError
    from opforge.reward.dataset import task_of
    from opforge.reward.score import task_error

    requests, rewards = [], [None] * len(answers)
    for i, (answer, truth, seed) in enumerate(zip(answers, ground_truths, seeds)):
        try:
            task = task_of(truth)
        except OpforgeError as exc:
            rewards[i] = task_error(_task_name(truth), exc)
            continue
        requests.append((i, {"task": task.wire(), "answer": answer if isinstance(answer, str) else str(answer),
                             "seed": seed}))
    if requests:
        body = json.dumps({"requests": [r for _, r in requests]}).encode()
        try:
            results = _post(url.rstrip("/") + "/score", body, float(os.environ.get(TIMEOUT_ENV) or HTTP_TIMEOUT_S))
            if not isinstance(results, list) or len(results) != len(requests):
                raise ValueError(f"{len(results)} results for {len(requests)} requests")
        except (OSError, ValueError, KeyError, TypeError) as exc:  # a server down, busy or answering garbage
            reason = f"reward server {url}: {type(exc).__name__}: {exc}"
            print(f"opforge reward: {reason}", file=sys.stderr)
            results = [{"scored": False, "tier": None, "reward": None, "error": reason}] * len(requests)
        for (i, _), result in zip(requests, results):
            rewards[i] = result
    return rewards


def _post(url: str, body: bytes, timeout: float) -> list:
    """POST a batch; a full queue (503) is waited out for its Retry-After, within `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        post = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(post, timeout=max(1.0, deadline - time.monotonic())) as response:
                return json.loads(response.read())["results"]
        except urllib.error.HTTPError as exc:
            wait = float(exc.headers.get("Retry-After") or 1) if exc.code == 503 else None
            if wait is None or time.monotonic() + wait > deadline:
                raise
            time.sleep(min(max(wait, 0.1), MAX_RETRY_WAIT_S))


def _seed(extra_info) -> int | None:
    seed = extra_info.get("seed") if isinstance(extra_info, dict) else None
    return int(seed) if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) else None  # numpy ints too


def _number(value, default):
    return value if isinstance(value, numbers.Real) and not isinstance(value, bool) else default


def _task_name(ground_truth) -> str:
    try:
        return str(json.loads(ground_truth).get("task_id") or "?")
    except (TypeError, ValueError, AttributeError):
        return "?"
