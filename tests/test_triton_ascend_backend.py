"""The Triton-Ascend backend end to end: Huawei's real front end (triton-adapter-opt and
bishengir-compile's HIVM pipeline, which plans the unified buffer) on the recorded launches,
triton-ascend's interpreter for the numerics with the shared guards, and the ladder's honest
answer for what needs CANN (hivmc) or an NPU."""
from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest

from conftest import DATA, ROOT, require_ascend
from opforge.harness import ladder
from opforge.backends.triton_ascend import frontend, static, toolchain
from opforge.harness.verify import VerifyOptions, verify

ASCEND = DATA / "triton_ascend"
SOFTMAX = ROOT / "ops" / "softmax.py"


def options(**kw) -> VerifyOptions:
    return VerifyOptions(**{"seed": 11, "trials": 2, "device": "cpu", "backend": "triton_ascend", "sandbox": "none",
                            **kw})


@pytest.fixture(scope="module")
def softmax_verdict():
    require_ascend()
    return verify(SOFTMAX, ASCEND / "softmax.py", options())


def test_softmax_verifies_emulated_after_the_real_front_end(softmax_verdict):
    v = softmax_verdict
    assert v["correct"], v["reasons"]
    assert ladder.exit_code(v) == 0
    assert v["level"] == "emulated" and v["verified_on"] == f"cpu:triton-ascend-interpreter-{toolchain.pins()['triton-ascend']}"
    steps = v["steps"]
    assert list(steps) == ["static", "frontend_compile", "compile", "cpu_run", "device_run", "profile"]
    assert steps["frontend_compile"] == {**steps["frontend_compile"], "status": "passed", "tool": "bishengir-compile",
                                         "version": toolchain.pins()["ascendnpu-ir"]}
    assert steps["compile"]["status"] == "skipped" and "hivmc" in steps["compile"]["reason"]
    assert "CANN" in steps["compile"]["reason"]
    assert steps["cpu_run"]["status"] == "passed" and steps["cpu_run"]["tool"] == "triton-ascend-interpreter"
    assert steps["device_run"]["status"] == "skipped" and "NPU" in steps["device_run"]["reason"]
    kernel = v["build"]["kernels"][0]
    assert kernel["kernel"] == "_softmax_rows" and kernel["target"] == toolchain.DEFAULT_TARGET
    assert kernel["pipeline"] == "hivmc-missing" and kernel["mix_mode"] == "aiv"
    assert v["hardware"].endswith("triton-ascend-interpreter") and set(v["launches"]) == {"_softmax_rows"}


def test_a_tile_past_the_unified_buffer_fails_with_bishengirs_own_message():
    require_ascend()
    v = verify(SOFTMAX, ASCEND / "softmax_ub_overflow.py", options())
    assert ladder.exit_code(v) == 1 and not v["correct"]
    assert v["steps"]["frontend_compile"]["status"] == "failed"
    assert "ub overflow, requires" in v["reasons"][0] and "1572864 bits available" in v["reasons"][0]
    assert v["steps"]["cpu_run"]["status"] == "skipped" and v["level"] == "static"


@pytest.mark.parametrize("name, code", [("inline_asm", "ascend-unsupported"), ("grid_literal", "grid-too-large"),
                                        ("cuda_libdevice", "ascend-unsupported")])
def test_what_ascend_cannot_take_is_rejected_statically(name, code):
    require_ascend()
    v = verify(SOFTMAX, ASCEND / f"{name}.py", options())
    assert ladder.exit_code(v) == 1 and (v["failed_step"], ladder.failed_check(v)) == ("static", "rules")
    assert any(r.startswith(code) for r in v["reasons"]), v["reasons"]
    assert v["steps"]["frontend_compile"]["status"] == "skipped" and "jobs" not in v  # nothing ran


def test_a_computed_grid_past_65535_programs_fails_the_static_step_from_the_recorded_launch():
    require_ascend()
    v = verify(ASCEND / "relu_spec.py", ASCEND / "grid_computed.py", options())
    assert ladder.exit_code(v) == 1 and (v["failed_step"], ladder.failed_check(v)) == ("static", "rules")
    assert v["reasons"][0].startswith("grid-too-large: _relu launched 75000 programs")
    assert v["steps"]["static"]["status"] == "failed" and v["steps"]["cpu_run"]["status"] == "skipped"


def test_ascend_static_rules_on_source():
    def check(src: str):
        return static.check_ascend(ast.parse(src))

    assert check("k[(65535,)](x)").reasons == []
    assert check("k[(256, 300)](x)").reasons[0].startswith("grid-too-large")  # 76800 programs
    assert check("grid = (70000,)").reasons == []  # a tuple that is not launched
    found = check("k[(40,)](x, BLOCK=1024, num_warps=8, num_stages=3)")
    assert found.reasons == [] and [w.split(":")[0] for w in found.warnings] == ["ascend-ignored"] * 2
    assert check("import triton.language.extra.cuda.libdevice as ld").reasons
    assert check("from triton.language.extra import cuda").reasons
    assert check("y = tl.extra.cuda.libdevice.erf(x)").reasons
    assert check("from triton.language.extra import libdevice").reasons == []  # dispatches per backend


