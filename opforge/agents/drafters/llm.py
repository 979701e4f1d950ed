"""The LLM drafter: chat completions from any OpenAI-compatible endpoint (vLLM, SGLang, OpenAI...).

The openai client runs with its own retries off; `_complete` retries transient failures (429, 5xx,
timeouts, refused connections) with exponential backoff and jitter, honoring Retry-After, and turns
what cannot be retried (bad key, unknown model, a refused request) into one-line DrafterErrors.
A reply without usable code is not an error: it becomes a Draft with `source=None`, a problem and
what it held instead (`rejected`), for the next prompt to show.
"""
from __future__ import annotations

import math
import os
import random
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from urllib.parse import urlparse

import openai

from opforge.agents.drafters.base import Draft, DraftRequest, DrafterError, LLMCall
from opforge.agents.drafters.extract import extract
from opforge.agents.prompts.render import render_messages

# A few calls at once: enough to fill a round of 4 drafts, few enough not to trip a local server's
# batch limit or a hosted API's per-minute quota.
MAX_CONCURRENT_CALLS = 4
# A Retry-After past this is a quota reset, not a hiccup: waiting it out would stall the whole run.
MAX_RETRY_AFTER_S = 60.0
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}


@dataclass(frozen=True)
class LLMConfig:
    base_url: str
    model: str
    api_key: str = "EMPTY"  # local servers (vLLM, SGLang) accept any key
    timeout_s: float = 60.0
    max_retries: int = 4  # retries after the first attempt: 5 attempts in all
    explore_temperature: float = 0.8
    repair_temperature: float = 0.2
    price_in_per_mtok: float | None = None  # USD per million prompt tokens
    price_out_per_mtok: float | None = None  # USD per million completion tokens
    backoff_base_s: float = 0.5  # first retry waits ~0.5 s, then 1, 2, 4... up to backoff_max_s
    backoff_max_s: float = 8.0

    def __post_init__(self) -> None:
        if urlparse(self.base_url).scheme not in ("http", "https") or not urlparse(self.base_url).netloc:
            raise DrafterError(f"the LLM base URL must look like http://host:port/v1, got {self.base_url!r}")
        if not self.model.strip():
            raise DrafterError("the LLM model name is empty")
        if self.timeout_s <= 0 or self.max_retries < 0 or self.backoff_base_s < 0:
            raise DrafterError("LLM timeout must be > 0 and retries and backoff >= 0")
        for name in ("explore_temperature", "repair_temperature"):
            if not 0.0 <= getattr(self, name) <= 2.0:
                raise DrafterError(f"LLM {name} must be within [0, 2], got {getattr(self, name)}")
        if (self.price_in_per_mtok is None) != (self.price_out_per_mtok is None):
            raise DrafterError("LLM prices need both OPFORGE_LLM_PRICE_IN and OPFORGE_LLM_PRICE_OUT, or neither")

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> LLMConfig | None:
        """The endpoint from OPFORGE_LLM_* and OPENAI_API_KEY; None when none is configured."""
        env = os.environ if environ is None else environ
        base_url = env.get("OPFORGE_LLM_BASE_URL", "").strip()
        model = env.get("OPFORGE_LLM_MODEL", "").strip()
        if not base_url and not model:
            return None
        if not base_url or not model:
            have, missing = ("OPFORGE_LLM_BASE_URL", "OPFORGE_LLM_MODEL")
            if not base_url:
                have, missing = missing, have
            raise DrafterError(f"{have} is set but {missing} is not: set both to use an LLM, or neither "
                               "for the offline expert drafter")
        key = env.get("OPENAI_API_KEY", "").strip()
        timeout = _env_float(env, "OPFORGE_LLM_TIMEOUT")
        config = cls(base_url=base_url, model=model, api_key=key or "EMPTY",
                     timeout_s=60.0 if timeout is None else timeout,
                     price_in_per_mtok=_env_float(env, "OPFORGE_LLM_PRICE_IN"),
                     price_out_per_mtok=_env_float(env, "OPFORGE_LLM_PRICE_OUT"))
        if not key and not _is_local(base_url):
            raise DrafterError(f"OPENAI_API_KEY is not set for the remote LLM endpoint {base_url} "
                               "(set it to EMPTY for a server without keys)")
        return config

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        if self.price_in_per_mtok is None or self.price_out_per_mtok is None:
            return None
        return (prompt_tokens * self.price_in_per_mtok + completion_tokens * self.price_out_per_mtok) / 1e6


def _is_local(base_url: str) -> bool:
    host = urlparse(base_url).hostname or ""
    return host in _LOCAL_HOSTS or host.startswith("127.") or host.endswith(".local")


def _env_float(env, name: str) -> float | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise DrafterError(f"{name} must be a non-negative number, got {raw!r}")
    return value


