"""Hostile CUDA candidates (tests/data/kernels/hostile_cuda_*.py): what a cheating or sloppy kernel
author tries against the CUDA backend, each rejected by the mechanism meant for it.

Three tables, cheapest first: the static check (no compiler), opforge's CPU emulator called
directly (a g++ build of the candidate's CUDA_SRC each), and a few end-to-end verdicts through the
sandboxed worker. Nothing is cached across tests: every emulator build gets its own directory.

Known gaps are in GAPS, marked xfail(strict=True): each says what a correct verdict needs, and
passes (so fails as XPASS) once that defence exists; remove its mark then.
"""
from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from conftest import KERNELS, ROOT, TINY
from opforge.harness.backends.cuda import emulator
from opforge.harness.backends.cuda.runtime import CudaError, load_cuda
from opforge.harness.backends.cuda.static import check_cuda_candidate
from opforge.harness.verify import VerifyOptions, verify


def source_of(kernel: str) -> str:
    return (KERNELS / f"hostile_cuda_{kernel}.py").read_text()


def static_reasons(kernel: str) -> list[str]:
    return check_cuda_candidate(source_of(kernel), float32_spec=True).reasons


def cuda_src(kernel: str) -> str:
    (source, _), = check_cuda_candidate(source_of(kernel), float32_spec=True).cuda_sources
    return source


def has(reasons: list[str], code: str | tuple[str, ...], text: str) -> bool:
    codes = (code,) if isinstance(code, str) else code
    return any(r.split(":", 1)[0] in codes and text in r for r in reasons)


# -- 1. the static check: kernel, reason code, text the reason must contain -------------------------
STATIC = [
    ("host_deref", "cuda-host-compute", "unary *"),                      # *(row + c) on the host
    ("host_helper", "cuda-host-compute", "row_softmax: indexes memory"),  # a __host__ __device__ helper
    ("host_macro", "cuda-host-compute", "indexes memory in host code (x[...])"),  # AT(p, i) p[i]
    ("host_paste", "cuda-preprocessor", "token pasting"),                # mem##cpy
    ("host_builtin", "cuda-host-compute", "__builtin_memcpy"),
    ("extern_libc", "cuda-forbidden-call", "system"),                    # declared without an include
    ("include_tricks", "cuda-include", "computed include"),             # #define H </etc/passwd>
    ("include_tricks", "cuda-pragma", "_Pragma"),
    ("embed", "cuda-preprocessor", "#embed"),
    ("inline_method", "cuda-host-compute", ".softmax()"),                # behind a macro
    ("inline_lambda", "cuda-host-compute", ".exp()"),
    ("inline_index", "cuda-host-compute", "indexes memory"),             # x.data_ptr<float>()[0]
    ("inline_flags", "cuda-format", "'-DEVIL=1'"),
    ("inline_flags", "cuda-format", "'-lcublas'"),
]


@pytest.mark.parametrize("kernel, code, text", STATIC, ids=[f"{k}-{c}" for k, c, _ in STATIC])
def test_static_check_rejects(kernel, code, text):
    reasons = static_reasons(kernel)
    assert has(reasons, code, text), reasons


def test_inline_asm_spelled_dunder_asm_volatile_is_unsupported():
    """`__asm__ volatile` passes the static check (device asm is legal CUDA) but the emulator
    refuses to guess: the CPU run is unsupported (exit 3), never a pass."""
    assert not static_reasons("asm_spellings")
    features = emulator.unsupported_features(cuda_src("asm_spellings"))
    assert any("asm" in f for f in features), features


def test_inline_asm_behind_a_macro_is_unsupported_too():
    """`#define OP_ASM __asm__` hides the keyword from a reader of the raw text: the emulator must
    see it after preprocessing, else g++ compiles it (as x86 asm) or fails on PTX constraints."""
    assert not static_reasons("asm_macro")
    features = emulator.unsupported_features(cuda_src("asm_macro"))
    assert any("asm" in f for f in features), features


