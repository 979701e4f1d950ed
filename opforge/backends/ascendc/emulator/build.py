"""Build an AscendC project for the emulator: every project file a translation unit of its own
(launches rewritten, translate.py), the generated glue (glue.py) and the library's C entry points,
compiled with g++ against include/ (the kernel-side model) and include/host/ (the CANN and PyTorch
host shims), linked into one shared library.

Cached by a hash of everything that goes into it under tempfile.gettempdir() (a sandbox with a
read-only /usr and a writable TMPDIR can build); a library appears there atomically (written under
a temporary name, then renamed). The entry unit, the same for every project, is compiled once per
header version. A compile error naming an AscendC API the static table (api.py) knows and the
emulator lacks, or a CANN / PyTorch host API the shims lack, is UnsupportedFeature naming it;
other errors are EmuBuildError on the project's own file:line."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from opforge.backends.ascendc.api import KERNEL_CALLS, SCALAR
from opforge.backends.ascendc.emulator import glue
from opforge.backends.ascendc.emulator.errors import EmuBuildError, EmulatorError, StepLimitError, UnsupportedFeature
from opforge.backends.ascendc.emulator.translate import TranslateError, kernels, launch_header, rewrite_launches
from opforge.backends.ascendc.project import MKB_MODULE, Project, snake

INCLUDE_DIR = Path(__file__).resolve().parent / "include"
HOST_DIR = INCLUDE_DIR / "host"
# -O1: a kernel's loops run millions of emulated API calls, and -O1 compiles in about half -O2's time;
# -ffp-contract=off: no fused multiply-adds the source did not ask for (results must match bitwise across
# schedules and the reference's rounding); -fno-finite-loops: an endless loop stays one, for the step limit;
# -fno-gnu-unique (with -Bsymbolic): the headers' function-local statics (the machine, the binding tables) stay
# each library's own, where GCC's default unique symbols would make two libraries in one process share them.
FLAGS = ["-std=c++20", "-O1", "-fPIC", "-w", "-fno-strict-aliasing", "-ffp-contract=off", "-fno-finite-loops",
         "-fno-gnu-unique"]
LINK_FLAGS = ["-shared", "-Wl,-Bsymbolic", "-Wl,-z,defs"]
PRELUDE = "opforge_kernel_prelude.h"
LOAD_TIMEOUT_S = 5.0
COMPILE_TIMEOUT_S = 240.0
_ERROR = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:\d+:)? (?:fatal )?error: (?P<msg>.*)$", re.M)
_MISSING = [  # g++'s words for a name it does not know, and where the name is
    re.compile(r"'(?:[\w:]*::)?(?P<name>\w+)' is not a member of '(?P<scope>[\w:]+)"),
    re.compile(r"'(?:[\w:]*::)?(?P<name>\w+)' was not declared in this scope"),
    re.compile(r"'(?:const )?(?:class |struct )?(?P<scope>[\w:]+)[^']*' has no member named '(?P<name>\w+)'"),
    re.compile(r"no matching function for call to '(?:[\w:]*::)?(?P<name>\w+)[(<]"),
    re.compile(r"'(?P<name>\w+)' in namespace '(?P<scope>[\w:]+)' does not name a (?:template )?type"),
    re.compile(r"'(?P<name>\w+)' (?:was not declared|does not name a type)"),
]
HOST_SCOPES = ("gert", "ge", "ops", "optiling", "platform_ascendc", "at", "c10", "torch", "fe", "c10_npu", "pybind11")


@dataclass(frozen=True)
class Built:
    path: str
    seconds: float
    cached: bool
    display: dict  # file name g++ and the emulator's messages use -> how reasons name it


@dataclass
class Layout:
    units: dict[str, str] = field(default_factory=dict)  # translation unit -> text
    headers: dict[str, str] = field(default_factory=dict)
    display: dict[str, str] = field(default_factory=dict)
    prelude_units: set[str] = field(default_factory=set)  # units compiled with -include PRELUDE
    module: str = MKB_MODULE


def default_cache_dir() -> str:
    return os.path.join(tempfile.gettempdir(), f"opforge-ascendc-emu-{os.getuid()}")


def compiler() -> str | None:
    return shutil.which("g++") or ("/usr/bin/g++" if os.path.exists("/usr/bin/g++") else None)


def header_digest() -> str:
    h = hashlib.sha256()
    for path in sorted(INCLUDE_DIR.rglob("*")):
        if path.is_file():
            h.update(str(path.relative_to(INCLUDE_DIR)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def layout(project: Project, column: int = 0) -> Layout:
    """The files g++ compiles for `project` (type combination `column` of MultiKernelBench's JSON)."""
    out = Layout(module=MKB_MODULE if project.form == "multikernelbench" else
                 (sorted(project.modules)[0] if project.modules else MKB_MODULE))
    shadowed = [f.name for f in project.files if (INCLUDE_DIR / f.name).is_file() or (HOST_DIR / f.name).is_file()]
    if shadowed:  # a quoted include finds the project's own file first: it would replace the emulator's model
        raise EmuBuildError(f"emu-build: the project's file {shadowed[0]} has the name of a CANN header the emulator "
                            "provides; a project brings its own headers under its own names")
    try:
        for f in project.files:
            text = rewrite_launches(f.text)
            (out.headers if f.role == "header" else out.units)[f.name] = text
            out.display[f.name] = f.display
        if project.form == "multikernelbench":
            _mkb_glue(project, out, column)
        else:
            for f in project.files:
                for k in kernels(f.text):
                    out.headers.setdefault(f"aclrtlaunch_{k.name}.h", launch_header(k))
    except (TranslateError, glue.GlueError) as exc:
        raise EmuBuildError(f"emu-build: {exc}") from None
    for name in _missing_shims(project):
        out.headers[name] = f"// generated by opforge's AscendC emulator: {name} as the host shims model it\n" \
                            '#pragma once\n#include "opforge_host/all.h"\n'
    return out


_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]((?:torch|ATen|c10|pybind11|torch_npu)/[\w./-]+\.h(?:pp)?)[>"]', re.M)


def _missing_shims(project: Project) -> list[str]:
    """PyTorch headers a host file includes that include/host/ has no file for (torch/csrc/autograd/...):
    each stands for the host shims as a whole (an API they lack is then named by g++, not the header)."""
    names = {m.group(1) for f in project.files for m in _INCLUDE.finditer(f.text)}
    return sorted(n for n in names if ".." not in n and not (HOST_DIR / n).is_file())


def _mkb_glue(project: Project, out: Layout, column: int) -> None:
    by_display = {f.display: f for f in project.files}
    kernel_file = by_display["kernel_src"]
    out.headers[PRELUDE] = glue.kernel_prelude(project.op, by_display["host_tiling_src"].text, column)
    out.prelude_units.add(kernel_file.name)
    name = snake(project.op["op"])
    found = [k for k in kernels(kernel_file.text) if k.name == name]
    if not found:
        raise glue.GlueError(f"kernel_src defines no kernel {name} (CANN launches operator {project.op['op']} as "
                             f'extern "C" __global__ __aicore__ void {name}(...))')
    out.units["opforge_glue.cpp"] = glue.glue_unit(found, column)


def build_project(project: Project, column: int = 0, cache_dir: str | None = None, *, probe: bool = True,
                  prebuilt_dir: str | None = None) -> Built:
    """The emulated library of `project`; raises EmulatorError subclasses (never for a cached build).
    `probe=False` (the verifying process, which must never run candidate code) compiles and links only;
    `prebuilt_dir`: a read-only cache looked in first (the verifying process's, mounted into the worker)."""
    lay = layout(project, column)
    gxx = compiler()
    if gxx is None:
        raise EmuBuildError("emu-build: no g++ on PATH (the emulator compiles the project for the host with g++)")
    digest = header_digest()
    parts = [digest, " ".join(FLAGS + LINK_FLAGS), lay.module, *sorted(lay.prelude_units)]
    for name, text in sorted({**lay.units, **lay.headers}.items()):
        parts += [name, text]
    key = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]
    folder = Path(cache_dir or default_cache_dir())
    target = folder / f"asc-{key}.so"
    display = {**lay.display, "opforge_glue.cpp": "the generated glue"}
    for found in (Path(prebuilt_dir) / target.name if prebuilt_dir else None, target):
        if found is not None and found.exists():
            return Built(str(found), 0.0, True, display)
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as scratch:
        work = Path(scratch)
        for name, text in {**lay.units, **lay.headers}.items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(text)
        objects = _compile_all(gxx, lay, work, folder, digest)
        out = work / target.name
        _run([gxx, *objects, *LINK_FLAGS, "-o", str(out)], work, lay.display)
        if probe:
            probe_load(out)
        os.replace(out, target)
    return Built(str(target), time.perf_counter() - started, False, display)


