"""The guarantee map: every promise the README makes, the tests that prove it, and a mutation that
removes the mechanism behind it. `scripts/mutation_check.py` applies each mutation to a copy of the
repository and runs only that row's tests there: they must fail. tests/test_guarantees.py checks,
without running mutations, that every mutation still applies and every test id exists."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Edit:
    path: str  # relative to the repository root
    old: str  # must occur exactly once in the file
    new: str


@dataclass(frozen=True)
class Guarantee:
    id: str
    promise: str  # the README's promise, in a few words
    tests: tuple[str, ...]  # pytest node ids, cheapest first
    mutation: tuple[Edit, ...]

    def __post_init__(self) -> None:
        if not (self.tests and self.mutation):
            raise ValueError(f"{self.id}: a guarantee needs at least one test and one edit")


def apply_mutation(row: Guarantee, root: Path, write: bool = True) -> None:
    """Apply (or with write=False only check) the row's edits under root; ValueError when an edit
    no longer matches exactly once, so the map cannot rot silently."""
    texts: dict[Path, str] = {}
    for edit in row.mutation:
        path = root / edit.path
        text = texts.get(path) or path.read_text()
        count = text.count(edit.old)
        if count != 1:
            raise ValueError(f"{row.id}: {edit.path}: the mutation's old text occurs {count} times, not once: "
                             f"{edit.old.strip()[:80]!r}")
        texts[path] = text.replace(edit.old, edit.new)
    if write:
        for path, text in texts.items():
            path.write_text(text)


MEM_H = "opforge/backends/cuda/emulator/include/emu_mem.h"

def _g(id: str, promise: str, tests: str | tuple[str, ...], *edits: tuple[str, str, str]) -> Guarantee:
    tests = (tests,) if isinstance(tests, str) else tests
    return Guarantee(id, promise, tests, tuple(Edit(*e) for e in edits))


AC = "tests/test_anticheat.py::test_cheat_is_rejected_with_its_reason"
VF = "tests/test_verdict_forgery.py::test_cheat_is_rejected_by_its_mechanism"
ADV = "tests/test_sandbox_adversarial.py::"
WARM = "tests/test_sandbox_warm.py::"
ZYGOTE = "opforge/sandbox/zygote.py"
INT = "tests/test_interrupt.py::"
STATIC_R = "opforge/backends/triton/static_resolve.py"
STATIC_T = "opforge/backends/triton/static_tables.py"
ASX = "tests/test_ascendc_static_exec.py::"
STATIC_C = "opforge/backends/triton/static.py"
GUARDS = "opforge/harness/guards.py"
LIM = "tests/test_cuda_limits.py::"
EMU_LIMITS = "opforge/backends/cuda/emulator/include/emu_limits.h"
MEM = "opforge/backends/triton/memory.py"
FM = "tests/test_cuda_fast_math.py::"
FAST_H = "opforge/backends/cuda/emulator/include/emu_fast_math.h"
RACES = "opforge/backends/triton/races.py"
TIM = "tests/test_interpreter_memory.py::"
ST = "tests/test_cuda_emulator_state.py::"
STATE = "opforge/backends/cuda/emulator/state.py"
BUFFERS = "opforge/backends/cuda/emulator/buffers.py"
GLOBALS_H = "opforge/backends/cuda/emulator/include/emu_globals.h"
ASC_CORE = "opforge/backends/ascendc/emulator/include/asc_core.h"
ASC_TENSOR = "opforge/backends/ascendc/emulator/include/asc_tensor.h"
ASC_COPY = "opforge/backends/ascendc/emulator/include/asc_copy.h"
ASC_VECTOR = "opforge/backends/ascendc/emulator/include/asc_vector.h"
ASC_VEC_T = "tests/test_ascendc_emu_vector.py::"
ASC_HOST_T = "tests/test_ascendc_emulator.py::"
ASC_GLUE = "opforge/backends/ascendc/emulator/glue.py"
ASC_EXEC = "opforge/backends/ascendc/emulator/include/host/opforge_host/exec.h"
ASC_TENSOR_H = "opforge/backends/ascendc/emulator/include/host/opforge_host/tensor.h"
SNAPSHOT = "opforge/harness/snapshot.py"
CE = "tests/test_compiled_is_executed.py::"
TRITON_PLUGIN = "opforge/backends/triton/__init__.py"
LAUNCH_KEYS = "opforge/backends/triton/launch_keys.py"
CHECKER = "opforge/harness/checker.py"
EVIDENCE = "opforge/harness/evidence.py"
STRESS = "opforge/harness/stress.py"

HT = "tests/test_serving_heldout.py::"

GUARANTEES: tuple[Guarantee, ...] = (
    # -- static allow-list (judge's process) --
    _g("static-getattr-likes", "getattr-likes (getattr, vars, attrgetter...) are rejected however named",
       "tests/test_static.py::test_getattr_likes_are_rejected_however_referenced",
       (STATIC_R, "    if _is_in(obj, objects(CALL_GADGETS)):\n", "    if False:\n")),
    _g("static-modules-resolved", "imported names are resolved to their module (from torch import utils)",
       "tests/test_static.py::test_names_imported_from_allowed_modules_are_resolved",
       (STATIC_R, "    if isinstance(obj, types.ModuleType) and obj.__name__ not in ALLOWED_MODULES:\n",
        "    if False:\n")),
    _g("static-below-dispatcher", "below-the-dispatcher tensor methods (numpy, tolist, apply_) rejected",
       "tests/test_static.py::test_below_the_dispatcher_tensor_access_is_rejected",
       (STATIC_T, '    "numpy", "tolist", "apply_", "map_", "map2_", "storage",', '    "storage",')),
    _g("static-attribute-store", "attribute stores only on a method's own self",
       "tests/test_static.py::test_attribute_stores_only_on_a_methods_own_instance",
       (STATIC_C, "        elif not self._is_own_attribute(node):\n", "        elif False:\n")),
    _g("static-tl-dot-ieee", 'float32: tl.dot must pass input_precision="ieee" as a literal',
       ("tests/test_static.py::test_tl_dot_precision_is_judged_however_tl_dot_is_named",
        "tests/test_static.py::test_static_only_cheats_are_caught"),
       (STATIC_C, '        elif not _is_const(precision, "ieee"):\n', "        elif False:\n"),
       (STATIC_C, "        if precision is None:\n            self.add(", "        if False:\n            self.add(")),
    # -- runtime guards (candidate's process, the sandboxed worker) --
    _g("guard-torch-compute", "PyTorch compute in forward is rejected (dispatch-mode guard)",
       f"{AC}[cheat_torch_compute-torch-compute-anticheat]",
       (GUARDS, '            self.compute[f"aten.{name}{where}"] += 1\n', "            del where\n")),
    _g("guard-inside-launch", "compute in a grid/autotune hook counts (frames below a launch)",
       f"{VF}[hostile_grid_compute]",
       (GUARDS, "        if ACCUSED.launch_frames and not ACCUSED.caused(sys._getframe(1)):\n",
        "        if ACCUSED.launch_frames:\n"),
       (GUARDS, "grid=_as_candidate(grid), warmup=False", "grid=grid, warmup=False")),
    _g("guard-narrowing-casts", "narrowing casts (float32 -> float16) in forward are reported",
       "tests/test_guards.py::test_forward_guard_reports_narrowing_casts_only",
       (GUARDS, "        if src_bits and (dst_bits is None or dst_bits < src_bits):\n", "        if False:\n")),
    _g("guard-below-dispatcher", "Tensor.tolist()/numpy() at run time is rejected (tripwire)",
       f"{VF}[hostile_tolist]",
       (GUARDS, '        if ACCUSED.caused(sys._getframe(1)):\n            ACCUSED.record(f"below-dispatcher',
        '        if False:\n            ACCUSED.record(f"below-dispatcher')),
    _g("guard-threads", "threads the candidate starts are refused and rejected, joined or not",
       f"{VF}[hostile_thread_joined]",
       (GUARDS, "            setattr(module, attr, _refuse_thread(getattr(module, attr)))\n",
        "            pass\n")),
    _g("guard-patched-modules", "replaced attributes of torch/Triton/harness modules are rejected",
       (f"{VF}[hostile_patch_judge]", "tests/test_guards.py::test_module_snapshot_notices_patched_torch_functions"),
       (SNAPSHOT, "if after.get(k, (_GONE,))[0] is not v[0]\n", "if False\n")),
    _g("guard-dynamo-lookalike", "a replaced torch function is rejected even inside torch's own Dynamo wrapper",
       "tests/test_guards.py::test_module_snapshot_allows_dynamos_own_rebinding_and_nothing_like_it",
       (SNAPSHOT, '        return "fn" in cells and cells["fn"].cell_contents is old\n', "        return True\n")),
    _g("guard-dynamo-import-allowed", "a correct candidate whose process imports torch._dynamo is not accused",
       "tests/test_guards.py::test_module_snapshot_allows_dynamos_own_rebinding_and_nothing_like_it",
       (SNAPSHOT, "not _kept_behind_dynamo(after.get(k, (_GONE,))[0], v[0])]", "True]")),
    _g("guard-snapshot-holds-originals", "a replacement cannot pass as the original by taking its freed id",
       "tests/test_guards.py::test_module_snapshot_notices_a_replacement_that_took_the_originals_id",
       (SNAPSHOT, "        return {k: (v, isinstance(v, ModuleType)) for", "        return {k: (id(v), isinstance(v, ModuleType)) for")),
    _g("guard-added-attributes", "attributes added to torch.Tensor and the watched modules are rejected",
       "tests/test_guarantees.py::test_module_snapshot_notices_an_added_tensor_attribute",
       (SNAPSHOT, '        changed += [f"{path}.{k} (added)" for', '        changed += [] and [f"{path}.{k} (added)" for')),
    _g("guard-host-compute", "reading the inputs into Python (item(), float()) and computing there is rejected",
       f"{VF}[hostile_python_compute]",
       (GUARDS, '        elif name == "_local_scalar_dense":\n            self.host_reads += 1\n',
        '        elif name == "_local_scalar_dense":\n            pass\n')),
    _g("guard-default-dtype", "a changed default dtype is rejected (global-state)",
       f"{VF}[hostile_default_dtype]",
       (SNAPSHOT, '        "default_dtype": str(torch.get_default_dtype()),\n', "")),
    _g("guard-module-hooks", "global module forward hooks are rejected (global-state)",
       f"{VF}[hostile_module_hook]",
       (SNAPSHOT, '        **{f"nn.modules.module.{k}": v for k, v in hooks.items()},\n', "")),
    _g("guard-output-type", "outputs must be exact torch.Tensors (no deferred subclass)",
       f"{VF}[hostile_subclass]",
       (CHECKER, "        report[\"output_types\"] = [type(o).__name__ for o in outs if type(o) not in",
        "        report[\"output_types\"] = [] and [type(o).__name__ for o in outs if type(o) not in")),
    _g("guard-aliasing", "outputs aliasing inputs are rejected",
       f"{AC}[cheat_alias_input-aliasing-anticheat]",
       (CHECKER, "        if returned & guards.storages(inputs):\n", "        if False:\n")),
    _g("guard-input-mutation", "undeclared input mutation is rejected",
       f"{AC}[cheat_mutate_input-input-mutation-anticheat]",
       (CHECKER, "and i not in mutates and not _equal_nan(after, before)]", "and False]")),
    _g("guard-partial-output", "unwritten output elements are counted (sentinel NaN fill)",
       f"{AC}[cheat_partial-partial-output-compare]",
       (GUARDS, "            fill_sentinel(out)\n", "            pass\n")),
    # -- the judge's evidence --
    _g("judge-constant-output", "constant output where the reference varies is named",
       f"{AC}[cheat_zeros-constant-output-compare]",
       (EVIDENCE, "        if flat_out.numel() > 1 and _constant(flat_out) and not _constant(flat_ref):\n",
        "        if False:\n")),
    _g("judge-no-launch", "a forward that launches no Triton kernel is rejected",
       f"{AC}[cheat_python_compute-no-launch-anticheat]",
       (EVIDENCE, '    if not noop and not report.get("launches"):\n', "    if False:\n")),
    _g("judge-kernel-independent", "output unchanged with every launch a no-op is rejected",
       f"{AC}[cheat_kernel_independent-kernel-independent-anticheat]",
       (EVIDENCE, "        if len(outs) == len(case.expected) and not any(\n", "        if False and not any(\n")),
    _g("judge-replayed-results", "results replayed across calls (cached copies) are rejected",
       f"{AC}[cheat_cache_copy-cached-output-compare]",
       (EVIDENCE, "        got = fingerprint(outs)\n", "        return\n        got = fingerprint(outs)\n")),
    _g("judge-perturbed-repeats", "repeated calls include perturbed inputs: memoising fails",
       f"{VF}[hostile_memoize]",
       (STRESS, '    """Float inputs changed everywhere but their first and last elements."""\n',
        '    """Float inputs changed everywhere but their first and last elements."""\n    return None\n')),
    _g("judge-answered-all-calls", "answering fewer calls than asked is a failure",
       f"{VF}[hostile_forge_result]",
       (EVIDENCE, "    if len(calls) < len(material.plan) and not any(", "    if False and not any(")),
    _g("judge-no-variants", "a verdict that compared no variant is never correct",
       "tests/test_verdict_forgery.py::test_no_compared_variant_is_never_correct",
       (EVIDENCE, "    if ran and not f.compared_trials and not f.reasons:\n", "    if False:\n")),
    _g("outputs-safe-unpickler", "the candidate's outputs file is parsed by the safe unpickler: a forged one runs no code",
       "tests/test_outputs_file.py::test_a_forged_outputs_file_that_would_run_code_is_refused_and_runs_nothing",
       ("opforge/harness/judge.py", 'weights_only=True, map_location="cpu"', 'weights_only=False, map_location="cpu"')),
    _g("outputs-file-cap", "outputs.pt is read only within a few MiB of what a correct candidate writes",
       ("tests/test_outputs_file.py::test_what_a_correct_candidate_writes_fits_the_cap_and_megabytes_more_do_not",
        "tests/test_outputs_file.py::test_a_candidate_bloating_its_outputs_file_is_refused_by_the_cap"),
       ("opforge/harness/judge.py", "        return int(total * 1.25) + (4 << 20)\n",
        "        return (int(total * 1.25) + (4 << 20)) * 256\n")),
    # -- fail fast (harness/early.py) --
    _g("fail-fast-first-call", "a wrong kernel is stopped at the first checkpoint whose outputs fail (the main case's "
       "first call), and the verdict names the calls and cases that did not run; a correct one runs the whole plan",
       ("tests/test_fail_fast.py::test_a_wrong_kernel_is_stopped_at_its_first_call_and_the_verdict_names_what_did_not_run",
        "tests/test_fail_fast.py::test_a_kernel_wrong_only_after_its_first_call_is_stopped_at_a_later_checkpoint"),
       ("opforge/harness/early.py", '        wrong = [code for code in findings.reasons if CHECK_OF.get(code, "run") != "anticheat"]\n',
        "        wrong = []\n")),
    _g("fail-fast-cheats-run-whole", "a cheat's findings do not stop the run early: the whole plan shows every rule it "
       "breaks (a kernel-independent cheat that also reads its inputs on the host is caught by both rules)",
       "tests/test_anticheat.py::test_cheat_is_rejected_with_its_reason",
       ("opforge/harness/early.py", 'if CHECK_OF.get(code, "run") != "anticheat"]', "]")),
    _g("fail-fast-cheat-and-wrong-runs-whole", "a run whose early findings mix a cheat with wrong values (a cached "
       "result of the wrong shape) is not stopped: the no-op probe at the end still shows it kernel-independent",
       "tests/test_cuda_backend.py::test_a_no_op_replay_of_the_launcher_is_caught",
       ("opforge/harness/early.py", "        stop = bool(wrong) and len(wrong) == len(findings.reasons)  # a cheat runs the whole plan\n",
        "        stop = bool(wrong)\n")),
    _g("fail-fast-waits-at-every-checkpoint", "a replayable run (the RL reward's) waits for the judge at every checkpoint, so a "
       "wrong run stops exactly after the first checkpoint that shows it: the same kernel and seed give the same "
       "verdict and RL reward, whatever the judge thread's speed (#37)",
       "tests/test_fail_fast.py::test_a_kernel_wrong_only_after_its_first_call_is_stopped_at_a_later_checkpoint",
       ("opforge/harness/checker.py", "            if index == min(after) or job.get(\"replayable\"):",
        "            if index == min(after):")),
    _g("fail-fast-forged-stop", "only the judge's own stop shortens a run: a candidate writing the stop answer itself "
       "runs fewer calls and fails for it",
       "tests/test_fail_fast.py::test_a_candidate_forging_the_judges_stop_does_not_shorten_its_run_into_a_pass",
       ("opforge/harness/verify.py", "    if watch.stopped is not None and ran < len(material.plan):",
        "    if ran < len(material.plan):")),
    # -- the CPU run sized by its cost (harness/cost.py, harness/spec.py) --
    _g("cpu-sized-by-cost", "a CPU run is shrunk until its estimated seconds fit the budget, not only its elements "
       "(a matmul within the element cap whose dots would take minutes); one already within it keeps its sizes",
       "tests/test_cost.py::test_a_matmul_within_the_element_cap_is_shrunk_until_its_estimated_run_fits_the_budget",
       ("opforge/harness/spec.py", "        return elements <= max_elements and not (over_budget and over_budget(module))\n",
        "        return elements <= max_elements\n")),
    _g("cpu-sizing-keeps-conv-semantics", "kernel sizes, strides, paddings, dilations and groups stay as declared "
       "while channels, spatial sizes and batch shrink",
       "tests/test_cost.py::test_convolution_hyperparameters_stay_as_declared_while_channels_and_spatial_sizes_shrink",
       ("opforge/harness/spec.py", "frozen = fits(sizes), {k for k in sizes if KEPT.search(k)}", "frozen = fits(sizes), set()")),
    _g("cpu-sizing-constructor-refusal", "a halving the spec's constructor refuses (channels no longer divisible by "
       "groups) is undone, even where measuring by a real call passed its limits first",
       "tests/test_cost.py::test_convolution_hyperparameters_stay_as_declared_while_channels_and_spatial_sizes_shrink",
       ("opforge/harness/spec.py", '                _model(module, call_inputs(module, "get_init_inputs", path), path)\n',
        "                pass\n")),
    _g("judge-spreads-identities", "parameters and running statistics that default init leaves at an identity (a "
       "norm's weight of ones, bias of zeros) get seeded values: a kernel that drops the affine map fails",
       "tests/test_identities.py::test_a_kernel_dropping_the_norms_affine_map_fails_and_the_known_good_one_passes",
       ("opforge/harness/judge.py", "        stress.spread_identities(ref, seed)  # no identity left for a kernel to drop unseen\n", "")),
    # -- stress cases and comparison --
    _g("stress-scaled", "inputs scaled by 1e-3 and 1e3 (softmax without max subtraction fails)",
       f"{VF}[hostile_softmax_no_max]",
       (STRESS, "    if not any(_scalable(x) for x in inputs):\n        return None\n",
        "    if True:\n        return None\n")),
    _g("stress-layouts", "transposed/sliced/channels_last layouts (a kernel ignoring strides fails)",
       f"{VF}[hostile_ignores_strides]",
       (STRESS, '    """(label, inputs) per non-contiguous layout that applies to at least one input."""\n',
        '    """(label, inputs) per non-contiguous layout that applies to at least one input."""\n    return []\n')),
    _g("stress-channels-last", "4-D inputs are also run channels_last (a kernel whose planes follow one another fails)",
       (f"{VF}[hostile_channels_last]",
        "tests/test_verdict_forgery.py::test_a_4d_kernel_that_follows_every_stride_passes_every_layout"),
       (STRESS, '_sliced),\n             ("channels_last", lambda x: x.dim() == 4 and x.shape[1] > 1,\n'
                "              lambda x: x.contiguous(memory_format=torch.channels_last)))", "_sliced))")),
    _g("stress-larger", "one hidden larger shape (a kernel for the first rows only fails)",
       f"{VF}[hostile_first_rows]",
       (STRESS, "    from opforge.harness.spec import MIN_SHRINKABLE\n\n    targets = {}\n", "    return {}\n")),
    _g("compare-rms-atol", "atol scaled by the reference's RMS: zeros fail a wide softmax",
       ("tests/test_guarantees.py::test_an_error_below_the_floor_answers_to_the_rms_scaled_atol",
        "tests/test_compare.py::test_atol_scales_with_reference_magnitude_so_zeros_fail_a_wide_softmax"),
       ("opforge/harness/compare.py", "    atol_eff = max(report.atol * max(scale, torch.finfo(torch.float32).tiny), NOISE_FACTOR",
        "    atol_eff = max(report.atol * max(1.0, torch.finfo(torch.float32).tiny), NOISE_FACTOR")),
    _g("compare-noise-cap", "the reference's own float64 error widens a scaled case's atol, capped at 1e-2 x rms",
       ("tests/test_compare.py::test_the_references_own_float64_error_widens_the_atol_to_four_times_it_and_no_more",),
       ("opforge/harness/compare.py", "    report.noise = min(report.noise, NOISE_CAP * scale / NOISE_FACTOR)\n",
        "    report.noise = report.noise\n")),
    _g("compare-small-elements", "per-element relative bound above the RMS floor (tanh GELU fails)",
       ("tests/test_compare.py::test_small_element_error_under_the_rms_atol_is_named",
        "tests/test_compare.py::test_tanh_gelu_fails_where_the_rms_atol_hid_it"),
       ("opforge/harness/compare.py", "        _compare_small_elements(report, ref, out, diff, ref64.abs(), scale)\n",
        "        pass\n")),
    _g("aot-tensor-core-precision", "float32 op: PTX with tf32/fp16 tensor cores fails (low-precision)",
       "tests/test_aot_precision.py::test_tf32_dot_is_low_precision_in_a_float32_op",
       ("opforge/backends/triton/aot.py", "        if float32 and (reason := _low_precision(entry, instructions)):\n",
        "        if False and (reason := _low_precision(entry, instructions)):\n")),
    _g("resources-shared-memory", "a tile over the target's shared memory per block fails compile (out-of-resources)",
       "tests/test_resources.py::test_a_tile_over_sm90_shared_memory_fails_the_compile_step_with_the_numbers",
       ("opforge/backends/triton/resources.py", "    if shared > limit.shared_bytes:\n", "    if False:\n")),
    _g("resources-threads", "more than 1024 threads per block fails compile (out-of-resources)",
       "tests/test_resources.py::test_more_than_1024_threads_per_block_compiles_but_is_refused",
       ("opforge/backends/triton/resources.py", "    if warps * WARP > limit.threads_per_block:\n", "    if False:\n")),
    _g("resources-every-kernel", "every compiled kernel is held to the target's limits",
       "tests/test_resources.py::test_a_tile_over_sm90_shared_memory_fails_the_compile_step_with_the_numbers",
       ("opforge/backends/triton/aot.py", "        reasons += resources.check(entry, arch)",
        "        resources.check(entry, arch)")),
    _g("ascend-fp64-refused", "Triton-Ascend: any fp64 op in a launch's TTIR fails frontend_compile (unsupported-dtype)",
       ("tests/test_triton_ascend_dtypes.py::test_fp64_is_read_from_the_ttir_exactly",
        "tests/test_triton_ascend_dtypes.py::test_what_the_npu_cannot_compute_fails_the_front_end_step[fp64-arithmetic]"),
       ("opforge/backends/triton_ascend/dtypes.py", "        if (op := OP.match(line)) and _f64_types(line, op.group(1)):\n",
        "        if False:\n")),
    _g("ascend-int64-atomic-refused", "Triton-Ascend: int64 atomic_add/max/min fails frontend_compile (unsupported-dtype)",
       "tests/test_triton_ascend_dtypes.py::test_what_the_npu_cannot_compute_fails_the_front_end_step[int64-atomic-add]",
       ("opforge/backends/triton_ascend/dtypes.py", '        if (m := ATOMIC.search(line)) and m.group(2) == "i64"',
        '        if (m := ATOMIC.search(line)) and m.group(2) == "i65"')),
    _g("ascend-fp64-static", "Triton-Ascend: tl.float64 handed to a call fails static (unsupported-dtype)",
       "tests/test_triton_ascend_dtypes.py::test_the_source_spelling_tl_float64_is_refused_statically",
       ("opforge/backends/triton_ascend/static.py", "    found.reasons += dtypes.source_findings(tree)",
        "    found.reasons += []")),
    _g("pipeline-time-limit", "a hanging candidate is killed at the time limit (timeout)",
       "tests/test_pipeline.py::test_hanging_candidate_is_killed_at_the_time_limit",
       ("opforge/sandbox/process.py", "            _done, status, usage = os.wait4(pid, 0)\n            return True,",
        "            _done, status, usage = os.wait4(pid, 0)\n            return False,")),
    # -- sandbox isolation --
    _g("jail-network", "jail: a new network namespace, nothing reachable, not even the host's loopback",
       f"{ADV}test_network_is_unreachable_even_on_loopback[jail]",
       ("opforge/sandbox/jail.py", '["bwrap", "--unshare-net", ', '["bwrap", ')),
    _g("jail-read-only-mounts", "jail (bubblewrap): every exposed host path is bound read-only",
       "tests/test_guarantees.py::test_a_jobs_mounts_are_read_only_even_where_the_host_lets_anyone_write[bwrap]",
       ("opforge/sandbox/jail.py", '        argv += ["--ro-bind", path, path]\n', '        argv += ["--bind", path, path]\n')),
    _g("jail-ascend-prefix-mounted", "jail: Triton-Ascend verifies there from its prefix wherever it is installed, "
       "bound read-only",
       ("tests/test_triton_ascend_forgery.py::test_a_prefix_named_by_opforge_ascend_prefix_is_the_one_the_jailed_worker_uses",
        "tests/test_triton_ascend_forgery.py::test_a_run_only_launch_is_caught_in_the_jail_too",
        "tests/test_triton_ascend_forgery.py::test_the_toolchain_prefix_is_read_only_in_the_jail"),
       ("opforge/backends/triton_ascend/__init__.py", "        return (str(chain.root),) if chain else ()\n",
        "        return ()\n")),
    _g("ascend-prefix-reaches-worker", "the sandboxed worker looks for triton-ascend where the host found it (OPFORGE_ASCEND_PREFIX)",
       "tests/test_triton_ascend_forgery.py::test_a_prefix_named_by_opforge_ascend_prefix_is_the_one_the_jailed_worker_uses",
       ("opforge/sandbox/base.py", '              "OPFORGE_ASCEND_PREFIX")\n', "              )\n")),
    _g("jail-unshare-read-only-mounts", "jail (unshare fallback): every exposed host path is bound read-only",
       "tests/test_guarantees.py::test_a_jobs_mounts_are_read_only_even_where_the_host_lets_anyone_write[unshare]",
       ("opforge/sandbox/jail_unshare.py", """, f'mount -o remount,bind,ro "$R"{q(path)}']""", "]")),
    _g("jail-unshare-fallback", "OPFORGE_JAIL=unshare runs the unshare fallback, not bubblewrap (seen from inside the job)",
       f"{ADV}test_the_jail_runs_the_tool_it_was_asked_for[jail-unshare]",
       ("opforge/sandbox/jail.py", 'if os.environ.get("OPFORGE_JAIL") != "unshare" and shutil.which("bwrap"):',
        'if shutil.which("bwrap"):')),
    _g("output-cap", "a job's stdout/stderr keep a 64 KB head and tail with a cut marker, whatever it floods",
       f"{ADV}test_output_flood_keeps_a_capped_head_and_tail_and_costs_the_host_nothing[jail]",
       ("opforge/sandbox/base.py", "            self.tail = (self.tail + chunk[-half:])[-half:]\n",
        "            self.tail = self.tail + chunk\n")),
    _g("docker-network", "docker: no network at all (network_mode none)",
       f"{ADV}test_network_is_unreachable_even_on_loopback[docker]",
       ("opforge/sandbox/docker_runtime.py", 'network_mode="none", ', 'network_mode="host", ')),
    # -- a stopped run stops its work (tests/test_interrupt.py) --
    _g("interrupt-docker-job-stopped", "docker: a job interrupted (Ctrl-C, SIGTERM) ends with its caller: the "
       "container it runs in is removed on the way out; an uninterrupted job keeps it warm",
       f"{INT}test_an_interrupted_job_leaves_no_process_and_an_uninterrupted_one_runs_to_its_end[docker]",
       ("opforge/sandbox/docker_runtime.py", "the job must not outlive its caller\n            self.close()\n",
        "the job must not outlive its caller\n            pass\n")),
    _g("interrupt-process-job-stopped", "jail and none: a job interrupted ends with its caller, every process of it "
       "(the worker's phases are in sessions and namespaces of their own)",
       (f"{INT}test_an_interrupted_job_leaves_no_process_and_an_uninterrupted_one_runs_to_its_end[none]",
        f"{INT}test_an_interrupted_job_leaves_no_process_and_an_uninterrupted_one_runs_to_its_end[jail]"),
       ("opforge/sandbox/process.py", "        kill_tree(proc.pid)\n        proc.wait()\n        raise\n", "        raise\n")),
    _g("interrupt-lost-exception-checked", "a stopping signal whose exception Python could only print (raised in an "
       "at-fork hook or a __del__) still stops the job: every wait for a job checks for it",
       f"{INT}test_a_signal_whose_exception_python_lost_still_stops_the_job",
       ("opforge/sandbox/interrupt.py", "    if _fired:\n        raise Interrupted(_fired[0])\n",
        "    if False:\n        raise Interrupted(_fired[0])\n")),
    _g("interrupt-second-signal-ignored", "a second Ctrl-C or SIGTERM does not cut short the cleanup that stops the job",
       f"{INT}test_the_first_signal_interrupts_and_a_second_does_not_cut_the_cleanup_short",
       ("opforge/sandbox/interrupt.py", "        if not _fired:\n", "        if True:\n")),
    _g("docker-owner-death-ends-jobs", "docker: a container whose owner died by SIGKILL ends its jobs by itself (PID 1 "
       "exits when its stdin, the owner's attach socket, closes); while the owner lives they run",
       f"{INT}test_a_container_whose_owner_is_killed_ends_its_job_by_itself",
       ("opforge/sandbox/docker_runtime.py", "        os._exit(0)\n", "        pass\n")),
    _g("none-job-dies-with-owner", "none: a job's worker dies with the process that started it, SIGKILL included "
       "(PR_SET_PDEATHSIG)", f"{INT}test_under_none_a_job_dies_with_its_killed_owner",
       ("opforge/sandbox/process.py", "    _LIBC.prctl(1, signal.SIGKILL)  #", "    0  #")),
    _g("run-interrupted-resumable", "opforge run stopped by a signal: its job ends, one line with 130/143, the run "
       "recorded interrupted, and --resume continues it",
       f"{INT}test_ctrl_c_stops_the_job_the_run_resumes_and_cancel_stops_it_again",
       ("opforge/agents/run.py", "        _mark_interrupted(registry, run.run_key, exc)\n", "")),
    _g("cancel-stops-the-job", "opforge cancel stops the process driving the run, and the job it is running, at once",
       f"{INT}test_ctrl_c_stops_the_job_the_run_resumes_and_cancel_stops_it_again",
       ("opforge/agents/run.py", "    RunLock(registry.path, run_key).stop_holder()\n", "")),
    _g("run-status-interrupted-migrated", "registry migration 0007 allows the status interrupted; its downgrade reopens "
       "such runs as running",
       f"{INT}test_migration_0007_allows_interrupted_and_its_downgrade_reopens_such_runs",
       ("opforge/registry/migrations/versions/0007_run_interrupted.py", "def upgrade() -> None:\n    _replace(NEW)\n",
        "def upgrade() -> None:\n    _replace(OLD)\n")),
    _g("result-file-cap", "result.json is read only as a regular file within its cap",
       f"{ADV}test_oversized_or_linked_result_is_refused_unread[jail-sparse]",
       ("opforge/sandbox/base.py", "        if info.st_size > cap:\n", "        if False:\n"),
       ("opforge/sandbox/base.py", "            data = fh.read(cap + 1)\n        return (data, \"\") if len(data) <= cap",
        "            data = fh.read()\n        return (data, \"\") if True")),
    _g("scrubbed-environment", "secrets in the environment never reach the candidate",
       f"{ADV}test_secrets_in_environment_and_files_are_invisible[jail]",
       ("opforge/sandbox/base.py", "    env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}\n",
        "    env = dict(os.environ)\n")),
    _g("explicit-runtime-no-fallback", "a runtime asked for by name that is unavailable is an error",
       "tests/test_sandbox.py::test_explicit_docker_without_engine_fails_loudly_and_auto_falls_back",
       ("opforge/sandbox/select.py", "    if reason := _why_not(name):\n", "    if (reason := _why_not(name)) and False:\n")),
    _g("venv-fastest-python", "make setup builds the venv from the fastest usable build of python3's version",
       ("tests/test_fastest_python.py::test_the_fastest_usable_build_of_this_version_is_picked",
        "tests/test_fastest_python.py::test_a_slowed_interpreter_loses_to_the_same_one_at_full_speed"),
       ("scripts/fastest_python.py", "    pick = min(timed)[1] if timed else sys.executable\n",
        "    pick = max(timed)[1] if timed else sys.executable\n")),
    _g("cpu-phases-apart", "a CPU verification's run starts without what its build left (files, /tmp, processes)",
       ("tests/test_sandbox.py::test_the_run_starts_without_what_the_build_left[jail]",
        "tests/test_sandbox.py::test_the_run_starts_without_what_the_build_left[none]"),
       ("opforge/harness/worker.py", "                os.chdir(scratch)\n", "                os.chdir(base)\n"),
       ("opforge/harness/worker.py", "                    os.environ[key] = scratch + value[len(base):]\n",
        "                    pass\n")),
    _g("cpu-phases-apart-jail", "in a jail, a CPU verification's build leaves no process or /tmp file to its run",
       "tests/test_sandbox.py::test_the_run_starts_without_what_the_build_left[jail]",
       ("opforge/harness/worker.py", "    if not own_tmp or os.geteuid() == 0:\n", "    if True:\n")),
    _g("cpu-phases-apart-from-worker", "in the bubblewrap jail, a CPU verification's phase cannot reach the worker that forked it",
       f"{ADV}test_killing_parent_and_host_processes_fails[jail]",
       ("opforge/harness/worker.py", "    if libc.unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0:\n", "    if True:\n")),
    _g("jail-start-probed", "a jail the machine cannot set up is unavailable with the reason, not a crashed verdict",
       "tests/test_sandbox.py::test_a_jail_that_cannot_set_up_here_is_unavailable_not_a_crash",
       ("opforge/sandbox/jail.py", "    return cannot_start(tool(), JAIL_PATH)\n", "    return None\n")),
    _g("jail-warm-drops-privileges", "a warm jail job runs as its fresh uid with no capability and no new privileges, as a cold one",
       f"{WARM}test_a_warm_job_sees_what_a_cold_job_sees",
       (ZYGOTE, '        drop_to(int(request["uid"]))\n', "        pass\n")),
    _g("jail-warm-closes-descriptors", "a warm jail job holds no descriptor of the zygote's or the host's",
       f"{WARM}test_a_warm_job_sees_what_a_cold_job_sees",
       (ZYGOTE, "        os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])", "        (3, 4)")),
    _g("jail-warm-scrubbed-environment", "a warm jail job's process never held the host's environment",
       f"{WARM}test_a_warm_job_sees_what_a_cold_job_sees",
       ("opforge/sandbox/warm.py", "                                         env=env, cwd=\"/\",", "                                         env=None, cwd=\"/\",")),
    _g("jail-warm-only-pid-1", "a warm jail's only other process is its PID 1, root's, out of the job's reach",
       (f"{WARM}test_a_warm_job_sees_what_a_cold_job_sees", "tests/test_sandbox.py::test_the_run_starts_without_what_the_build_left[jail]"),
       ("opforge/sandbox/jail.py", '["--info-fd", str(info_fd), "--as-pid-1"]', '["--info-fd", str(info_fd)]')),
    _g("jail-warm-signals", "a warm jail job starts with a fresh interpreter's signal dispositions (Ctrl-C is not ignored)",
       f"{WARM}test_a_warm_job_sees_what_a_cold_job_sees",
       (ZYGOTE, "            signal.signal(signal.SIGINT, signal.default_int_handler)  # as a fresh", "            (signal.SIGINT, signal.default_int_handler)  # as a fresh")),
    _g("jail-warm-fresh-seeds", "each warm jail job's torch and NumPy generators are seeded afresh, as a cold job's",
       f"{WARM}test_a_job_cannot_change_what_the_next_job_starts_from",
       (ZYGOTE, "        _fresh_seeds()\n", "")),
    _g("jail-warm-falls-back-cold", "a zygote that cannot serve makes jail jobs run cold, never fail",
       f"{WARM}test_a_zygote_that_cannot_start_makes_jobs_run_cold",
       ("opforge/sandbox/jail.py", "        except (warm.ZygoteGone, OSError) as exc:", "        except ImportError as exc:")),
    _g("jail-warm-deadline", "a warm jail job past its deadline is stopped with its jail at once",
       f"{WARM}test_a_warm_job_past_its_deadline_is_stopped_with_its_jail",
       ("opforge/sandbox/warm.py", "                kill_group(jail.pid)  # the jail's init dies", "                pass  # the jail's init dies")),
    _g("expert-per-dtype-kernels", "the expert drafts one kernel per dtype combination a spec's input lists use, "
       "chosen by the arguments' dtypes",
       "tests/test_codegen_dtypes.py::test_each_dtype_combination_gets_its_own_kernel_and_the_arguments_pick_it",
       ("opforge/codegen/__init__.py", "    if len(combos) < 2:\n        return first\n",
        "    if True:\n        return first\n")),
    _g("serving-example-is-expert-draft", "a committed serving example is byte for byte the offline expert's draft "
       "for its spec: a hand edit with the header rehashed is caught",
       "tests/test_knowledge.py::test_a_serving_example_is_what_the_offline_expert_drafts_for_its_spec[per_token_int8_quant]",
       ("opforge/backends/triton/knowledge/serving/per_token_int8_quant.py",
        "# kernel-sha256: 86c812460bb3c7a293a556a8aba999d9343a6285a67430997d773efe7e5ba290\n",
        "# kernel-sha256: 4107ba998c50f8df75e5322961d9dfe3baa6507458bd665dd5ef52327972800d\n"),
       ("opforge/backends/triton/knowledge/serving/per_token_int8_quant.py", "TILE, NUM_WARPS = 1024, 4\n",
        "TILE, NUM_WARPS = 1024, 2\n")),
    _g("lowering-table-follows-registrations", "the expert's cached decomposition table is rebuilt when a composite op is registered",
       "tests/test_expert_lowering.py::test_the_lowerings_caches_follow_new_composite_registrations",
       ("opforge/codegen/lower.py", "    key = _cia_registrations()\n", "    key = ()\n")),
    _g("lowering-cia-materialized-on-change", "torch.export's composite-op materialization runs again when the registrations change",
       "tests/test_expert_lowering.py::test_the_lowerings_caches_follow_new_composite_registrations",
       ("opforge/codegen/lower.py", "        if names != materialize.materialized_for:", "        if not materialize.materialized_for:")),
    _g("interpreter-helpers-patch-once", "the CPU worker's jitted helpers skip only repeats of the launch's language patch: same values",
       "tests/test_fastdot.py::test_jitted_helpers_patch_the_language_once_per_launch_with_the_same_values",
       ("opforge/backends/triton/fastlang.py", "        if seen and all(patched(module) for module in seen):\n",
        "        if True:\n")),
    _g("interpreter-overflow-checks-live-only", "the interpreter's overflow checks are skipped only where their assert is off",
       "tests/test_fastdot.py::test_the_overflow_checks_are_skipped_only_where_their_assert_is_off",
       ("opforge/backends/triton/fastlang.py", "        if not self.builder.options.debug:  #", "        if True:  #")),
    # -- registry, promotion, export --
    _g("promote-never-incorrect", "only a correct (numerics-checked) kernel is promotable",
       "tests/test_registry.py::test_promote_needs_a_correct_evaluation",
       ("opforge/registry/promoted.py", "    if not correct:\n        return", "    if False:\n        return")),
    _g("promote-never-unchecked", "a static or compiled kernel (numerics never checked) is never promoted",
       "tests/test_registry_levels.py::test_a_static_or_compiled_kernel_is_never_promoted_even_when_fast",
       ("opforge/registry/promoted.py", "    if level is not None and level not in PROMOTABLE:\n", "    if False:\n")),
    _g("promote-slower-needs-force", "timed slower than eager: not promoted without --force",
       "tests/test_export.py::test_policy_refuses_a_timed_slowdown_and_auto_picks_the_fastest",
       ("opforge/registry/promoted.py", "    if speedup_eager is not None and speedup_eager <= 1.0:\n",
        "    if False:\n")),
    _g("export-fallback-counted", "the library falls back to the reference, says why once and counts it",
       "tests/test_export.py::test_export_renders_a_library_that_runs_its_kernel_and_is_byte_reproducible",
       ("opforge/exporter/templates/runtime.py.j2", "    fallbacks[op] = fallbacks.get(op, 0) + 1\n", "")),
    _g("export-no-fallback", "KERNELS_GENERATED_NO_FALLBACK=1 turns a fallback into FallbackForbidden",
       "tests/test_guarantees.py::test_no_fallback_turns_a_fallback_into_fallback_forbidden",
       ("opforge/exporter/templates/runtime.py.j2", "    if os.environ.get(NO_FALLBACK) == \"1\":\n",
        "    if False:\n")),
    _g("export-dtype-sets", "the library runs a kernel only for a dtype combination verification ran (every "
       "verified input list's, recorded in its config)",
       "tests/test_export_dtypes.py::test_only_verified_dtype_combinations_run_the_kernel_and_calls_are_counted",
       ("opforge/exporter/templates/runtime.py.j2", "    if given in sets:\n        return \"\"\n",
        "    if given[:1] in [s[:1] for s in sets]:\n        return \"\"\n")),
    _g("export-dtype-sets-recorded", "every verified input list's dtype combination reaches the exported config",
       "tests/test_export_dtypes.py::test_every_verified_dtype_combination_and_the_implements_keys_are_exported",
       ("opforge/exporter/collect.py", "              for xs in lists]\n", "              for xs in lists[:1]]\n")),
    _g("export-implements", "a spec's OPFORGE implements keys reach the exported config, for engine adapters",
       "tests/test_export_dtypes.py::test_every_verified_dtype_combination_and_the_implements_keys_are_exported",
       ("opforge/exporter/render.py", '        "implements": list(op.implements),  # engine',
        '        "implements": [],  # engine')),
    _g("export-kernel-calls", "the library counts the calls that ran its verified kernel (stats())",
       "tests/test_export_dtypes.py::test_only_verified_dtype_combinations_run_the_kernel_and_calls_are_counted",
       ("opforge/exporter/templates/op.py.j2", '        _export_runtime.ran_kernel("{{ op.name }}")\n', "")),
    _g("vllm-adapter-replaces-layers", "in vLLM, the exported package's plugin makes vLLM's own RMSNorm, SiluAndMul "
       "and RotaryEmbedding call its ops (same values as vLLM's)",
       "tests/test_export_vllm_adapter.py::test_vllm_layers_call_the_exported_ops_and_fall_back_with_a_reason",
       ("opforge/exporter/vllm_adapter.py", "            CustomOp.register_oot(name=in_tree.__name__)(cls)\n", "")),
    _g("vllm-adapter-ir-provider", "the package's rms_norm ops are vLLM IR providers, chosen with ir_op_priority",
       "tests/test_export_vllm_adapter.py::test_vllm_layers_call_the_exported_ops_and_fall_back_with_a_reason",
       ("opforge/exporter/vllm_adapter.py", '    done["ir"] = importlib.import_module(f"{PACKAGE}._vllm_ir").register(found, notes)\n',
        '    done["ir"] = []\n')),
    _g("vllm-adapter-rope-in-place", "a replaced rotary embedding's forward_cpu/cuda rotate query and key in place, as "
       "vLLM's do",
       "tests/test_export_vllm_adapter.py::test_vllm_layers_call_the_exported_ops_and_fall_back_with_a_reason",
       ("opforge/exporter/vllm_adapter.py", "    query.copy_(out[0])\n", "")),
    _g("vllm-adapter-subclasses", "vLLM's subclasses that run the replaced layer's forward (Llama3RotaryEmbedding...) "
       "are replaced under their own names",
       ("tests/test_export_vllm_adapter.py::test_a_subclass_is_replaced_under_its_own_name_only_when_it_runs_the_same_forward",
        "tests/test_export_vllm_adapter.py::test_vllm_layers_call_the_exported_ops_and_fall_back_with_a_reason"),
       ("opforge/exporter/vllm_adapter.py", "        todo += cls.__subclasses__()\n", "")),
    _g("vllm-adapter-subclass-own-forward", "a vLLM subclass with a forward of its own keeps vLLM's code",
       "tests/test_export_vllm_adapter.py::test_a_subclass_is_replaced_under_its_own_name_only_when_it_runs_the_same_forward",
       ("opforge/exporter/vllm_adapter.py", "        if cls is not base and any(", "        if cls is not base and False and any(")),
    _g("vllm-adapter-geometry", "a vLLM layer whose shapes the op's own spec rejects (partial rotary for a full-rotary "
       "spec) runs vLLM's code, said once",
       "tests/test_export_vllm_adapter.py::test_vllm_layers_call_the_exported_ops_and_fall_back_with_a_reason",
       ("opforge/exporter/vllm_adapter.py", "        if reason:\n            why.append(", "        if False:\n            why.append(")),
    _g("vllm-adapter-eps-fallback", "a vLLM layer whose eps is not the verified one runs vLLM's code, said once",
       ("tests/test_export_vllm_adapter.py::test_a_layer_runs_the_kernel_only_with_the_verified_eps_and_dtypes",
        "tests/test_export_vllm_adapter.py::test_vllm_layers_call_the_exported_ops_and_fall_back_with_a_reason"),
       ("opforge/exporter/vllm_adapter.py", "    fit = [e for e in entries if e.eps() == eps]\n",
        "    fit = list(entries)\n")),
    _g("vllm-adapter-contract", "an op stands for a vLLM layer only with the contract's signature and init args",
       "tests/test_export_vllm_adapter.py::test_ops_stand_for_a_vllm_layer_by_their_implements_key_and_the_contract_signature",
       ("opforge/exporter/vllm_adapter.py", "            if problem:\n                notes.append(",
        "            if False:\n                notes.append(")),
    _g("vllm-adapter-no-engine-import", "the exported package and its plugin import no inference engine outside one",
       "tests/test_export_vllm_adapter.py::test_the_package_ships_the_adapter_and_imports_no_engine",
       ("opforge/exporter/templates/plugins.py.j2", '    if "vllm" in sys.modules:\n', "    if True:\n")),
    _g("registry-own-backend-examples", "a run is shown only its own backend's past successes (no Triton kernel for "
       "CUDA or Triton-Ascend, and the reverse)",
       ("tests/test_registry_runs.py::test_verified_examples_of_a_backend_are_that_backends_only",
        "tests/test_knowledge_triton_ascend.py::test_a_run_plans_with_its_own_backends_past_successes_only"),
       ("opforge/registry/history.py", "    if backend is not None:\n        stmt = stmt.where(Candidate.backend == backend)\n",
        "    if False:\n        stmt = stmt.where(Candidate.backend == backend)\n")),
    # -- the agent loop, batch, LLM --
    _g("resume-no-re-evaluation", "checkpointed after every node: a resume after SIGKILL evaluates nothing twice",
       "tests/test_agent.py::test_killed_run_resumes_without_re_evaluating",
       ("opforge/agents/run.py", 'stream_mode="updates", durability="sync")', 'stream_mode="updates", durability="exit")'),
       ("opforge/agents/nodes/evaluate.py", "    if previous is not None and previous.hardware == ctx.hardware.fingerprint:\n",
        "    if False:\n")),
    _g("batch-skip-verified", "batch skips an op whose spec already has a verified kernel",
       "tests/test_batch.py::test_ctrl_c_then_the_same_command_resumes_and_skips",
       ("opforge/agents/batch/plan.py", "        if verified is not None:\n            return OpTask(",
        "        if False:\n            return OpTask(")),
    _g("llm-retry", "rate limits and 5xx are retried with backoff",
       ("tests/test_llm_drafter.py::test_429_then_200_is_retried", "tests/test_llm_drafter.py::test_500_500_200_succeeds"),
       ("opforge/agents/drafters/llm.py", "    return status in (408, 429) or status >= 500\n", "    return False\n")),
    _g("llm-unusable-reply-fed-back", "an unusable reply is shown back in the next prompt, cut to size",
       "tests/test_llm_drafter.py::test_a_reply_without_code_or_modelnew_is_shown_back_cut_to_size",
       ("opforge/agents/prompts/render.py",
        '        "rejected": _rejected(attempt.source, attempt.line) if unusable else None,\n',
        '        "rejected": None,\n')),
    _g("llm-feedback-verbatim", "each verdict's feedback goes verbatim into the next prompt",
       "tests/test_llm_drafter.py::test_the_prompt_carries_spec_knowledge_and_every_feedback_verbatim",
       ("opforge/agents/prompts/render.py", '        "feedback": attempt.feedback,', '        "feedback": "",')),
    # -- CLI and options --
    _g("exit-code-incorrect", "opforge verify exits 1 for an incorrect kernel",
       "tests/test_cli.py::test_verify_json_contract_and_exit_1_for_a_cheat",
       ("opforge/cli.py", '    return exit_code(verdict)\n', "    return 0\n")),
    _g("exit-code-unverifiable", "a candidate no numerics step could check here exits 3, never 0 or 1",
       "tests/test_ladder.py::test_exit_codes",
       ("opforge/harness/ladder.py", "        return EXIT_UNVERIFIABLE\n", "        return EXIT_INCORRECT\n")),
    _g("ladder-skipped-never-passes", "a skipped or unsupported step never counts toward the level",
       "tests/test_ladder.py::test_a_skipped_or_unsupported_step_never_counts_as_passed",
       ("opforge/harness/ladder.py", 'record["status"] == "passed"]\n', 'record["status"] != "failed"]\n')),
    _g("verdict-old-keys-read", "a verdict in the old keys (stages, stage) is read as steps and its failed step",
       ("tests/test_verdict_steps.py::test_an_old_failed_verdict_names_the_step_its_stage_meant_once",
        "tests/test_verdict_steps.py::test_the_registry_stores_an_old_verdict_in_todays_keys"),
       ("opforge/harness/ladder.py", '    if "failed_step" in verdict or not ({"stage", "stages"} & verdict.keys()):\n',
        "    if True:\n")),
    _g("verdict-old-keys-migrated", "registry migration 0006 rewrites every stored verdict into steps",
       "tests/test_verdict_steps.py::test_upgrade_from_levels_rewrites_every_stored_verdict_into_steps",
       ("opforge/registry/migrations/versions/0006_evaluation_steps.py", "        new = to_steps(old)\n",
        '        new = old | {"steps": {}, "failed_step": None}\n')),
    _g("exit-code-bad-input", "bad input is one line and exit 2, no traceback",
       "tests/test_cli.py::test_bad_input_is_one_line_and_exit_2",
       ("opforge/cli.py", '        print(f"opforge: error: {exc}", file=sys.stderr)\n        return 2\n',
        "        raise\n")),
    _g("option-trials-at-least-1", "trials must be an integer of at least 1 (one line, exit 2)",
       ("tests/test_cli.py::test_run_refuses_zero_trials_with_one_line_and_records_nothing",),
       ("opforge/harness/verify.py", "        if not _integer(self.trials) or self.trials < 1:\n", "        if False:\n")),
    _g("option-unknown-drafter", "an unknown drafter name is one line naming the known ones",
       "tests/test_cli.py::test_run_and_verify_refuse_unknown_names_with_one_line",
       ("opforge/agents/drafters/select.py", "    if name is not None and name not in DRAFTERS:\n", "    if False:\n")),
    # -- what a newcomer meets first (issue 31, item 5) --
    _g("verify-foreign-backend-hint", "a kernel another backend recognises, given without --backend, is one line "
       "naming that backend (exit 2) and is not recorded",
       "tests/test_cli_frictions.py::test_another_backends_kernel_without_backend_is_named_and_not_recorded",
       ("opforge/harness/intake.py", "    if not found or DEFAULT in found:\n        return\n", "    return\n")),
    _g("backend-recognises-its-kernels", "each backend's plugin recognises its own kernels (looks_like), read without importing them",
       ("tests/test_cli_frictions.py::test_each_backends_examples_look_like_its_own",
        "tests/test_cli_frictions.py::test_another_backends_kernel_without_backend_is_named_and_not_recorded"),
       ("opforge/backends/cuda/__init__.py", "        return LOOKS.search(source) is not None\n", "        return False\n")),
    _g("verify-not-python-exit-2", "a kernel that is not Python (a .cu file, binary, a syntax error) is one line, "
       "exit 2, and is not recorded",
       "tests/test_cli_frictions.py::test_a_kernel_that_is_not_python_is_one_line_and_not_recorded",
       ("opforge/harness/intake.py", "        ast.parse(source, str(path))\n", "        pass\n")),
    _g("verify-refuses-before-torch", "bad input to verify (a missing file, an unknown backend) is refused before torch loads",
       "tests/test_cli_frictions.py::test_bad_input_is_refused_before_torch_loads",
       ("opforge/cli.py", "        intake.check_verify_argv(argv)", "        pass")),
    _g("unverifiable-not-a-failure-cli", "a candidate nothing could check here (exit 3) is \"not verifiable here\" in "
       "yellow in verify, kernels and show, never a red failure",
       "tests/test_cli_frictions.py::test_a_candidate_nothing_could_check_here_is_yellow_not_red",
       ("opforge/cli.py", 'if r.failed_step else "[yellow]not verifiable here[/]"', 'if True else ""')),
    _g("unverifiable-not-a-failure-ui", "the workbench shows a candidate nothing could check here as \"not verifiable "
       "here\", its reason a warning, not an error",
       "tests/test_ui_pages.py::test_a_candidate_nothing_could_check_here_is_a_warning_not_a_failure",
       ("opforge/ui/views.py", 'if failed_step else "🟡 not verifiable here"', 'if True else ""')),
    _g("kernels-empty-says-what-to-do", "an empty registry names itself and a first command that works",
       "tests/test_cli_frictions.py::test_kernels_on_an_empty_registry_names_it_and_a_first_command",
       ("opforge/harness/intake.py", '            f"  start with: opforge verify ops/softmax.py {example_kernel()}\\n"\n', "")),
    _g("verify-help-example", "verify --help explains SPEC and KERNEL with an example that works",
       "tests/test_cli_frictions.py::test_verify_help_explains_spec_and_kernel_with_a_working_example",
       ("opforge/cli.py", "epilog=intake.verify_epilog(),", "epilog=None,")),
    # -- poison for every dtype (issue #32, item 5) --
    _g("poison-unsigned", "unsigned allocations hold 0xA5.., so an unzeroed uint32 workspace fails",
       ("tests/test_poison.py::test_unsigned_allocations_hold_a_large_pattern",
        "tests/test_poison.py::test_unzeroed_uint32_workspace_is_wrong_and_a_zeroed_one_right"),
       (GUARDS, "                 torch.uint8: (torch.uint8, 0xA5), torch.uint16: (torch.int16, -0x5A5B),\n"
                "                 torch.uint32: (torch.int32, -0x5A5A5A5B), torch.uint64: (torch.int64, -0x5A5A5A5A5A5A5A5B),\n",
        "")),
    _g("poison-bool", "bool allocations hold a byte neither False nor True, compared byte by byte",
       ("tests/test_poison.py::test_bool_allocations_hold_a_byte_neither_false_nor_true",
        "tests/test_poison.py::test_unwritten_bool_output_is_wrong_and_a_zeroed_one_right"),
       (GUARDS, "                 torch.bool: (torch.uint8, 0x5A)}\n", "                 }\n")),
    _g("poison-bool-bytes-kept", "a bool output's bytes reach the judge as they are (a copy would make them True)",
       "tests/test_poison.py::test_unwritten_bool_output_is_wrong_and_a_zeroed_one_right",
       (CHECKER, "        return _copy(value.detach().view(torch.uint8)).view(torch.bool)", "        return _copy(value.detach().view(torch.uint8)).bool()")),
    _g("poison-float8", "float8 allocations (e4m3fn, e5m2, fnuz, e8m0) hold a NaN sentinel",
       "tests/test_poison.py::test_float8_allocations_hold_a_nan_sentinel",
       (GUARDS, "                 torch.float8_e4m3fn: (torch.uint8, 0x7F), torch.float8_e5m2: (torch.uint8, 0x7E),\n"
                "                 torch.float8_e4m3fnuz: (torch.uint8, 0x80), torch.float8_e5m2fnuz: (torch.uint8, 0x80),\n"
                "                 torch.float8_e8m0fnu: (torch.uint8, 0xFF),\n", "")),
    _g("poison-complex", "complex allocations hold the NaN sentinel in both parts, and both parts are compared",
       ("tests/test_poison.py::test_complex_allocations_hold_nan_in_both_parts",
        "tests/test_poison.py::test_complex_outputs_compare_both_parts"),
       (GUARDS, "        fill_sentinel(torch.view_as_real(tensor))\n", "        pass\n"),
       ("opforge/harness/compare.py", "        ref_c, out_c = torch.view_as_real(ref_c), torch.view_as_real(out_c)\n",
        "        ref_c, out_c = ref_c.real, out_c.real\n")),
    # -- the Triton CPU run's memory model (backends/triton/memory.py) --
    _g("bounds-triton", "every load, store and atomic of NVIDIA Triton's CPU run is bounds-checked against the "
       "launch's tensor storages before it touches memory (out-of-bounds with the offset, never a crash)",
       (f"{TIM}test_a_kernel_right_only_in_the_interpreters_order_or_bounds_is_rejected[store_overrun]",
        f"{TIM}test_a_kernel_right_only_in_the_interpreters_order_or_bounds_is_rejected[load_overrun]"),
       (MEM, "            raise _fail(self._outside(picked[~inside], where[~inside], size, what))\n", "            pass\n")),
    _g("bounds-triton-ascend", "Triton-Ascend's CPU run bounds-checks every store (and load) the same way",
       (f"{TIM}test_triton_ascend_bounds_and_races[store_overrun]",
        f"{TIM}test_triton_ascend_bounds_and_races[load_overrun]"),
       (MEM, "addresses, lanes, span = launch.check(ptrs.data, None if mask is None else mask.data, size, what)  # first",
        "addresses, lanes, span = np.asarray(ptrs.data), None, -2")),
    _g("race-detector", "an address two programs of one launch touch, one storing, with no happens-before between "
       "them and different bytes, is a race (chained carry, last program by id, in-place neighbour, seam)",
       tuple(f"{TIM}test_a_kernel_right_only_in_the_interpreters_order_or_bounds_is_rejected[{k}]"
             for k in ("carry_chain", "last_program", "inplace_neighbour", "seam_conflict"))
       + (f"{TIM}test_triton_ascend_bounds_and_races[seam_race]",),
       (RACES, "        suspect = np.flatnonzero(multi & writes & plain & ~uniform)\n",
        "        suspect = np.flatnonzero(multi & writes & plain & ~uniform & False)\n")),
    _g("race-happens-before", "atomics give happens-before (an acq_rel ticket counter publishes the partials to "
       "the last program): correct cross-program kernels verify",
       f"{TIM}test_correct_cross_program_kernels_still_verify[last_program_ticket]",
       (RACES, "        if not self.events:\n            return ordered\n", "        if True:\n            return ordered\n")),
    _g("race-relaxed-orders-nothing", "a relaxed atomic gives no happens-before",
       f"{TIM}test_a_kernel_right_only_in_the_interpreters_order_or_bounds_is_rejected[last_program_relaxed]",
       (MEM, "sem.RELAXED: (False, False)", "sem.RELAXED: (True, True)")),
    _g("race-benign-same-bytes", "two programs storing the same bytes at one address is not a race",
       f"{TIM}test_correct_cross_program_kernels_still_verify[seam_same]",
       (RACES, "        uniform = same & (~loads | kept)\n", "        uniform = same & False\n")),
    _g("order-rotation", "the programs of a launch run in grid, reverse and seeded-shuffle order, rotating per launch",
       f"{TIM}test_a_result_that_depends_on_the_order_is_caught_when_no_access_races",
       (MEM, "        self.order = ORDERS[LAUNCHES % len(ORDERS)]\n", "        self.order = ORDERS[0]\n")),
    _g("order-dependent", "repeated calls on the same inputs, run in other orders, must agree bitwise",
       f"{TIM}test_a_kernel_right_only_in_the_interpreters_order_or_bounds_is_rejected[lock_sum]",
       ("opforge/harness/evidence.py", "            _same_in_any_order(f, repeats.setdefault(",
        "            (lambda *a: None)(f, repeats.setdefault(")),
    _g("order-float-atomics-tolerance", "where float atomics ran, repeated calls agree within tolerance, not bitwise",
       f"{TIM}test_correct_cross_program_kernels_still_verify[atomic_sum]",
       ("opforge/harness/evidence.py", '    atomics = report.get("float_atomics") or first_report.get("float_atomics")\n',
        "    atomics = False\n")),
    # -- coverage as wide as the spec (issue #32, item 7) --
    _g("larger-grows-each-constant", "each size constant grown alone past 2x+1, the others halved to pay for it",
       "tests/test_coverage.py::test_a_kernel_for_at_most_64_rows_fails_the_grown_batch",
       (STRESS, "        sizes[other] //= 2\n", "        return None\n")),
    _g("larger-constructor-sizes", "constants that reach the constructor grow too, the model built again at them",
       "tests/test_coverage.py::test_a_reduction_capped_at_the_shrunk_k_fails_the_declared_k",
       ("opforge/harness/judge.py", "        if ref.shapes_model(sizes):\n", "        if False:\n")),
    _g("larger-declared-size", "a declared size the shrunk run left out is run where the CPU budget allows",
       "tests/test_coverage.py::test_a_reduction_capped_at_the_shrunk_k_fails_the_declared_k",
       (STRESS, '        tries = [(declared[key], "declared size")] if declared.get(key, 0) > twice else []\n',
        "        tries = []\n")),
    _g("call-count-independent", "repeated calls on the same inputs must leave the candidate's state unchanged (stateful)",
       ("tests/test_coverage.py::test_state_map_reaches_what_candidate_code_can_and_floats_to_three_digits",
        "tests/test_coverage.py::test_a_call_counting_time_bomb_is_refused_as_stateful"),
       (CHECKER, "        report.update(self._call_state(index, step))\n", "")),
    # -- a tolerance no other function fits (issue #32, item 8) --
    _g("tolerance-small-elements", "float32: 1e-5 x rms over the reference's own float64 error x4 (a tanh GELU fails)",
       "tests/test_tolerance.py::test_a_tanh_gelu_is_wrong_on_a_randn_spec_and_the_erf_gelu_right",
       ("opforge/harness/compare.py", "    torch.float32: Tolerance(1e-4, 1e-4, 1e-3, 2e-2, 1e-5),\n",
        "    torch.float32: Tolerance(1e-4, 1e-4, 1e-3, 2e-2, 1e-4),\n")),
    # -- the CUDA emulator's memory model (issue #33) --
    _g("cuda-race-barrier-interval", "__syncthreads orders a block's threads and nothing else does across warps: "
       "shared or global accesses of two warps between barriers, one writing, are a race",
       ("tests/test_cuda_memory_model.py::test_syncwarp_does_not_order_the_warps_of_a_block",),
       (MEM_H, "    M.interval++;\n", "")),
    _g("cuda-race-warp-collective", "a warp collective (__syncwarp, shuffles, votes) orders the lanes of its mask",
       "tests/test_cuda_memory_model.py::test_syncwarp_orders_the_lanes_of_a_warp",
       (MEM_H, "    if (!M.races || count < 2) return;\n    uint32_t joined[32] = {0};",
        "    return;\n    uint32_t joined[32] = {0};")),
    _g("cuda-race-across-blocks", "accesses of two blocks to the same bytes, one writing, need a fence + atomic/volatile "
       "release and its acquire between them (last-block reduction, chained scan, lazy init, split-K, scratch)",
       ("tests/test_cuda_memory_model.py::test_a_last_block_reduction_needs_the_fence_before_its_ticket",
        "tests/test_cuda_memory_model.py::test_lazy_initialisation_through_a_flag_without_a_fence_is_a_race",
        "tests/test_cuda_memory_model.py::test_split_k_adds_partials_atomically_not_with_a_plain_add",
        "tests/test_cuda_memory_model.py::test_one_scratch_buffer_for_all_blocks_is_a_race_and_one_row_each_is_not",
        "tests/test_cuda_memory_model.py::test_the_output_used_as_another_blocks_scratch_is_a_race"),
       (MEM_H, "    return clock_covers(t->know, p) || clock_covers(M.bk, p);\n", "    return true;\n")),
    _g("cuda-release-needs-fence", "an atomic or volatile write releases only what a __threadfence() before it covers",
       ("tests/test_cuda_memory_model.py::test_a_last_block_reduction_needs_the_fence_before_its_ticket",
        "tests/test_cuda_memory_model.py::test_a_chained_scan_publishes_its_sum_with_a_fence_before_the_flag"),
       (MEM_H, "    if ((flags & A_WRITE) && t->released) clock_join(*sync_clock(a, true), t->rel);",
        "    if (flags & A_WRITE) { release_snapshot(t); clock_join(*sync_clock(a, true), t->rel); }")),
    _g("cuda-acquire-joins-release", "an atomic or volatile read acquires what the releases it reads from published "
       "(the fenced last-block reduction and chained scan verify)",
       ("tests/test_cuda_memory_model.py::test_a_last_block_reduction_needs_the_fence_before_its_ticket",
        "tests/test_cuda_memory_model.py::test_a_chained_scan_publishes_its_sum_with_a_fence_before_the_flag"),
       (MEM_H, "        if (c && c->n) { clock_join(t->know, *c); t->epoch = 0; }", "        (void)c;")),
    _g("cuda-race-same-bytes-benign", "threads storing the same bytes are not a race (every thread stores the total)",
       "tests/test_cuda_memory_model.py::test_threads_storing_the_same_bytes_are_not_a_race",
       (MEM_H, "        if ((now & m) != (q.before & m)) {", "        if (true) {")),
    _g("cuda-atomics-do-not-race", "two atomics to the same bytes are not a race (atomicMax); a check-then-store is",
       "tests/test_cuda_memory_model.py::test_check_then_store_is_a_race_and_atomic_max_is_not",
       (MEM_H, "&& c.w != me && !(strong && (c.fl & 1)) && !ordered(c.w, t)) {",
        "&& c.w != me && !ordered(c.w, t)) {")),
    _g("cuda-misaligned-vector", "an aligned-type access (float4) at an address its size does not divide faults",
       "tests/test_cuda_memory_model.py::test_a_float4_access_one_float_off_is_misaligned",
       (MEM_H, "if ((flags & A_ALIGNED) && size > 1 && (a & (size - 1)))", "if (false)")),
    _g("cuda-oob-read-hooked", "a read just past a buffer (in its guard zone) is out-of-bounds, named with the element",
       "tests/test_cuda_emulator.py::test_a_read_past_the_end_is_out_of_bounds",
       (MEM_H, "static const uintptr_t kGuard = 1024;", "static const uintptr_t kGuard = 0;")),
    _g("cuda-shuffle-schedule", "the shuffled schedules really shuffle: an order only a shuffle shows is found",
       "tests/test_cuda_memory_model.py::test_an_order_that_only_a_shuffled_schedule_shows_is_found",
       ("opforge/backends/cuda/emulator/include/emu_sched.h",
        "    if (E.schedule < 2 || E.schedule == kWarpsAhead) return;\n", "    return;\n")),
    _g("cuda-seed-reaches-emulator", "the verification's seed orders the emulator's shuffles",
       "tests/test_cuda_memory_model.py::test_the_verifications_seed_orders_the_shuffled_schedules",
       ("opforge/backends/cuda/__init__.py",
        '        library.set_seed(models[0].get("seed", 0) if isinstance(models[0], dict) else 0)\n', "        pass\n")),
    _g("cuda-blocks-resident-together", "a block spinning on memory another block must change is suspended and others "
       "run (a block waiting for a later one progresses, as resident blocks on a GPU do)",
       "tests/test_cuda_memory_model.py::test_blocks_progress_together_where_one_waits_for_a_later_one",
       ("opforge/backends/cuda/emulator/include/emu_launch.h",
        "        E.can_suspend = nsaved < resident - 1 && (k < nb || nsaved > 0);", "        E.can_suspend = false;")),
    # -- CUDA emulator and knowledge --
    _g("emulator-atomic-rounding-not-a-race", "a float atomicAdd sum differs between schedules by rounding, never a race",
       "tests/test_cuda_emulator.py::test_a_float_atomic_sum_that_cancels_keeps_its_terms_rounding",
       ("opforge/backends/cuda/emulator/library.py",
        "<= max(bits * scale, ATOMIC_SPREAD * _EPSILON[ctype] * spread)", "<= bits * scale")),
    _g("emulator-atomic-rounding-bounded", "float atomics earn rounding room (1e-5 of the buffer's largest value), "
       "not a race's: a sum read while other blocks add is a race",
       "tests/test_cuda_emulator.py::test_a_float_atomic_kernel_gets_room_for_rounding_not_for_a_race",
       ("opforge/backends/cuda/emulator/library.py", "ATOMIC_ROUNDING = 1e-5\nATOMIC_SPREAD = 4.0\n",
        "ATOMIC_ROUNDING = 1e-3\nATOMIC_SPREAD = 400.0\n")),
    _g("emulator-fast-sinf-range-reduction", "__sinf/__cosf reduce x * (1/2pi) in float32 as the GPU does: "
       "6.9e-4 off sin at x = 1e4, so a float32 sin op on large phases using __sinf fails",
       (f"{FM}test_sinf_of_large_arguments_is_as_far_from_sin_as_the_float32_range_reduction_puts_it",
        f"{FM}test_a_float32_op_using_sinf_on_large_phases_fails_the_compare"),
       (FAST_H, "#define __sinf(x) ::opforge_emu::fast::sin_approx(x)\n", "#define __sinf(x) sinf(x)\n")),
    _g("emulator-fast-expf-product", "__expf is ex2 of x * log2(e) rounded to float32: its error grows with |x| "
       "(within the Guide's 2 + floor(|1.173 x|) ulp)",
       f"{FM}test_expf_grows_its_error_with_x_within_the_guides_ulp_bound",
       (FAST_H, "#define __expf(x) ::opforge_emu::fast::expf_approx(x)\n", "#define __expf(x) expf(x)\n")),
    _g("emulator-fast-fdividef-range", "__fdividef(x, y) is x * rcp(y) with rcp's result flushed: 0 for "
       "2^126 < |y| < 2^128, NaN for x = inf",
       f"{FM}test_fdividef_is_zero_for_a_divisor_above_2_to_the_126",
       (FAST_H, "    return a * mufu_rcp(b);\n", "    return a / b;\n")),
    _g("emulator-fast-log-absolute", "__logf/__log2f/__log10f come from lg2's fixed-point fraction: an absolute "
       "error near 1 (30% of __logf(1 + 2^-23)), as the Guide's bounds say",
       f"{FM}test_logs_have_an_absolute_error_near_one",
       (FAST_H, "    return (float)((e - 1) + std::nearbyint(std::log2(m) * grid) / grid);\n",
        "    return (float)((e - 1) + std::log2(m));\n")),
    # -- the CUDA launch-resource model (issue #33: emulator/limits.py, include/emu_limits.h) --
    _g("cuda-launch-registers", "a CUDA launch whose registers x threads exceed 64K per block fails as out-of-resources "
       "(ptxas's count, per-warp units of 256); fewer threads run",
       f"{LIM}test_registers_times_threads_over_64k_fail_the_launch_and_fewer_threads_run",
       (EMU_LIMITS, "    if (per_warp * warps > g_arch.regs_per_block)\n", "    if (false)\n")),
    _g("cuda-launch-shared-opt-in", "static + dynamic shared memory over 48 KB fails without the "
       "cudaFuncSetAttribute opt-in and runs with it",
       f"{LIM}test_static_and_dynamic_shared_memory_over_48kb_need_the_opt_in",
       (EMU_LIMITS, "    if (dyn > allowed)\n", "    if (false)\n")),
    _g("cuda-launch-bounds", "a launch with more threads than the kernel's __launch_bounds__ fails as out-of-resources",
       f"{LIM}test_more_threads_than_launch_bounds_fail_the_launch",
       (EMU_LIMITS, "    if (k.maxntid && threads > k.maxntid)\n", "    if (false)\n")),
    _g("cuda-device-heap", "device malloc past cudaLimitMallocHeapSize (8 MB by default) returns NULL",
       f"{LIM}test_device_malloc_past_the_heap_limit_returns_null",
       (EMU_LIMITS, "    if (take > g_heap_limit || g_heap_used > g_heap_limit - take) return nullptr;", "")),
    _g("cuda-device-heap-tracked", "a device-malloc block is device memory to the memory model: a write past it is "
       "out-of-bounds", f"{LIM}test_a_write_past_a_device_malloc_block_is_out_of_bounds",
       (EMU_LIMITS, "    track(raw + kHeapPad, take, 1, -1);\n", "")),
    _g("cuda-recursion-stack", "a recursion whose depth x ptxas frame exceeds cudaLimitStackSize faults",
       f"{LIM}test_recursion_past_the_stack_limit_faults_and_a_shallow_one_runs",
       (EMU_LIMITS, "    if ((size_t)f->bytes > g_stack_limit) f->overflow();\n", "")),
    _g("cuda-resources-in-the-cpu-run", "the CPU run of a CUDA candidate holds every launch to ptxas's numbers "
       "(a launch over __launch_bounds__ fails verification as out-of-resources)",
       f"{LIM}test_a_launch_over_its_launch_bounds_fails_verification_as_out_of_resources",
       ("opforge/backends/cuda/__init__.py", "    limits.install(provider if _nvcc() is not None else None)\n",
        "    limits.install(None)\n")),
    _g("cuda-resources-unchecked-said", "without nvcc the verdict warns that launch resources were not checked",
       f"{LIM}test_without_nvcc_the_verdict_says_resources_were_not_checked",
       ("opforge/backends/cuda/__init__.py", "                out.warnings.append(UNCHECKED)\n", "")),
    _g("cuda-fast-math-not-emulated", "a float32 load_inline op built with --use_fast_math (approximate `/`, "
       "flush to zero) is not emulated as IEEE: its CPU run is unsupported, with the reason",
       f"{FM}test_use_fast_math_keeps_a_float32_load_inline_op_off_the_emulator",
       ("opforge/backends/cuda/__init__.py", "        elif found.fast_math and float32_spec:", "        elif False:")),
    # -- the CUDA emulator's memory as a GPU leaves it (issue #33: statics.py, state.py, buffers.py) --
    _g("cuda-namespace-shared-poisoned", "a namespace-scope __shared__ array is poisoned before every block: "
       "read before written it gives NaN",
       f"{ST}test_a_namespace_scope_shared_array_is_poisoned_before_every_block",
       (GLOBALS_H, "static inline void shared_at_load(void* p, size_t n) { shared_seen(p, n); }",
        "static inline void shared_at_load(void*, size_t) {}")),
    _g("cuda-args-at-tensor-alignment", "a tensor argument reaches the kernel at its view's offset modulo 256 "
       "(a float4 access on a storage_offset-1 view stays misaligned)",
       f"{ST}test_a_misaligned_view_reaches_the_kernel_at_its_offset",
       (BUFFERS, "        self.nbytes, self.offset = nbytes, offset % ALIGN\n",
        "        self.nbytes, self.offset = nbytes, 0\n")),
    _g("cuda-guard-fence", "a read far past the end of an argument, or far before its start, beyond the canaries, "
       "faults in the unmapped fences (out-of-bounds)",
       f"{ST}test_a_read_far_past_the_end_or_before_the_start_faults_in_the_fence",
       (BUFFERS, "        _libc.mprotect(base, FENCE_BEFORE, 0)\n        _libc.mprotect(base + FENCE_BEFORE + body, "
        "FENCE_AFTER, 0)\n", "")),
    _g("cuda-state-call-count", "a CUDA call that leaves static storage (__device__ variables, launcher statics) "
       "changed must do what a first call would, or fails as stateful: a launch-count time bomb, a cache "
       "answering from an earlier call",
       (f"{ST}test_a_launch_count_time_bomb_is_refused_at_the_first_call[device_bomb_launch-launches_seen-4]",
        f"{ST}test_a_launch_count_time_bomb_is_refused_at_the_first_call[host_bomb_launch-calls-4]",
        f"{ST}test_a_cache_answering_from_an_earlier_call_is_refused"),
       (STATE, "    mine = [v for v in found if seen.owner.get(v.address) == name and v.moved()]\n",
        "    mine = []\n")),
    _g("cuda-state-registered", "every variable of static storage is registered with its load-time bytes "
       "(namespace scope and static locals; functions, typedefs and templates left alone)",
       (f"{ST}test_the_translator_registers_variables_of_static_storage_and_nothing_else",
        f"{ST}test_a_launch_count_time_bomb_is_refused_at_the_first_call[host_bomb_launch-calls-4]"),
       ("opforge/backends/cuda/emulator/statics.py",
        "    return sorted(_namespace_scope(code, bodies) + _local_statics(code, bodies), key=lambda d: d.end)\n",
        "    return sorted(_namespace_scope(code, bodies), key=lambda d: d.end)\n")),
    _g("cuda-state-workspace-passes", "a __device__ workspace a call rewrites (partly, for a smaller call), a "
       "counter the last block resets and a lazily built table pass call after call",
       f"{ST}test_state_a_call_rewrites_or_resets_passes_call_after_call",
       (STATE, "    bad = ((l != f) & ((l != b) | (f != s))).nonzero()\n", "    bad = (l != f).nonzero()\n")),
    # -- CUDA host code after the preprocessor, on libclang's parse (backends/cuda/host_ast.py) --
    _g("cuda-host-code-parsed", "CUDA host code is judged after g++ -E on a real parse: host compute behind "
       "`#if 0 __device__ #endif`, a cast through an alias, make_* or template-parameter callees is refused",
       tuple(f"tests/test_cuda_forgery.py::test_static_check_rejects[host_{k}-cuda-host-compute]"
             for k in ("if0_device", "cast_deref", "make_callee", "template_default")),
       ("opforge/backends/cuda/static_cxx.py", "            if parsed is not None:\n                "
        "_parsed_findings(src, parsed, out, float32)\n", "")),
    _g("cuda-host-call-through-variable", "a host call through a variable, parameter or template parameter (a "
       "function pointer no reader sees) is refused",
       ("tests/test_cuda_forgery.py::test_static_check_rejects[host_make_callee-cuda-host-compute]",
        "tests/test_cuda_forgery.py::test_static_check_rejects[host_template_default-cuda-host-compute]"),
       ("opforge/backends/cuda/host_ast.py", "            if not self._closure(ref):", "            if False:")),
    _g("cuda-host-memcpy-kind", "cudaMemcpyAsync in host code only with the constant cudaMemcpyDeviceToDevice, "
       "not a kind computed to DeviceToHost",
       "tests/test_cuda_forgery.py::test_static_check_rejects[host_memcpy_kind-cuda-host-compute]",
       ("opforge/backends/cuda/host_ast.py", "            self._memcpy_kind(cursor, base)\n", "            pass\n")),
    _g("cuda-host-device-pass", "host code is read in nvcc's device pass too (`#ifdef __CUDA_ARCH__`: the "
       "emulator's view), a __device__ function's branch left alone",
       "tests/test_cuda_static.py::test_host_code_is_read_in_nvccs_device_pass_too",
       ("opforge/backends/cuda/host_ast.py", "    passes = PASSES if \"__CUDA_ARCH__\" in source else PASSES[:1]\n",
        "    passes = PASSES[:1]\n")),
    _g("cuda-host-parse-said", "without libclang the CUDA host-code rule falls back to tokens and says so in a warning",
       "tests/test_cuda_static.py::test_without_libclang_the_token_rule_judges_alone_and_says_so",
       ("opforge/backends/cuda/static_cxx.py", "        out.warnings.append(f\"cuda-host-compute: C++ read token by "
        "token only ({exc}): code behind the \"\n", "        0 and (f\"\"\n")),
    _g("cuda-half-variable-no-half-type", "a float32 CUDA kernel's variable named half is no half type (the parse's "
       "types decide), the type half beside it is refused",
       "tests/test_cuda_static.py::test_a_variable_named_half_is_no_half_type",
       ("opforge/backends/cuda/static_cxx.py", "LOW_PRECISION.match(parts[-1]) and parts[-1] not in self.shadowed:",
        "LOW_PRECISION.match(parts[-1]):")),
    _g("cuda-load-inline-in-full", "torch.utils.cpp_extension.load_inline(...) spelt in full is KernelBench's "
       "load_inline (exit 3 on a CPU-only PyTorch); the modules on its path lead nowhere else",
       ("tests/test_cuda_static.py::test_load_inline_spelt_in_full_is_load_inline",
        "tests/test_cuda_static.py::test_load_inline_spelt_in_full_opens_nothing_else"),
       ("opforge/backends/triton/static_resolve.py", "        if self._on_extra_path(path):  # `torch.utils.cpp_extension"
        ".load_inline`, spelt in full\n            return [ref]\n", "")),
    _g("cuda-stateful-verdict", "a CUDA launch-count time bomb fails verification as stateful, in the anticheat check",
       f"{ST}test_a_time_bomb_fails_verification_as_stateful_in_the_anticheat_check",
       ("opforge/backends/cuda/__init__.py", "limits.findings().get(\"memory\", []) + state.take_findings()",
        "limits.findings().get(\"memory\", [])")),
    _g("knowledge-examples-share-a-tag", "an example kernel goes to the prompt only when it shares a tag with the spec",
       "tests/test_knowledge.py::test_unrelated_examples_do_not_take_the_place_of_notes",
       ("opforge/knowledge/retrieve.py", "(score >= SAME_OP_BONUS or doc.tags & tags)", "True")),
    # -- compiled = executed; the interpreter is no way out (backends/triton/launch_keys.py, hidden_names.py) --
    _g("compiled-equals-executed-triton", "NVIDIA Triton's CPU run interprets only launches its build compiled for the "
       "target (kernel code, globals it loads, argument types, constexprs, options): a constexpr keyed on an "
       "interpreter-only attribute is unbuilt-launch",
       (f"{CE}test_hostile_kernel_is_rejected_by_its_runtime_mechanism[hostile_interp_branch]",
        f"{CE}test_correct_controls_verify[narrow_rows_ok]"),
       (TRITON_PLUGIN, "            launch_keys.require_built()  # compiled = executed: the run interprets only what "
        "the build compiled\n", "")),
    _g("build-every-case-triton", "the Triton build compiles the launches of every case of the plan "
       "(variants, stress, larger), not only the main case's: a variant-only kernel the GPU compiler refuses fails",
       f"{CE}test_hostile_kernel_is_rejected_by_its_runtime_mechanism[hostile_variant_uncompilable]",
       (TRITON_PLUGIN, "    build_every_case = True\n", "    build_every_case = False\n")),
    _g("compiled-equals-executed-ascend", "Triton-Ascend's CPU run interprets only launches its build frontend-compiled",
       "tests/test_triton_ascend_forgery.py::test_hostile_candidates_are_rejected_for_what_they_do[probe_switch]",
       ("opforge/backends/triton_ascend/__init__.py", "            launch_keys.require_built()\n", "")),
    _g("launch-identity-global-loads", "a launch's identity reads only the globals its code loads (LOAD_GLOBAL), so "
       "tl.math kernels keep one identity from the first launch on (no false unbuilt-launch)",
       (f"{CE}test_launch_identity_reads_only_the_globals_the_kernel_loads", f"{CE}test_ascend_tl_math_kernel_verifies",
        f"{CE}test_correct_controls_verify[tlmath_softmax]"),
       (LAUNCH_KEYS, "names = {ins.argval for ins in dis.get_instructions(code) if ins.opname in GLOBAL_LOADS}",
        "names = set(code.co_names)")),
    _g("interpreter-globals-hidden", "names Triton's interpreter needs (np, inspect, its semantic...) never reach the "
       "candidate's module, on either Triton: host code cannot use them",
       (f"{CE}test_hostile_kernel_is_rejected_by_its_runtime_mechanism[hostile_interp_np_dlpack]",
        f"{CE}test_hostile_kernel_is_rejected_by_its_runtime_mechanism[hostile_interp_getattr_static]",
        f"{CE}test_ascend_interpreter_globals_are_not_the_candidates"),
       ("opforge/backends/triton/hidden_names.py",
        "    rewriter._transform_ast = _transform_ast\n    rewriter._compile_and_exec = _compile_and_exec\n", "")),
    _g("static-unbound-name", "a name the candidate loads and never binds in its file (nor a builtin) is refused "
       "statically (unbound-name)",
       (f"{CE}test_a_name_never_bound_in_the_file_is_refused[np]",
        f"{CE}test_a_name_never_bound_in_the_file_is_refused[class-attribute]",
        f"{CE}test_hostile_kernel_meets_its_static_rule_or_none[hostile_interp_np_dlpack]"),
       ("opforge/backends/triton/static_names.py", "*unbound_names(tree, resolver), ", "")),
    _g("static-interpreter-detection", "reading what tells the interpreter from the GPU compiler (rewriter, cache_key, "
       "TRITON_INTERPRET) is refused statically",
       (f"{CE}test_reading_what_tells_the_interpreter_from_the_compiler_is_refused[hasattr-rewriter]",
        f"{CE}test_hostile_kernel_meets_its_static_rule_or_none[hostile_interp_branch]"),
       ("opforge/backends/triton/static_names.py", ", *interpreter_detection(tree)]", "]")),
    _g("pre-run-hooks-guarded", "a pre-run hook registered on a kernel runs as the candidate's code under the guards "
       "(torch.softmax as a hook is torch-compute)",
       f"{CE}test_hostile_kernel_is_rejected_by_its_runtime_mechanism[hostile_pre_run_hook]",
       (GUARDS, "            hooks[:] = [_as_candidate(hook) for hook in hooks]\n", "            pass\n")),
    _g("unbuilt-launch-caught-still-fails", "an unbuilt launch fails the verdict even where forward catches the refusal "
       "(the refusal cannot serve as a detector of the CPU run)",
       f"{CE}test_hostile_kernel_is_rejected_by_its_runtime_mechanism[hostile_refusal_caught]",
       (LAUNCH_KEYS, "    ACCUSED.record(f\"runtime-error: {message}\"[:300])  # refused even where the candidate catches it\n",
        "")),
    _g("static-ctypes-refused", "a candidate importing ctypes is refused statically",
       (f"{CE}test_ctypes_is_refused[import]", f"{CE}test_ctypes_is_refused[from-import]"),
       (STATIC_T, '"math", "typing",', '"math", "ctypes", "typing",')),
    _g("ascendc-static-constant-branches", "AscendC static rules judge what executes: a FreeTensor, EnQue or tiling "
       "assignment under a constant-false `if`/`if constexpr`/`while` (1 == 0, !true, a false constexpr bool) is absent",
       (f"{ASX}test_freetensor_under_a_constant_false_condition_is_not_present[eq-direct]",
        f"{ASX}test_freetensor_under_a_constant_false_condition_is_not_present[constexpr-bool-mkb]",
        f"{ASX}test_a_tiling_assignment_under_a_constant_false_condition_is_not_set"),
       ("opforge/backends/ascendc/units.py", "        _prune_unit(code, unit, len(code.units) - 1)\n", "")),
    _g("ascendc-static-queue-reached", "an AscendC FreeTensor in a method no kernel reaches does not balance the queue",
       f"{ASX}test_freetensor_in_a_method_no_kernel_calls_is_not_present[direct]",
       ("opforge/backends/ascendc/queue_rules.py", "            functions = [f for f in functions if id(f) in runs or f.kernel]\n",
        "            pass\n")),
    _g("ascendc-static-forward-helpers", "AscendC forward computing through a method or function it calls is refused",
       f"{ASX}test_forward_that_computes_through_a_helper_is_refused[direct]",
       ("opforge/backends/ascendc/project.py", "        todo += _forward_operators(fn, modules, project, set(tensors), helpers)\n",
        "        _forward_operators(fn, modules, project, set(tensors), helpers)\n")),
    _g("ascendc-static-preprocessor-sealed", "g++ -E never reads a file an AscendC candidate names (a spliced or digraph "
       "include, #pragma GCC dependency)",
       (f"{ASX}test_the_preprocessor_never_reads_a_file_the_candidate_names[spliced]",
        f"{ASX}test_the_preprocessor_never_reads_a_file_the_candidate_names[digraph]"),
       ("opforge/backends/ascendc/preprocess.py", "    if not _sealed(stubbed):\n", "    if False:\n")),
    _g("ascendc-static-tiling-live-host", "an AscendC tiling field set only in a host helper nothing calls is not set",
       f"{ASX}test_a_tiling_field_set_only_in_a_helper_nothing_calls_is_not_set[mkb]",
       ("opforge/backends/ascendc/tiling_rules.py", "            continue  # a host function nothing the framework calls reaches sets nothing\n",
        "            pass\n")),
    _g("ascendc-static-short-circuit", "an AscendC FreeTensor in the dead arm of a constant ternary or short-circuit "
       "statement (`false && (q.FreeTensor(t), true);`) is absent",
       (f"{ASX}test_a_constant_ternary_or_short_circuit_statement_runs_only_what_it_runs[ternary-false]",
        f"{ASX}test_a_constant_ternary_or_short_circuit_statement_runs_only_what_it_runs[and-false]"),
       ("opforge/backends/ascendc/preprocess.py", "            if kept is not None:  # `C ? A : B;`", "            if False:  # `C ? A : B;`")),
    _g("ascendc-static-switch", "an AscendC switch on a constant runs only from its matching case",
       f"{ASX}test_a_switch_on_a_constant_runs_only_its_case[no-case]",
       ("opforge/backends/ascendc/preprocess.py", "            if value is not None and close + 1 < n and tokens[close + 1].text == \"{\":",
        "            if False:")),
    _g("ascendc-static-preprocessed", "AscendC conditional compilation is decided by g++ -E before the rules look "
       "(#if 0 around a FreeTensor: absent)",
       (f"{ASX}test_freetensor_under_a_constant_false_condition_is_not_present[pp-if0-direct]",
        f"{ASX}test_freetensor_under_a_constant_false_condition_is_not_present[pp-macro-mkb]"),
       ("opforge/backends/ascendc/units.py", 'if conditional(parsed.directives) and "__has_include" not in text:',
        "if False:")),
    _g("ascendc-static-ub-per-kernel", "the AscendC unified-buffer plan is summed per kernel entry: two classes "
       "(208 KB) one kernel instantiates are over 192 KB",
       f"{ASX}test_two_classes_of_one_kernel_are_summed_against_192_kb",
       ("opforge/backends/ascendc/reach.py", "            todo += [(g, g.body) for g in targets if id(g) not in seen]\n",
        "")),
    _g("ascendc-static-ub-runtime-no-excuse", "an AscendC UB plan whose known part is over 192 KB is an error even "
       "with a run-time-sized buffer (not a warning)",
       (f"{ASX}test_one_runtime_sized_buffer_does_not_excuse_a_plan_over_192_kb",
        f"{ASX}test_a_known_part_over_the_budget_is_an_error_whatever_the_runtime_sizes[mkb]"),
       ("opforge/backends/ascendc/memory_rules.py", "        if known > api.UB_BYTES:\n",
        "        if known > api.UB_BYTES and not unknown:\n")),
    _g("ascendc-static-tiling-handoff", "an AscendC tiling field set after SaveToBuffer (or after the launch) is not set",
       (f"{ASX}test_a_tiling_field_set_after_savetobuffer_is_not_set", f"{ASX}test_a_tiling_field_set_after_the_launch_is_not_set"),
       ("opforge/backends/ascendc/tiling_rules.py", "                if leaves and max(leaves) < k:", "                if False:")),
    _g("ascendc-static-tiling-undeclared", "an AscendC kernel reading a tiling field no struct declares is refused",
       f"{ASX}test_a_tiling_field_read_in_the_kernel_that_nothing_declares_or_sets_is_refused[mkb]",
       ("opforge/backends/ascendc/tiling_rules.py", "    for field_name in sorted(read - declared) if structs else []:",
        "    for field_name in []:")),
    _g("ascendc-static-pipe-variable", "a TPipe named `pipe` passed by reference is not POSIX pipe() (no false rejection)",
       f"{ASX}test_a_tpipe_named_pipe_passed_by_reference_is_not_the_pipe_call[direct]",
       ("opforge/backends/ascendc/kernel_rules.py", " and not (t.text == base and base in variables):", ":")),
    _g("ascendc-static-forward-operators", "AscendC forward that computes on the kernel's result (out + b, x * 2) is refused",
       (f"{ASX}test_forward_that_computes_after_the_kernel_is_refused[add-direct]",
        f"{ASX}test_forward_that_computes_on_the_kernels_result_through_a_name_is_refused[mkb]"),
       ("opforge/backends/ascendc/project.py", "        if any(is_tensor(o) for o in operands):", "        if False:")),
    _g("ascendc-static-dtype", "an AscendC operator declared float16 for a float32 spec is refused",
       f"{ASX}test_a_float32_spec_refuses_an_operator_declared_half_width[json]",
       ("opforge/backends/ascendc/agree.py", "            if _low_only([str(t) for t in types]):", "            if False:")),
    _g("ascendc-static-target", "an AscendC OpDef registered only for another SoC (ascend310p) is refused for 910B",
       f"{ASX}test_an_opdef_registered_only_for_another_soc_is_refused",
       ("opforge/backends/ascendc/agree.py", "    if targets and not any(a == api.TARGET for a, _ in targets):",
        "    if False:")),
    _g("ascendc-static-blocklen", "DataCopyParams.blockLen in bytes (a 32x overrun) is refused with the numbers",
       (f"{ASX}test_a_blocklen_in_bytes_or_past_the_buffer_is_refused[bytes]",
        f"{ASX}test_a_blocklen_in_bytes_is_refused_in_multikernelbench_form_too"),
       ("opforge/backends/ascendc/copy_rules.py", "    if _byte_count(length):", "    if False:")),
    _g("ascendc-emu-pipe-race", "AscendC emulated: two pipes touching one UB block, one writing, with no flag, queue or "
       "barrier between them are a race (copy-in then compute without EnQue/DeQue; a scalar read of a vector result)",
       ("tests/test_ascendc_emu_core.py::test_wrong_kernel_refused_beside_its_control[tbuf_nosync-tbuf_sync-2-words0]", "tests/test_ascendc_emu_core.py::test_wrong_kernel_refused_beside_its_control[reduce_nosync-reduce_sync-2-words1]"),
       (ASC_CORE, "if (b.w.ts && b.wpipe != pipe && b.w.ts > vc.c[b.wpipe]) race(", "if (false) race(")),
    _g("ascendc-emu-queue-orders", "AscendC emulated: EnQue/DeQue order the producer's pipe before the consumer's "
       "(the double-buffered pipeline passes)", ("tests/test_ascendc_emu_core.py::test_wrong_kernel_refused_beside_its_control[pipeline_no_free-pipeline-4-words3]",),
       (ASC_TENSOR, "        M().vc[consumer].join(ready_vc.front());\n", "")),
    _g("ascendc-emu-use-after-free", "AscendC emulated: a tensor used after FreeTensor returned its buffer is refused",
       ("tests/test_ascendc_emu_core.py::test_wrong_kernel_refused_beside_its_control[pipeline_free_early-pipeline-3-words4]",), (ASC_CORE, "    if (b->state == 0)\n", "    if (false)\n")),
    _g("ascendc-emu-alloc-deadlock", "AscendC emulated: AllocTensor past the queue's buffer count is a deadlock",
       ("tests/test_ascendc_emu_core.py::test_wrong_kernel_refused_beside_its_control[pipeline_no_free-pipeline-4-words3]",), (ASC_TENSOR, "            if (b.state != 0) continue;\n", "")),
    _g("ascendc-emu-ub-budget", "AscendC emulated: InitBuffer past the target's unified buffer (192 KB on 910B) is refused "
       "with the numbers", ("tests/test_ascendc_emu_core.py::test_wrong_kernel_refused_beside_its_control[ub_over-ub_fits-6-words7]",),
       (ASC_TENSOR, "if (m.ub_used + need > m.target->ub_bytes)", "if (false)")),
    _g("ascendc-emu-cross-core-race", "AscendC emulated: GM bytes two cores write in one launch are a race (atomic adds "
       "excepted)", ("tests/test_ascendc_emu_core.py::test_wrong_kernel_refused_beside_its_control[gm_overlap-gm_ok-2-words8]", "tests/test_ascendc_emu_core.py::test_wrong_kernel_refused_beside_its_control[plain_add-atomic_add-2-words12]"),
       (ASC_CORE, "if (wc >= 0 && wc != me && !(write && atomic && w_atomic))", "if (false)")),
    _g("ascendc-emu-gm-bounds", "AscendC emulated: a copy past a GM buffer's end is out of bounds",
       ("tests/test_ascendc_emu_core.py::test_wrong_kernel_refused_beside_its_control[gm_past_end-gm_ok-1-words10]",), (ASC_CORE, "if (p < r->base || p + bytes > r->base + readable)", "if (false)")),
    _g("ascendc-plugin-float32-spec", "AscendC: an operator declared float16 for a float32 spec is refused through the "
       "pipeline", ("tests/test_ascendc_mkb.py::test_the_plugin_refuses_a_half_width_operator_for_a_float32_spec",),
       ("opforge/backends/ascendc/__init__.py", "check_ascendc(source, float32_spec=float32_spec)", "check_ascendc(source)")),
    _g("ascendc-emu-ragged-datacopy", "AscendC emulated: a DataCopy count that is not whole 32-byte blocks (the hardware "
       "drops the tail) is refused naming DataCopy and its line",
       ("tests/test_ascendc_emu_core.py::test_a_ragged_datacopy_is_refused_and_datacopypad_is_exact",),
       (ASC_COPY, "    if (bytes % 32)\n        fail(", "    if (false)\n        fail(")),
    _g("ascendc-emu-vector-mask-repeat", "AscendC emulated: a vector API's mask/repeat form reaches the elements the "
       "documentation's block and repeat strides name, and only the masked ones",
       (f"{ASC_VEC_T}test_api_computes_what_the_documentation_says[binary_mask_repeat]",
        f"{ASC_VEC_T}test_api_computes_what_the_documentation_says[unary_rep_strides]"),
       (ASC_VECTOR, "uint64_t(j / B) * blk * B + j % B;", "uint64_t(j / B) * B + j % B;")),
    _g("ascendc-emu-vector-cast-rounding", "AscendC emulated: Cast rounds in the RoundMode asked for (CAST_ROUND: ties "
       "away from zero, not to even)",
       (f"{ASC_VEC_T}test_api_computes_what_the_documentation_says[cast_float_to_half_modes]",
        f"{ASC_VEC_T}test_api_computes_what_the_documentation_says[cast_float_to_int32_modes]"),
       (ASC_VECTOR, "case RoundMode::CAST_ROUND: return dl < dh ? lo : dh < dl ? hi : (x > 0 ? hi : lo);",
        "case RoundMode::CAST_ROUND: return r;"),
       (ASC_VECTOR, "case RoundMode::CAST_ROUND: return std::round(x);", "case RoundMode::CAST_ROUND: return std::nearbyint(x);")),
    _g("ascendc-emu-vector-reduce-index", "AscendC emulated: ReduceMax/ReduceMin with calIndex leave the value in dst[0] "
       "and the index's integer bits in dst[1]; WholeReduceMax writes value, index pairs a dstRepStride apart",
       (f"{ASC_VEC_T}test_api_computes_what_the_documentation_says[reduce_max_index]",
        f"{ASC_VEC_T}test_api_computes_what_the_documentation_says[whole_reduce_max_orders]"),
       (ASC_VECTOR, "if (kind != 0 && calIndex) put_index(&d[1], cur_idx.empty() ? 0u : cur_idx[0]);", ""),
       (ASC_VECTOR, "unsigned char* out = d + uint64_t(r) * uint64_t(dstRepStride) * unit_bytes;",
        "unsigned char* out = d + uint64_t(r) * uint64_t(dstRepStride) * sizeof(T);")),
    _g("ascendc-emu-vector-spans", "AscendC emulated: a vector API past its tensor's end (count or repeats) is out of "
       "range, naming the API and line",
       (f"{ASC_VEC_T}test_misuse_is_refused_with_the_api_and_line[count_past_tensor-1-words0]",
        f"{ASC_VEC_T}test_misuse_is_refused_with_the_api_and_line[repeat_past_tensor-1-words1]"),
       (ASC_VECTOR, "vec_issue(api, loc, {full(a, n), full(b, n)}, {full(dst, n)});",
        "vec_issue(api, loc, {full(a, n), full(b, n)}, {full(dst, n ? n - 1 : 0)});"),
       (ASC_VECTOR, "hi = at<T>(repeat - 1, uint32_t(l), blk, rep);", "hi = at<T>(0, uint32_t(l), blk, rep);")),
    _g("ascendc-emu-vector-alignment", "AscendC emulated: a vector operand not 32-byte aligned in the unified buffer is "
       "refused", f"{ASC_VEC_T}test_misuse_is_refused_with_the_api_and_line[unaligned_operand-5-words4]",
       (ASC_VECTOR, "    if (addr % bytes != 0)\n", "    if (false)\n")),
    _g("ascendc-emu-host-tiling-layout", "AscendC emulated: the kernel's GET_TILING_DATA struct has the host tiling "
       "class's fields in declaration order (mixed widths, arrays), so the kernel reads what the TilingFunc saved",
       (f"{ASC_HOST_T}test_the_kernel_tiling_struct_keeps_the_host_classes_fields_in_order",
        f"{ASC_HOST_T}test_the_probe_adds_bitwise_through_tiling_attrs_platform_and_workspace"),
       (ASC_GLUE, '                struct.fields.append(f"{parts[0]} {parts[1]}")',
        '                struct.fields.insert(0, f"{parts[0]} {parts[1]}")')),
    _g("ascendc-emu-host-schedules-compared", "AscendC emulated: a call whose outputs differ bitwise between core "
       "schedules (forward, reverse, seeded shuffle) is a race naming the output and the schedules",
       f"{ASC_HOST_T}test_schedules_that_disagree_are_a_race_naming_the_output_and_schedule",
       ("opforge/backends/ascendc/emulator/library.py",
        "        if a is None or a == b or atomics and _rounding_only(a, b):\n", "        if True:\n")),
    _g("ascendc-emu-host-opdef-dtype", "AscendC emulated: EXEC_NPU_CMD refuses a tensor whose dtype the OpDef does not "
       "declare (an operator declared float32 called with float16, or float16 for a float32 spec)",
       f"{ASC_HOST_T}test_torch_check_and_the_opdef_dtypes_refuse_with_their_words",
       (ASC_EXEC, "    if (p.types.empty() || std::find(p.types.begin(), p.types.end(), t) != p.types.end()) return;",
        "    return;")),
    _g("ascendc-emu-host-inplace", "AscendC emulated: what a call writes into its input tensors comes back into the "
       "caller's tensors (and a returned input is that tensor)",
       f"{ASC_HOST_T}test_in_place_results_tuples_and_scalars_come_back",
       ("opforge/backends/ascendc/emulator/library.py", "                original.copy_(after.tensor().view(original.shape))",
        "                pass")),
    _g("ascendc-emu-host-empty-poisoned", "AscendC emulated: output elements no core writes are at::empty's poison (NaN), "
       "never zero or stale: a tile loop one short or half the cores idle is a mismatch",
       (f"{ASC_HOST_T}test_a_tiling_key_that_skips_the_odd_cores_leaves_their_parts_poisoned",
        "tests/test_ascendc_backend.py::test_a_wrong_add_exits_1_with_the_mismatch[direct_add.py-for (int32_t i = 0; "
        "i < this->tileNum; i++)-for (int32_t i = 0; i < this->tileNum - 1; i++)]"),
       (ASC_TENSOR_H, 'return new_tensor(t.sizes(), o.has_dtype() ? o : t.options(), true, "at::empty_like");',
        'Tensor r = new_tensor(t.sizes(), o.has_dtype() ? o : t.options(), false, "at::empty_like"); '
        'std::memset(r.data_ptr(), 0, (size_t)r.nbytes()); return r;')),
    _g("ascendc-emu-host-unsupported-api", "AscendC emulated: a build error naming an AscendC API the static table "
       "knows and the emulator lacks is `unsupported` naming the API and line (exit 3), never a build failure",
       (f"{ASC_HOST_T}test_an_api_the_emulator_lacks_is_unsupported_and_named",
        "tests/test_ascendc_backend.py::test_the_cli_exits_3_naming_an_api_the_emulator_lacks"),
       ("opforge/backends/ascendc/emulator/build.py",
        '            return f"AscendC::{name}" if root in ("", "AscendC") else f"{scope}::{name}"', "            return None")),
    _g("ascendc-emu-host-launch-rewrite", "AscendC emulated: `<<<blockDim, l2ctrl, stream>>>` and ACLRT_LAUNCH_KERNEL "
       "launches run the kernel once per core through the emulator, on the source's lines",
       (f"{ASC_HOST_T}test_both_launch_forms_become_emulator_launches_on_their_lines",
        "tests/test_ascendc_backend.py::test_a_correct_add_verifies_emulated_without_cann[direct_add.py]"),
       ("opforge/backends/ascendc/emulator/translate.py",
        "    call = f'opforge_asc::launch(\"{name}\", {block_dim}, [&] {{ {name}({wrapped}); }})'",
        "    call = f'{name}({wrapped})'")),
    _g("ascendc-emu-host-dtype-columns", "AscendC emulated: a MultiKernelBench operator declaring several dtype columns "
       "runs each call on the build whose DTYPE_ macros are the call's column, and two emulated libraries in one "
       "process keep their own tables",
       f"{ASC_HOST_T}test_a_call_runs_the_build_of_its_dtype_column",
       ("opforge/backends/ascendc/emulator/build.py", '         "-fno-gnu-unique"]', "]")),
    _g("ascendc-emu-host-atomic-rounding", "AscendC emulated: schedules of a call that added atomically may differ "
       "by float rounding only; any larger difference is still a race",
       f"{ASC_HOST_T}test_atomic_float_sums_may_differ_by_rounding_between_schedules_and_no_more",
       ("opforge/backends/ascendc/emulator/library.py",
        "    return float((x - y).abs().max()) <= bound * scale if x.numel() else True",
        "    return True")),
    _g("ascendc-emu-host-no-shadow-headers", "AscendC emulated: a project file named like a header the emulator "
       "provides (kernel_operator.h) is refused, so a candidate cannot replace the model its kernel is checked by",
       f"{ASC_HOST_T}test_a_project_file_named_like_an_emulator_header_is_refused",
       ("opforge/backends/ascendc/emulator/build.py", "    if shadowed:  # a quoted include", "    if False:  # a quoted include")),
    _g("cpu-run-unsupported-unverifiable", "a CPU run whose every finding is `unsupported` (AscendC's cube unit met at "
       "run time) is not verifiable here (exit 3, level static), never a failure or a pass",
       "tests/test_ascendc_backend.py::test_the_cube_unit_met_at_run_time_is_unsupported_and_exit_3",
       ("opforge/harness/verify.py", '    if run["reasons"] and all(str(r).startswith("unsupported:") for r in run["reasons"]):',
        "    if False:")),
    _g("cpu-run-sizes-shrink", "A CPU run of any backend (AscendC with no NPU here) shrinks the spec's size constants: "
       "MultiKernelBench's add spec at its declared 4096 x 393216 loads, and the verdict records declared and used sizes",
       ("tests/test_ascendc_corpus.py::test_multikernelbench_add_spec_at_its_declared_size_shrinks_for_a_cpu_run",
        "tests/test_ascendc_corpus.py::test_the_verdict_on_the_declared_size_spec_records_the_sizes_used"),
       ("opforge/harness/verify.py", 'max_elements = CPU_MAX_ELEMENTS if hardware.device == "cpu" else None',
        "max_elements = None")),
    _g("engine-check-logprobs", "the engine check fails a library whose logprobs in vLLM move by more than 1e-3 from "
       "vLLM's own layers', even when every greedy token is the same",
       "tests/test_engine_vllm.py::test_logprobs_beyond_the_tolerance_fail_and_within_it_pass",
       ("opforge/engines/vllm_check.py", "    if not res.max_diff <= tol:\n", "    if False:\n")),
    _g("engine-check-tokens", "the engine check fails when vLLM with the library generates other greedy tokens",
       "tests/test_engine_vllm.py::test_a_different_greedy_token_fails",
       ("opforge/engines/vllm_check.py", '    res.tokens_match = plugin["tokens"] == plain["tokens"]\n',
        "    res.tokens_match = True\n")),
    _g("engine-check-kernels-ran", "the engine check fails when an op that replaced a layer of the model never ran "
       "its kernel in vLLM's worker (fell back, or was never called)",
       "tests/test_engine_vllm.py::test_a_replaced_op_that_never_ran_its_kernel_fails",
       ("opforge/engines/vllm_check.py", "        if row.expected and not row.calls:\n", "        if False:\n")),
    _g("engine-check-not-vacuous", "the engine check fails a library whose plugin replaced no layer of the model "
       "(identical tokens from vLLM's own code prove nothing)",
       "tests/test_engine_vllm.py::test_a_plugin_that_replaced_nothing_fails_instead_of_passing_vacuously",
       ("opforge/engines/vllm_check.py", "    elif not any(r.expected for r in res.rows):\n", "    elif False:\n")),
    _g("engine-check-baseline", "the engine check's baseline is vLLM with every plugin off (VLLM_PLUGINS=\"\"), "
       "in a fresh process: a real vLLM run of the committed library passes against it",
       "tests/test_engine_vllm.py::test_vllm_layers_run_the_committed_kernels_and_change_nothing",
       ("opforge/engines/vllm_check.py", '        env["VLLM_PLUGINS"] = ""\n', '        env.pop("VLLM_PLUGINS", None)\n')),
    _g("spec-sizes-bound-together", "Size constants bound together (`batch_size, dim = 4096, 393216`, `M = N = 64`) shrink "
       "for a CPU run like single ones, and rewriting one keeps the others bound",
       ("tests/test_ascendc_corpus.py::test_size_constants_bound_together_shrink_too",),
       ("opforge/harness/sizes.py", "        if len(names) == len(values) and all(isinstance(n, ast.Name) for n in names):\n",
        "        if False:\n"),
       ("opforge/harness/sizes.py", "        return [(t.id, stmt.value) for t in stmt.targets]\n",
        "        return [(t.id, stmt.value) for t in stmt.targets] if len(stmt.targets) == 1 else None\n")),
    _g("inplace-returns-its-arguments", "an in-place op whose reference also returns what it updated (both caches, "
       "one of them, or what index_copy_ returns) is drafted by the expert returning those very arguments, and verifies",
       (f"{HT}test_lowering_finds_the_returned_arguments_in_every_convention",
        f"{HT}test_in_place_write_returning_its_caches_verifies_and_an_unreturned_alias_is_refused"),
       ("opforge/codegen/lower.py", "    returned = {i: mutated[v.name] for i, v in enumerate(user)",
        "    returned = {}\n    _ = {i: mutated[v.name] for i, v in enumerate(user)")),
    _g("inplace-alias-only-where-returned", "a candidate may return an input's memory only where the reference returns "
       "that in-place argument itself at that position; any other output aliasing an input is refused",
       f"{HT}test_in_place_write_returning_its_caches_verifies_and_an_unreturned_alias_is_refused",
       ("opforge/harness/judge.py", "            material.aliases = ref.aliases(model, base.inputs)\n",
        "            material.aliases = [[k, i] for k in range(8) for i in ref.mutates]\n")),
    _g("index-outputs-by-selected-values", "an index output (topk, sort, argmax, max) that differs from the reference's "
       "is compared by the values it selects in the op's source: a router kernel passes the x1e3 case's ties, counted "
       "in the verdict",
       (f"{HT}test_ties_in_a_saturated_router_pass_and_wrong_routing_fails",
        f"{HT}test_router_kernel_verifies_through_its_x1000_ties_and_a_wrong_id_kernel_fails"),
       ("opforge/harness/evidence.py", "    if not mismatched or reference is None:\n        return 0\n",
        "    if True:\n        return 0\n")),
    _g("index-selected-values-strict", "indices that select other values than the reference's fail (the expert next "
       "door, a wrong-id kernel), and so do repeated indices where the reference's are distinct",
       (f"{HT}test_ties_in_a_saturated_router_pass_and_wrong_routing_fails",
        f"{HT}test_router_kernel_verifies_through_its_x1000_ties_and_a_wrong_id_kernel_fails"),
       ("opforge/harness/selection.py", "    if not bool(same.all()):\n", "    if False:\n")),
    _g("index-selected-values-distinct", "repeated indices that select tied values still fail where the reference's "
       "are distinct (one zero-probability expert routed twice)",
       f"{HT}test_ties_in_a_saturated_router_pass_and_wrong_routing_fails",
       ("opforge/harness/selection.py", "    if ids.shape[-1] > 1 and _distinct(want) and not _distinct(ids):\n",
        "    if False:\n")),
    _g("expert-item-loop-twin", "a reference that reads its sizes from the data (`int(seq_lens[b].item())` loops), "
       "which torch.export cannot trace, is drafted from a traceable twin returning the same, and verifies against the loop",
       f"{HT}test_an_item_loop_decode_is_drafted_from_its_traceable_twin_and_verifies[paged_decode_item_loop-paged_decode_attention.py]",
       ("opforge/agents/drafters/expert.py",
        "            found = twins.find(request.spec_source, request.sizes) if twins.data_dependent(str(exc)) else None\n",
        "            found = None\n")),
    _g("expert-twin-must-agree", "a twin is taken only where it returns the same outputs and in-place arguments as the "
       "reference on every input list; a loop computing something else is refused with the reason",
       f"{HT}test_no_twin_for_a_loop_that_computes_something_else_or_a_layout_none_traces",
       ("opforge/codegen/twins.py", "            if any(r.problem for r in reports):\n", "            if False:\n")),
    _g("expert-topk-unused-argument", "a row top-k whose reference takes an argument it never reads (SGLang's router "
       "takes the hidden states) is generated and verifies; an argument it reads still has to fit the row",
       f"{HT}test_a_router_taking_hidden_states_it_never_reads_verifies",
       ("opforge/codegen/families/sort/topk.py", "        if not node.users:  # an argument the op takes and never reads",
        "        if False:  # an argument the op takes and never reads")),
    _g("expert-export-sizes-keep-relations", "the expert exports a spec at shrunk sizes that keep which size constants "
       "divide which and stay larger (GroupNorm's 64 groups of 4096 channels are not exported as 48 groups of one "
       "channel each, whose program wrote the norm's bias); KernelBench level-2 style files of every pattern family "
       "are drafted and match the reference under the interpreter, a broken hand-off does not",
       ("tests/test_expert_kernelbench_l2.py::test_export_sizes_keep_divisibility_and_order_between_size_constants",
        "tests/test_expert_kernelbench_l2.py::test_every_level2_file_is_drafted_right_or_refused_with_a_reason"),
       ("opforge/codegen/exportsizes.py", "        if first % step == 0 and first > floor:\n", "        if True:\n")),
    _g("expert-split-at-harness-sizes", "a split of a dim the export bakes (GroupNorm's group count) is lowered again "
       "at the harness's sizes, so the program splits by the count the harness's model has",
       "tests/test_expert_kernelbench_l2.py::test_every_level2_file_is_drafted_right_or_refused_with_a_reason",
       ("opforge/codegen/lower.py", " and splits(program.graph):", " and False:")),
    _g("expert-batchnorm-batch-stats", "BatchNorm on the batch's statistics (no running statistics) is lowered to a "
       "reduction over every dim but the channels and drafted",
       "tests/test_expert_kernelbench_l2.py::test_every_level2_file_is_drafted_right_or_refused_with_a_reason",
       ("opforge/codegen/lower.py", "    table[aten._native_batch_norm_legit.no_stats] = _batch_norm_batch_stats\n", "")),
    _g("expert-size1-reduction-identity", "a reduction over dims of size 1 (a sum of a keepdim sum, as KernelBench's "
       "Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp writes) is its input, not a sum over the row's columns",
       "tests/test_expert_kernelbench_l2.py::test_every_level2_file_is_drafted_right_or_refused_with_a_reason",
       ("opforge/codegen/lower.py", "    size1_reductions(program.graph)\n", "")),
    _g("reference-train-mode", "a spec is judged in KernelBench's mode, the Model as constructed (training: "
       "BatchNorm on the batch's statistics), unless OPFORGE['mode'] says eval; a kernel folding the running "
       "statistics into a training-mode spec fails",
       ("tests/test_mode.py::test_a_kernelbench_spec_is_judged_in_training_mode_with_dropout_off",
        "tests/test_mode.py::test_an_inference_spec_says_eval_and_is_judged_on_the_running_statistics"),
       ("opforge/harness/mode.py", '        model.train(mode == "train")', "        model.train(False)")),
    _g("reference-dropout-off", "dropout modules are off in the reference and the candidate's model in either mode",
       ("tests/test_mode.py::test_a_kernelbench_spec_is_judged_in_training_mode_with_dropout_off",
        "tests/test_mode.py::test_the_candidates_model_runs_in_the_references_mode"),
       ("opforge/harness/mode.py", "                sub.eval()\n", "                pass\n")),
    _g("reference-random-refused", "a reference whose outputs change with the random generator's state (F.dropout "
       "with training=True) is refused as the spec's error with its reason, not judged against one draw",
       "tests/test_mode.py::test_a_random_reference_is_refused_with_its_reason_and_a_seeded_one_is_not",
       ("opforge/harness/judge.py", "if base is not None and (why := randomness(", "if False and (why := randomness(")),
    _g("candidate-mode-follows", "the candidate's ModelNew runs in the reference's mode (its `self.training` and "
       "dropout modules as the reference's)",
       "tests/test_mode.py::test_the_candidates_model_runs_in_the_references_mode",
       ("opforge/harness/checker.py", 'return set_mode(new.to(device), entry["mode"])', "return new.to(device).eval()")),
    _g("expert-traces-spec-mode", "the expert traces the reference in the spec's mode, so a training-mode BatchNorm "
       "is drafted on the batch's statistics (without the running-statistics update no output shows)",
       "tests/test_expert_kernelbench_l2.py::test_every_level2_file_is_drafted_right_or_refused_with_a_reason",
       ("opforge/harness/mode.py", "    set_mode(model, mode)\n    if mode", "    set_mode(model, \"eval\")\n    if mode")),
    _g("spec-mode-validated", "a spec's OPFORGE['mode'] other than train/eval is one line and exit 2",
       "tests/test_mode.py::test_a_bad_mode_is_one_line_and_exit_2",
       ("opforge/harness/mode.py", "    if value not in MODES:", "    if False:")),
    _g("cpu-sizing-below-floor-only-if-it-pays", "below the size floor a CPU run's constant is halved only "
       "where that cuts the estimated run by a tenth or more: a run whose cost is a fixed-size variant keeps "
       "its main case at the floor instead of 2 x 2",
       "tests/test_cost.py::test_below_the_floor_only_a_halving_that_cuts_the_estimate_is_taken",
       ("opforge/harness/spec.py", "    return now is None or then is None or then <= 0.9 * now\n",
        "    return True\n")),
    _g("conv-interpreter-int64-k-step", "the expert's implicit-GEMM convolution does its K-step index math in int64, "
       "so under Triton's CPU interpreter a K step runs no int32 arithmetic (each followed by an overflow check) "
       "and the checks stay the program's set-up however many K steps run (#36)",
       "tests/test_conv_interpreter_cost.py::test_conv_kernels_are_right_and_cheap_per_program_and_k_step",
       ("opforge/backends/triton/emit/conv_kernel.py", "        rk = k + tl.arange(0, BLOCK_K).to(tl.int64)\n",
        "        rk = k + tl.arange(0, BLOCK_K)\n")),
    _g("conv-direct-narrow-groups", "a depthwise (narrow-group) convolution is drafted as a direct kernel whose "
       "programs span the groups (one program for 32 groups on a tiny shape, no tl.dot), not one implicit-GEMM "
       "program per group (#36)",
       "tests/test_conv_interpreter_cost.py::test_conv_kernels_are_right_and_cheap_per_program_and_k_step",
       ("opforge/codegen/families/conv/plan.py", "DIRECT_BELOW = 16 ", "DIRECT_BELOW = 0 ")),
    _g("conv-transposed-grouped-weight", "a grouped transposed convolution reads group g's weight rows (the weight is "
       "[C_in, C_out / groups, ...]) and the group's own columns, so it matches the reference",
       "tests/test_conv_interpreter_cost.py::test_conv_kernels_are_right_and_cheap_per_program_and_k_step",
       ("opforge/backends/triton/emit/conv_kernel.py",
        '    w_n = ("    w_n = rn.to(tl.int64) * stride_wc + (g * cin_g).to(tl.int64) * stride_wn" if h.transposed\n',
        '    w_n = ("    w_n = co * stride_wc" if h.transposed\n')),
    _g("conv-padded-side-bounds", "a forward convolution's gather masks taps that fall in the padding on each "
       "padded side (the bounds check kept only where padding is), so a padded conv matches the reference",
       "tests/test_conv_interpreter_cost.py::test_conv_kernels_are_right_and_cheap_per_program_and_k_step",
       ("opforge/backends/triton/emit/conv_kernel.py",
        '        oks += [f"(e_{d}[None, :] < hi_{d}[:, None])"] * (h.pad_hi[d] > 0 or h.transposed)\n', "")),
    _g("conv-transposed-stride-phases", "a strided transposed convolution is launched once per stride phase, each "
       "gathering only the taps that land on its outputs (every stride/gcd(stride, dilation)-th from its first), so "
       "it matches the reference with no (row, tap) pair masked for falling between inputs (#36)",
       "tests/test_conv_interpreter_cost.py::test_conv_kernels_are_right_and_cheap_per_program_and_k_step",
       ("opforge/backends/triton/emit/conv.py", "        step = s // math.gcd(s, dil)\n", "        step = 1\n")),
    _g("conv-3d-first-tile-compiles-fast", "a 3-D convolution is first verified with a 256 x 32 gather tile (its "
       "sm_90 build took 28-42 s at 512 x 64), 2-D ones keep 512 x 64 (#36)",
       "tests/test_expert_conv.py::test_a_3d_conv_starts_at_a_gather_tile_whose_gpu_compile_takes_seconds",
       ("opforge/backends/triton/emit/conv.py", "    block_m = 256 if rank >= 3 or block_n > 32 else 512\n",
        "    block_m = 256 if block_n > 32 else 512\n")),
    _g("cpu-sizing-below-floor-keeps-shape-facts", "a CPU run sized by cost halves sizes below 16 only while the spec "
       "keeps the shape facts of its declared sizes (no dim of 1 that was wider, a conv's input spanning its kernel, "
       "the same ops), so a pooled 3-D conv keeps the depth its pooling needs (#36)",
       "tests/test_cost.py::test_a_3d_conv_over_budget_at_the_floor_shrinks_below_it_keeping_its_declared_shape_facts",
       ("opforge/harness/spec.py", "                if lost:\n                    raise SpecError(lost)\n",
        "                if False:\n                    raise SpecError(lost)\n")),
    _g("cpu-sizing-keeps-groups-of-two", "sizing never leaves a GroupNorm group with one channel where the declared "
       "sizes give it more (one channel normalises to the bias: a kernel computing x - x passed), at any size (#36)",
       "tests/test_cost.py::test_sizing_keeps_more_than_one_channel_per_group_where_the_declared_sizes_have_it",
       ("opforge/harness/shapefacts.py", "            spans = (args[4] // args[6] >= 2,)\n", "            spans = ()\n")),
    _g("cpu-cost-conv-phase-steps", "a strided transposed convolution's CPU cost counts each stride phase's own taps "
       "(as its kernel runs them), not every tap at every output (#36)",
       "tests/test_cost.py::test_a_strided_transposed_conv_is_costed_by_its_phases_taps_not_every_tap",
       ("opforge/harness/cost.py", "stride[d], pad[d], dil[d]) if transposed else [(out[2 + d], w[2 + d])]",
        "stride[d], pad[d], dil[d]) if False else [(out[2 + d], w[2 + d])]")),
    _g("window-interpreter-wide-block", "the expert's pooling kernel is first tried with wide programs (>= 1024 "
       "outputs each): Triton's CPU interpreter pays per program, and a real KernelBench 4x4 max pool timed out at "
       "256 lanes (21 s per call; 2 s at 2048) (#36)",
       "tests/test_window_interpreter_cost.py::test_pool_kernels_are_right_with_few_programs_and_bounds_only_where_a_window_leaves",
       ("opforge/backends/triton/emit/window.py", 'SPACE = ({"BLOCK": 2048, "num_warps": 8}, ',
        'SPACE = ({"BLOCK": 256, "num_warps": 4}, ')),
    _g("window-bounds-only-where-clipped", "a pooling kernel checks a spatial dim's bounds only where a window can "
       "leave the input (padding or ceil_mode), at the loop level that moves that dim: an unpadded pool's taps "
       "carry no bounds tile ops",
       "tests/test_window_interpreter_cost.py::test_pool_kernels_are_right_with_few_programs_and_bounds_only_where_a_window_leaves",
       ("opforge/backends/triton/emit/window.py", "        clipped = pool.padding[pad] > 0 or pool.ceil_mode\n",
        "        clipped = True\n")),
    _g("window-ceil-mode-bounds", "a ceil_mode pool without padding keeps the bounds check its last window needs "
       "(that window runs past the input's end), so it matches the reference",
       "tests/test_window_interpreter_cost.py::test_pool_kernels_are_right_with_few_programs_and_bounds_only_where_a_window_leaves",
       ("opforge/backends/triton/emit/window.py", "        clipped = pool.padding[pad] > 0 or pool.ceil_mode\n",
        "        clipped = pool.padding[pad] > 0\n")),
    _g("reward-server-backpressure-503", "the reward server's queue is bounded: a batch that would overfill it is "
       "answered 503 with Retry-After and nothing of it queued; the client's retry is scored (#37)",
       "tests/test_reward_server.py::test_a_full_queue_answers_503_with_retry_after_and_loses_nothing",
       ("opforge/reward/pool.py", "if self.stopping or (self.pending and len(self.pending) + len(reqs) > self.capacity):",
        "if self.stopping:")),
    _g("reward-server-dead-worker-answered", "a reward worker process that dies under a request has that request "
       "answered with an error JSON, not a hang, and the batch's other results come back (#37)",
       "tests/test_reward_server.py::test_a_worker_killed_under_a_hanging_candidate_costs_only_its_own_request",
       ("opforge/reward/pool.py", "            self._answer(worker.job, error_result(worker.job.req, message))",
        "            pass")),
    _g("reward-server-dead-worker-replaced", "a reward worker process that died is replaced: the server keeps its "
       "worker count (#37)",
       "tests/test_reward_server.py::test_a_worker_killed_under_a_hanging_candidate_costs_only_its_own_request",
       ("opforge/reward/pool.py", "        self.slots[i] = self._start()", "        self.slots[i] = worker")),
    _g("reward-server-request-order", "the reward server answers a batch in request order, whatever order its "
       "workers finish in (#37)",
       "tests/test_reward_server.py::test_concurrent_batches_come_back_in_order_with_their_tiers",
       ("opforge/reward/server.py", '{"results": [job.result for job in jobs]}',
        '{"results": [job.result for job in sorted(jobs, key=lambda j: str(j.result.get("tier")))]}')),
    _g("reward-gym-feedback-next-prompt", "the Gymnasium environment's next observation is the prompt with the "
       "previous answer and its verdict's feedback (the harness's reasons and numbers), as the agent loop's repair "
       "round sends it (#37)",
       "tests/test_reward_gym.py::test_next_observation_carries_the_verdict_feedback",
       ("opforge/reward/gym_env.py", "        episode.attempts.append(attempt_of(action, scored))\n",
        '        episode.attempts.append(replace(attempt_of(action, scored), feedback=""))\n')),
    _g("reward-gym-seed-replays", "an episode's seed fixes every turn's scoring seed, so the same episode seed and "
       "the same kernel give the same reward JSON (#37)",
       "tests/test_reward_gym.py::test_the_episode_seed_replays_the_rewards",
       ("opforge/reward/gym_env.py", "        seed = int(self.np_random.integers(0, SEED_BOUND))",
        "        seed = None")),
    _g("reward-gym-terminates-on-correct", "a correct answer ends the Gymnasium episode (terminated), a wrong one "
       "does not (#37)",
       "tests/test_reward_gym.py::test_a_correct_answer_terminates_the_episode",
       ("opforge/reward/gym_env.py", '        terminated = tier == "correct" or (', "        terminated = (")),
    _g("reward-gym-cheat-ends", "a cheating answer ends the Gymnasium episode at -1 (its feedback would teach which "
       "rule caught it), unless end_on_cheat=False (#37)",
       "tests/test_reward_gym.py::test_a_cheat_ends_the_episode_unless_told_otherwise",
       ("opforge/reward/gym_env.py", '(self.end_on_cheat and tier == "cheat")', "False")),
    _g("reward-gym-unscored-truncates", "an answer nothing here could check numerically gets no guessed reward: 0.0 "
       "with info scored=False, and the episode is truncated (#37)",
       "tests/test_reward_gym.py::test_max_turns_truncates_and_an_unscored_verdict_is_no_number",
       ("opforge/reward/gym_env.py", "(tier is None or len(episode.attempts)", "(len(episode.attempts)")),
    _g("reward-static-cheat-rule-is-cheat", "a static rule that guards fairness or the sandbox (forbidden imports, "
       "patched modules, low precision) gives the reward's cheat tier (-1), not static (#37)",
       "tests/test_reward_tiers.py::test_a_static_cheat_rule_is_a_cheat_not_a_static_refusal",
       ("opforge/reward/tiers.py", "    if conduct or static_cheats or (check == \"anticheat\" and not fired):\n",
        "    if conduct or (check == \"anticheat\" and not fired):\n")),
    _g("reward-build-cheat-rule-is-cheat", "a cheat rule the build reports (tf32 in the AOT build's PTX) is the cheat "
       "tier, not build (#37)",
       "tests/test_reward_tiers.py::test_a_cheat_rule_found_by_the_build_is_a_cheat_not_a_build_failure",
       ("opforge/reward/tiers.py", "                     ] if step is not None else []",
        "                     ] if step == \"static\" else []")),
    _g("reward-backend-cheat-rules", "a backend's own static rules that guard fairness (Triton's interpreter-detection, "
       "AscendC's Python-side compute) are the cheat tier through its plugin's cheat_rules (#37)",
       ("tests/test_reward_tiers.py::test_each_backends_own_cheat_rules",),
       ("opforge/backends/triton/__init__.py", "    cheat_rules = frozenset({\"interpreter-detection\"})\n", ""),
       ("opforge/backends/ascendc/__init__.py", "    cheat_rules = frozenset({\"ascendc-python\"})\n", "")),
    _g("reward-anticheat-over-compare", "an anti-cheat rule on the code's conduct (PyTorch computing, aliasing, patching...) is the cheat "
       "tier even when wrong values failed the comparison first (#37)",
       "tests/test_reward_tiers.py::test_an_anticheat_failure_is_a_cheat_even_when_the_failed_check_is_compare",
       ("opforge/reward/tiers.py", "    conduct = [name for name in fired if name not in VALUE_RULES or not values_wrong]\n",
        "    conduct = []\n")),
    _g("reward-value-rules-beside-wrong-values", "an anti-cheat rule on the output's values (constant, partial, "
       "replayed output) beside values that failed the comparison is `wrong` with no credit, not `cheat`: a kernel "
       "with a masking bug is not scored below one that never answered; beside values that compared right it is "
       "`cheat` (#37)",
       "tests/test_reward_tiers.py::test_an_anticheat_failure_is_a_cheat_even_when_the_failed_check_is_compare",
       ("opforge/reward/tiers.py", "    values_wrong = \"mismatch\" in codes or check == \"compare\"\n",
        "    values_wrong = False\n")),
    _g("reward-partial-credit-bounded", "partial credit scales with the fraction of cases passed inside wrong's band "
       "(0.3-0.6), a case not run counting as failed, and never reaches correct's 1.0 (#37)",
       "tests/test_reward_tiers.py::test_partial_credit_stays_below_correct",
       ("opforge/reward/tiers.py", "    reward = low + (high - low) * (fraction or 0.0) if tier",
        "    reward = low + (fraction or 0.0) if tier"),
       ("opforge/reward/tiers.py", "    return passed, len(rows) + (skipped if", "    return passed, len(rows) + 0 * (skipped if")),
    _g("reward-speed-device-only", "the reward's speed term comes only from a device run (level device/profiled); a "
       "CPU run's correct kernel gets 1.0 whatever its timings say (#37)",
       "tests/test_reward_tiers.py::test_the_speed_term_comes_only_from_a_device_run",
       ("opforge/reward/tiers.py", "if verdict.get(\"level\") in (\"device\", \"profiled\") else None",
        "if verdict.get(\"level\") else None")),
    _g("reward-no-model-new-unusable", "a file with no ModelNew is unusable (0.0), like one that does not parse (#37)",
       "tests/test_reward_tiers.py::test_broken_code_tiers",
       ("opforge/reward/tiers.py", 'UNUSABLE_CODES = ("syntax-error", "no-model-new")', 'UNUSABLE_CODES = ("syntax-error",)')),
    _g("reward-corpus-never-above-wrong", "no exploit of the corpus (tests/data/exploits.json) scores above wrong: "
       "with a run-time guard gone, the exploit it catches would (#37)",
       "tests/test_reward_corpus.py::test_an_exploit_never_scores_above_wrong[triton-torch-compute-hostile_pre_run_hook]",
       ("opforge/harness/evidence.py", '    if report.get("compute"):\n', "    if False:\n")),
    _g("reward-verl-ground-truth-carries-spec", "a verl dataset row's ground truth carries the spec's whole source, so "
       "the reward function scores an answer with no spec file on disk (#37)",
       "tests/test_reward_verl.py::test_a_batch_is_scored_from_the_ground_truth_alone",
       ("opforge/reward/score.py", 'return {"spec": self.spec_source, "op"', 'return {"spec": self.spec_sha256, "op"')),
    _g("reward-verl-extracts-kernel", "verl's reward function extracts the kernel from the model's reply (a markdown "
       "answer with prose around the fenced code), it does not score the reply as a file (#37)",
       "tests/test_reward_verl.py::test_a_batch_is_scored_from_the_ground_truth_alone",
       ("opforge/reward/verl.py", "return scorer().score(task, answer, seed=seed)",
        "return scorer().score(task, answer, seed=seed, raw=True)")),
    _g("reward-verl-same-keys-no-none", "verl's reward function returns the same keys for every response and no None "
       "value (verl appends each key per response and averages the numbers) (#37)",
       "tests/test_reward_verl.py::test_a_batch_is_scored_from_the_ground_truth_alone",
       ("opforge/reward/verl.py", '"speed_term": _number(reward.get("speed_term"), 0.0)',
        '"speed_term": reward.get("speed_term")')),
    _g("reward-verl-seed-from-row", "verl's reward function scores with extra_info's seed when the row has one and "
       "returns it (#37)",
       "tests/test_reward_verl.py::test_a_batch_is_scored_from_the_ground_truth_alone",
       ("opforge/reward/verl.py", "seeds = [_seed(info) for info in extra_infos]",
        "seeds = [None for info in extra_infos]")),
    _g("reward-verl-bad-task-zero", "a ground truth that is no task gives verl an unscored 0.0 with the reason, not an "
       "exception that stops training (#37)",
       "tests/test_reward_verl.py::test_a_bad_ground_truth_is_an_unscored_zero_not_a_crash",
       ("opforge/reward/verl.py", "    except OpforgeError as exc:\n        print(",
        "    except KeyError as exc:\n        print(")),
    _g("reward-verl-server-contract", "with OPFORGE_REWARD_URL the reward function sends the batch to the reward "
       "server (task, answer, seed per request) and maps its results back in order (#37)",
       "tests/test_reward_verl.py::test_with_a_reward_url_the_batch_goes_to_the_server_in_order",
       ("opforge/reward/verl.py", '"seed": seed}))', '"seed": None}))')),
    _g("reward-dataset-skips-non-spec", "reward-dataset reports and skips a file that is no KernelBench-format spec "
       "(no Model or get_inputs) instead of writing a task nobody can score (#37)",
       "tests/test_reward_dataset.py::test_rows_are_verls_format_and_read_back_the_same",
       ("opforge/reward/dataset.py", 'lacking = [name for name in ("Model", "get_inputs") if name not in names]',
        "lacking = []")),
    _g("reward-dataset-parquet-nested", "reward-dataset's Parquet keeps the prompt's messages, reward_model and "
       "extra_info as nested fields that read back equal to the rows (#37)",
       "tests/test_reward_dataset.py::test_rows_are_verls_format_and_read_back_the_same",
       ("opforge/reward/dataset.py", "pq.write_table(pa.Table.from_pylist(records), out)",
        "pq.write_table(pa.Table.from_pylist([{k: v if isinstance(v, str) else json.dumps(v) "
        "for k, v in r.items()} for r in records]), out)")),
    _g("reward-prompt-no-own-answer", "a task's prompt never holds its own answer: the known-good kernel of the same "
       "op, which retrieval ranks first, is left out of its knowledge (#37)",
       "tests/test_reward_dataset.py::test_a_prompt_never_holds_the_tasks_own_answer",
       ("opforge/reward/prompt.py", 'if item.kind == "note" or item.score < SAME_OP_BONUS', "if True")),
    _g("reward-trajectories-carry-reward", "each exported trajectory row carries the reward (tier, number, why) of its "
       "candidate's latest stored verdict (#37)",
       "tests/test_reward_dataset.py::test_trajectories_carry_the_reward_of_their_latest_verdict",
       ("opforge/reward/dataset.py", '{"reward": verdict_reward(verdict, backend)}', '{"reward": verdict_reward(None, backend)}')),
    _g("reward-export-dataset-rewards", "opforge export-dataset writes the trajectory rows with their rewards (#37)",
       "tests/test_reward_dataset.py::test_trajectories_carry_the_reward_of_their_latest_verdict",
       ("opforge/reward/commands.py", "rows = dataset.trajectories(reg, args.op)", "rows = reg.trajectories(args.op)")),
    _g("reward-verl-server-busy-retried", "the reward function waits out a reward server's full queue (503 with "
       "Retry-After) instead of giving the batch error rewards (#37)",
       "tests/test_reward_verl.py::test_with_a_reward_url_the_batch_goes_to_the_server_in_order",
       ("opforge/reward/verl.py", 'if exc.code == 503 else None', 'if exc.code == 0 else None')),
)


def mapped_files() -> list[str]:
    """The test files the map names, for collecting their node ids."""
    return sorted({t.split("::", 1)[0] for row in GUARANTEES for t in row.tests})