# -- 2. the emulator, called directly: kernel, error class, text -------------------------------------
EMULATED = [
    ("block_order", emulator.RaceError, "reverse differs from forward"),   # block b reads block b-1
    ("warp_race", emulator.RaceError, "differs from forward"),             # no barrier after lane 0
    ("oob_before", emulator.OutOfBoundsError, "before the start of argument y"),
    ("big_block", emulator.EmulatorError, "2048 threads"),
    ("zero_grid", emulator.EmulatorError, "grid"),
    ("huge_dynamic_smem", emulator.EmulatorError, "dynamic shared memory"),
    ("mutate_input", emulator.EmulatorError, "const-write"),               # const_cast<float*>(x)
    ("oob_read", emulator.OutOfBoundsError, "past the end of argument x"),  # unmapped fence after x
    ("oob_far_write", emulator.OutOfBoundsError, "400000 bytes past the end of argument y"),
    ("host_static_buffer", emulator.EmulatorError, "outside every buffer"),  # a host array as output
    ("divergent_sync", emulator.DeadlockError, "__syncthreads"),           # two barrier call sites
]


def emulate(kernel: str, tmp_path, **call) -> None:
    library = emulator.EmulatedLibrary.build(cuda_src(kernel), cache_dir=str(tmp_path))
    x = torch.randn(16, 40)
    y = torch.full_like(x, float("nan"))
    library.call("softmax_launch", [x, y, 16, 40], **call)


@pytest.mark.parametrize("kernel, error, text", EMULATED, ids=[k for k, *_ in EMULATED])
def test_emulator_rejects(kernel, error, text, tmp_path):
    with pytest.raises(error) as caught:
        emulate(kernel, tmp_path)
    assert text in str(caught.value), caught.value


def test_an_endless_kernel_meets_the_step_limit(tmp_path):
    with pytest.raises(emulator.StepLimitError):
        emulate("endless_kernel", tmp_path, time_limit_s=1.0)


def emulate_apart(kernel: str, tmp_path, timeout: float) -> str:
    """emulate() in a subprocess, for kernels whose regression would hang: its stderr, or "" when it
    ran past `timeout` seconds."""
    script = (f"import torch\nfrom opforge.harness.backends.cuda.emulator import EmulatedLibrary\n"
              f"lib = EmulatedLibrary.build({cuda_src(kernel)!r}, cache_dir={str(tmp_path)!r})\n"
              "x = torch.randn(16, 40)\n"
              "lib.call('softmax_launch', [x, torch.empty_like(x), 16, 40], time_limit_s=1.0)\n")
    try:
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=timeout, cwd=ROOT).stderr
    except subprocess.TimeoutExpired:
        return ""


def test_an_endless_launcher_meets_the_time_limit(tmp_path):
    """`for (;;) kernel<<<...>>>()` passes the host-code rule (its loop launches): the CPU-time
    limit must cover the whole launcher call, not each launch."""
    stderr = emulate_apart("endless_launcher", tmp_path, timeout=20)
    assert "step-limit" in stderr, stderr[-500:] or "ran past 20 s"


def test_a_launcher_given_a_float64_tensor_is_refused_before_anything_runs():
    lib = load_cuda(cuda_src("wrong_dtype"))
    x = torch.randn(4, 8, dtype=torch.float64)
    with pytest.raises(CudaError, match="float64, but the launcher takes float32"):
        lib.softmax_launch(x, torch.empty_like(x), 4, 8)


def test_a_body_less_extern_c_declaration_is_no_launcher():
    """`extern "C" void wmemmove(float*, const float*, size_t, cudaStream_t);` has a launcher's
    shape, and the loader would bind it to libc's: only definitions are launchers."""
    lib = load_cuda(cuda_src("extern_decl_launcher"))
    assert set(lib.launchers) == {"softmax_launch"}
    with pytest.raises(AttributeError, match="no extern \"C\" launcher named 'wmemmove'"):
        lib.wmemmove


# -- 3. end to end: kernel, reason code, text --------------------------------------------------------
VERIFIED = [
    ("first_rows", "mismatch", ""),        # launches for the tiny spec's 16 rows only
    ("printf_spam", None, ""),             # 32 000 lines of output: the verdict still comes back
    ("alias_output", "aliasing", "shares memory"),      # an in-place launcher; forward returns x
    ("cached_tensor", "cached-output", "earlier call"),  # the first call's tensor, returned again
    ("huge_shared", "build-error", "too much shared data"),  # 1 GiB of __shared__: ptxas refuses
    ("template_bomb", "build-error", "excessive recursion"),  # nvcc gives up, in seconds
    # `_lib.emulator().call(...)` runs the real launcher unseen by the launch log: the no-op replay
    # of the launches it did record (an empty kernel) leaves the output unchanged
    ("bypass_observer", "kernel-independent", "no-op"),
]
FAST = VerifyOptions(seed=11, trials=1, device="cpu", backend="cuda", timeout_s=120)