class LLMDrafter:
    name = "llm"

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._client = openai.OpenAI(base_url=config.base_url, api_key=config.api_key,
                                     timeout=config.timeout_s, max_retries=0)

    def describe(self) -> str:
        return f"LLM drafter: model {self.config.model} at {self.config.base_url}"

    def draft(self, request: DraftRequest) -> list[Draft]:
        if request.n <= 0:
            return []
        messages = render_messages(request)
        temperature = (self.config.repair_temperature if request.mode == "repair"
                       else self.config.explore_temperature)
        with ThreadPoolExecutor(max_workers=min(MAX_CONCURRENT_CALLS, request.n)) as pool:
            futures = [pool.submit(self._one_draft, messages, temperature) for _ in range(request.n)]
            return [f.result() for f in futures]

    def _one_draft(self, messages: list[dict], temperature: float) -> Draft:
        call, finish_reason = self._complete(messages, temperature)
        found = extract(call.reply)
        problem = found.problem
        if problem and finish_reason == "length":
            problem += " (the reply was cut off at the token limit: keep the answer shorter)"
        return Draft(source=found.source, drafter=self.name, problem=problem, call=call,
                     meta={"model": self.config.model, "temperature": temperature},
                     rejected=found.rejected, line=found.line)

    def _complete(self, messages: list[dict], temperature: float) -> tuple[LLMCall, str | None]:
        """One chat completion and its finish_reason, retried on transient failures."""
        attempts = self.config.max_retries + 1
        for attempt in range(attempts):
            start = time.perf_counter()
            try:
                response = self._client.chat.completions.create(
                    model=self.config.model, messages=messages, temperature=temperature)
            except openai.APIStatusError as exc:
                if not _transient(exc.status_code):
                    raise DrafterError(self._refusal(exc)) from None
                last, wait = f"HTTP {exc.status_code}: {_server_message(exc)}", _retry_after(exc)
            except openai.APITimeoutError:
                last, wait = f"no reply within {self.config.timeout_s:g} s", None
            except openai.APIConnectionError as exc:
                last, wait = _connection_problem(exc), None
            except openai.APIError as exc:  # a 200 whose body is not a chat completion
                raise DrafterError(f"the LLM endpoint {self.config.base_url} sent an unusable reply: "
                                   f"{exc.message}") from None
            else:
                return self._record(messages, temperature, response, time.perf_counter() - start)
            if attempt + 1 < attempts:
                time.sleep(self._backoff(attempt) if wait is None else wait)
        tries = f"{attempts} attempt{'s' if attempts > 1 else ''}"
        raise DrafterError(f"LLM endpoint {self.config.base_url} unreachable after {tries}: {last}")

    def _backoff(self, attempt: int) -> float:
        """Exponential with jitter: concurrent drafts that failed together do not retry together."""
        ceiling = min(self.config.backoff_max_s, self.config.backoff_base_s * 2 ** attempt)
        return ceiling * random.uniform(0.5, 1.0)

    def _refusal(self, exc: openai.APIStatusError) -> str:
        where, message = self.config.base_url, _server_message(exc)
        if exc.status_code in (401, 403):
            return f"the LLM endpoint {where} rejected the API key (OPENAI_API_KEY): {message}"
        if exc.status_code == 404:
            return f"model '{self.config.model}' not found at {where}: {message}"
        return f"the LLM endpoint {where} refused the request (HTTP {exc.status_code}): {message}"

    def _record(self, messages: list[dict], temperature: float, response,
                latency_s: float) -> tuple[LLMCall, str | None]:
        choice = response.choices[0] if response.choices else None
        reply = (choice.message.content if choice is not None else None) or ""
        usage = response.usage
        prompt_tokens = (usage.prompt_tokens if usage else 0) or 0
        completion_tokens = (usage.completion_tokens if usage else 0) or 0
        call = LLMCall(model=self.config.model, temperature=temperature, messages=tuple(messages),
                       reply=reply, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                       latency_s=latency_s,
                       cost_usd=self.config.cost(prompt_tokens, completion_tokens) if usage else None)
        return call, choice.finish_reason if choice is not None else None


def _transient(status: int) -> bool:
    return status in (408, 429) or status >= 500


def _server_message(exc: openai.APIStatusError) -> str:
    """The server's own words: the OpenAI-style error.message, else the body, on one line."""
    body = exc.body
    message = body.get("message") if isinstance(body, dict) else body
    text = str(message or exc.message or f"HTTP {exc.status_code}")
    return " ".join(text.split())[:300]


def _retry_after(exc: openai.APIStatusError) -> float | None:
    """Seconds from Retry-After-Ms / Retry-After (seconds or an HTTP date), capped; None if absent."""
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            seconds = float(raw) * scale
        except ValueError:
            try:
                seconds = parsedate_to_datetime(raw).timestamp() - time.time()
            except (TypeError, ValueError):
                continue
        if math.isfinite(seconds):
            return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)
    return None


def _connection_problem(exc: openai.APIConnectionError) -> str:
    cause = exc.__cause__
    return f"{exc.message.rstrip('.')} ({cause})" if cause else exc.message
