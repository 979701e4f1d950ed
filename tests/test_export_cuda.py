"""opforge export with CUDA kernels: the op module carries the candidate with its load_cuda import
pointed at the package's own copy of opforge's CUDA runtime (<pkg>/_cuda/), which imports without
opforge; on a CPU the CUDA op falls back to the reference and says why (or, with fallback
forbidden, raises that reason); an op with both a Triton and a CUDA kernel runs what the device
can (the faster where both were timed there, else Triton); the metadata, check.py and the README
show each kernel's backend and level ("unknown" for a version from before the ladder); a wheel
built where nvcc is carries the libraries prebuilt. The device run is in tests/test_gpu.py."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch

from conftest import KERNELS, ROOT, TINY
from opforge.exporter import export_library
from opforge.backends.cuda.export import cuda_sources, prebuilt_name
from opforge.backends.cuda import toolchain
from opforge.harness.verify import VerifyOptions, prepare, verify_source
from opforge.registry import Registry
from opforge.registry.recording import record_verification

CUDA_SOFTMAX = ROOT / "opforge" / "backends" / "cuda" / "knowledge" / "softmax.py"
EMULATED = {"level": "emulated", "verified_on": "cpu:opforge-cuda-emu-1.0"}
TORCH_SITE = str(Path(torch.__file__).resolve().parent.parent)


def promote_cuda(reg: Registry, *, ladder: dict | None = EMULATED, timings: dict | None = None,
                 hardware: str = "cpu/x86_64/opforge-cuda-emu") -> int:
    """The known-good CUDA softmax as a promoted version of tiny_softmax, its verdict recorded
    through the registry API (as the harness would record an emulated one)."""
    spec = reg.record_spec("tiny_softmax", str(TINY), TINY.read_text())
    cand = reg.record_candidate(spec, CUDA_SOFTMAX.read_text(), "cuda", "known-good")
    verdict = {"correct": True, "failed_step": None, "reasons": [], "backend": "cuda",
               "sizes": {"used": {}}, "variants": [{"shapes": [[16, 40]], "atol": 1e-5, "rtol": 1e-5},
                                                   {"shapes": [[3, 17]], "atol": 1e-5, "rtol": 1e-5}],
               "timings": timings, **(ladder or {})}
    name = hardware.split("/")[1]
    reg.record_evaluation(cand, hardware, {"name": f"{name} CPU" if hardware.startswith("cpu") else name}, verdict)
    reg.promote(cand)
    return cand


def promote_triton(reg: Registry) -> int:
    options = VerifyOptions(device="cpu", trials=2, seed=5)
    spec, hardware = prepare(TINY, options)
    source = (KERNELS / "good.py").read_text()
    verdict = verify_source(spec, hardware, source, options)
    assert verdict["correct"], verdict["reasons"]
    cand = record_verification(reg, spec, source, verdict, hardware, drafter="user")[0]
    reg.promote(cand)
    return cand


def isolated(code: str, lib_parent: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """`python -I -S`: no PYTHONPATH, no site (so no editable opforge), no current directory; sys.path
    is the exported project and torch's site-packages only, and the code first proves opforge is
    not importable."""
    prelude = (f"import sys; sys.path[:0] = [{str(lib_parent)!r}, {TORCH_SITE!r}]\n"
               "import importlib.util; assert importlib.util.find_spec('opforge') is None, 'opforge importable'\n")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA_LIB", "TRITON_INTERPRET"))}
    return subprocess.run([sys.executable, "-I", "-S", "-c", prelude + code], cwd=lib_parent, capture_output=True,
                          text=True, timeout=300, env=base | (env or {}))


@pytest.fixture
def reg(tmp_path):
    with Registry(tmp_path / "reg.db") as registry:
        yield registry


@pytest.fixture(scope="module")
def cuda_only(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cuda_only")
    with Registry(root / "reg.db") as registry:
        promote_cuda(registry)
        export_library(registry, root / "lib", name="cuda_lib")
    return root / "lib"


def test_the_cuda_op_ships_with_its_runtime_and_imports_without_opforge(cuda_only):
    pkg = cuda_only / "cuda_lib"
    module = (pkg / "ops" / "tiny_softmax.py").read_text()
    assert "from cuda_lib._cuda.runtime import load_cuda\n" in module and "from opforge" not in module
    # The candidate verbatim but for that one import.
    assert CUDA_SOFTMAX.read_text().replace("from opforge.cuda import", "from cuda_lib._cuda.runtime import") in module
    for stem in ("runtime", "signature", "toolchain"):
        shipped = (pkg / "_cuda" / f"{stem}.py").read_text()
        original = (ROOT / "opforge" / "backends" / "cuda" / f"{stem}.py").read_text()
        # Imports of each other (and of the emulator, which is not shipped) name the package's copy.
        assert shipped == original.replace("from opforge.backends.cuda import", "from cuda_lib._cuda import") \
            .replace("from opforge.backends.cuda.", "from cuda_lib._cuda.")
        assert "opforge.harness" not in shipped
    assert '"cuda_lib._cuda"' in (cuda_only / "pyproject.toml").read_text()
    code = ("import cuda_lib, torch\n"
            "from cuda_lib._cuda import runtime\n"
            "print(cuda_lib.OPS, hasattr(torch.ops.cuda_lib, 'tiny_softmax'))\n"
            "lib = cuda_lib.ops.tiny_softmax._lib\n"
            "try:\n    lib.softmax_launch(torch.zeros(2, 3), torch.zeros(2, 3), 2, 3)\n"
            "except runtime.CudaUnavailable as exc:\n    print('unavailable:', exc)\n")
    ran = isolated(code, cuda_only)
    assert ran.returncode == 0, ran.stderr[-3000:]
    lines = ran.stdout.splitlines()
    assert lines[0] == "('tiny_softmax',) True"
    # The library carries no emulator: a direct launch on CPU tensors is refused by the runtime itself.
    assert lines[1].startswith("unavailable:") and "no CUDA emulator" in lines[1]


def test_on_a_cpu_the_cuda_op_falls_back_and_says_why_and_forbidden_it_raises_that(cuda_only):
    code = ("import os, torch, cuda_lib\n"
            "x = torch.randn(5, 40)\n"
            "y = cuda_lib.tiny_softmax(x); z = torch.ops.cuda_lib.tiny_softmax(x)\n"
            "assert torch.allclose(y, torch.softmax(x, -1)) and torch.equal(y, z)\n"
            "torch.library.opcheck(torch.ops.cuda_lib.tiny_softmax.default, (x,))\n"
            "print(dict(cuda_lib.fallbacks))\n"
            "os.environ['CUDA_LIB_NO_FALLBACK'] = '1'\n"
            "try:\n    cuda_lib.tiny_softmax(x)\n"
            "except cuda_lib.FallbackForbidden as exc:\n    print('forbidden:', exc)\n")
    ran = isolated(code, cuda_only)
    assert ran.returncode == 0, ran.stderr[-3000:]
    out = ran.stdout.splitlines()
    assert out[0].startswith("{'tiny_softmax': ") and int(out[0].split(": ")[1].rstrip("}")) >= 2
    why = "the CUDA kernel runs on a CUDA GPU only (this device is cpu; opforge's CPU emulator is not part of cuda_lib)"
    assert f"cuda_lib.tiny_softmax: using the PyTorch reference: {why}" in ran.stderr
    assert ran.stderr.count("using the PyTorch reference") == 1  # said once per op and reason
    (forbidden,) = [line for line in out if line.startswith("forbidden:")]
    assert why in forbidden and "CUDA_LIB_NO_FALLBACK=1 forbids the PyTorch fallback" in forbidden
    # The package's own check skips the op on this CPU, saying why, and exits 0.
    ran = isolated("import sys; from cuda_lib.check import main; sys.exit(main(['--json']))", cuda_only,
                   env={"CUDA_LIB_NO_FALLBACK": "1", "TRITON_INTERPRET": "1"})
    (result,) = json.loads(ran.stdout)["results"]
    assert ran.returncode == 0 and result == {"op": "tiny_softmax", "ok": True, "skipped": why}


def test_metadata_readme_and_configs_show_backend_and_level(cuda_only, reg, tmp_path):
    ran = isolated("import json, cuda_lib; print(json.dumps(cuda_lib.metadata()['ops']['tiny_softmax']))", cuda_only)
    assert ran.returncode == 0, ran.stderr[-3000:]
    (version,) = json.loads(ran.stdout)["versions"]
    assert {k: version[k] for k in ("backend", "arch", "level", "verified_on", "prebuilt")} == {
        "backend": "cuda", "arch": "cpu", "level": "emulated", "verified_on": "cpu:opforge-cuda-emu-1.0", "prebuilt": []}
    readme = (cuda_only / "README.md").read_text()
    assert "| `tiny_softmax` | v1 | #1 | cuda | emulated | cpu:opforge-cuda-emu-1.0 | x86_64 CPU (opforge's CUDA emulator) |" \
        in readme
    assert "cuda_lib/_cuda/runtime.py" in readme and "Triton and CUDA kernels exported" in readme
    (kernel,) = json.loads((cuda_only / "cuda_lib" / "configs" / "tiny_softmax.json").read_text())["kernels"]
    assert kernel["backend"] == "cuda" and kernel["module"] == "tiny_softmax"
    # A version recorded before the ladder (its verdict has no level) shows "unknown".
    promote_cuda(reg, ladder=None)
    export_library(reg, tmp_path / "old", name="cuda_lib")
    meta = json.loads((tmp_path / "old" / "cuda_lib" / "metadata.json").read_text())["ops"]["tiny_softmax"]
    assert (meta["versions"][0]["level"], meta["versions"][0]["verified_on"]) == ("unknown", "unknown")
    assert "| cuda | unknown | unknown |" in (tmp_path / "old" / "README.md").read_text()


def test_an_op_with_a_triton_and_a_cuda_kernel_runs_what_the_device_can(reg, tmp_path):
    triton = promote_triton(reg)
    cuda = promote_cuda(reg)
    result = export_library(reg, tmp_path / "lib", name="cuda_lib")
    assert result.ops[0].kernels[1] == "cuda cpu (emulated)" and result.ops[0].kernels[0].startswith("triton cpu (")
    config = json.loads((tmp_path / "lib" / "cuda_lib" / "configs" / "tiny_softmax.json").read_text())
    assert [(k["backend"], k["module"], k["candidate_id"]) for k in config["kernels"]] == [
        ("triton", "tiny_softmax", triton), ("cuda", "tiny_softmax__cuda", cuda)]
    code = ("import torch, cuda_lib\nx = torch.randn(5, 40)\n"
            "assert torch.allclose(cuda_lib.tiny_softmax(x), torch.softmax(x, -1), atol=1e-6)\n"
            "print(dict(cuda_lib.fallbacks))\n")
    # Under Triton's interpreter the CPU runs the Triton kernel: no fallback even when forbidden.
    ran = isolated(code, tmp_path / "lib", env={"TRITON_INTERPRET": "1", "CUDA_LIB_NO_FALLBACK": "1"})
    assert ran.returncode == 0 and ran.stdout.strip() == "{}", ran.stderr[-3000:]
    # Without it neither kernel can run here: the reference, with both reasons.
    ran = isolated(code, tmp_path / "lib")
    assert ran.returncode == 0 and ran.stdout.strip() == "{'tiny_softmax': 1}", ran.stderr[-3000:]
    assert ("using the PyTorch reference: verified on cpu only, this device is cpu without TRITON_INTERPRET=1; "
            "the CUDA kernel runs on a CUDA GPU only") in ran.stderr


def test_on_a_gpu_the_faster_kernel_as_timed_there_is_chosen_else_triton(tmp_path):
    """The runtime's choice on a GPU, taught on this CPU: device_key and the CUDA build are stood
    in for (what the device would answer), the timings are the config's."""
    with Registry(tmp_path / "reg.db") as reg:
        spec = reg.record_spec("tiny_softmax", str(TINY), TINY.read_text())
        triton = reg.record_candidate(spec, (KERNELS / "good.py").read_text(), "triton", "user")
        reg.record_evaluation(triton, "cuda/NVIDIA H200/sm_90", {"name": "NVIDIA H200"},
                              {"correct": True, "failed_step": None, "reasons": [], "sizes": {"used": {}},
                               "level": "profiled", "verified_on": "nvidia-h200",
                               "timings": {"kernel_ms": 0.02, "speedup_eager": 2.0}})
        reg.promote(triton)
        promote_cuda(reg, hardware="cuda/NVIDIA H200/sm_90", ladder={"level": "profiled", "verified_on": "nvidia-h200"},
                     timings={"kernel_ms": 0.01, "speedup_eager": 4.0})
        export_library(reg, tmp_path / "lib", name="cuda_lib")
    code = ("import json, torch, cuda_lib\nfrom cuda_lib import _runtime as rt\n"
            "rt.device_key = lambda device: 'sm_90' if device.type == 'cuda' else None\n"
            "rt.cuda_problem = lambda module, device: '' if device.type == 'cuda' else 'no GPU'\n"
            "config = rt.load_json('configs', 'tiny_softmax.json')\n"
            "print(rt.kernel_for(config, torch.device('cuda'))[0]['backend'])\n"
            "config['kernels'][1]['timed_on'] = None\n"  # the CUDA kernel not timed on this architecture
            "print(rt.kernel_for(config, torch.device('cuda'))[0]['backend'])\n"
            "config['kernels'][1]['timed_on'] = 'sm_90'; config['kernels'][1]['kernel_ms'] = 0.03\n"
            "print(rt.kernel_for(config, torch.device('cuda'))[0]['backend'])\n")
    ran = isolated(code, tmp_path / "lib")
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.split() == ["cuda", "triton", "triton"]


@pytest.mark.skipif(toolchain.find_nvcc() is None, reason="no nvcc on this machine to prebuild with")
def test_a_wheel_built_where_nvcc_is_carries_the_kernel_prebuilt(reg, tmp_path):
    promote_cuda(reg)
    result = export_library(reg, tmp_path / "lib", name="cuda_lib", wheel=True, cuda_archs="90")
    assert "CUDA kernels prebuilt for sm_90 (--cuda-archs)" in result.notes
    (source,) = cuda_sources(CUDA_SOFTMAX.read_text())
    with zipfile.ZipFile(result.wheel) as wheel:
        names = set(wheel.namelist())
        assert f"cuda_lib/_cuda/prebuilt/{prebuilt_name(source, 90)}" in names
        wheel.extractall(tmp_path / "unpacked")
    ran = isolated("import cuda_lib; print(cuda_lib.metadata()['ops']['tiny_softmax']['versions'][0]['prebuilt'])",
                   tmp_path / "unpacked")
    assert ran.returncode == 0 and ran.stdout.strip() == "['sm_90']", ran.stderr[-3000:]
    # The exported tree itself stays text: the libraries live in the wheel only.
    assert not (tmp_path / "lib" / "cuda_lib" / "_cuda" / "prebuilt").exists()
