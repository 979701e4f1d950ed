"""The real nvcc (backends/cuda/toolchain.py, nvcc.py): where it is found, what ptxas reports,
how a compile error reads, the build cache, a loadable shared library, and NVIDIA's PyPI wheels.

Without nvcc (and without the wheels `make setup` installs) the tests that compile skip with the
reason; in CI (OPFORGE_CI=1) they fail instead, so a missing compiler cannot pass silently."""
from __future__ import annotations

import ctypes
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import ROOT
from opforge.backends.cuda import nvcc, toolchain

WHEELS = ROOT / "opforge" / "backends" / "cuda" / "nvcc-wheels.txt"
SOFTMAX = r"""
#include <cuda_runtime.h>
#include <cfloat>
__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float red[256];
    const float* row = x + (size_t)blockIdx.x * cols;
    float m = -FLT_MAX;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = red[0];
    float sum = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(row[c] - m);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) y[(size_t)blockIdx.x * cols + c] = expf(row[c] - m) / sum;
}
extern "C" void softmax_launch(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    softmax_kernel<<<rows, 256, 0, stream>>>(x, y, cols);
}
"""
BROKEN = "#include <cuda_runtime.h>\n__global__ void k(float* y) {\n    int i = threadIdx.x;\n    y[i] = foo;\n}\n"


def unavailable(reason: str) -> None:
    if os.environ.get("OPFORGE_CI"):
        pytest.fail(f"nvcc is required in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def tc() -> toolchain.Toolchain:
    found = toolchain.find_nvcc()
    if found is None:
        unavailable("no nvcc (CUDA_HOME, PATH, /usr/local/cuda*, NVIDIA's wheels): run `make setup`")
    if not shutil.which("g++"):
        unavailable("no g++: nvcc needs a host compiler")
    return found


# -- finding nvcc ----------------------------------------------------------------------------------------

def fake_nvcc(folder: Path, release: str, here: Path | None = None) -> Path:
    """A stand-in nvcc that answers --version and a dry run like the real driver."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "nvcc"
    path.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        case "$1" in
          --version) echo "Cuda compilation tools, release {release}, V{release}.1";;
          -dryrun) echo "#$ _HERE_={here or folder}" >&2;;
        esac
        """))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_find_nvcc_precedence(tmp_path):
    home, on_path = tmp_path / "home", tmp_path / "path"
    fake_nvcc(home / "bin", "12.1")
    fake_nvcc(tmp_path / "cudapath" / "bin", "12.2")
    fake_nvcc(on_path, "12.3", here=tmp_path / "real" / "bin")  # a wrapper: its tree is elsewhere
    fake_nvcc(tmp_path / "system" / "cuda-12.4" / "bin", "12.4")
    fake_nvcc(tmp_path / "system" / "cuda-12.6" / "bin", "12.6")
    fake_nvcc(tmp_path / "site" / "nvidia" / "cu13" / "bin", "13.0")
    fake_nvcc(tmp_path / "broken" / "bin", "").write_text("#!/bin/sh\nexit 1\n")
    environ = {"CUDA_HOME": str(tmp_path / "broken"), "CUDA_PATH": str(tmp_path / "cudapath"), "PATH": str(on_path)}
    look = dict(system_roots=(str(tmp_path / "system" / "cuda-*"),), site_dirs=[str(tmp_path / "site")])

    assert toolchain.find_nvcc(environ={**environ, "CUDA_HOME": str(home)}, **look).version == "12.1"
    assert toolchain.find_nvcc(environ=environ, **look).version == "12.2"  # a broken CUDA_HOME is passed over
    found = toolchain.find_nvcc(environ={"PATH": str(on_path)}, **look)
    assert (found.version, found.home) == ("12.3", str(tmp_path / "real"))
    assert toolchain.find_nvcc(environ={"PATH": "/nonexistent"}, **look).version == "12.6"  # newest first
    wheel = toolchain.find_nvcc(environ={}, system_roots=(), site_dirs=look["site_dirs"])
    assert (wheel.version, wheel.home) == ("13.0", str(tmp_path / "site" / "nvidia" / "cu13"))
    assert toolchain.find_nvcc(environ={}, system_roots=(), site_dirs=[]) is None


