"""The LLM drafter writing Triton-Ascend: the Ascend contract as the system prompt, Ascend knowledge
(notes and known-good kernels), the front end's findings turned into hints, and a two-round
`opforge run --backend triton_ascend` over real HTTP against the scripted server, where round one's
ub overflow (from the real bishengir-compile) is fed into round two, which verifies for real."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from llm_server import ScriptedLLM

from conftest import ROOT, TINY
from opforge.agents.drafters.base import DraftRequest
from opforge.agents.nodes.reflect import feedback_text
from opforge.backends.triton_ascend.hints import REASON_HINTS as ASCEND_REASON_HINTS
from opforge.agents.prompts.render import render_messages
from opforge.knowledge import retrieve

SOFTMAX = ROOT / "ops" / "softmax.py"
GOOD = (ROOT / "opforge" / "backends" / "triton_ascend" / "knowledge" / "softmax.py").read_text()
# The same kernel with its tile sized to the whole row and no cap: 2**17 fp32 is 512 KB of tile.
OVERSIZED = GOOD.replace("block = max(8, min(triton.next_power_of_2(n_cols), MAX_BLOCK))", "block = 1 << 17")
CPU = "cpu/x86_64/triton-ascend-interpreter"
UB_OVERFLOW = ("build-error: _softmax_kernel fails bishengir-compile's HIVM pipeline for Ascend910B3: ub overflow, "
               "requires 6291712 bits while 1572864 bits available! (possible reason: tiling basic block is too large)")


def ascend_request(**kw) -> DraftRequest:
    fields = dict(op="softmax", spec_source=SOFTMAX.read_text(), backend="triton_ascend", hardware=CPU)
    return DraftRequest(**(fields | kw))


def fenced(source: str) -> str:
    return f"Grid = vector cores, a row loop inside, sub-blocks sized to the unified buffer.\n\n```python\n{source}```\n"


def require_ascend() -> None:
    from opforge.backends.triton_ascend import toolchain

    chain, reason = toolchain.find()
    if chain is None:
        if os.environ.get("OPFORGE_CI"):
            pytest.fail(f"triton-ascend is required in CI: {reason}")
        pytest.skip(reason)


# --- the system contract and the target ------------------------------------------------------

def test_a_triton_ascend_run_gets_the_ascend_contract():
    ascend = render_messages(ascend_request())[0]["content"]
    triton = render_messages(ascend_request(backend="triton"))[0]["content"]
    for rule in ("NUM_CORES = 40", "tl.num_programs(0)", "192 KB unified buffer", "ub overflow", "32 bytes",
                 "65535", "tl.inline_asm_elementwise", "tl.extra.cuda", "`num_warps` and `num_stages` are ignored",
                 "tl.cast(i, tl.int64)", "No fp64"):
        assert rule in ascend and rule not in triton, rule
    assert "@triton.jit" in ascend and "class ModelNew" in ascend
    assert (ROOT / "opforge/backends/triton_ascend/system.j2").read_text().strip() + "\n" == ascend


def test_the_ascend_target_does_not_promise_an_sm_90_compile():
    user = render_messages(ascend_request())[1]["content"]
    triton = render_messages(ascend_request(backend="triton", hardware="cpu/x86_64/triton-interpreter"))[1]["content"]
    assert "sm_90" in triton and "sm_90" not in user and "shared memory" not in user
    assert "Backend: triton_ascend. Hardware: cpu/x86_64/triton-ascend-interpreter." in user


def test_an_ascend_prompt_carries_ascend_knowledge_only():
    knowledge = tuple(retrieve(SOFTMAX.read_text(), backend="triton_ascend"))
    prompt = render_messages(ascend_request(knowledge=knowledge))[1]["content"]
    assert all(k.source.startswith(("backends/triton_ascend/knowledge/", "backends/triton_ascend/notes/"))
               for k in knowledge), knowledge
    assert "### Known-good Triton-Ascend kernel for softmax" in prompt and "tl.num_programs(0)" in prompt
    assert "### Sizing tiles to the 192 KB unified buffer" in prompt  # the pinned note
    assert "num_warps=" not in prompt  # no GPU kernel slipped in


# --- feedback ------------------------------------------------------------------------------------

@pytest.mark.parametrize("step, check, reason, hint", [
    ("frontend_compile", "build", UB_OVERFLOW, "halve BLOCK"),
    ("static", "rules", "grid-too-large: _k[...] (line 9) launches 70000 programs; an Ascend launch takes at most 65535",
     "one program per vector core"),
    ("static", "rules", "ascend-unsupported: inline_asm_elementwise (line 12): inline assembly is PTX/AMDGPU text",
     "drop inline asm"),
    ("frontend_compile", "build",
     "build-error: _k fails triton-adapter-opt (Triton-Ascend's lowering): Assertion failed", "no tl.where between two pointers"),
    ("frontend_compile", "build",
     "build-error: _k does not lower for Ascend910B3: [fp8, fp64] is unsupported on Ascend for now.", "no fp64 anywhere"),
])
def test_each_ascend_finding_gets_its_own_hint(step, check, reason, hint):
    text = feedback_text({"correct": False, "failed_step": step, "failed_check": check, "reasons": [reason]},
                         "triton_ascend")
    assert reason in text and hint in text
    assert "does not compile for the GPU" not in text and "front end" not in text  # the specific hint wins


def test_an_ascend_build_error_without_a_known_phrase_gets_the_front_end_hint():
    text = feedback_text({"correct": False, "failed_step": "frontend_compile", "failed_check": "build",
                          "reasons": ["build-error: _k: cannot derive"]}, "triton_ascend")
    assert "Huawei's front end" in text and "for the GPU" not in text
    assert not any(hint in text for hint in ASCEND_REASON_HINTS.values())


def test_the_ascend_phrases_are_not_read_in_other_backends_reasons():
    text = feedback_text({"correct": False, "failed_step": "compile", "failed_check": "build", "reasons": [UB_OVERFLOW]},
                         "triton")
    assert ASCEND_REASON_HINTS["ub overflow"] not in text and "does not compile for the GPU" in text


def test_a_correct_ascend_kernel_reports_its_front_end_result():
    kernel = {"kernel": "_softmax_kernel", "target": "Ascend910B3", "mix_mode": "aiv", "pipeline": "hivmc-missing",
              "required_ub_bits": 786432, "constexprs": {"BLOCK": "4096"}}
    text = feedback_text({"correct": True, "failed_step": None, "reasons": [], "build": {"kernels": [kernel]}},
                         "triton_ascend")
    assert "_softmax_kernel: aiv kernel for Ascend910B3, bishengir-compile: hivmc-missing, 98304 bytes" in text


# --- end to end: opforge run --backend triton_ascend ------------------------------------------------

def test_round_two_gets_round_ones_real_ub_overflow_and_verifies(monkeypatch, isolated_registry):
    require_ascend()
    with ScriptedLLM([fenced(OVERSIZED), fenced(GOOD)]) as server:
        monkeypatch.setenv("OPFORGE_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("OPFORGE_LLM_MODEL", "scripted")
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        result = subprocess.run(
            [str(Path(sys.executable).parent / "opforge"), "run", str(TINY), "--drafter", "llm",
             "--backend", "triton_ascend", "--sandbox", "none", "--device", "cpu", "--trials", "2",
             "--candidates", "1", "--budget", "2", "--json"],
            capture_output=True, text=True, timeout=600)
        messages = [body["messages"] for body in server.requests]
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert len(messages) == 2
    first_system, first_user = messages[0][0]["content"], messages[0][1]["content"]
    assert first_system == render_messages(ascend_request())[0]["content"]  # the Ascend contract
    assert "Known-good Triton-Ascend kernel" in first_user and "unified buffer" in first_user
    system, prompt = messages[1][0]["content"], messages[1][1]["content"]
    assert system == first_system
    feedback = prompt[prompt.index("Feedback"):]
    assert "INCORRECT: frontend_compile failed (build)" in feedback and "ub overflow, requires" in feedback, feedback[:1500]
    assert "1572864 bits available" in feedback and ASCEND_REASON_HINTS["ub overflow"] in feedback
    assert "block = 1 << 17" in prompt  # round one's code, shown with its error
    summary = json.loads(result.stdout)
    assert summary["status"] == "done" and summary["best_candidate_id"] is not None