def _compile_all(gxx: str, lay: Layout, work: Path, folder: Path, digest: str) -> list[str]:
    """Every unit to an object, two g++ at a time; the entry unit from the cache where it was built."""
    entry = folder / f"entry-{hashlib.sha256((digest + ' '.join(FLAGS)).encode()).hexdigest()[:24]}.o"
    jobs = []
    for name in lay.units:
        extra = ["-include", "opforge_host/launch_arg.h", *(["-include", PRELUDE] if name in lay.prelude_units else [])]
        jobs.append((name, [*extra, str(work / name)], str(work / (name + ".o"))))
    if not entry.exists():
        (work / "opforge_entry.cpp").write_text(glue.ENTRY_UNIT)
        jobs.append(("opforge_entry.cpp", [str(work / "opforge_entry.cpp")], str(work / "entry.o")))
    base = [gxx, *FLAGS, f"-DTORCH_EXTENSION_NAME={lay.module}", "-I", str(work), "-I", str(HOST_DIR),
            "-I", str(INCLUDE_DIR), "-c"]
    env = {**os.environ, "LC_ALL": "C"}
    running: list = []
    for name, args, obj in jobs:
        running.append((name, subprocess.Popen([*base, *args, "-o", obj], cwd=work, env=env, text=True,
                                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)))
        if len(running) >= 2:
            _finish(running.pop(0), lay.display)
    for job in running:
        _finish(job, lay.display)
    if not entry.exists():
        os.replace(work / "entry.o", entry)
    return [obj for name, _, obj in jobs if name != "opforge_entry.cpp"] + [str(entry)]


