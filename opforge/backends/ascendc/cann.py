"""The part of the AscendC backend that needs Huawei's CANN toolkit (ASCEND_HOME_PATH): render the
project into a directory, the command lines that build it (CMake with `find_package(ASC)` and
bisheng for the direct-launch form, `msopgen` + the generated `build.sh` for MultiKernelBench's),
and the parsers of what those tools print. Kept small and free of side effects but for `build()`,
because no machine here has CANN: tests/test_ascendc_cann.py checks the command lines and the
parsers against recorded output (tests/data/ascendc/*.txt). Nothing of CANN is vendored.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from opforge.backends.ascendc.project import Project, snake

NO_CANN = ("AscendC cannot be compiled or run here: bisheng, hivmc and the CPU model ship only in the CANN "
           "toolkit")
ARCH = "dav-2201"  # Atlas A2 / A3 (910B, 910C): CMAKE_ASC_ARCHITECTURES' default
SOC = "ascend910b"
DIAGNOSTIC = re.compile(r"^(?P<path>[^:\s][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?:fatal )?error:\s*(?P<msg>.+)$")
ASSERT = re.compile(r"\[ASSERT\]\s*(?P<path>[^:\s]+):(?P<line>\d+):\s*(?P<msg>.+)$")

CMAKE_DIRECT = """cmake_minimum_required(VERSION 3.16)
find_package(ASC REQUIRED)
project({module} LANGUAGES ASC CXX)
set(CMAKE_CXX_STANDARD 17)
execute_process(COMMAND ${{PYTHON}} -c "import torch, torch_npu, os, sysconfig; print(';'.join([*torch.utils.cpp_extension.include_paths(), os.path.join(os.path.dirname(torch_npu.__file__), 'include'), sysconfig.get_paths()['include']]))"
                OUTPUT_VARIABLE TORCH_INCLUDES OUTPUT_STRIP_TRAILING_WHITESPACE)
