"""The LLM drafter writing CUDA: the CUDA contract as the system prompt, CUDA knowledge, extraction of
a CUDA candidate (one Python file, or a ```cuda block plus a Python block), and nvcc's and the
emulator's findings in the next prompt, over real HTTP against the scripted server. Triton runs keep
their prompt byte for byte."""
from __future__ import annotations

import ast
import hashlib

import pytest
from llm_server import ScriptedLLM

from conftest import ROOT, TINY
from opforge.agents.drafters.base import Attempt, DraftRequest
from opforge.agents.drafters.extract import extract
from opforge.agents.drafters.llm import LLMConfig, LLMDrafter
from opforge.agents.nodes.reflect import feedback_text
from opforge.agents.prompts.render import render_messages
from opforge.knowledge import KnowledgeItem, retrieve

SOFTMAX = ROOT / "ops" / "softmax.py"
CUDA_GOOD = (ROOT / "opforge" / "backends" / "cuda" / "knowledge" / "softmax.py").read_text()
CPU = "cpu/x86_64/triton-interpreter"
# The one-line reasons as the harness words them (nvcc.NvccError, the emulator's errors).
NVCC_ERROR = ('build-error: nvcc: candidate line 45: error: identifier "sum_of_row" is undefined'
              ' | float inv = 1.0f / sum_of_row;')
RACE = "race: result depends on the thread schedule (reverse differs from forward in argument y at element 17)"
DEADLOCK = ("deadlock: block (3,0,0): threads 16-31 wait at __syncthreads (line 9) while 0-15 wait at "
            "__shfl_down_sync (line 7)")
OOB = "out-of-bounds: a write 4 bytes past the end of argument y (launcher softmax_launch)"


def cuda_request(**kw) -> DraftRequest:
    fields = dict(op="softmax", spec_source=SOFTMAX.read_text(), backend="cuda", hardware=CPU)
    return DraftRequest(**(fields | kw))


def fenced(source: str) -> str:
    return f"One block per row, warp shuffles for the reductions.\n\n```python\n{source}```\n"


def split_reply(source: str) -> str:
    """The same candidate as a ```cuda block and a Python block without CUDA_SRC."""
    tree = ast.parse(source)
    node = next(n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "CUDA_SRC")
    lines = source.splitlines(keepends=True)
    python = "".join(lines[:node.lineno - 1] + lines[node.end_lineno:])
    return f"The kernel:\n```cuda\n{ast.literal_eval(node.value).strip()}\n```\nThe wrapper:\n```python\n{python}```\n"


def drafter(server: ScriptedLLM) -> LLMDrafter:
    return LLMDrafter(LLMConfig(base_url=server.base_url, model="scripted", timeout_s=5.0, max_retries=0))


# --- the system contract and the target --------------------------------------------------------

def test_a_cuda_run_gets_the_cuda_contract_and_a_triton_run_keeps_its_own():
    cuda = render_messages(cuda_request())[0]["content"]
    triton = render_messages(cuda_request(backend="triton"))[0]["content"]
    for rule in ("CUDA_SRC", 'extern "C"', "cudaStream_t", "from opforge.cuda import load_cuda",
                 "0xffffffff", "__syncthreads()", "inline `asm`", "cp.async"):
        assert rule in cuda and rule not in triton, rule
    assert "@triton.jit" in triton and "@triton.jit" not in cuda
    assert (ROOT / "opforge/backends/triton/system.j2").read_text().strip() + "\n" == triton


# sha256 of the Triton messages rendered before the CUDA backend existed (commit 419bca6): the CUDA
# branches of the templates must not change one byte of a Triton prompt.
TRITON_DIGESTS = {
    "cpu-repair": "5bb5a422894e4c49566a539707f4854e771721c640ee3e5fb2ce3eba122fa865",
    "gpu-explore": "9433aaa6716c31b2d7260d992ea4c8bef0e531ae550d2a47457316d8a7304c0b",
}


def triton_requests() -> dict[str, DraftRequest]:
    knowledge = (KnowledgeItem("note", "Masks", "Use offs < n."), KnowledgeItem("example", "Known-good", "x = 1\n"))
    failed = Attempt(3, "import torch\n", False, "build", "INCORRECT at stage build:\n- unsupported AST node")
    correct = Attempt(4, "import torch\n", True, "profile", "CORRECT", speedup=1.5)
    base = dict(op="tiny_softmax", spec_source=TINY.read_text(), backend="triton", knowledge=knowledge)
    return {"cpu-repair": DraftRequest(**base, hardware=CPU, attempts=(failed,), mode="repair"),
            "gpu-explore": DraftRequest(**base, hardware="cuda/NVIDIA H200/sm_90", attempts=(failed, correct))}


