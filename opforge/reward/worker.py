"""What a reward server's worker does with one scoring request, wherever it runs: a local worker
process (serve: a loop over its pipe, one Scorer for its life) or a Ray task (ray_score: a Scorer
kept per Ray worker process). Both keep their sandbox warm and each task's prepared spec.

A request is {"task": {"spec", "op", "backend"?, "data_source"?, "task_id"?}, "answer", "seed"?,
"raw"?, "verdict"?}; `requests_of` checks a POST body's list of them before anything is queued."""
from __future__ import annotations

import os
import sys

from opforge.sandbox.interrupt import exit_code, raise_on_signals

KEYS = {"task", "answer", "seed", "raw", "verdict"}
TASK_KEYS = {"spec", "op", "backend", "data_source", "task_id"}


class BadRequest(ValueError):
    """A POST body the server refuses whole (400), with one line saying why."""


def requests_of(payload) -> list[dict]:
    """The body's requests, each checked for shape and types (not for content: a spec that fails
    to load is that request's error JSON, not the batch's 400)."""
    if not isinstance(payload, dict) or not isinstance(payload.get("requests"), list):
        raise BadRequest('the body must be a JSON object {"requests": [...]}')
    for i, req in enumerate(payload["requests"]):
        where = f"requests[{i}]"
        if not isinstance(req, dict):
            raise BadRequest(f"{where} is a {type(req).__name__}, not an object")
        if set(req) - KEYS:
            raise BadRequest(f"{where} has unknown keys {sorted(set(req) - KEYS)}")
        task = req.get("task")
        if not isinstance(task, dict) or not isinstance(task.get("spec"), str) or not isinstance(task.get("op"), str):
            raise BadRequest(f'{where}.task must be an object with "spec" (source text) and "op" (a name)')
        if set(task) - TASK_KEYS or not all(isinstance(task[k], str) for k in set(task) & TASK_KEYS):
            raise BadRequest(f"{where}.task takes only the text fields {sorted(TASK_KEYS)}")
        if not isinstance(req.get("answer"), str):
            raise BadRequest(f"{where}.answer must be text (the model's reply, or the kernel file with raw)")
        seed = req.get("seed")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**31):
            raise BadRequest(f"{where}.seed must be null or an integer in [0, 2^31)")
        if not isinstance(req.get("raw", False), bool) or not isinstance(req.get("verdict", False), bool):
            raise BadRequest(f"{where}: raw and verdict are true or false")
    return payload["requests"]


def error_result(req: dict, message: str) -> dict:
    """The answer to a request that could not be scored (a bad task, a worker that died, a limit)."""
    from opforge.reward.tiers import REWARD_VERSION

    task = req.get("task") or {}
    key = task.get("task_id") or f"{task.get('data_source') or 'opforge/custom'}/{task.get('op')}"
    return {"version": REWARD_VERSION, "task": key, "op": task.get("op"), "seed": req.get("seed"), "scored": False,
            "tier": None, "reward": None, "error": message}


def score_request(scorer, req: dict) -> dict:
    """The reward JSON of one request; never raises for anything the request holds."""
    from opforge.harness.errors import OpforgeError
    from opforge.reward.score import Task
    from opforge.sandbox.errors import SandboxError

    t = req["task"]
    try:
        task = Task.from_wire(t)
        reward = scorer.score(task, req["answer"], seed=req.get("seed"), raw=bool(req.get("raw")))
    except (OpforgeError, SandboxError) as exc:
        return error_result(req, str(exc))
    except Exception as exc:  # a bug met by one request must not take the others down
        return error_result(req, f"{type(exc).__name__}: {exc}")
    if not req.get("verdict"):
        reward.pop("verdict", None)
    return reward


# -- a local worker process ------------------------------------------------------------------------


def serve(conn, scorer_options: dict, environ: dict[str, str]) -> None:
    """A local worker: score each (job id, request) read from `conn` and send (job id, reward) back,
    until None or EOF. SIGTERM or Ctrl-C unwinds, so the Scorer's sandbox stops its job."""
    from opforge.reward.score import Scorer

    os.environ.clear()
    os.environ.update(environ)
    try:
        with raise_on_signals(), Scorer(**scorer_options) as scorer:
            while True:
                try:
                    message = conn.recv()
                except (EOFError, OSError):  # the server is gone
                    return
                if message is None:
                    return
                job_id, req = message
                conn.send((job_id, score_request(scorer, req)))
    except KeyboardInterrupt as exc:
        sys.exit(exit_code(exc))


# -- a Ray task ------------------------------------------------------------------------------------

_scorers: dict = {}  # per Ray worker process: its Scorer for each set of options (kept warm across tasks)


def ray_score(scorer_options: dict, req: dict) -> dict:
    """The Ray task: score one request with this worker process's warm Scorer."""
    from opforge.reward.score import Scorer

    key = tuple(sorted(scorer_options.items()))
    if key not in _scorers:
        _scorers[key] = Scorer(**scorer_options)
    return score_request(_scorers[key], req)
