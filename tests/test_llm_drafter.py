"""The LLM drafter over real HTTP: the real openai client against a scripted local server."""
from __future__ import annotations

import socket
import time

import pytest
from llm_server import Error, Hang, Reply, ScriptedLLM

from opforge.agents.drafters.base import Attempt, DraftRequest, DrafterError
from opforge.agents.drafters.extract import extract, extract_candidate
from opforge.agents.drafters.llm import LLMConfig, LLMDrafter
from opforge.agents.prompts.render import MAX_SOURCE_LINES, render_messages
from conftest import TINY
from opforge.knowledge import KnowledgeItem

GOOD = '''import torch
import triton
import triton.language as tl


@triton.jit
def _copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        _copy_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
        return out
'''
KERNEL, WRAPPER = GOOD.split("\n\n\nclass ")[0] + "\n", "class " + GOOD.split("\n\n\nclass ")[1]
FENCED = f"Here is the kernel.\n\n```python\n{GOOD}```\n"


def request(**kw) -> DraftRequest:
    fields = dict(op="tiny_softmax", spec_source=TINY.read_text(), backend="triton",
                  hardware="cpu/x86_64/triton-interpreter")
    return DraftRequest(**(fields | kw))


def drafter(server: ScriptedLLM, **kw) -> LLMDrafter:
    # Millisecond backoff keeps the retry tests fast; the schedule's shape is tested on its own.
    fields = dict(base_url=server.base_url, model="scripted", timeout_s=5.0, max_retries=4,
                  backoff_base_s=0.001, backoff_max_s=0.01)
    return LLMDrafter(LLMConfig(**(fields | kw)))


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- replies -----------------------------------------------------------------------------------

def test_a_fenced_reply_becomes_a_draft_with_tokens_latency_and_cost():
    with ScriptedLLM([Reply(FENCED, prompt_tokens=1200, completion_tokens=300)]) as server:
        llm = drafter(server, price_in_per_mtok=3.0, price_out_per_mtok=15.0)
        [draft] = llm.draft(request())
    assert draft.source == GOOD and draft.problem is None and draft.drafter == "llm"
    assert draft.meta == {"model": "scripted", "temperature": 0.8}
    call = draft.call
    assert (call.prompt_tokens, call.completion_tokens) == (1200, 300)
    assert call.cost_usd == pytest.approx((1200 * 3.0 + 300 * 15.0) / 1e6)
    assert 0 < call.latency_s < 5
    assert call.reply == FENCED and call.model == "scripted"
    assert [m["role"] for m in call.messages] == ["system", "user"]
    assert server.requests[0]["model"] == "scripted"
    assert server.requests[0]["messages"] == list(call.messages)


def test_no_prices_no_cost():
    with ScriptedLLM([FENCED]) as server:
        [draft] = drafter(server).draft(request())
    assert draft.call.cost_usd is None and draft.call.completion_tokens > 0


@pytest.mark.parametrize("reply, problem", [
    ("I would tile the rows and use a max-subtracted exponent.", "the reply contains no Python code block"),
    ("```python\nimport torch\n\ndef f(x):\n    return x\n```", "the code defines no class ModelNew"),
    ("```python\nimport torch\n\nclass ModelNew(torch.nn.Module)\n    pass\n```", "the code does not parse: line 3:"),
])
def test_a_malformed_reply_is_a_draft_with_a_problem_not_an_exception(reply, problem):
    with ScriptedLLM([reply]) as server:
        [draft] = drafter(server).draft(request())
    assert draft.source is None and draft.problem.startswith(problem)
    assert draft.call.reply == reply


def test_a_reply_cut_at_the_token_limit_says_so():
    with ScriptedLLM([Reply("```python\nimport torch\nclass ModelNew(torch.nn.Module", finish_reason="length")]) as s:
        [draft] = drafter(s).draft(request())
    assert draft.source is None and "does not parse" in draft.problem and "token limit" in draft.problem


def test_n_drafts_are_n_calls():
    with ScriptedLLM(default=FENCED) as server:
        drafts = drafter(server).draft(request(n=3))
    assert len(drafts) == 3 and len(server.requests) == 3
    assert all(d.source == GOOD for d in drafts)