@pytest.mark.parametrize("name", sorted(TRITON_DIGESTS))
def test_the_triton_prompt_is_byte_identical_to_before_the_cuda_backend(name):
    messages = render_messages(triton_requests()[name])
    digest = hashlib.sha256("\x00".join(m["content"] for m in messages).encode()).hexdigest()
    assert digest == TRITON_DIGESTS[name]


def test_the_cuda_target_names_nvcc_and_the_emulator_only_on_a_cpu():
    cpu = render_messages(cuda_request())[1]["content"]
    gpu = render_messages(cuda_request(hardware="cuda/NVIDIA H200/sm_90"))[1]["content"]
    assert "nvcc for sm_90" in cpu and "CUDA emulator" in cpu and "deadlock" in cpu and "race" in cpu
    assert "CUDA emulator" not in gpu and "nvcc for this GPU" in gpu
    assert "Triton's interpreter" not in cpu + gpu and "num_warps" not in cpu + gpu
    assert "correct, fast CUDA implementation" in cpu


def test_a_cuda_prompt_carries_cuda_knowledge_only():
    knowledge = tuple(retrieve(SOFTMAX.read_text(), backend="cuda"))
    prompt = render_messages(cuda_request(knowledge=knowledge))[1]["content"]
    assert all(k.source.startswith(("backends/cuda/knowledge/", "backends/cuda/notes/")) for k in knowledge), knowledge
    assert "### Known-good CUDA kernel for softmax" in prompt and "__shfl_xor_sync" in prompt
    assert "opforge's CUDA candidate contract" in prompt  # the pinned note
    assert "tl.load" not in prompt


# --- extraction ------------------------------------------------------------------------------------

def test_a_python_block_with_cuda_src_is_the_candidate_as_it_came():
    found = extract(fenced(CUDA_GOOD))
    assert found.problem is None and found.source == CUDA_GOOD


def test_a_cuda_block_and_a_python_block_are_joined_into_one_candidate():
    found = extract(split_reply(CUDA_GOOD))
    assert found.problem is None
    tree = ast.parse(found.source)
    [cuda_src] = [n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "CUDA_SRC"]
    [load] = [n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "_lib"]
    original = next(n for n in ast.parse(CUDA_GOOD).body if isinstance(n, ast.Assign) and n.targets[0].id == "CUDA_SRC")
    assert ast.literal_eval(cuda_src.value).strip() == ast.literal_eval(original.value).strip()
    assert cuda_src.lineno < load.lineno  # defined before load_cuda reads it, after the imports
    assert found.source.index("from opforge.cuda import load_cuda") < found.source.index("CUDA_SRC = r")


def test_a_cuda_block_never_replaces_a_cuda_src_the_python_defines():
    reply = "Sketch:\n```cuda\n__global__ void draft() {}\n```\n" + fenced(CUDA_GOOD)
    assert extract(reply).source == CUDA_GOOD


def test_a_cuda_block_without_python_says_what_is_missing():
    found = extract("```cuda\n__global__ void k(float* y) { y[0] = 1.f; }\n```\n")
    assert found.source is None and "CUDA block but no Python block" in found.problem
    assert "__global__ void k" in found.rejected


# --- feedback ---------------------------------------------------------------------------------------

def test_an_nvcc_error_is_fed_back_with_its_line_and_code_and_a_cuda_hint():
    text = feedback_text({"correct": False, "failed_step": "compile", "failed_check": "build", "reasons": [NVCC_ERROR]},
                         "cuda")
    assert NVCC_ERROR in text and "nvcc rejected CUDA_SRC" in text
    assert "interpreter" not in text
    triton = feedback_text({"correct": False, "failed_step": "compile", "failed_check": "build", "reasons": ["x"]},
                           "triton")
    assert "ran under the interpreter" in triton and "nvcc" not in triton