def test_bishengir_output_is_read_as_recorded():
    missing = (ASCEND / "bishengir_hivmc_missing.txt").read_text()
    overflow = (ASCEND / "bishengir_ub_overflow.txt").read_text()
    assert frontend.parse_bishengir(1, missing).status == "hivmc-missing"
    result = frontend.parse_bishengir(1, overflow)
    assert result.status == "error" and result.message.startswith("ub overflow, requires 50331904 bits")
    assert len(result.notes) == 3 and "retrying compilation" in result.notes[0]
    # with CANN, hivmc runs and bishengir-compile exits 0 having written the kernel object
    assert frontend.parse_bishengir(0, "UB size = 65536 bits\n").status == "ok"
    assert frontend.parse_bishengir(0, "UB size = 65536 bits\n").ub_bits == 65536
    # an unknown failure keeps the tool's last line rather than passing
    odd = frontend.parse_bishengir(134, "Segmentation fault\n")
    assert odd.status == "error" and odd.message == "Segmentation fault"


def test_bishengir_command_line_is_triton_ascends_a2_a3_one(tmp_path):
    require_ascend()
    from types import SimpleNamespace

    chain, _ = toolchain.cached()
    cmd = frontend.bishengir_command(str(chain.bishengir), tmp_path / "k.mlir", tmp_path / "kernel", "Ascend910B3",
                                     SimpleNamespace(multibuffer=True, enable_auto_bind_sub_block=True))
    assert cmd[:3] == [str(chain.bishengir), str(tmp_path / "k.mlir"), "--target=Ascend910B3"]
    assert {"--enable-auto-multi-buffer=True", "--enable-hfusion-compile=true",
            "--enable-triton-kernel-compile=true"} <= set(cmd) and cmd[-2:] == ["-o", str(tmp_path / "kernel")]


def test_the_toolchain_is_the_pinned_pair_and_refuses_another(tmp_path):
    require_ascend()
    chain, reason = toolchain.cached()
    assert reason is None and chain.triton_ascend == toolchain.pins()["triton-ascend"]
    fake = tmp_path / "prefix"
    (fake / "triton_ascend-3.1.0.dist-info").mkdir(parents=True)
    (fake / "ascendnpu_ir-1.2.0.dist-info").mkdir()
    _, why = toolchain.find(fake)
    assert "triton-ascend 3.1.0" in why and "3.2.0" in why
    _, why = toolchain.find(tmp_path / "nowhere")
    assert why.startswith("triton-ascend is not installed")


def test_hivmc_is_looked_for_in_the_cann_toolkit(tmp_path):
    home = tmp_path / "ascend-toolkit" / "latest"
    (home / "bin").mkdir(parents=True)
    assert toolchain.find_hivmc(home, path="") is None
    tool = home / "bin" / "hivmc"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert toolchain.find_hivmc(home, path="") == str(tool)


def test_the_main_environment_keeps_nvidias_triton():
    """The Ascend prefix is only ever on the worker's sys.path: the verifying process and every
    other backend keep NVIDIA's Triton."""
    require_ascend()
    out = subprocess.run([sys.executable, "-c", "from opforge.backends import plugin; "
                          "plugin('triton_ascend').static('x = 1', float32_spec=True); "
                          "import triton, json; print(json.dumps(triton.__file__))"],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    assert "/ascend/" not in json.loads(out.stdout)


def test_cli_verify_prints_the_ladder_and_exits_by_it():
    require_ascend()
    run = subprocess.run([sys.executable, "-m", "opforge.cli", "verify", str(SOFTMAX), str(ASCEND / "softmax_ub_overflow.py"),
                          "--backend", "triton_ascend", "--sandbox", "none", "--trials", "1"],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 1, run.stderr
    assert "frontend_compile: failed" in run.stdout and "ub overflow" in run.stdout
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("runtime", ["jail", "docker"])
def test_the_isolating_sandboxes_run_the_ascend_worker(runtime):
    """The prefix reaches the worker read-only inside both isolating runtimes, and its `triton` is
    the one the candidate gets there."""
    from conftest import require_runtime
    from opforge.sandbox import docker_runtime, jail

    require_ascend()
    require_runtime(runtime, {"docker": docker_runtime.unavailable, "jail": jail.unavailable}[runtime]())
    v = verify(SOFTMAX, ASCEND / "softmax.py", options(sandbox=runtime, trials=1))
    assert v["correct"], v["reasons"]
    assert v["sandbox"] == runtime and v["steps"]["frontend_compile"]["status"] == "passed"