@pytest.mark.parametrize("kernel, code, text", VERIFIED, ids=[k for k, *_ in VERIFIED])
def test_verdict(kernel, code, text):
    v = verify(TINY, KERNELS / f"hostile_cuda_{kernel}.py", FAST)
    if code is None:
        assert v["correct"], v["reasons"]
    else:
        assert not v["correct"] and has(v["reasons"], code, text), v["reasons"]


# -- 4. known gaps: each xfail says what a correct verdict needs ---------------------------------------
def gap(why: str):
    return pytest.mark.xfail(strict=True, reason=why)


STATIC_GAPS = [
    pytest.param("host_lambda", "cuda-host-compute", marks=gap(
        "a namespace-scope lambda (`static auto f = [](...) {...};`) is no function to cxx._outline, so "
        "HostBody never reads its body: host compute there is judged correct at level emulated")),
    pytest.param("static_init_hang", "cuda-host-compute", marks=gap(
        "the same gap: a namespace-scope initialiser `= [] { while (spin) {} }()` loops at library load, "
        "outside the per-launch limit, until the job timeout")),
    pytest.param("host_paren_call", "cuda-host-compute", marks=gap(
        "HostBody._call checks only `name(`: `(memcpy)(&v, row + c, 4)` calls any function, and `&v` "
        "passes _address_ok because a local v shadows a kernel named v")),
    pytest.param("emulator_detect", "cuda-preprocessor", marks=gap(
        "`#ifdef __CUDACC_VER_MAJOR__` (defined by nvcc, not by the emulator's header) gives the GPU "
        "different code from the emulated one: refuse conditionals on compiler-identifying macros")),
    pytest.param("emulator_arch_host", "cuda-preprocessor", marks=gap(
        "__CUDA_ARCH__ is defined everywhere in the emulator but only in nvcc's device pass: tested in "
        "a host function it tells the emulator from the GPU build")),
    pytest.param("inline_arith", "cuda-host-compute", marks=gap(
        "load_inline: tensor operators in a namespace-scope lambda (HostBody never reads it)")),
    pytest.param("data_bomb", "cuda-format", marks=gap(
        "no size limit on initialised namespace-scope arrays: 256 MiB of __device__ data keeps nvcc "
        "busy for minutes (its timeout is 300 s)")),
]


@pytest.mark.parametrize("kernel, code", STATIC_GAPS)
def test_static_gap(kernel, code):
    reasons = static_reasons(kernel)
    assert any(r.startswith(code + ":") for r in reasons), reasons


@gap("false positive: `sizeof(float) * n` reads as a cast followed by unary * (HostBody._is_cast "
     "takes `sizeof(float)` for `(float)`), so a launcher clearing y with cudaMemsetAsync is refused")
def test_sizeof_times_n_in_a_launcher_is_not_a_dereference():
    assert not static_reasons("sizeof_times")


EMULATED_GAPS = [
    pytest.param("device_cache", emulator.EmulatorError, marks=gap(
        "__device__ variables keep state across launcher calls (a cache keyed by the input pointer); "
        "the emulator's fresh copies hide it on the CPU, a GPU's repeated calls hit it")),
]


@pytest.mark.parametrize("kernel, error", EMULATED_GAPS)
def test_emulator_gap(kernel, error, tmp_path):
    with pytest.raises(error):
        emulate(kernel, tmp_path)


@gap("a namespace-scope initialiser runs when the emulator loads the library (ctypes.CDLL), before "
     "any watchdog is armed: `static int loaded = [] { while (spin) {} return 0; }();` hangs the "
     "worker until the job timeout (600 s by default)")
def test_a_library_that_never_finishes_loading_meets_the_time_limit(tmp_path):
    stderr = emulate_apart("static_init_hang", tmp_path, timeout=15)
    assert "step-limit" in stderr, stderr[-500:] or "ran past 15 s"
