"""Build a CUDA_SRC for the emulator: translate, compile with g++ against the emulator's header
into a shared library, cached by a hash of everything that goes into it.

The cache lives under tempfile.gettempdir() unless told otherwise, so a sandbox (read-only /usr, a
writable scratch TMPDIR) can build; a library appears there atomically (written under a temporary
name, then renamed), so concurrent builds of one source never see half a file."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from opforge.backends.cuda.emulator.errors import (EmuBuildError, EmulatorError, StepLimitError,
                                                          UnsupportedFeature)
from opforge.backends.cuda.emulator.features import asm_after_preprocessing, unsupported_features
from opforge.backends.cuda.emulator.translate import FILE_NAME, TranslateError, translate

INCLUDE_DIR = Path(__file__).resolve().parent / "include"
# -fno-strict-aliasing: CUDA code reinterprets float* as float4*; -ffp-contract=off: no fused
# multiply-adds the source did not ask for; -fno-finite-loops: an endless loop stays one (to be
# stopped by the step limit) instead of being deleted as undefined behaviour; -Bsymbolic: two emulated libraries in one process
# never bind to each other's runtime.
# -fsanitize=thread: GCC's instrumentation calls a hook before every memory access the compiler
# cannot prove thread-private; the hooks are the emulator's memory model (include/emu_mem.h), so the
# object is linked without libtsan; volatile accesses get hooks of their own; -g1: line tables, so a
# race or fault names its CUDA_SRC line.
FLAGS = ["-std=c++17", "-O2", "-fPIC", "-w", "-pthread", "-fno-strict-aliasing", "-ffp-contract=off",
         "-fno-finite-loops", "-fsanitize=thread", "--param", "tsan-distinguish-volatile=1", "-g1"]
LINK_FLAGS = ["-shared", "-pthread", "-Wl,-Bsymbolic", "-Wl,-z,defs"]
LOAD_TIMEOUT_S = 5.0  # wall seconds for the load probe (a Python start and a dlopen: about 0.05 s)
_ERROR = re.compile(rf"^(?P<file>[^:\n]+):(?P<line>\d+):(?:\d+:)? (?:fatal )?error: (?P<msg>.*)$", re.M)
_SOURCE_LINE = re.compile(rf"^{FILE_NAME}:(\d+):", re.M)


@dataclass(frozen=True)
class Built:
    path: str
    seconds: float
    cached: bool


def default_cache_dir() -> str:
    return os.path.join(tempfile.gettempdir(), f"opforge-cuda-emu-{os.getuid()}")


def compiler() -> str | None:
    return shutil.which("g++") or ("/usr/bin/g++" if os.path.exists("/usr/bin/g++") else None)


def _header_digest() -> str:
    h = hashlib.sha256()
    for path in sorted(INCLUDE_DIR.glob("*.h")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def build_library(source: str, cache_dir: str | None = None) -> Built:
    """The path of the emulated shared library for `source`; raises EmulatorError subclasses."""
    features = unsupported_features(source)
    if features:
        raise UnsupportedFeature(f"unsupported: {', '.join(features)} cannot be emulated")
    try:
        unit = translate(source)
    except TranslateError as e:
        raise EmuBuildError(f"emu-build: {e}") from None
    gxx = compiler()
    if gxx is None:
        raise EmuBuildError("emu-build: no g++ on PATH (the emulator compiles CUDA_SRC for the host with g++)")
    key = hashlib.sha256("\0".join([unit, _header_digest(), " ".join(FLAGS + LINK_FLAGS)]).encode()).hexdigest()[:32]
    folder = Path(cache_dir or default_cache_dir())
    target = folder / f"emu-{key}.so"
    if target.exists():
        return Built(str(target), 0.0, True)
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    _compile(gxx, unit, source, target)
    return Built(str(target), time.perf_counter() - started, False)


def _compile(gxx: str, unit: str, source: str, target: Path) -> None:
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as scratch:
        cpp = Path(scratch) / "candidate.cpp"
        cpp.write_text(unit)
        out = Path(scratch) / target.name
        # -save-temps: the preprocessed unit is checked for asm that only macros reveal, before the
        # library may be loaded (asm in host C++ would run on this CPU).
        obj = Path(scratch) / "candidate.o"
        env = {**os.environ, "LC_ALL": "C"}  # ASCII quotes in messages
        proc = subprocess.run([gxx, *FLAGS, "-c", "-save-temps=obj", "-I", str(INCLUDE_DIR), str(cpp), "-o", str(obj)],
                              capture_output=True, text=True, cwd=scratch, env=env)
        if proc.returncode != 0:
            raise EmuBuildError(build_error_message(proc.stderr, source))
        # -z defs: a symbol nothing defines (a runtime call the emulator lacks) fails here, not at load
        proc = subprocess.run([gxx, str(obj), *LINK_FLAGS, "-o", str(out)], capture_output=True, text=True,
                              cwd=scratch, env=env)
        if proc.returncode != 0:
            raise EmuBuildError(build_error_message(proc.stderr, source))
        for ii in Path(scratch).glob("*.ii"):
            line = asm_after_preprocessing(ii.read_text(errors="replace"), FILE_NAME)
            if line is not None:
                raise UnsupportedFeature(f"unsupported: inline asm (line {line}, after macro expansion) "
                                         "cannot be emulated")
        _probe_load(out)
        os.replace(out, target)


def _probe_load(library: Path) -> None:
    """Load the library once in a child process: its namespace-scope initialisers run at load,
    before any watchdog could be armed, so one that never returns (or crashes) is found here."""
    probe = "import ctypes, sys; ctypes.CDLL(sys.argv[1])"
    try:
        done = subprocess.run([sys.executable, "-c", probe, str(library)], capture_output=True, timeout=LOAD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise StepLimitError(f"step-limit: loading the library ran past {LOAD_TIMEOUT_S:g} s (a namespace-scope "
                             "initialiser that never returns)") from None
    if done.returncode != 0:
        tail = " ".join(done.stderr.decode(errors="replace").split())[-300:]
        raise EmulatorError(f"crash: loading the library failed (exit {done.returncode}): {tail or 'no message'}")


def build_error_message(stderr: str, source: str) -> str:
    """g++'s first error as one line on CUDA_SRC's line numbers, with the offending line."""
    m = _ERROR.search(stderr)
    if m is None:
        tail = " ".join(stderr.strip().splitlines()[-3:])[:400]
        return f"emu-build: g++ failed: {tail or 'no message'}"
    msg = " ".join(m.group("msg").split())
    if m.group("file") == FILE_NAME:
        line = int(m.group("line"))
    else:  # an error inside the emulator's header: the candidate's line is in the context lines
        context = _SOURCE_LINE.search(stderr)
        if context is None:
            return f"emu-build: error: {msg}"
        line = int(context.group(1))
    lines = source.splitlines()
    code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return f"emu-build: line {line}: error: {msg} | {line} | {code}"