def test_explore_and_repair_temperatures_reach_the_server():
    with ScriptedLLM(default=FENCED) as server:
        llm = drafter(server, explore_temperature=0.9, repair_temperature=0.15)
        [explore] = llm.draft(request(mode="explore"))
        [repair] = llm.draft(request(mode="repair"))
    assert [r["temperature"] for r in server.requests] == [0.9, 0.15]
    assert (explore.meta["temperature"], repair.meta["temperature"]) == (0.9, 0.15)


# --- transient failures are retried ------------------------------------------------------------

def test_429_then_200_is_retried():
    with ScriptedLLM([Error(429, "slow down", "rate_limit_error", headers={"Retry-After": "0"}), FENCED]) as s:
        [draft] = drafter(s).draft(request())
    assert draft.source == GOOD and len(s.requests) == 2


def test_retry_after_is_honored():
    with ScriptedLLM([Error(429, "slow down", headers={"Retry-After": "0.4"}), FENCED]) as server:
        start = time.perf_counter()
        [draft] = drafter(server).draft(request())
    assert draft.source == GOOD and time.perf_counter() - start >= 0.4


def test_500_500_200_succeeds():
    with ScriptedLLM([Error(500), Error(500), FENCED]) as server:
        [draft] = drafter(server).draft(request())
    assert draft.source == GOOD and len(server.requests) == 3


def test_persistent_503_fails_naming_the_endpoint():
    with ScriptedLLM(default=Error(503, "overloaded")) as server:
        with pytest.raises(DrafterError) as err:
            drafter(server, max_retries=2).draft(request())
    assert str(err.value) == (f"LLM endpoint {server.base_url} unreachable after 3 attempts: "
                              "HTTP 503: overloaded")
    assert len(server.requests) == 3


def test_a_hang_past_the_timeout_is_retried_then_fails_clearly():
    with ScriptedLLM([Hang(5), Hang(5)], default=FENCED) as server:
        start = time.perf_counter()
        with pytest.raises(DrafterError, match=r"unreachable after 2 attempts: no reply within 1 s"):
            drafter(server, timeout_s=1.0, max_retries=1).draft(request())
    assert len(server.requests) == 2 and time.perf_counter() - start < 4


def test_backoff_grows_exponentially_with_jitter_and_a_cap():
    llm = LLMDrafter(LLMConfig(base_url="http://127.0.0.1:9/v1", model="m"))  # defaults: 0.5 s, cap 8 s
    for attempt, ceiling in [(0, 0.5), (1, 1.0), (2, 2.0), (6, 8.0)]:
        waits = [llm._backoff(attempt) for _ in range(50)]
        assert all(ceiling / 2 <= w <= ceiling for w in waits) and len(set(waits)) > 1


# --- what cannot be retried fails at once, in one line -----------------------------------------

def test_401_is_about_the_api_key():
    with ScriptedLLM([Error(401, "Incorrect API key provided", "invalid_request_error", "invalid_api_key")]) as s:
        with pytest.raises(DrafterError, match=r"rejected the API key \(OPENAI_API_KEY\)"):
            drafter(s).draft(request())
    assert len(s.requests) == 1


def test_404_names_the_model():
    with ScriptedLLM([Error(404, "The model `nope` does not exist", "invalid_request_error", "model_not_found")]) as s:
        with pytest.raises(DrafterError) as err:
            drafter(s, model="nope").draft(request())
    assert str(err.value).startswith(f"model 'nope' not found at {s.base_url}")
    assert len(s.requests) == 1


def test_another_4xx_carries_the_server_message():
    with ScriptedLLM([Error(400, "maximum context length is 8192 tokens", "invalid_request_error")]) as s:
        with pytest.raises(DrafterError, match="HTTP 400.*maximum context length is 8192 tokens"):
            drafter(s).draft(request())
    assert len(s.requests) == 1


def test_an_unreachable_endpoint_fails_clearly():
    url = f"http://127.0.0.1:{closed_port()}/v1"
    llm = LLMDrafter(LLMConfig(base_url=url, model="m", max_retries=1, backoff_base_s=0.001))
    with pytest.raises(DrafterError, match=rf"^LLM endpoint {url} unreachable after 2 attempts: Connection error"):
        llm.draft(request())


