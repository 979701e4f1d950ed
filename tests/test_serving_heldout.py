"""Serving specs written the way engine developers write them (tests/data/serving_heldout/, issue #35),
through the offline expert and the real harness: an in-place KV-cache write that also returns the
caches (or one of them), MoE routing whose x1e3 stress case ties experts (index outputs compared by
the values they select), and decode attention reading each sequence's length with `.item()`.
Each loosened check has a wrong-kernel control beside the correct one."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from conftest import ROOT, write
from opforge.agents.drafters.base import DraftRequest
from opforge.agents.drafters.expert import ExpertDrafter
from opforge.codegen import Unsupported, generate, twins
from opforge.codegen.families.sort.topk import analyse
from opforge.codegen.lower import lower
from opforge.harness import judge, selection
from opforge.harness.evidence import judge_calls
from opforge.harness.spec import load_spec
from opforge.harness.verify import CPU_MAX_BYTES, CPU_MAX_ELEMENTS, VerifyOptions, verify

HELD_OUT = ROOT / "tests" / "data" / "serving_heldout"
OPTIONS = VerifyOptions(device="cpu", trials=1, seed=1, sandbox="none")


def _spec(path: Path):
    return load_spec(path, max_elements=CPU_MAX_ELEMENTS, max_bytes=CPU_MAX_BYTES)


def _candidate(path: Path) -> str:
    kernel = generate(path.read_text(), path.stem, _spec(path).sizes_used)
    return kernel.render(kernel.space[0])


# ---- an in-place write that returns what it wrote into ---------------------------------------------

def test_lowering_finds_the_returned_arguments_in_every_convention():
    """`return key_cache, value_cache`, `return k_buffer` (one of two) and `return k.index_copy_(...), ...`
    (what an in-place method returns) are the mutated arguments themselves, at their positions."""
    assert lower(HELD_OUT / "kv_cache_write_returns_caches.py").returned_args == {0: "key_cache", 1: "value_cache"}
    assert lower(HELD_OUT / "sglang_set_kv_buffer.py").returned_args == {0: "k_buffer"}
    assert lower(HELD_OUT / "static_cache_index_copy_returns.py").returned_args == {0: "k_out", 1: "v_out"}
    assert lower(ROOT / "ops" / "serving" / "reshape_and_cache.py").returned_args == {}  # returns nothing


def test_in_place_write_returning_its_caches_verifies_and_an_unreturned_alias_is_refused(tmp_path):
    path = HELD_OUT / "kv_cache_write_returns_caches.py"
    source = _candidate(path)
    assert "return (a2, a3)" in source
    v = verify(path, write(tmp_path / "candidate.py", source), OPTIONS)
    assert v["correct"], v["reasons"]
    # control: the same kernel against a reference that returns copies of the caches: the values
    # agree, but handing out the argument's own memory is aliasing there
    copies = path.read_text().replace("return key_cache, value_cache", "return key_cache.clone(), value_cache.clone()")
    v = verify(write(tmp_path / "returns_copies.py", copies), tmp_path / "candidate.py", OPTIONS)
    assert not v["correct"] and any(r.startswith("aliasing") for r in v["reasons"]), v["reasons"]


# ---- index outputs compared by the values they select ---------------------------------------------

ROUTER = HELD_OUT / "vllm_fused_topk_renorm.py"


def _router_case(label: str):
    material = judge.prepare(_spec(ROUTER), 1, 1, "cpu")
    index = next(i for i, c in enumerate(material.cases) if c.label == label)
    step = next(s for s, p in enumerate(material.plan) if p["case"] == index)
    return material, index, step


def _judged(material, index: int, step: int, outs: list) -> list[str]:
    payload = {"calls": [{"call": step, "case": index, "launches": {"kernel": 1}}]}
    f = judge_calls(material, payload, [outs], None, None)
    return [r for r in f.reasons.values() if r.startswith("mismatch")]


def test_ties_in_a_saturated_router_pass_and_wrong_routing_fails():
    material, index, step = _router_case("scaled x1000")
    case = material.cases[index]
    weights, ids = case.expected
    source = selection.index_sources(material.refs[0], case.inputs, case.expected)[1]
    probs = source.values
    assert int((probs.gather(-1, ids.long()) == 0).sum()) > ids.numel() // 2  # saturated: zeros tie
    # a kernel that breaks ties the other way: among equal probabilities, the highest id first
    n = probs.shape[-1]
    flipped = torch.sort(probs.flip(-1), dim=-1, descending=True, stable=True).indices
    reversed_ties = (n - 1 - flipped[:, : ids.shape[1]]).to(torch.int32)
    assert not torch.equal(reversed_ties, ids)
    assert _judged(material, index, step, [weights, reversed_ties]) == []
    shifted = ((ids.long() + 1) % n).to(torch.int32)  # the expert next door: other values
    assert "select other values" in _judged(material, index, step, [weights, shifted])[0]
    repeated = ids[:, :1].expand_as(ids).contiguous()  # the best expert in every slot
    assert _judged(material, index, step, [weights, repeated])
    zeros = probs.gather(-1, ids.long()) == 0
    row = int(torch.nonzero(zeros[:, -1] & zeros[:, -2])[0])
    twice = ids.clone()
    twice[row, -1] = twice[row, -2]  # one zero-probability expert twice: equal values, not a routing
    assert "repeats" in _judged(material, index, step, [weights, twice])[0]
    outside = ids.clone()
    outside[0, -1] = n
    assert "outside" in _judged(material, index, step, [weights, outside])[0]
    assert _judged(material, index, step, [weights[:, :-1], ids[:, :-1]])  # wrong k
    material, index, step = _router_case("variant 0")
    case = material.cases[index]
    weights, ids = case.expected
    raw = selection.index_sources(material.refs[0], case.inputs, case.expected)[1].values.gather(-1, ids.long())
    assert _judged(material, index, step, [raw, ids])  # not renormalised


def test_index_sources_cover_sort_prefixes_and_argmax_without_keepdim():
    class Sorted(torch.nn.Module):
        def forward(self, x):
            order = torch.sort(x.softmax(-1), dim=-1, descending=True, stable=True)
            return order.values[:, :2], order.indices[:, :2].to(torch.int32), x.argmax(dim=-1)

    x = torch.tensor([[0.0, 1.0, 1.0, -1.0], [2.0, 2.0, 2.0, 2.0]])
    model = Sorted()
    expected = list(model(x))
    found = selection.index_sources(model, [x], expected)
    assert set(found) == {1, 2} and found[2].squeezed and not found[1].squeezed
    # row 1 ties everywhere: any two distinct ids select the same values; argmax any of the four
    assert selection.compare_selected(1, expected[1], torch.tensor([[2, 1], [3, 0]], dtype=torch.int32), found[1]) == (None, 4)
    assert selection.compare_selected(2, expected[2], torch.tensor([2, 3]), found[2]) == (None, 2)
    problem, _ = selection.compare_selected(2, expected[2], torch.tensor([0, 3]), found[2])
    assert "selects 0" in problem  # x[0, 0] = 0 is not the row's max


def test_router_kernel_verifies_through_its_x1000_ties_and_a_wrong_id_kernel_fails(tmp_path):
    source = _candidate(ROUTER)
    v = verify(ROUTER, write(tmp_path / "candidate.py", source), OPTIONS)
    assert v["correct"], v["reasons"]
    scaled = next(s for s in v["stress"] if s["case"] == "scaled x1000")
    assert scaled["status"] == "passed" and scaled["ties"] > 0 and "values they select" in scaled["note"]
    wrong = source.replace("pick.to(tl.int64)", "((pick + 1) % N).to(tl.int64)")
    assert wrong != source
    v = verify(ROUTER, write(tmp_path / "wrong_ids.py", wrong), OPTIONS)
    assert not v["correct"] and any("select other values" in r for r in v["reasons"]), v["reasons"]


# ---- a reference that reads its sizes from the data ------------------------------------------------

def _draft(path: Path, source: str | None = None):
    request = DraftRequest(op=path.stem, spec_source=source or path.read_text(), backend="triton",
                           hardware="cpu/test", sizes=_spec(path).sizes_used)
    return ExpertDrafter().draft(request)[0]


@pytest.mark.parametrize("stem, twin", [("paged_decode_item_loop", "paged_decode_attention.py"),
                                        ("decode_contiguous_item_lens", "decode_contiguous_nhd.py")])
def test_an_item_loop_decode_is_drafted_from_its_traceable_twin_and_verifies(stem, twin, tmp_path):
    """vLLM's kernel-test reference (`seq_len = int(seq_lens[i].item())`, a loop over its tokens) and a
    Llama-layout cache sliced to `int(lengths[b].item())`: export stops on the data-dependent size; the
    expert drafts from a traceable reference returning the same on every input list (the suite's paged
    decode; codegen/twin_refs/), and the harness verifies against the loop itself."""
    path = HELD_OUT / f"{stem}.py"
    draft = _draft(path)
    assert draft.meta["traced_through"] == twin and draft.meta["family"] == "attention"
    v = verify(path, write(tmp_path / "candidate.py", draft.source), OPTIONS)
    assert v["correct"], v["reasons"]


def test_no_twin_for_a_loop_that_computes_something_else_or_a_layout_none_traces():
    path = HELD_OUT / "paged_decode_item_loop.py"
    unscaled = path.read_text().replace(".float() * self.scale", ".float()")  # the same loop, scores unscaled
    assert unscaled != path.read_text()
    assert twins.find(unscaled, _spec(path).sizes_used) is None
    draft = _draft(path, unscaled)
    assert draft.source is None and "could not trace" in draft.problem and "no traceable twin" in draft.problem
    # SGLang's req_to_token decode has no traceable twin shipped: refused, with the reason
    draft = _draft(HELD_OUT / "sglang_decode_req_to_token.py")
    assert draft.source is None and "data-dependent" in draft.problem and "no traceable twin" in draft.problem


def test_a_router_taking_hidden_states_it_never_reads_verifies(tmp_path):
    """SGLang's fused_topk_native takes the hidden states only to assert the token count: an argument
    the graph never reads is passed to the launcher and to no kernel; one it reads still counts."""
    path = HELD_OUT / "sglang_fused_topk_native.py"
    source = _candidate(path)
    v = verify(path, write(tmp_path / "candidate.py", source), OPTIONS)
    assert v["correct"], v["reasons"]
    assert next(s for s in v["stress"] if s["case"] == "scaled x1000").get("ties", 0) > 0  # top-2 of 8 saturated
    kinds = {node.name: kind for node, kind in analyse(lower(path)).loads.items()}
    assert kinds == {"hidden_states": "unused", "gating_output": "n"}
    used = write(tmp_path / "used.py", path.read_text().replace(
        "F.softmax(gating_output.float(), dim=-1)", "F.softmax(gating_output.float() + hidden_states[:, :8], dim=-1)"))
    with pytest.raises(Unsupported, match="hidden_states of shape .* neither along the sorted row"):
        analyse(lower(used))