set_source_files_properties({kernels} PROPERTIES LANGUAGE ASC)
add_library({module} MODULE {sources})
set_target_properties({module} PROPERTIES PREFIX "" OUTPUT_NAME {module})
target_include_directories({module} PRIVATE ${{CMAKE_CURRENT_SOURCE_DIR}} ${{TORCH_INCLUDES}})
target_link_libraries({module} PRIVATE tiling_api register platform)
target_compile_options({module} PRIVATE $<$<COMPILE_LANGUAGE:ASC>:--npu-arch={arch}>)
"""


@dataclass(frozen=True)
class Rendered:
    root: Path
    display: dict[str, str]  # rendered path (relative to root) -> how reasons name it

    def name(self, path: str) -> str:
        """How a reason names a file a tool printed (absolute, relative, or another build's copy)."""
        hits = [key for key in self.display if path == key or path.endswith("/" + key)]
        if not hits:
            hits = [key for key in self.display if Path(key).name == Path(path).name]
            hits = hits if len(hits) == 1 else []
        return self.display[max(hits, key=len)] if hits else Path(path).name


def cann_home() -> Path | None:
    home = os.environ.get("ASCEND_HOME_PATH")
    return Path(home) if home and Path(home).is_dir() else None


def find_bisheng(home: Path | None = None) -> str | None:
    home = home if home is not None else cann_home()
    dirs = [] if home is None else [home / "bin", home / "compiler" / "ccec_compiler" / "bin"]
    return shutil.which("bisheng", path=os.pathsep.join([*map(str, dirs), os.environ.get("PATH", "")]))


def unavailable() -> str | None:
    """None when this machine can build AscendC, else the one-line reason the steps are skipped."""
    if cann_home() is None or find_bisheng() is None:
        return NO_CANN
    return None


# -- render ------------------------------------------------------------------------------------------

def render(project: Project, root: Path, module: str) -> Rendered:
    """Write the project where CANN's build expects it; returns where each file went."""
    root.mkdir(parents=True, exist_ok=True)
    if project.form == "direct":
        return _render_direct(project, root, module)
    return _render_mkb(project, root)


def _render_direct(project: Project, root: Path, module: str) -> Rendered:
    for f in project.files:
        (root / f.name).write_text(f.text)
    sources = [f.name for f in project.files if f.role == "source"]
    kernels = [f.name for f in project.files if f.role == "source" and "__aicore__" in f.text] or sources
    (root / "CMakeLists.txt").write_text(CMAKE_DIRECT.format(module=module, sources=" ".join(sources),
                                                             kernels=" ".join(kernels), arch=ARCH))
    return Rendered(root, {f.name: f.display for f in project.files})


def _render_mkb(project: Project, root: Path) -> Rendered:
    """msopgen's layout: <Op>.json beside the project; op_host/, op_kernel/ and the binding inside it."""
    op, stem = project.op["op"], snake(project.op["op"])
    by_display = {f.display: f for f in project.files}
    placed = {f"{op}/op_host/{stem}_tiling.h": "host_tiling_src", f"{op}/op_host/{stem}.cpp": "host_operator_src",
              f"{op}/op_kernel/{stem}.cpp": "kernel_src", "CppExtension/csrc/op.cpp": "python_bind_src"}
    (root / f"{op}.json").write_text(json.dumps([project.op], indent=4))
    for path, display in placed.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(by_display[display].text)
    return Rendered(root, dict(placed))


# -- command lines -------------------------------------------------------------------------------------

def cmake_configure(source: Path, build: Path, mode: str = "npu", arch: str = ARCH, python: str = "python3") -> list[str]:
    """`mode`: npu (device code), cpu (Huawei's CPU twin) or sim (the NPU simulator)."""
    if mode not in ("npu", "cpu", "sim"):
        raise ValueError(f"CMAKE_ASC_RUN_MODE is npu, cpu or sim, not {mode!r}")
    return ["cmake", "-S", str(source), "-B", str(build), f"-DCMAKE_ASC_RUN_MODE={mode}",
            f"-DCMAKE_ASC_ARCHITECTURES={arch}", f"-DPYTHON={python}"]


def cmake_build(build: Path, jobs: int = 4) -> list[str]:
    return ["cmake", "--build", str(build), "-j", str(jobs)]


def msopgen_gen(json_file: Path, out: Path, soc: str = SOC) -> list[str]:
    """MultiKernelBench's project generation: `msopgen gen -i Op.json -c ai_core-<soc> -lan cpp -out Op`."""
    return ["msopgen", "gen", "-i", str(json_file), "-c", f"ai_core-{soc}", "-lan", "cpp", "-out", str(out)]


def msopgen_build(project_dir: Path) -> list[str]:
    return ["bash", str(project_dir / "build.sh")]


# -- parsers -------------------------------------------------------------------------------------------

def compile_errors(output: str, rendered: Rendered, limit: int = 5) -> list[str]:
    """bisheng's diagnostics (clang's `path:line:col: error: message`) as reason lines naming the
    candidate's own file (`compile: message (kernel_src:42)`); the first `limit`."""
    reasons = []
    for line in output.splitlines():
        match = DIAGNOSTIC.match(line.strip())
        if not match:
            continue
        name = rendered.name(match["path"])
        reason = f"compile: {match['msg'].strip()[:300]} ({name}:{match['line']})"
        if reason not in reasons:
            reasons.append(reason)
        if len(reasons) == limit:
            break
    return reasons


def cpu_twin_result(returncode: int, output: str, rendered: Rendered) -> tuple[bool, str | None]:
    """(passed, reason) of a CPU-twin run: an `[ASSERT]` from the kernel, an `[ERROR]` line from
    the twin's runtime, or a non-zero exit fail it; a clean exit with none of those passes."""
    for line in output.splitlines():
        if match := ASSERT.search(line):
            name = rendered.name(match["path"])
            return False, f"cpu-twin: {match['msg'].strip()[:300]} ({name}:{match['line']})"
    for line in output.splitlines():
        if "[ERROR]" in line:
            return False, f"cpu-twin: {line.split('[ERROR]', 1)[1].strip()[:300]}"
    if returncode != 0:
        signal = f"signal {-returncode}" if returncode < 0 else f"exit {returncode}"
        return False, f"cpu-twin: the CPU twin died ({signal})"
    return True, None


def build(project: Project, workdir: Path, module: str, mode: str = "npu", timeout: float = 600.0) -> tuple[Path | None, list[str]]:
    """Render and build (only where CANN is installed): (build directory, reasons). MultiKernelBench's
    form runs msopgen first and then puts the candidate's files over the skeleton it generated."""
    src = workdir / "src"
    if project.form == "direct":
        rendered = render(project, src, module)
        out = workdir / f"build-{mode}"
        steps = [cmake_configure(rendered.root, out, mode), cmake_build(out)]
    else:
        src.mkdir(parents=True, exist_ok=True)
        op = project.op["op"]
        (src / f"{op}.json").write_text(json.dumps([project.op], indent=4))
        rendered, out = None, src / op
        steps = [msopgen_gen(src / f"{op}.json", out), msopgen_build(out)]
    for number, step in enumerate(steps):
        if rendered is None and number == 1:
            rendered = render(project, src, module)
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=timeout, cwd=src)
        except subprocess.TimeoutExpired:
            return None, [f"compile: {step[0]} did not finish within {timeout:.0f} s"]
        if done.returncode != 0:
            output = done.stdout + done.stderr
            tail = (output.strip().splitlines() or [""])[-1][:200]
            found = compile_errors(output, rendered) if rendered else []
            return None, found or [f"compile: {' '.join(step[:2])} failed: {tail}"]
    return out, []