def test_cache_dir_default(tmp_path, monkeypatch):
    monkeypatch.setenv("OPFORGE_CUDA_CACHE", str(tmp_path / "c"))
    assert toolchain.cache_dir_default() == str(tmp_path / "c")
    monkeypatch.delenv("OPFORGE_CUDA_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert toolchain.cache_dir_default() == str(tmp_path / "h" / ".cache" / "opforge" / "cuda")


# -- the cubin and ptxas -----------------------------------------------------------------------------------

def test_softmax_cubin_reports_registers_shared_memory_and_barriers(tc, tmp_path):
    result = nvcc.compile_cubin(SOFTMAX, 90, str(tmp_path), toolchain=tc)
    (entry,) = result["kernels"]
    assert entry["kernel"] == "softmax_kernel" and entry["mangled"] == "_Z14softmax_kernelPKfPfi"
    assert entry["arch"] == "sm_90" and 8 <= entry["registers"] <= 255
    assert entry["shared_bytes"] == 256 * 4 and entry["barriers"] == 1
    assert entry["spill_stores"] == entry["spill_loads"] == 0
    assert result["tool"] == "nvcc" and result["version"] == tc.version and not result["cached"]
    assert 0 < result["seconds"] < 60


def test_ptxas_parse_per_entry_function():
    report = textwrap.dedent("""\
        ptxas info    : Compiling entry function '_Z1aPf' for 'sm_90'
        ptxas info    : Function properties for _Z1aPf
            256 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
        ptxas info    : Used 40 registers, used 2 barriers, 2048 bytes smem, 368 bytes cmem[0], 16 bytes lmem
        ptxas info    : Function properties for _Z3devPf
            0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
        ptxas info    : Compiling entry function 'plain' for 'sm_90'
        ptxas info    : Used 6 registers
        """)
    first, second = nvcc.parse_ptxas(report)
    assert (first["registers"], first["barriers"], first["shared_bytes"], first["constant_bytes"],
            first["local_bytes"], first["stack_bytes"], first["spill_stores"], first["spill_loads"]) == \
        (40, 2, 2048, 368, 16, 256, 8, 4)
    assert (second["kernel"], second["registers"], second["barriers"], second["shared_bytes"]) == ("plain", 6, 0, 0)
    assert nvcc.short_name("void scale<256, (Mode)1>(float*, int)") == "scale<256, (Mode)1>"


def test_compile_error_names_the_candidate_line_and_its_text(tc, tmp_path):
    with pytest.raises(nvcc.NvccError) as err:
        nvcc.compile_cubin(BROKEN, 90, str(tmp_path), toolchain=tc, first_line=10)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith('build-error: nvcc: candidate line 13: error: identifier "foo" is undefined | '
                              "y[i] = foo;"), message
    with pytest.raises(nvcc.NvccError, match=r'^build-error: nvcc: line 4: error: identifier "foo"'):
        nvcc.compile_cubin(BROKEN, 90, str(tmp_path), toolchain=tc)


def test_cubin_cache_hit_is_fast_and_keyed_by_arch(tc, tmp_path):
    nvcc.compile_cubin(SOFTMAX, 90, str(tmp_path), toolchain=tc)
    started = time.perf_counter()
    again = nvcc.compile_cubin(SOFTMAX, 90, str(tmp_path), toolchain=tc)
    assert again["cached"] and time.perf_counter() - started < 0.05
    assert not nvcc.compile_cubin(SOFTMAX, 80, str(tmp_path), toolchain=tc)["cached"]
    assert not [p for p in os.listdir(tmp_path) if p.startswith("build-")]  # no work folder left behind


# -- the shared library ---------------------------------------------------------------------------------------

def test_build_shared_loads_without_a_gpu_and_reports_the_last_error(tc, tmp_path):
    path = toolchain.build_shared(SOFTMAX, 90, str(tmp_path), toolchain=tc)
    lib = ctypes.CDLL(path)  # cudart is linked statically: loads with no driver or GPU present
    assert lib.softmax_launch is not None
    buf = ctypes.create_string_buffer(256)
    code = lib.opforge_cuda_last_error(buf, len(buf))
    assert (code == 0 and buf.value == b"") or (code != 0 and buf.value), (code, buf.value)
    started = time.perf_counter()
    assert toolchain.build_shared(SOFTMAX, 90, str(tmp_path), toolchain=tc) == path
    assert time.perf_counter() - started < 0.05


def test_build_shared_error_is_one_line(tc, tmp_path):
    with pytest.raises(toolchain.BuildError, match=r"^nvcc: line 4: error: identifier \"foo\" is undefined \| "):
        toolchain.build_shared(BROKEN, 90, str(tmp_path), toolchain=tc)
    with pytest.raises(toolchain.ToolchainError, match="architecture"):
        toolchain.build_shared(SOFTMAX, "sm_90", str(tmp_path), toolchain=tc)


# -- NVIDIA's wheels, with no toolkit in sight ------------------------------------------------------------------

def test_wheels_alone_give_a_working_nvcc(tmp_path):
    """The pinned wheels `make setup` installs where no toolkit exists, in a folder of their own: found
    with CUDA_HOME unset, PATH without nvcc and no system roots, and they build a cubin and a loadable
    shared library (about 10 s here, pip's cache warm)."""
    if not shutil.which("g++"):
        unavailable("no g++: nvcc needs a host compiler")
    target = tmp_path / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                          "-r", str(WHEELS)], capture_output=True, text=True, timeout=600)
    if pip.returncode != 0:
        unavailable(f"cannot install NVIDIA's nvcc wheels: {pip.stderr.strip().splitlines()[-1:]}")
    script = textwrap.dedent(f"""\
        import json
        from opforge.backends.cuda import nvcc, toolchain
        found = toolchain.find_nvcc(system_roots=())
        result = nvcc.compile_cubin({SOFTMAX!r}, 90, {str(tmp_path / "cache")!r}, toolchain=found)
        shared = toolchain.build_shared({SOFTMAX!r}, 90, {str(tmp_path / "cache")!r}, toolchain=found)
        print(json.dumps([found.nvcc, found.version, result["kernels"][0]["registers"], shared]))
        """)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": f"{target}{os.pathsep}{ROOT}"}
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    nvcc_path, version, registers, shared = json.loads(run.stdout.strip().splitlines()[-1])
    assert nvcc_path == str(target / "nvidia" / "cu13" / "bin" / "nvcc") and version == "13.0" and registers > 0
    assert ctypes.CDLL(shared).opforge_cuda_last_error is not None  # linked against the wheel's static cudart