def test_describe_names_model_and_endpoint():
    llm = LLMDrafter(LLMConfig(base_url="http://localhost:8000/v1", model="qwen-coder"))
    assert llm.describe() == "LLM drafter: model qwen-coder at http://localhost:8000/v1"


# --- the prompt --------------------------------------------------------------------------------

def test_the_prompt_carries_spec_knowledge_and_every_feedback_verbatim():
    knowledge = (KnowledgeItem("note", "Mask the ragged last row block", "Use offs < n."),
                 KnowledgeItem("example", "Known-good softmax", "class ModelNew: ...\n"))
    attempts = (Attempt(1, GOOD, False, "cpu_run", "output 0: max abs err 3.1e-2 at [17, 30] (atol 1e-4)"),
                Attempt(2, GOOD, False, "static", "torch-compute: torch.exp in forward (line 14)"))
    with ScriptedLLM([FENCED]) as server:
        drafter(server).draft(request(knowledge=knowledge, attempts=attempts, mode="repair"))
    system, user = server.requests[0]["messages"]
    assert "class ModelNew(torch.nn.Module)" in system["content"] and 'input_precision="ieee"' in system["content"]
    prompt = user["content"]
    assert TINY.read_text().strip() in prompt
    assert "Mask the ragged last row block" in prompt and "Known-good softmax" in prompt
    for a in attempts:
        assert a.feedback in prompt
    assert prompt.index(attempts[0].feedback) < prompt.index(attempts[1].feedback)  # newest last
    assert "Fix attempt 2" in prompt


def test_a_failed_reply_is_fed_back_into_the_next_prompt():
    with ScriptedLLM(["Let me think about the tiling first.", FENCED]) as server:
        llm = drafter(server)
        [bad] = llm.draft(request())
        failed = Attempt(None, bad.source, False, "extract", bad.problem)
        [good] = llm.draft(request(attempts=(failed,), mode="repair"))
    assert good.source == GOOD
    assert bad.problem not in server.requests[0]["messages"][1]["content"]
    assert bad.problem in server.requests[1]["messages"][1]["content"]


def test_a_reply_without_code_or_modelnew_is_shown_back_cut_to_size():
    prose = "\n".join(f"step {i}: the tile should be {i * 16} wide" for i in range(200))
    no_model = "```python\nimport torch\n\n\ndef silu(x):\n    return x * torch.sigmoid(x)\n```"
    with ScriptedLLM([prose, no_model, FENCED]) as server:
        llm = drafter(server)
        unusable = [llm.draft(request())[0], llm.draft(request())[0]]
        attempts = tuple(Attempt(i + 1, d.rejected, False, "draft", f"your reply could not be used: {d.problem}",
                                 line=d.line) for i, d in enumerate(unusable))
        llm.draft(request(attempts=attempts, mode="repair"))
    prompt = server.requests[2]["messages"][1]["content"]
    assert "step 0: the tile should be 0 wide" in prompt and prompt.count("step ") == 40  # the start, cut
    assert "more characters not shown" in prompt
    assert "def silu(x):\n    return x * torch.sigmoid(x)" in prompt  # the code without ModelNew, shown
    assert "the reply contains no Python code block" in prompt and "the code defines no class ModelNew" in prompt


def test_long_code_that_does_not_parse_shows_its_head_and_the_error_line_marked():
    code = "\n".join(f"x{i} = {i}" for i in range(300)) + "\ndef f(:\n" + "\n".join(f"y{i} = {i}" for i in range(100))
    found = extract(code)
    assert (found.source, found.line, found.rejected) == (None, 301, code)
    attempt = Attempt(7, found.rejected, False, "draft", found.problem, line=found.line)
    prompt = render_messages(request(attempts=(attempt,), mode="repair"))[1]["content"]
    assert ">> 301 | def f(:" in prompt and "  293 | x292 = 292" in prompt and "  309 | y7 = 7" in prompt
    assert "    1 | x0 = 0" in prompt and "x200 = 200" not in prompt and "y8 = 8" not in prompt
    assert "lines not shown" in prompt and prompt.count(" | ") <= MAX_SOURCE_LINES


