"""The `extern "C"` launchers of a CUDA_SRC: their names, parameters and lines (standard library only).

A launcher is `extern "C" void NAME(params..., cudaStream_t stream) { ... }`: pointers to the element
types below (a contiguous tensor of the matching dtype), scalars (a Python number), and last the
stream, which the caller supplies. Both `extern "C" void f(...)` and `extern "C" { ... }` blocks are
read; `__global__`/`__device__` functions declared `extern "C"` are kernels, not launchers, and
declarations without a body are skipped. This file is copied verbatim into exported libraries.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


class SignatureError(ValueError):
    """A launcher whose signature the runtime cannot call; the message names the line."""


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "pointer" | "scalar" | "stream"
    ctype: str  # normalised: float32 float64 float16 bfloat16 int8 uint8 int16 int32 int64 bool (+ uint32 uint64 scalars)
    const: bool


@dataclass(frozen=True)
class Launcher:
    name: str
    params: tuple[Param, ...]
    line: int  # 1-based line of the launcher's name in CUDA_SRC


POINTER_TYPES = {
    "float": "float32", "double": "float64", "__half": "float16", "half": "float16",
    "__nv_bfloat16": "bfloat16", "nv_bfloat16": "bfloat16", "int8_t": "int8", "signed char": "int8",
    "uint8_t": "uint8", "unsigned char": "uint8", "int16_t": "int16", "short": "int16",
    "int32_t": "int32", "int": "int32", "int64_t": "int64", "long long": "int64",
    "long long int": "int64", "bool": "bool",
}
SCALAR_TYPES = {
    "int": "int32", "int32_t": "int32", "unsigned": "uint32", "unsigned int": "uint32",
    "uint32_t": "uint32", "int64_t": "int64", "long long": "int64", "long long int": "int64",
    "size_t": "uint64", "float": "float32", "double": "float64", "bool": "bool",
}
TORCH_DTYPES = {c: c for c in ("float32", "float64", "float16", "bfloat16", "int8", "uint8",
                                "int16", "int32", "int64", "bool")}

_QUALIFIERS = {"__restrict__", "__restrict", "restrict", "__host__", "inline", "static"}
_COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def blank_comments(source: str, strings: bool = False) -> str:
    """`source` with comments (and, if `strings`, string and char literals) replaced by spaces.

    Offsets and line numbers are unchanged, so a position in the result is one in `source`."""
    def blank(m: re.Match) -> str:
        text = m.group(0)
        if text[0] in "\"'" and not strings:
            return text
        return re.sub(r"[^\n]", " ", text)
    return _COMMENT_OR_STRING.sub(blank, source)


def line_of(source: str, offset: int) -> int:
    return source.count("\n", 0, offset) + 1


def matching(text: str, start: int, open_: str = "(", close: str = ")") -> int:
    """Offset just past the bracket that closes the one at `start`, or -1."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_:
            depth += 1
        elif text[i] == close:
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def parse_launchers(source: str) -> dict[str, Launcher]:
    """Every `extern "C"` function defined in `source`, by name; raises SignatureError."""
    text = re.sub(r"__launch_bounds__\s*\([^()]*\)", lambda m: " " * len(m.group(0)), blank_comments(source))
    launchers: dict[str, Launcher] = {}
    for m in re.finditer(r'\bextern\s+"C"\s*', text):
        if text.startswith("{", m.end()):
            end = matching(text, m.end(), "{", "}")
            if end < 0:
                raise SignatureError(f"line {line_of(source, m.start())}: unclosed extern \"C\" block")
            found = _functions(text, source, m.end() + 1, end - 1)
        else:
            found = _functions(text, source, m.end(), len(text), first_only=True)
        for launcher in found:
            if launcher.name in launchers:
                raise SignatureError(f"line {launcher.line}: launcher {launcher.name} is defined twice")
            launchers[launcher.name] = launcher
    return launchers


_HEAD = re.compile(r"((?:[A-Za-z_]\w*[\s*&]+)+?)([A-Za-z_]\w*)\s*\(")


def _functions(text: str, source: str, start: int, stop: int, first_only: bool = False) -> list[Launcher]:
    out, pos = [], start
    while pos < stop:
        m = _HEAD.search(text, pos, stop)
        if not m:
            break
        close = matching(text, m.end() - 1)
        if close < 0:
            raise SignatureError(f"line {line_of(source, m.start(2))}: unclosed parameter list")
        after = text[close:stop].lstrip()
        has_body = after.startswith("{")
        head = m.group(1).split()
        if has_body and not {"__global__", "__device__"} & set(head) or "__host__" in head and has_body:
            out.append(_launcher(text[m.end():close - 1], head, m.group(2), line_of(source, m.start(2))))
        if has_body:
            body_start = close + len(text[close:stop]) - len(after)
            pos = matching(text, body_start, "{", "}")
        else:
            semi = text.find(";", close, stop)
            pos = semi + 1 if semi >= 0 else stop
        if first_only or pos <= 0:
            break
    return out


def _launcher(params_text: str, head: list[str], name: str, line: int) -> Launcher:
    where = f"line {line}: launcher {name}"
    if [w for w in head if w not in _QUALIFIERS] != ["void"]:
        raise SignatureError(f"{where}: a launcher returns void (found {' '.join(head)})")
    parts = [p.strip() for p in _split_commas(params_text)]
    if parts in ([""], ["void"]):
        parts = []
    params = tuple(_param(p, where) for p in parts)
    if any(p.kind == "stream" for p in params[:-1]):
        raise SignatureError(f"{where}: cudaStream_t may only be the last parameter")
    if not params or params[-1].kind != "stream":
        raise SignatureError(f"{where}: the last parameter must be `cudaStream_t stream`")
    return Launcher(name, params, line)


def _split_commas(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _param(text: str, where: str) -> Param:
    if "=" in text or "[" in text or "&" in text:
        raise SignatureError(f"{where}: parameter `{text}` must be a plain pointer or scalar")
    stars = text.count("*")
    words = [w for w in re.findall(r"[A-Za-z_]\w*", text) if w not in _QUALIFIERS]
    const = "const" in words[:-1] and (stars == 0 or text.index("const") < text.index("*"))
    words = [w for w in words if w not in ("const", "volatile")]
    if len(words) < 2:
        raise SignatureError(f"{where}: parameter `{text}` needs a type and a name")
    ctype, name = " ".join(words[:-1]), words[-1]
    if ctype in ("cudaStream_t", "cudaStream_t*") and stars == 0:
        return Param(name, "stream", "stream", False)
    if stars > 1:
        raise SignatureError(f"{where}: parameter `{text}`: pointers to pointers cannot be passed")
    table = POINTER_TYPES if stars else SCALAR_TYPES
    if ctype not in table:
        kind = "pointer" if stars else "scalar"
        raise SignatureError(f"{where}: parameter `{text}`: {ctype} is not a supported {kind} type "
                             f"({', '.join(sorted(table))})")
    return Param(name, "pointer" if stars else "scalar", table[ctype], const)
