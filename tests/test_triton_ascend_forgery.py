"""Hostile Triton-Ascend candidates (tests/data/hostile_ascend/*.py) against the suite's SiLU: what
a cheating or sloppy kernel author tries against --backend triton_ascend, each rejected by the
mechanism meant for it, and a correct kernel beside them still accepted.

The Ascend-specific holes closed here (backends/triton_ascend/launches.py): grids the
recorded launch cannot show (a callable grid), launches the build never frontend-compiled (a
variant's tile, a run-only kernel chosen by a probe of the build's no-op launches), out-of-bounds
memory the interpreter reads silently, the interpreter or the backend's own build code patched
(watched like triton.language, in the build job too), and the toolchain prefix written (bound
read-only by the sandbox). The classic cheats run through the shared guards as on the NVIDIA path.
"""
from __future__ import annotations

import os
import shutil

import pytest

from conftest import DATA, ROOT, require_ascend, require_runtime
from opforge.harness import ladder
from opforge.harness.verify import VerifyOptions, verify

HOSTILE = DATA / "hostile_ascend"
SILU = ROOT / "ops" / "silu.py"


def options(**kw) -> VerifyOptions:
    return VerifyOptions(**{"seed": 5, "trials": 2, "device": "cpu", "backend": "triton_ascend", "sandbox": "none",
                            **kw})


def has(reasons: list[str], code: str, text: str) -> bool:
    return any(r.split(":", 1)[0] == code and text in r for r in reasons)


def test_the_correct_control_still_verifies_with_every_guard_on():
    require_ascend()
    v = verify(SILU, HOSTILE / "silu_ok.py", options())
    assert ladder.exit_code(v) == 0 and v["level"] == "emulated", v["reasons"]
    assert v["steps"]["frontend_compile"]["status"] == "passed"


# kernel, reason code, text the reason must contain
CASES = [
    ("grid_callable", "runtime-error", "grid-too-large: a launch of 70000 programs"),
    ("variant_tile", "build-error", "ub overflow, requires"),                     # the build sees every layout
    ("probe_switch", "runtime-error", "unbuilt-launch: _silu was launched as"),  # BLOCK=1048576 only in the run
    ("nomask", "out-of-bounds", "a load by program 0 touched 24 elements outside every tensor argument"),
    ("torch_return", "torch-compute", "aten.silu"),
    ("cache", "cached-output", "same buffer"),
    ("mutate", "input-mutation", "input 0"),
    ("fp16", "low-precision", "float16"),
    ("partial", "partial-output", "never written"),
]


@pytest.mark.parametrize("kernel, code, text", CASES, ids=[c[0] for c in CASES])
def test_hostile_candidates_are_rejected_for_what_they_do(kernel, code, text):
    require_ascend()
    v = verify(SILU, HOSTILE / f"{kernel}.py", options())
    assert ladder.exit_code(v) == 1 and not v["correct"]
    assert has(v["reasons"], code, text), v["reasons"]


def test_a_run_only_launch_is_caught_in_the_jail_too():
    """The run job's own build is a child process of the sandboxed worker: it must work there."""
    require_ascend()
    from opforge.sandbox import jail

    require_runtime("jail", jail.unavailable())  # CI provides the jail: fails there, never skips
    v = verify(SILU, HOSTILE / "probe_switch.py", options(sandbox="jail"))
    assert ladder.exit_code(v) == 1 and v["sandbox"] == "jail"
    assert has(v["reasons"], "runtime-error", "unbuilt-launch"), v["reasons"]


def test_patching_the_interpreter_is_seen_by_the_guards_when_the_static_checks_are_skipped():
    """The static checks refuse `triton.runtime` outright; behind them, the interpreter's classes are
    watched like triton.language, so a store that computes SiLU for a copying kernel is `patched`."""
    require_ascend()
    v = verify(SILU, HOSTILE / "interpreter_store.py", options(skip_static=True))
    assert ladder.exit_code(v) == 1
    assert has(v["reasons"], "patched", "triton.runtime.interpreter.InterpreterBuilder.create_masked_store"), v["reasons"]
    static = verify(SILU, HOSTILE / "interpreter_store.py", options())
    assert ladder.exit_code(static) == 1 and (static["failed_step"], ladder.failed_check(static)) == ("static", "rules")


@pytest.mark.parametrize("kernel, text", [
    ("fake_frontend", "triton_ascend.frontend.run_bishengir"),  # a 4 MiB tile would "fit"
    ("rebound_name", "triton.language.static_range"),           # exempt in the run, not in the build
])
def test_patches_in_the_build_process_are_seen_there(kernel, text):
    """The build job judges the kernel in the candidate's own process, where the run's exemption for
    names the interpreter rebinds does not apply: the build compares the watched modules (the
    backend's own code among them) after the recorded forwards."""
    require_ascend()
    v = verify(SILU, HOSTILE / f"{kernel}.py", options(skip_static=True))
    assert ladder.exit_code(v) == 1
    assert has(v["reasons"], "patched", text), v["reasons"]


def test_the_toolchain_prefix_is_read_only_in_the_jail():
    require_ascend()
    from opforge.sandbox import jail

    require_runtime("jail", jail.unavailable())  # CI provides the jail: fails there, never skips
    v = verify(SILU, HOSTILE / "prefix_write.py", options(sandbox="jail", skip_static=True))
    assert ladder.exit_code(v) == 1
    assert has(v["reasons"], "load-error", "Read-only file system"), v["reasons"]


def test_a_prefix_named_by_opforge_ascend_prefix_is_the_one_the_jailed_worker_uses(tmp_path, monkeypatch):
    """triton-ascend installed outside the venv (OPFORGE_ASCEND_PREFIX; here a hard-linked copy of
    the venv's): the host finds it and binds it into the jail, and the worker must look there too,
    not in the venv it runs from."""
    require_ascend()
    from opforge.backends.triton_ascend import toolchain
    from opforge.sandbox import jail

    require_runtime("jail", jail.unavailable())
    elsewhere = tmp_path / "ascend-prefix"
    try:
        shutil.copytree(toolchain.cached()[0].root, elsewhere, symlinks=True, copy_function=os.link)
    except OSError as exc:  # another file system: links cannot cross it
        pytest.skip(f"cannot hard-link the prefix under {tmp_path}: {exc}")
    monkeypatch.setenv(toolchain.PREFIX_ENV, str(elsewhere))
    toolchain.cached.cache_clear()
    try:
        v = verify(SILU, HOSTILE / "silu_ok.py", options(sandbox="jail"))
    finally:
        monkeypatch.undo()
        toolchain.cached.cache_clear()
    assert ladder.exit_code(v) == 0 and v["level"] == "emulated", v["reasons"]
