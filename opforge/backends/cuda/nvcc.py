"""A candidate's CUDA source compiled by the real nvcc to a cubin, with ptxas's resource report.

`nvcc -cubin -arch=sm_<arch> -Xptxas -v -lineinfo` (sm_90 without a GPU, the GPU's own arch with
one) gives, per entry function, registers, spill stores/loads, static shared memory, barriers and
stack: the same numbers the Triton backend records from its AOT compile (backends/triton/aot.py), under the
same keys. A compile error becomes NvccError, one line with nvcc's first errors mapped to the
candidate's lines and the text of each offending line: the drafter's feedback. Results are cached
by a hash of the source, the architecture and nvcc's version (a cache hit costs a file read).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time

from opforge.backends.cuda.toolchain import (PRELUDE, BuildError, Toolchain, ToolchainError, arch_flag,
                                                     cache_dir_default, cache_key, find_nvcc, run_nvcc)

__all__ = ["TOOL", "NvccError", "compile_cubin", "parse_ptxas", "parse_frames", "cubin_max_threads"]

TOOL = "nvcc"
CUBIN_FLAGS = ("-cubin", "-Xptxas", "-v", "-lineinfo")
_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(sm_\w+)'")
_PROPERTIES = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_FIELDS = {"barriers": re.compile(r"used (\d+) barriers"), "shared_bytes": re.compile(r"(\d+) bytes smem"),
           "local_bytes": re.compile(r"(\d+) bytes lmem")}
_CMEM = re.compile(r"(\d+) bytes cmem\[\d+\]")
# The cubin's per-kernel attributes (`.nv.info.<mangled>`, as `cuobjdump -elf` lists them):
# EIATTR_MAX_THREADS (`__launch_bounds__(max)`, PTX .maxntid) and EIATTR_REQNTID, 3 x u32 each.
_EIATTR_MAX_THREADS, _EIATTR_REQNTID, _EIFMT_SVAL = 0x05, 0x10, 0x04
RESOURCES_VERSION = "2"  # bumped when a compile record gains fields (cached records are rebuilt)


class NvccError(Exception):
    """nvcc refused the candidate: `build-error: nvcc: candidate line 23: error: ... | y[i] = foo;`."""


def _new_entry(mangled: str, arch: str) -> dict:
    return {"kernel": mangled, "mangled": mangled, "arch": arch, "registers": None, "spill_stores": None,
            "spill_loads": None, "stack_bytes": None, "shared_bytes": 0, "barriers": 0,
            "constant_bytes": None, "local_bytes": None}


def parse_ptxas(text: str) -> list[dict]:
    """One entry per kernel (`Compiling entry function`) of a `ptxas -v` report; numbers ptxas does
    not print for a kernel stay 0 (smem, barriers: it omits them when there are none) or None."""
    entries: list[dict] = []
    current: dict | None = None  # the entry the next "Function properties" / "Used" lines belong to
    for line in text.splitlines():
        if match := _ENTRY.search(line):
            current = _new_entry(*match.groups())
            entries.append(current)
        elif match := _PROPERTIES.search(line):  # a non-inlined __device__ function has them too
            current = next((e for e in entries if e["mangled"] == match.group(1)), None)
        elif current is not None and (match := _FRAME.search(line)):
            current["stack_bytes"], current["spill_stores"], current["spill_loads"] = map(int, match.groups())
        elif current is not None and (match := _USED.search(line)):
            current["registers"] = int(match.group(1))
            for key, pattern in _FIELDS.items():
                if found := pattern.search(line):
                    current[key] = int(found.group(1))
            if cmem := _CMEM.findall(line):
                current["constant_bytes"] = sum(map(int, cmem))
    return entries


def parse_frames(text: str) -> list[dict]:
    """The stack frame of every non-inlined __device__ function (not an entry) of a `ptxas -v`
    report: {"mangled", "name", "stack_bytes"}; a recursive function keeps its frame per call."""
    entries = {m.group(1) for m in _ENTRY.finditer(text)}
    frames, name = [], None
    for line in text.splitlines():
        if match := _PROPERTIES.search(line):
            name = match.group(1) if match.group(1) not in entries else None
        elif name is not None and (match := _FRAME.search(line)):
            frames.append({"mangled": name, "name": name, "stack_bytes": int(match.group(1))})
            name = None
    return frames


def cubin_max_threads(data: bytes) -> dict[str, int]:
    """Per mangled kernel, the most threads a block may have (`__launch_bounds__`), from the cubin's
    `.nv.info.<kernel>` sections: {} for a file that is not a 64-bit little-endian ELF."""
    if data[:6] != b"\x7fELF\x02\x01":
        return {}
    shoff, = struct.unpack_from("<Q", data, 0x28)
    entsize, count, names_at = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQ", data, shoff + i * entsize) for i in range(count)]
    names = sections[names_at][4]
    found = {}
    for name_off, _, _, _, offset, size in sections:
        name = data[names + name_off:data.index(b"\0", names + name_off)].decode(errors="replace")
        if not name.startswith(".nv.info."):
            continue
        at = offset
        while at + 4 <= offset + size:
            fmt, attr, value = struct.unpack_from("<BBH", data, at)
            at += 4
            if fmt != _EIFMT_SVAL:
                continue
            if attr in (_EIATTR_MAX_THREADS, _EIATTR_REQNTID) and value == 12:
                x, y, z = struct.unpack_from("<III", data, at)
                kernel = name.removeprefix(".nv.info.")
                found[kernel] = min(found.get(kernel, x * y * z), x * y * z)
            at += value
    return found


def _demangler(toolchain: Toolchain) -> str | None:
    """cu++filt (NVIDIA's, knows CUDA's extensions) beside nvcc or on PATH, else binutils' c++filt."""
    beside = os.path.join(toolchain.home, "bin", "cu++filt")
    if os.access(beside, os.X_OK):
        return beside
    return shutil.which("cu++filt") or shutil.which("c++filt")


