"""`opforge reward-server`: RL rewards over HTTP (the standard library's ThreadingHTTPServer).

    POST /score   {"requests": [{"task": {"spec": SOURCE, "op": NAME, "backend": "triton"},
                                 "answer": TEXT, "seed": INT|null, "raw": BOOL?, "verdict": BOOL?}, ...]}
                  -> 200 {"results": [reward JSON, in request order]}; the verdict only where asked
                  -> 400 {"error": one line} for a body that is not such a batch (nothing is scored)
                  -> 503 {"error": ...} with Retry-After when the queue is full (nothing is queued)
    GET /health   -> {"workers", "queued", "inflight", "scored", "executor", ...}

Each candidate is verified in the sandbox by a worker (pool.py) holding a warm Scorer. A request that
could not be scored (a spec that does not load, a worker that died under it, a time limit) is an
error JSON in its place, never a dropped result or a hang."""
from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opforge.reward.worker import BadRequest, requests_of

MAX_BODY = 64 * 1024 * 1024  # bytes of one POST: bounds what one admitted batch can hold
REQUEST_SLACK_S = 60.0  # a request's time limit: 4 sandbox job limits (a verify runs a few jobs) + this


class RewardServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], pool, quiet: bool = True) -> None:
        super().__init__(address, _Handler)
        self.pool, self.quiet = pool, quiet

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> threading.Thread:
        """Serve in a thread (tests, embedding); stop with close()."""
        thread = threading.Thread(target=self.serve_forever, name="opforge-reward-http", daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        """Stop taking requests, answer the waiting ones with an error, stop the workers."""
        self.shutdown()
        self.pool.close()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: RewardServer
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt: str, *args) -> None:
        if not self.server.quiet:
            sys.stderr.write(f"opforge reward-server: {self.address_string()} {fmt % args}\n")

    def _send(self, status: int, body: dict, headers: dict | None = None) -> None:
        data = json.dumps(body, default=str).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] == "/health":
            self._send(200, self.server.pool.health())
        else:
            self._send(404, {"error": f"no such path {self.path}: POST /score or GET /health"})

    def do_POST(self) -> None:
        if self.path.split("?", 1)[0] != "/score":
            self._send(404, {"error": f"no such path {self.path}: POST /score or GET /health"})
            return
        try:
            reqs = requests_of(self._body())
        except BadRequest as exc:
            self.close_connection = True  # an unread or half-read body must not be taken for the next request
            self._send(400, {"error": str(exc)})
            return
        jobs = self.server.pool.admit(reqs)
        if jobs is None:
            pool = self.server.pool
            wait = pool.retry_after()
            why = "the reward server is stopping" if pool.stopping else (
                f"queue full ({pool.health()['queued']} waiting, capacity {pool.capacity}): retry in {wait} s")
            self._send(503, {"error": why}, {"Retry-After": str(wait)})
            return
        for job in jobs:
            job.done.wait()
        self._send(200, {"results": [job.result for job in jobs]})

    def _body(self):
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise BadRequest("a POST /score needs a Content-Length")
        if int(length) > MAX_BODY:
            raise BadRequest(f"the body is {int(length)} bytes, over the limit of {MAX_BODY}")
        raw = self.rfile.read(int(length))
        try:
            return json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BadRequest(f"the body is not JSON: {exc}") from None


def make_pool(executor: str, workers: int | None, capacity: int, scorer_options: dict,
              request_timeout_s: float, address: str | None = None):
    from opforge.reward.pool import LocalPool, RayRewardPool

    if executor == "ray":
        return RayRewardPool(workers, capacity, scorer_options, request_timeout_s, address)
    return LocalPool(workers, capacity, scorer_options, request_timeout_s)
