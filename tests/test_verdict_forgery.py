"""The second round of cheats: one hostile kernel per class, each rejected by the mechanism the
class needs, through the real pipeline (sandboxed candidate process, Triton's interpreter, the
judge in this process).

Where a kernel also fails the static allow-list, it is verified with static checks skipped, and
`test_runtime_cheats_pass_the_static_check` pins which ones do pass it: for those, the runtime
mechanism alone stands between the cheat and a correct verdict, so deleting it fails these tests.
"""
from __future__ import annotations

import pytest

from conftest import DATA, KERNELS, ROOT, TINY
from opforge.backends.triton.static import check_source
from opforge.harness import ladder
from opforge.harness.verify import VerifyOptions, verify

STRESS = DATA / "stress_specs"
MATMUL = ROOT / "ops" / "matmul.py"

# kernel, spec, reason code it must be rejected with, text the reason must contain, static skipped
CASES = [
    # 1. the candidate shares no process with the judge
    ("hostile_forge_result", TINY, "runtime-error", "calls it was asked", True),
    ("hostile_patch_judge", TINY, "patched", "compare", True),
    ("hostile_module_hook", TINY, "global-state", "hooks", True),
    ("hostile_default_dtype", TINY, "global-state", "default_dtype", True),
    ("hostile_system_exit", TINY, "runtime-error", "SystemExit", False),
    ("hostile_tensor_attr", TINY, "patched", "torch.Tensor", True),
    # 3. guards with no gaps
    ("hostile_grid_compute", TINY, "torch-compute", "softmax", False),
    ("hostile_autotune_hook", TINY, "torch-compute", "softmax", False),
    ("hostile_tolist", TINY, "below-dispatcher", "tolist", True),
    ("hostile_subclass", TINY, "output-type", "Deferred", True),
    ("hostile_thread_joined", TINY, "threads", "thread", True),
    ("hostile_python_compute", TINY, "host-compute", "tensor elements into Python", False),
    # 4. numerics the given inputs hide
    ("hostile_softmax_no_max", TINY, "mismatch", "scaled x1000", False),
    ("hostile_ignores_strides", TINY, "mismatch", "transposed", False),
    ("hostile_channels_last", STRESS / "tiny_plane_center.py", "mismatch", "stress case channels_last", False),
    ("hostile_first_rows", TINY, "mismatch", "larger", False),
    ("hostile_rms_no_eps", STRESS / "tiny_rms_norm.py", "mismatch", "stress case", False),
    ("hostile_gelu_tanh", STRESS / "tiny_gelu.py", "mismatch", "variant", False),
    # 5. gaming the benchmark (on a CPU: the repeated calls after the trials)
    # a call counter is state that keeps changing: stateful at the first two repeated calls, long before
    # the 32nd call it stops launching at (on a GPU the timed calls catch it as no-launch: test_gpu.py)
    ("hostile_stops_launching", TINY, "stateful", "changed what the candidate keeps (model 0.calls", False),
    ("hostile_memoize", TINY, "cached-output", "earlier call", False),
    # 6. TF32 behind a named constant: the AOT build's PTX
    ("hostile_tf32_constant", MATMUL, "low-precision", "tf32", True),
]
RUNTIME_ONLY = [c[0] for c in CASES if not c[4]]


def codes(verdict: dict) -> set[str]:
    return {r.split(":", 1)[0] for r in verdict["reasons"]}


@pytest.mark.parametrize("kernel, spec, code, text, skip_static", CASES, ids=[c[0] for c in CASES])
def test_cheat_is_rejected_by_its_mechanism(kernel, spec, code, text, skip_static):
    options = VerifyOptions(seed=4321, device="cpu", skip_static=skip_static)
    v = verify(spec, KERNELS / f"{kernel}.py", options)
    assert not v["correct"], v
    assert code in codes(v), v["reasons"]
    assert any(text in r for r in v["reasons"] if r.startswith(code)), v["reasons"]
    assert v["timings"] is None  # nothing the candidate said about its speed is reported


@pytest.mark.parametrize("kernel", RUNTIME_ONLY)
def test_runtime_cheats_pass_the_static_check(kernel):
    """These reach the runtime: only the mechanism their test names rejects them."""
    source = (KERNELS / f"{kernel}.py").read_text()
    assert not check_source(source, float32_spec=True).reasons


def test_candidate_words_never_become_the_verdict():
    v = verify(TINY, KERNELS / "hostile_system_exit.py", VerifyOptions(seed=5, device="cpu"))
    assert not v["correct"] and (v["failed_step"], ladder.failed_check(v)) == ("cpu_run", "run")
    assert all(r.startswith("runtime-error:") for r in v["reasons"]), v["reasons"]


def test_the_good_kernel_passes_every_stress_case():
    v = verify(TINY, KERNELS / "good.py", VerifyOptions(seed=99, device="cpu"))
    assert v["correct"], v["reasons"]
    ran = {s["case"].split(" ")[0] for s in v["stress"] if s["status"] == "passed"}
    assert {"scaled", "zeros", "transposed", "sliced", "larger"} <= ran, v["stress"]
    from opforge.harness.judge import REPEAT_CALLS

    assert v["calls"] > REPEAT_CALLS + 15  # trials, stress, repeated calls and the no-op probe


def test_a_4d_kernel_that_follows_every_stride_passes_every_layout():
    """The control beside hostile_channels_last: the same plane centering through the input's own
    batch and channel strides passes all three layout cases, channels_last included."""
    v = verify(STRESS / "tiny_plane_center.py", KERNELS / "good_plane_center.py", VerifyOptions(seed=4321, device="cpu"))
    assert v["correct"], v["reasons"]
    ran = {s["case"].split(" ")[0] for s in v["stress"] if s["status"] == "passed"}
    assert {"transposed", "sliced", "channels_last"} <= ran, v["stress"]


def test_no_compared_variant_is_never_correct():
    options = VerifyOptions(seed=1, device="cpu")
    object.__setattr__(options, "trials", 0)  # VerifyOptions refuses 0 itself: a caller past that check
    v = verify(TINY, KERNELS / "good.py", options)
    assert not v["correct"]
    assert "no-variants" in codes(v), v["reasons"]


def test_a_spec_can_opt_out_of_stress_kinds(tmp_path):
    spec = tmp_path / "opt_out.py"
    spec.write_text(TINY.read_text().replace('OPFORGE = dict(name="tiny_softmax", tags=["softmax"])',
                                            'OPFORGE = dict(name="opt_out", stress={"layouts": False})'))
    v = verify(spec, KERNELS / "hostile_ignores_strides.py", VerifyOptions(seed=3, device="cpu"))
    assert v["correct"], v["reasons"]  # without layout cases, the stride bug goes unseen, as asked
    assert not any(s["case"] in ("transposed", "sliced") for s in v["stress"])
