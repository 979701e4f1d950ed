"""A scripted OpenAI-compatible chat server on 127.0.0.1 for tests: real HTTP, no network.

Each POST /v1/chat/completions takes the next step of the script: a reply text (200), an `Error`
(status, OpenAI-style error body, extra headers) or a `Hang` (no answer for a while, so the client
times out). With the script used up it answers `default`, or 500 when there is none. Every request
body is recorded in `requests`, in arrival order; `on_request(n)`, if given, is called with the
request's number (1, 2, ...) before it is answered (a test kills its client there).

    with ScriptedLLM(["```python\\n...\\n```", Error(429, headers={"Retry-After": "0"})]) as server:
        LLMConfig(base_url=server.base_url, model="scripted")
"""
from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


@dataclass(frozen=True)
class Reply:
    text: str
    prompt_tokens: int | None = None  # None: about 4 characters a token, like a real tokenizer
    completion_tokens: int | None = None
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Error:
    status: int
    message: str = "scripted error"
    type: str = "server_error"
    code: str | None = None
    headers: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Hang:
    seconds: float = 5.0  # longer than the client's timeout in the tests that use it


Step = Reply | Error | Hang | str


class ScriptedLLM:
    def __init__(self, script: list[Step] = (), default: Step | None = None, model: str = "scripted",
                 on_request: Callable[[int], None] | None = None):
        self.script = deque(script)
        self.default = default
        self.on_request = on_request
        self.model = model
        self.requests: list[dict] = []  # JSON bodies of the chat requests, in arrival order
        self.headers: list[dict] = []  # their headers (Authorization...)
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ScriptedLLM:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        # A short poll interval: shutdown() waits up to one interval, and every test closes a server.
        threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._closing.set()  # releases hanging handlers
        self._httpd.shutdown()
        self._httpd.server_close()

    def next_step(self, body: dict, headers: dict) -> Step:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            if self.script:
                return self.script.popleft()
            return self.default if self.default is not None else Error(500, "the script is used up")

    def completion(self, reply: Reply, body: dict) -> dict:
        prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
        prompt = reply.prompt_tokens if reply.prompt_tokens is not None else prompt_chars // 4
        completion = reply.completion_tokens if reply.completion_tokens is not None else len(reply.text) // 4
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.text},
                         "finish_reason": reply.finish_reason, "logprobs": None}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        }


def _handler(server: ScriptedLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            if self.path.rstrip("/") != "/v1/models":
                return self._send(404, _error_body(f"no route {self.path}", "invalid_request_error"))
            self._send(200, {"object": "list", "data": [
                {"id": server.model, "object": "model", "created": 0, "owned_by": "tests"}]})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path.rstrip("/") != "/v1/chat/completions":
                return self._send(404, _error_body(f"no route {self.path}", "invalid_request_error"))
            body = json.loads(raw or b"{}")
            step = server.next_step(body, dict(self.headers))
            if server.on_request is not None:
                server.on_request(len(server.requests))
            if isinstance(step, Hang):
                server._closing.wait(step.seconds)
                step = Error(504, "hung on purpose")
            if isinstance(step, Error):
                return self._send(step.status, _error_body(step.message, step.type, step.code), step.headers)
            reply = Reply(step) if isinstance(step, str) else step
            self._send(200, server.completion(reply, body))

        def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a Hang step): nobody is left to answer

        def log_message(self, *args) -> None:
            pass  # keep pytest output clean

    return Handler


def _error_body(message: str, type_: str, code: str | None = None) -> dict:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}
