"""Find NVIDIA's CUDA compiler and build a candidate's CUDA source into a shared library.

Standard library only: this file is copied verbatim into every exported op library (as
`<pkg>/_cuda/toolchain.py`), where it builds the kernels at first use on a machine with nvcc.

nvcc is looked for, in order: `$CUDA_HOME`, `$CUDA_PATH`, `nvcc` on `$PATH`, `/usr/local/cuda*`
and `/opt/cuda`, then NVIDIA's PyPI wheels installed in this Python environment (`nvidia-cuda-nvcc`
13 and friends put one CUDA tree at `site-packages/nvidia/cu13`; `make setup` installs them where
no toolkit exists). Every build prepends PRELUDE and restarts the line count with `#line 1`, so a
compiler message names the candidate's own line. Builds are cached by a hash of the source, the
architecture and the compiler version; a cache entry is written under a temporary name and renamed
into place, so concurrent builds of the same source never see half a file.
"""
from __future__ import annotations

import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

__all__ = ["PRELUDE", "SOURCE_NAME", "BuildError", "Toolchain", "ToolchainError", "build_shared",
           "arch_flag", "cache_dir_default", "cache_key", "describe_errors", "find_nvcc", "run_nvcc"]

SOURCE_NAME = "candidate.cu"  # the file name compiler messages give the candidate's own lines
SYSTEM_ROOTS = ("/usr/local/cuda", "/usr/local/cuda-*", "/opt/cuda")
WHEEL_HOMES = ("nvidia/cu13",)  # CUDA 13 wheels: nvcc, nvvm, crt, runtime and cccl share one tree
NVCC_TIMEOUT_S = 300
# The launch helper calls this after each launcher: a bad grid or an unsupported architecture is
# reported by the runtime only through cudaGetLastError.
PRELUDE = r"""#include <cuda_runtime.h>
extern "C" int opforge_cuda_last_error(char* buf, int n) {
    cudaError_t err = cudaGetLastError();
    const char* text = err == cudaSuccess ? "" : cudaGetErrorString(err);
    if (buf != 0 && n > 0) {
        int i = 0;
        for (; i < n - 1 && text[i] != 0; ++i) buf[i] = text[i];
        buf[i] = 0;
    }
    return (int)err;
}
""" + f'#line 1 "{SOURCE_NAME}"\n'
_ERROR = re.compile(r"^(?P<file>[^\s:()]+)(?:\((?P<paren>\d+)\)|:(?P<colon>\d+)(?::\d+)?):\s*"
                    r"(?P<kind>(?:fatal |catastrophic )?error)\s*:?\s*(?P<msg>.*)$")
_probes: dict[tuple[str, float], tuple[str, str] | None] = {}


class ToolchainError(RuntimeError):
    """No usable nvcc, or a build failed; the message is one line."""


class BuildError(ToolchainError):
    """nvcc ran and refused the candidate's source (or ran past its time limit): the candidate's
    fault, where a plain ToolchainError is the machine's."""


@dataclass(frozen=True)
class Toolchain:
    nvcc: str  # the nvcc executable
    home: str  # the CUDA tree it belongs to (its bin/.. directory)
    version: str  # "13.0"

    def library_dirs(self) -> list[str]:
        """Where cudart_static lives: lib64 in a toolkit, lib in the wheels' tree (whose nvcc.profile
        names only lib64)."""
        found = [d for d in (os.path.join(self.home, "lib64"), os.path.join(self.home, "lib")) if os.path.isdir(d)]
        return list({os.path.realpath(d): d for d in found}.values())  # lib64 is often a link to lib


def _run(cmd: list[str]) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout + proc.stderr


def _probe(nvcc: str) -> tuple[str, str] | None:
    """(release, home) of an nvcc: the release `nvcc --version` reports ("13.0") and the tree its
    driver reads nvcc.profile from (`_HERE_/..` in a dry run: /usr/local/bin/nvcc may be a wrapper
    script). None when it does not run. Cached per file."""
    try:
        key = (os.path.realpath(nvcc), os.path.getmtime(nvcc))
    except OSError:
        return None
    if key not in _probes:
        release = re.search(r"release (\d+\.\d+)", _run([nvcc, "--version"]))
        here = re.search(r"^#\$ _HERE_=(.+)$", _run([nvcc, "-dryrun", "-x", "cu", "-E", os.devnull]), re.M)
        bin_dir = here.group(1).strip() if here else os.path.dirname(key[0])
        _probes[key] = (release.group(1), os.path.dirname(os.path.normpath(bin_dir))) if release else None
    return _probes[key]


def _candidates(environ, system_roots, site_dirs) -> list[str]:
    """Every nvcc path worth trying, in order of precedence."""
    found = [os.path.join(environ[var], "bin", "nvcc") for var in ("CUDA_HOME", "CUDA_PATH") if environ.get(var)]
    on_path = shutil.which("nvcc", path=environ.get("PATH", ""))
    found += [on_path] if on_path else []
    for pattern in system_roots:
        found += sorted(glob.glob(os.path.join(pattern, "bin", "nvcc")), reverse=True)  # newest first
    for site in (sys.path if site_dirs is None else site_dirs):
        found += [os.path.join(site, home, "bin", "nvcc") for home in WHEEL_HOMES]
    return found


def find_nvcc(*, environ=None, system_roots=SYSTEM_ROOTS, site_dirs=None) -> Toolchain | None:
    """The first nvcc that runs and names its release (see the module docstring for the order), or
    None. `environ` (default os.environ), `system_roots` (glob patterns) and `site_dirs` (default
    sys.path) are the places looked at; tests point them elsewhere."""
    environ = os.environ if environ is None else environ
    for nvcc in _candidates(environ, system_roots, site_dirs):
        if os.path.isfile(nvcc) and os.access(nvcc, os.X_OK) and (probe := _probe(nvcc)):
            return Toolchain(nvcc=nvcc, home=probe[1], version=probe[0])
    return None