def test_explore_asks_for_a_different_approach_and_repair_for_a_fix():
    attempts = (Attempt(1, GOOD, True, None, "1.10x vs PyTorch", speedup=1.1),)
    explore = render_messages(request(attempts=attempts, mode="explore"))[1]["content"]
    repair = render_messages(request(attempts=attempts + (Attempt(2, GOOD, False, "cpu_run", "nan"),),
                                     mode="repair"))[1]["content"]
    assert "different approach" in explore and "Fix attempt" not in explore
    assert "Fix attempt 2" in repair and "different approach" not in repair


def test_long_sources_are_truncated_but_feedback_is_not():
    long_source = "\n".join(f"x{i} = {i}" for i in range(400))
    feedback = "line 399: " + "e" * 2000
    prompt = render_messages(request(attempts=(Attempt(1, long_source, False, "compile", feedback),)))[1]["content"]
    assert "x149 = 149" in prompt and "x150 = 150" not in prompt and "250 more lines not shown" in prompt
    assert feedback in prompt


def test_the_interpreter_note_appears_only_on_cpu():
    cpu = render_messages(request())[1]["content"]
    gpu = render_messages(request(hardware="cuda/NVIDIA H200/sm_90"))[1]["content"]
    assert "interpreter" in cpu and "sm_90" in cpu and "tl.dot` tiles are at least 16" in cpu
    assert "interpreter" not in gpu


# --- configuration -----------------------------------------------------------------------------