def short_name(demangled: str) -> str:
    """`void softmax<256>(float const*, float*, int)` -> `softmax<256>`: the name as the source spells
    it, without its return type and parameters."""
    depth, cut = 0, len(demangled)
    for i in range(len(demangled) - 1, -1, -1):  # the parameter list is the last top-level (...)
        depth += {")": 1, "(": -1}.get(demangled[i], 0)
        if depth == 0 and demangled[i] == "(":
            cut = i
            break
    head, depth = demangled[:cut].strip(), 0
    for i in range(len(head) - 1, -1, -1):  # a return type ends at the last top-level space
        depth += {">": 1, "<": -1}.get(head[i], 0)
        if depth == 0 and head[i] == " ":
            return head[i + 1:]
    return head


def _demangle(entries: list[dict], toolchain: Toolchain, key: str = "kernel") -> None:
    names = [e["mangled"] for e in entries if e["mangled"].startswith("_Z")]
    tool = _demangler(toolchain)
    if not names or tool is None:
        return
    try:
        out = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True,
                             timeout=30).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return  # the mangled names stay: still the kernels' true names
    table = dict(zip(names, out)) if len(out) == len(names) else {}
    for entry in entries:
        if entry["mangled"] in table:
            entry["signature"] = table[entry["mangled"]]
            entry[key] = short_name(table[entry["mangled"]])


def _compile(source: str, arch: int, flag: str, toolchain: Toolchain, stem: str, first_line: int | None) -> dict:
    started = time.perf_counter()
    try:
        proc = run_nvcc(toolchain, [*CUBIN_FLAGS, flag], source, f"{stem}.cubin", first_line)
    except BuildError as exc:
        raise NvccError(f"build-error: {exc}") from None
    entries = parse_ptxas(proc.stderr + proc.stdout)
    try:
        with open(f"{stem}.cubin", "rb") as handle:
            bounds = cubin_max_threads(handle.read())
    except (OSError, struct.error, ValueError):
        bounds = {}  # no bounds known: none checked
    for entry in entries:
        entry["max_threads"] = bounds.get(entry["mangled"])
    _demangle(entries, toolchain)
    functions = parse_frames(proc.stderr + proc.stdout)
    _demangle(functions, toolchain, key="name")
    gmem = re.search(r"(\d+) bytes gmem", proc.stderr + proc.stdout)
    return {"kernels": entries, "functions": functions, "seconds": round(time.perf_counter() - started, 3), "tool": TOOL,
            "version": toolchain.version, "arch": f"sm_{arch}", "gmem_bytes": int(gmem.group(1)) if gmem else 0}


def compile_cubin(source: str, arch: int = 90, cache_dir: str | None = None, *, first_line: int | None = None,
                  toolchain: Toolchain | None = None) -> dict:
    """Compile PRELUDE + source to a sm_<arch> cubin; return {"kernels": [{kernel, mangled, arch,
    registers, spill_stores, spill_loads, stack_bytes, shared_bytes, barriers, constant_bytes,
    local_bytes, max_threads, signature}], "functions": [{mangled, name, stack_bytes}], "seconds", "tool", "version", "arch", "gmem_bytes", "cached"}.
    `first_line`: the candidate file's line on which `source` begins (errors then name file lines).
    Raises NvccError when nvcc refuses the source, ToolchainError when there is no usable nvcc."""
    flag = arch_flag(arch)
    toolchain = toolchain or find_nvcc()
    if toolchain is None:
        raise ToolchainError("nvcc: not found (set CUDA_HOME, put nvcc on PATH, or run `make setup`)")
    folder = cache_dir or cache_dir_default()
    key = cache_key("cubin", PRELUDE, source, arch, " ".join(CUBIN_FLAGS), toolchain.version, toolchain.nvcc,
                    RESOURCES_VERSION)
    record = os.path.join(folder, f"{key}.json")
    try:
        with open(record, encoding="utf-8") as handle:
            return {**json.load(handle), "cached": True}
    except (OSError, ValueError):
        pass  # not built yet (or a torn file from a killed writer: rebuilt)
    result = _compile(source, arch, flag, toolchain, os.path.join(folder, key), first_line)
    handle, tmp = tempfile.mkstemp(suffix=".tmp", dir=folder)  # own name per writer, renamed into place
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(result, out)
    os.replace(tmp, record)
    return {**result, "cached": False}