@pytest.mark.parametrize("reason, hint", [
    (RACE, "put __syncthreads() between shared-memory writes"),
    (f"runtime-error: variant 0: forward raised RaceError: {RACE}", "put __syncthreads() between"),  # as verify words it
    (DEADLOCK, "a full mask 0xffffffff needs all 32 lanes"),
    (OOB, "bounds-check every index"),
    ("cpu_run: unsupported: inline asm (line 12) cannot be emulated", "write it in plain CUDA C++"),
    ("const-write: launcher softmax_launch changed argument x, which it takes as const (a write through a "
     "cast-away const pointer)", "never cast const away"),
])
def test_each_emulator_finding_gets_its_own_hint(reason, hint):
    text = feedback_text({"correct": False, "failed_step": "cpu_run", "failed_check": "run", "reasons": [reason]}, "cuda")
    assert reason in text and hint in text
    assert "check launch arguments" not in text  # the generic check hint gives way to the specific one


def test_a_correct_cuda_kernel_reports_its_ptxas_numbers():
    kernel = {"kernel": "softmax_kernel", "arch": "sm_90", "registers": 17, "spill_stores": 0, "shared_bytes": 256}
    text = feedback_text({"correct": True, "failed_step": None, "reasons": [], "build": {"kernels": [kernel]}}, "cuda")
    assert "softmax_kernel: 17 registers, 256 bytes shared" in text


def test_round_two_of_a_cuda_run_carries_the_contract_and_round_ones_nvcc_error():
    broken = CUDA_GOOD.replace("const float inv = 1.f / s;", "const float inv = 1.f / sum_of_row;")
    with ScriptedLLM([fenced(broken), split_reply(CUDA_GOOD)]) as server:
        llm = drafter(server)
        [first] = llm.draft(cuda_request())
        summary = {"correct": False, "failed_step": "compile", "failed_check": "build", "reasons": [NVCC_ERROR]}
        attempt = Attempt(1, first.source, False, "compile", feedback_text(summary, "cuda"))
        [second] = llm.draft(cuda_request(attempts=(attempt,), mode="repair"))
    assert first.source == broken and second.problem is None and "CUDA_SRC = r" in second.source
    system, user = server.requests[1]["messages"]
    assert system["content"] == render_messages(cuda_request())[0]["content"] and "cudaStream_t" in system["content"]
    prompt = user["content"]
    assert NVCC_ERROR in prompt and "nvcc rejected CUDA_SRC" in prompt
    assert "const float inv = 1.f / sum_of_row;" in prompt  # round one's code, shown with its error
    assert "Fix attempt 1" in prompt


# --- end to end: opforge run --backend cuda ----------------------------------------------------------

def test_a_cuda_run_feeds_round_ones_real_nvcc_error_into_round_two_and_promotes_round_two(
        monkeypatch, isolated_registry, tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    from opforge.backends.cuda.toolchain import find_nvcc
    if find_nvcc() is None:
        pytest.skip("no nvcc here: the CUDA compile step is skipped, so there is no nvcc error to feed back")
    broken = CUDA_GOOD.replace("const float inv = 1.f / s;", "const float inv = 1.f / sum_of_row;")
    broken_line = broken.splitlines().index("    const float inv = 1.f / sum_of_row;") + 1
    with ScriptedLLM([fenced(broken), split_reply(CUDA_GOOD)]) as server:
        monkeypatch.setenv("OPFORGE_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("OPFORGE_LLM_MODEL", "scripted")
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        result = subprocess.run(
            [str(Path(sys.executable).parent / "opforge"), "run", str(TINY), "--drafter", "llm", "--backend", "cuda",
             "--sandbox", "none", "--device", "cpu", "--trials", "2", "--candidates", "1", "--budget", "2", "--json"],
            capture_output=True, text=True, timeout=600)
        messages = [body["messages"] for body in server.requests]
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert len(messages) == 2
    system, prompt = messages[1][0]["content"], messages[1][1]["content"]
    assert system == render_messages(cuda_request())[0]["content"]  # the CUDA contract, round 2 too
    assert "INCORRECT: compile failed (build)" in prompt and "nvcc" in prompt and "sum_of_row" in prompt
    assert f"line {broken_line}" in prompt, prompt[prompt.index("Feedback"):][:1500]  # nvcc's line, in the file
    assert "nvcc rejected CUDA_SRC" in prompt and "Known-good CUDA kernel" in prompt
    summary = json.loads(result.stdout)
    assert summary["status"] == "done" and summary["best_candidate_id"] is not None