@pytest.fixture
def llm_env(monkeypatch):
    for name in ("OPFORGE_LLM_BASE_URL", "OPFORGE_LLM_MODEL", "OPENAI_API_KEY", "OPFORGE_LLM_TIMEOUT",
                 "OPFORGE_LLM_PRICE_IN", "OPFORGE_LLM_PRICE_OUT"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_from_env_without_an_endpoint_is_none(llm_env):
    assert LLMConfig.from_env() is None


def test_from_env_reads_every_setting(llm_env):
    llm_env.setenv("OPFORGE_LLM_BASE_URL", "https://api.example.com/v1")
    llm_env.setenv("OPFORGE_LLM_MODEL", "big-coder")
    llm_env.setenv("OPENAI_API_KEY", "sk-test")
    llm_env.setenv("OPFORGE_LLM_TIMEOUT", "12.5")
    llm_env.setenv("OPFORGE_LLM_PRICE_IN", "0.5")
    llm_env.setenv("OPFORGE_LLM_PRICE_OUT", "2")
    config = LLMConfig.from_env()
    assert (config.base_url, config.model, config.api_key, config.timeout_s) == (
        "https://api.example.com/v1", "big-coder", "sk-test", 12.5)
    assert config.cost(1_000_000, 1_000_000) == pytest.approx(2.5)


def test_from_env_defaults_for_a_local_server(llm_env):
    llm_env.setenv("OPFORGE_LLM_BASE_URL", "http://localhost:8000/v1")
    llm_env.setenv("OPFORGE_LLM_MODEL", "qwen-coder")
    config = LLMConfig.from_env()
    assert (config.api_key, config.timeout_s, config.max_retries) == ("EMPTY", 60.0, 4)
    assert config.cost(1000, 1000) is None


def test_an_explicit_environ_wins_over_the_process_environment(llm_env):
    llm_env.setenv("OPFORGE_LLM_BASE_URL", "http://localhost:8000/v1")
    llm_env.setenv("OPFORGE_LLM_MODEL", "from-process")
    assert LLMConfig.from_env({}) is None
    explicit = LLMConfig.from_env({"OPFORGE_LLM_BASE_URL": "http://127.0.0.1:9/v1", "OPFORGE_LLM_MODEL": "m"})
    assert explicit.model == "m"


@pytest.mark.parametrize("set_var, missing", [("OPFORGE_LLM_BASE_URL", "OPFORGE_LLM_MODEL"),
                                              ("OPFORGE_LLM_MODEL", "OPFORGE_LLM_BASE_URL")])
def test_a_half_configured_endpoint_is_one_clear_error(llm_env, set_var, missing):
    llm_env.setenv(set_var, "http://localhost:8000/v1" if set_var.endswith("URL") else "qwen-coder")
    with pytest.raises(DrafterError, match=f"^{set_var} is set but {missing} is not"):
        LLMConfig.from_env()


@pytest.mark.parametrize("env, message", [
    ({"OPFORGE_LLM_BASE_URL": "https://api.example.com/v1"}, "OPENAI_API_KEY is not set"),
    ({"OPFORGE_LLM_TIMEOUT": "soon"}, "OPFORGE_LLM_TIMEOUT must be a non-negative number"),
    ({"OPFORGE_LLM_PRICE_IN": "3"}, "both OPFORGE_LLM_PRICE_IN and OPFORGE_LLM_PRICE_OUT"),
    ({"OPFORGE_LLM_BASE_URL": "localhost:8000"}, "must look like http://host:port/v1"),
])
def test_bad_settings_are_one_clear_error(llm_env, env, message):
    base = {"OPFORGE_LLM_BASE_URL": "http://localhost:8000/v1", "OPFORGE_LLM_MODEL": "m"}
    with pytest.raises(DrafterError, match=message):
        LLMConfig.from_env(base | env)


# --- extraction --------------------------------------------------------------------------------

@pytest.mark.parametrize("reply", [
    f"```python\n{GOOD}```",
    f"```py\n{GOOD}```",
    f"```\n{GOOD}```",
    f"Sure! I fused the copy into one kernel.\n\n```python\n{GOOD}```\n\nIt masks the tail.",
    f"<think>Maybe ```python\nclass ModelNew: pass\n``` is enough? No.</think>\n```python\n{GOOD}```",
    f"reasoning the server left without its opening tag</think>\n```python\n{GOOD}```",
    GOOD,
    f"Here is the file:\n{GOOD}",
    f"```bash\npip install triton\n```\n```python\n{GOOD}```",
])
def test_extraction_finds_the_candidate(reply):
    source, problem = extract_candidate(reply)
    assert problem is None and source.strip() == GOOD.strip()


def test_extraction_joins_a_kernel_block_and_a_modelnew_block_in_order():
    reply = (f"The spec:\n```python\nimport torch\n\nclass Model(torch.nn.Module):\n    pass\n```\n"
             f"The kernel:\n```python\n{KERNEL}```\nThe wrapper:\n```python\n{WRAPPER}```")
    source, problem = extract_candidate(reply)
    assert problem is None
    assert source.index("def _copy_kernel") < source.index("class ModelNew")
    assert "class Model(" not in source  # the echoed spec is not part of the candidate


def test_extraction_takes_the_last_modelnew_when_the_reply_revises_itself():
    first = GOOD.replace("BLOCK=256", "BLOCK=128")
    source, problem = extract_candidate(f"```python\n{first}```\nBetter:\n```python\n{GOOD}```")
    assert problem is None and "BLOCK=256" in source and "BLOCK=128" not in source


@pytest.mark.parametrize("reply, problem", [
    ("", "the reply is empty"),
    ("<think>I should write a kernel that", "the reply was cut off inside its <think> reasoning, before any code"),
    ("Use tl.load with a mask.", "the reply contains no Python code block"),
    ("```python\nimport torch\nx = torch.ones(3)\n```", "the code defines no class ModelNew"),
    ("```python\ndef f():\n    class ModelNew: pass\n```", "the code defines no class ModelNew"),
    (f"```python\n{GOOD.replace('def forward(self, x):', 'def forward(self, x)')}```",
     "the code does not parse: line 13: expected ':'"),
])
def test_extraction_explains_what_is_missing(reply, problem):
    assert extract_candidate(reply) == (None, problem)


@pytest.mark.parametrize("reply, rejected, line", [
    ("", None, None),
    ("Use tl.load with a mask.", "Use tl.load with a mask.", None),
    ("```python\nimport torch\nx = torch.ones(3)\n```", "import torch\nx = torch.ones(3)\n", None),
    (f"Try this:\n```python\n{GOOD.replace('def forward(self, x):', 'def forward(self, x)')}```",
     GOOD.replace("def forward(self, x):", "def forward(self, x)"), 13),
])
def test_extraction_keeps_what_an_unusable_reply_held(reply, rejected, line):
    found = extract(reply)
    assert found.source is None and (found.rejected, found.line) == (rejected, line)
