"""Hostile CUDA candidates (tests/data/kernels/hostile_cuda_*.py): what a cheating or sloppy kernel
author tries against the CUDA backend, each rejected by the mechanism meant for it.

Three tables, cheapest first: the static check (no compiler), opforge's CPU emulator called
directly (a g++ build of the candidate's CUDA_SRC each), and a few end-to-end verdicts through the
sandboxed worker. The emulator builds these tests make themselves get a directory each, so no test
reuses another's library.

Known gaps are in EMULATED_GAPS, marked xfail(strict=True): each says what a correct verdict
needs, and passes (so fails as XPASS) once that defence exists; remove its mark then.
"""
from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from conftest import KERNELS, ROOT, TINY
from opforge.backends.cuda import emulator
from opforge.backends.cuda.runtime import CudaError, load_cuda
from opforge.backends.cuda.static import check_cuda_candidate
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
    # a namespace-scope lambda has no function head: cxx reads it as a host function all the same
    ("host_lambda", "cuda-host-compute", "host_softmax: indexes memory in host code (row[...])"),
    ("static_init_hang", "cuda-host-compute", "loaded: a while loop in host code"),  # `= [] {...}()`
    ("inline_arith", "cuda-host-compute", "twice: tensor arithmetic"),
    # `(memcpy)(&v, row + c, 4)`: a parenthesised callee, into a local shadowing a kernel named v
    ("host_paren_call", "cuda-host-compute", "calls memcpy() in host code"),
    ("host_paren_call", "cuda-host-compute", "takes the address of host memory"),
    # default arguments run in the caller: `float v = gx[gi]` read x through a global (verified before)
    ("host_default_args", "cuda-host-compute", "rd: indexes memory in host code (gx[...])"),
    ("host_default_args", "cuda-host-compute", "wr: indexes memory in host code (gy[...])"),
    # the preprocessor telling the emulator from nvcc
    ("emulator_detect", "cuda-preprocessor", "#ifdef tests __CUDA_API_VER_MAJOR__"),
    ("emulator_arch_host", "cuda-preprocessor", "__CUDA_ARCH__, outside device code"),
    ("include_tricks", "cuda-preprocessor", "__has_include"),
    # `_lib.emulator().call(...)` runs the real launcher where the harness's launch log cannot see it
    ("bypass_observer", "cuda-format", "_lib.emulator: a CUDA library is used only by calling its launchers"),
    # 256 MiB of initialised __device__ data: nvcc ran past 100 s on it, g++ writes it all out
    ("data_bomb", "cuda-format", "an array of 268435456 elements"),
    # host code read after g++ -E on libclang's parse (host_ast.py), where a token reader is fooled:
    ("host_if0_device", "cuda-host-compute", "peek: indexes memory in host code"),  # `#if 0 __device__ #endif`
    ("host_cast_deref", "cuda-host-compute", "dereferences a pointer in host code (unary *)"),  # (T)*p, T an alias
    ("host_make_callee", "cuda-host-compute", "calls make_copy (a variable"),  # make_copy = memcpy
    ("host_template_default", "cuda-host-compute", "load: calls copy_t (a variable"),  # <... copy_t = memcpy>
    ("host_memcpy_kind", "cuda-host-compute", "cudaMemcpyAsync whose kind is not the constant"),
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


def test_the_static_rules_leave_the_idioms_of_correct_kernels_alone():
    """`sizeof(float) * n` is no cast and dereference, `if (c) (void)f();` no parenthesised callee,
    `#if __CUDA_ARCH__` inside a kernel no emulator detection."""
    assert not static_reasons("sizeof_times")
    source = source_of("sizeof_times").replace(
        "    int r = blockIdx.x", "#if __CUDA_ARCH__ >= 800\n#endif\n    int r = blockIdx.x").replace(
        "    cudaMemsetAsync(", "    if (rows > 0) (void)cudaGetLastError();\n    cudaMemsetAsync(")
    assert "#if __CUDA_ARCH__" in source and "(void)cudaGetLastError" in source
    assert not check_cuda_candidate(source, float32_spec=True).reasons


def test_array_extents_are_evaluated_at_no_cost():
    """`1 << (1 << 40)` is capped, not computed; a tile of 32 * 33 floats is no bomb."""
    base = source_of("sizeof_times")
    bomb = base.replace("extern \"C\"", "__device__ char ballast[1 << (1 << 40)];\nextern \"C\"", 1)
    tile = base.replace("extern \"C\"", "__device__ float tile[32 * (32 + 1)];\nextern \"C\"", 1)
    assert bomb != base and tile != base
    assert has(check_cuda_candidate(bomb, float32_spec=True).reasons, "cuda-format", "18446744073709551616 elements")
    assert not check_cuda_candidate(tile, float32_spec=True).reasons


# -- 2. the emulator, called directly: kernel, error class, text -------------------------------------
EMULATED = [
    ("block_order", emulator.RaceError, "which block (0,0,0) thread (0,0,0) wrote (different blocks"),  # block b reads block b-1
    ("warp_race", emulator.RaceError, "wrote (one warp, and no __syncwarp() between them)"),  # no barrier after lane 0
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
    script = (f"import torch\nfrom opforge.backends.cuda.emulator import EmulatedLibrary\n"
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
    # a __device__ cache keyed by the input pointer: the emulator keeps an argument's device address
    # from call to call (as a GPU's caching allocator does), so a later call with new data hits it,
    # and the same call from the load-time __device__ values computes otherwise (emulator/state.py)
    ("device_cache", "stateful", "computes argument y from what earlier calls left in `cached_x`"),
    ("huge_shared", "build-error", "too much shared data"),  # 4 MiB of __shared__: ptxas refuses
    ("template_bomb", "build-error", "excessive recursion"),  # nvcc gives up, in seconds
]
FAST = VerifyOptions(seed=11, trials=1, device="cpu", backend="cuda", timeout_s=120)


@pytest.mark.parametrize("kernel, code, text", VERIFIED, ids=[k for k, *_ in VERIFIED])
def test_verdict(kernel, code, text):
    v = verify(TINY, KERNELS / f"hostile_cuda_{kernel}.py", FAST)
    if code is None:
        assert v["correct"], v["reasons"]
    else:
        assert not v["correct"] and has(v["reasons"], code, text), v["reasons"]


# -- 4. what only a time limit stops -----------------------------------------------------------------
def test_a_library_that_never_finishes_loading_meets_the_time_limit(tmp_path):
    """A namespace-scope initialiser runs at dlopen, before any launch (`static int loaded =
    [] { while (spin) {} return 0; }();`): the emulator loads each new library in a child first."""
    stderr = emulate_apart("static_init_hang", tmp_path, timeout=40)
    assert "step-limit" in stderr and "loading the library" in stderr, stderr[-500:] or "ran past 40 s"


def test_a_launch_log_bypass_is_caught_by_the_no_op_replay_too():
    """Past the static check, the launches the log did record (an empty kernel) are replayed as
    no-ops and the output does not change: the kernel that computed it was never shown."""
    v = verify(TINY, KERNELS / "hostile_cuda_bypass_observer.py",
               VerifyOptions(seed=11, trials=1, device="cpu", backend="cuda", timeout_s=120, skip_static=True))
    assert not v["correct"] and has(v["reasons"], "kernel-independent", "no-op"), v["reasons"]
