"""The emulator's messages in the candidate's words: the runtime names what it cannot know itself with
placeholders, rewritten here.

- `{@K:OFFSET:KIND:BYTES:SIZE}`: a location; KIND 0 (3: read-only) is launcher buffer K (named with its parameter and element),
  1 device memory a cudaMalloc or a __device__ variable holds, 2 shared memory;
- `{pc:0x...}`: a code address in the emulated library, named as its CUDA_SRC line (the library is
  built with line tables; addr2line reads them, inlined frames unwound to the candidate's own line)."""
from __future__ import annotations

import functools
import re
import shutil
import subprocess

from opforge.backends.cuda.emulator.buffers import ITEMSIZE

_PLACE = re.compile(r"\{@(-?\d+):(-?\d+):(\d):(\d+):(\d+)\}")
_PC = re.compile(r"\s*\{pc:(0x[0-9a-fA-F]+|\(nil\))\}")
_LINE = re.compile(r"(?:^|/)CUDA_SRC:(\d+)")


def explain(text: str, library_path: str, tensors: list) -> str:
    """`text` with its placeholders rewritten; `tensors` are (tensor, name, ctype, writes) per buffer."""
    text = _PLACE.sub(lambda m: _place(*(int(g) for g in m.groups()), tensors), text)
    return _PC.sub(lambda m: _line(m.group(1), library_path), text)


def _place(buf: int, offset: int, kind: int, nbytes: int, size: int, tensors: list) -> str:
    """"element 5 of argument y", "4 bytes past the end of argument y (element 1000; it has 1000)"."""
    if kind in (0, 3) and 0 <= buf < len(tensors):
        _, name, ctype, _ = tensors[buf]
        what = f"argument {name}"
        item = ITEMSIZE.get(ctype, 1)
    else:
        what = {2: "shared memory", 4: "a __device__ variable"}.get(kind, "a cudaMalloc or device malloc block")
        item = 1
    index, rest = divmod(offset, item)
    element = f"element {index}" + (f" (byte {rest})" if rest else "") if item > 1 else f"byte {offset}"
    if offset + size > nbytes:
        count = f"; it has {nbytes // item}" + (" elements" if item > 1 else " bytes")
        return f"{offset + size - nbytes} bytes past the end of {what} ({element}{count})"
    if offset < 0:
        return f"{-offset} bytes before the start of {what} ({element})"
    return f"{element} of {what}"


def _line(pc: str, library_path: str) -> str:
    if pc == "(nil)":
        return ""
    line = source_line(library_path, int(pc, 16))
    return f" (line {line})" if line else ""


def source_line(library_path: str, pc: int) -> int | None:
    """The CUDA_SRC line of code address `pc` (a return address: the call before it) in the loaded library."""
    base = _load_base(library_path)
    if base is None or pc < base:
        return None
    return _addr2line(library_path, pc - base - 1)


def _load_base(library_path: str) -> int | None:
    try:
        with open("/proc/self/maps") as maps:
            for row in maps:
                parts = row.split()
                if len(parts) >= 6 and parts[5] == library_path and int(parts[2], 16) == 0:
                    return int(parts[0].split("-")[0], 16)
    except OSError:
        return None
    return None


@functools.lru_cache(maxsize=256)
def _addr2line(library_path: str, offset: int) -> int | None:
    tool = shutil.which("addr2line")
    if tool is None:
        return None
    try:
        done = subprocess.run([tool, "-i", "-e", library_path, hex(offset)], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for row in done.stdout.splitlines():  # innermost frame first: the first in the candidate's source
        m = _LINE.search(row.strip())
        if m:
            return int(m.group(1))
    return None