def _finish(job, display: dict) -> None:
    name, proc = job
    try:
        _, stderr = proc.communicate(timeout=COMPILE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise EmuBuildError(f"emu-build: g++ ran past {COMPILE_TIMEOUT_S:g} s on {display.get(name, name)}") from None
    if proc.returncode != 0:
        raise build_error(stderr, display)


def _run(cmd: list[str], cwd: Path, display: dict) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env={**os.environ, "LC_ALL": "C"})
    if proc.returncode != 0:
        raise build_error(proc.stderr, display)


def probe_load(library: Path) -> None:
    """Load the library once in a child: the candidate's namespace-scope initialisers (OP_ADD, a static
    object's constructor) run at load, before any limit could stop them."""
    probe = "import ctypes, sys; ctypes.CDLL(sys.argv[1])"
    try:
        done = subprocess.run([sys.executable, "-c", probe, str(library)], capture_output=True, timeout=LOAD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise StepLimitError(f"step-limit: loading the library ran past {LOAD_TIMEOUT_S:g} s (a namespace-scope "
                             "initialiser that never returns)") from None
    if done.returncode != 0:
        tail = " ".join(done.stderr.decode(errors="replace").split())[-300:]
        raise EmulatorError(f"crash: loading the library failed (exit {done.returncode}): {tail or 'no message'}")


def build_error(stderr: str, display: dict) -> EmulatorError:
    """g++'s (or the linker's) words as one reason: UnsupportedFeature for an API the emulator lacks."""
    located = [(m, display.get(Path(m.group("file")).name)) for m in _ERROR.finditer(stderr)]
    for k, (m, where) in enumerate(located):
        notes = stderr[m.end():located[k + 1][0].start() if k + 1 < len(located) else len(stderr)]
        missing = None if "deduced conflicting types" in notes else unsupported_name(m.group("msg"))
        if missing:
            place = f" ({where}:{m.group('line')})" if where else f" ({_project_line(stderr, display) or 'a header'})"
            return UnsupportedFeature(f"unsupported: {missing}{place} is not modelled by opforge's AscendC emulator")
    if not located:
        undefined = re.search(r"undefined reference to `([^']+)'", stderr)
        if undefined:
            return EmuBuildError(f"emu-build: link error: undefined reference to {undefined.group(1)}")
        tail = " ".join(stderr.strip().splitlines()[-3:])[:400]
        return EmuBuildError(f"emu-build: g++ failed: {tail or 'no message'}")
    m, where = located[0]
    msg = " ".join(m.group("msg").split())[:300]
    place = f"{where}:{m.group('line')}" if where else _project_line(stderr, display)
    return EmuBuildError(f"emu-build: {place or 'a header'}: error: {msg}")


def _project_line(stderr: str, display: dict) -> str | None:
    """The first place in the project's own files that g++'s context lines name (an error inside a header)."""
    for m in re.finditer(r"^(?:In file included from )?([^:\s]+):(\d+):", stderr, re.M):
        where = display.get(Path(m.group(1)).name)
        if where:
            return f"{where}:{m.group(2)}"
    return None


def unsupported_name(message: str) -> str | None:
    """The AscendC or host API a g++ error says is missing, where it is one the emulator should know."""
    for pattern in _MISSING:
        m = pattern.search(message)
        if not m:
            continue
        name, scope = m.group("name"), (m.groupdict().get("scope") or "")
        root = scope.split("::")[0]
        if name in KERNEL_CALLS and name not in SCALAR:
            return f"AscendC::{name}" if root in ("", "AscendC") else f"{scope}::{name}"
        if root in HOST_SCOPES:
            return f"{scope}::{name}"
    return None