def cache_dir_default() -> str:
    """$OPFORGE_CUDA_CACHE, else ~/.cache/opforge/cuda, else a per-user folder in the temp dir."""
    chosen = os.environ.get("OPFORGE_CUDA_CACHE")
    if chosen:
        return chosen
    home_cache = os.path.join(os.path.expanduser("~"), ".cache", "opforge", "cuda")
    try:
        os.makedirs(home_cache, exist_ok=True)
        if os.access(home_cache, os.W_OK):
            return home_cache
    except OSError:
        pass
    return os.path.join(tempfile.gettempdir(), f"opforge-cuda-{os.getuid()}")


def cache_key(*parts: object) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(str(part).encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def _line_of(source: str, line: int) -> str:
    lines = source.splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def describe_errors(stderr: str, source: str, first_line: int | None = None, limit: int = 3) -> str:
    """nvcc's first `limit` errors as one line, each with the candidate's line and its text:
    `line 4: error: identifier "foo" is undefined | y[i] = foo;`. With `first_line` (the file line
    on which the source string begins) lines are the candidate file's: `candidate line 23: ...`."""
    found = []
    for raw in stderr.splitlines():
        match = _ERROR.match(raw.strip())
        if not match:
            continue
        line, msg = int(match["paren"] or match["colon"]), f"{match['kind']}: {match['msg'].strip()}"
        if os.path.basename(match["file"]) != SOURCE_NAME:  # in a header or the prelude
            found.append(f"{os.path.basename(match['file'])}:{line}: {msg}")
        elif first_line is None:
            found.append(f"line {line}: {msg} | {_line_of(source, line)}")
        else:
            found.append(f"candidate line {first_line + line - 1}: {msg} | {_line_of(source, line)}")
        if len(found) == limit:
            break
    if not found:  # a ptxas or linker error has no line: its first line that says error
        lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
        found = [next((ln for ln in lines if "error" in ln.lower()), lines[0] if lines else "failed")]
    text = found[0] if len(found) == 1 else " ".join(f"({i}) {f}" for i, f in enumerate(found, 1))
    return text[:800]


def run_nvcc(toolchain: Toolchain, args: list[str], source: str, out_path: str,
             first_line: int | None = None) -> subprocess.CompletedProcess:
    """Compile PRELUDE + source with `nvcc args -o out_path`: written under a temporary name, renamed
    into place on success. Raises BuildError (one line, lines mapped) when nvcc refuses the source,
    ToolchainError when it cannot run."""
    if not (shutil.which("g++") or shutil.which("c++")):
        raise ToolchainError("nvcc: no host C++ compiler (g++) on PATH; nvcc needs one for every build")
    folder = os.path.dirname(out_path) or "."
    os.makedirs(folder, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="build-", dir=folder) as work:
        src = os.path.join(work, "source.cu")
        with open(src, "w", encoding="utf-8") as handle:
            handle.write(PRELUDE + source)
        tmp_out = os.path.join(work, os.path.basename(out_path))
        try:
            proc = subprocess.run([toolchain.nvcc, *args, "-o", tmp_out, src], capture_output=True, text=True,
                                  timeout=NVCC_TIMEOUT_S, cwd=work)
        except subprocess.TimeoutExpired:
            raise BuildError(f"nvcc: timed out after {NVCC_TIMEOUT_S} s") from None
        except OSError as exc:
            raise ToolchainError(f"nvcc: cannot run {toolchain.nvcc}: {exc.strerror}") from None
        if proc.returncode != 0 or not os.path.isfile(tmp_out):
            raise BuildError(f"nvcc: {describe_errors(proc.stderr + proc.stdout, source, first_line)}")
        os.replace(tmp_out, out_path)
    return proc


def arch_flag(arch: int) -> str:
    if not isinstance(arch, int) or isinstance(arch, bool) or not 50 <= arch <= 199:
        raise ToolchainError(f"nvcc: architecture must be an integer such as 90 (sm_90), not {arch!r}")
    return f"-arch=sm_{arch}"


def build_shared(source: str, arch: int, cache_dir: str | None = None, *, toolchain: Toolchain | None = None,
                 first_line: int | None = None) -> str:
    """The path of a shared library built from PRELUDE + source for sm_<arch> (cudart linked
    statically, so it loads with no CUDA toolkit around), cached by hash(source, arch, version)."""
    flag = arch_flag(arch)
    toolchain = toolchain or find_nvcc()
    if toolchain is None:
        raise ToolchainError("nvcc: not found (set CUDA_HOME, put nvcc on PATH, or run `make setup` "
                             "to install NVIDIA's compiler wheels)")
    args = ["-shared", "-Xcompiler", "-fPIC", "-O3", flag, "-cudart", "static", "-lineinfo"]
    key = cache_key(PRELUDE, source, " ".join(args), toolchain.version)
    path = os.path.join(cache_dir or cache_dir_default(), f"{key}.so")
    if not os.path.isfile(path):
        run_nvcc(toolchain, args + [f"-L{d}" for d in toolchain.library_dirs()], source, path, first_line)
    return path


def main() -> int:
    """`python toolchain.py`: say which nvcc a build would use; exit 1 when there is none (make setup
    then installs NVIDIA's wheels)."""
    found = find_nvcc()
    if found is None:
        print("nvcc: not found (CUDA_HOME, CUDA_PATH, PATH, /usr/local/cuda*, NVIDIA's wheels)")
        return 1
    print(f"nvcc {found.version}: {found.nvcc} (CUDA tree {found.home})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
