"""The source rewrites the emulator needs before g++ sees a project (line numbers kept): kernel
launches in both of CANN's forms, `name<<<blockDim, l2ctrl, stream>>>(args)` and
`ACLRT_LAUNCH_KERNEL(name)(blockDim, stream, args...)`, become
`opforge_asc::launch("name", blockDim, [&] { name(args); })`; and the kernels a file defines
(`extern "C" __global__ __aicore__ void name(params)`) with their parameter lists."""
from __future__ import annotations

import re
from dataclasses import dataclass

KERNEL = re.compile(r'(?:extern\s+"C"\s+)?(?:__global__\s+__aicore__|__aicore__\s+__global__)\s+void\s+'
                    r'([A-Za-z_]\w*)\s*\(([^()]*)\)\s*\{')
CHEVRON = re.compile(r"\b([A-Za-z_][\w:]*)\s*<<<")
ACLRT = re.compile(r"\bACLRT_LAUNCH_KERNEL\s*\(\s*([A-Za-z_]\w*)\s*\)\s*\(")


class TranslateError(ValueError):
    """A launch the rewrite cannot read; the message names it and its line."""


@dataclass(frozen=True)
class Kernel:
    name: str
    params: list[str]  # each parameter's declaration, as written


def kernels(text: str) -> list[Kernel]:
    """The kernels `text` defines, in order."""
    code = blank_comments(text)
    return [Kernel(m.group(1), split_top(m.group(2))) for m in KERNEL.finditer(code)]


def blank_comments(text: str) -> str:
    """`text` with comments and string/char literals' contents replaced by spaces (same offsets and lines)."""
    out, i, n = list(text), 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
        elif c in "\"'":
            end = i + 1
            while end < n and text[end] != c and text[end] != "\n":
                end += 2 if text[end] == "\\" else 1
            i, end = i + 1, min(end, n)  # keep the quotes
        else:
            i += 1
            continue
        for k in range(i, end):
            if out[k] != "\n":
                out[k] = " "
        i = end + 1 if c in "\"'" else end
    return "".join(out)


def split_top(args: str) -> list[str]:
    """A parameter or argument list split at its top-level commas (empty for `()` or `(void)`)."""
    parts, depth, current = [], 0, []
    for c in args:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(c)
    last = "".join(current).strip()
    if last and last != "void":
        parts.append(last)
    return parts


def _close(code: str, start: int, open_: str, close: str) -> int:
    """The index of the bracket closing the one just before `start` (code is comment-free)."""
    depth = 1
    for i in range(start, len(code)):
        if code[i] == open_:
            depth += 1
        elif code[i] == close:
            depth -= 1
            if depth == 0:
                return i
    raise TranslateError(f"an unclosed {open_!r} (line {code.count(chr(10), 0, start) + 1})")


def rewrite_launches(text: str) -> str:
    """Both launch forms as opforge_asc::launch calls; every newline of a rewritten span is kept."""
    code = blank_comments(text)
    edits = []  # (start, end, replacement)
    for m in CHEVRON.finditer(code):
        name = m.group(1)
        end_cfg = code.find(">>>", m.end())
        if end_cfg < 0:
            raise TranslateError(f"launch of {name}: no closing >>> (line {code.count(chr(10), 0, m.start()) + 1})")
        config = split_top(code[m.end():end_cfg])
        rest = re.match(r"\s*\(", code[end_cfg + 3:])
        if not config or rest is None:
            raise TranslateError(f"launch of {name}: expected <<<blockDim, l2ctrl, stream>>>(args) "
                                 f"(line {code.count(chr(10), 0, m.start()) + 1})")
        open_at = end_cfg + 3 + rest.end()
        close_at = _close(code, open_at, "(", ")")
        edits.append((m.start(), close_at + 1, _launch(name, config[0], _split_raw(code[open_at:close_at],
                                                                                   text[open_at:close_at]),
                                                         text[m.start():close_at + 1])))
    for m in ACLRT.finditer(code):
        name = m.group(1)
        close_at = _close(code, m.end(), "(", ")")
        args = _split_raw(code[m.end():close_at], text[m.end():close_at])
        if len(args) < 2:
            raise TranslateError(f"ACLRT_LAUNCH_KERNEL({name}) needs (blockDim, stream, args...) "
                                 f"(line {code.count(chr(10), 0, m.start()) + 1})")
        edits.append((m.start(), close_at + 1, "(" + _launch(name, args[0], args[2:],
                                                              text[m.start():close_at + 1]) + ", 0u)"))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _split_raw(code: str, text: str) -> list[str]:
    """`text` split at the top-level commas of `code` (its comment-free twin, same offsets)."""
    cuts, depth = [], 0
    for i, c in enumerate(code):
        depth += c in "([{"
        depth -= c in ")]}"
        if c == "," and depth == 0:
            cuts.append(i)
    bounds = [-1, *cuts, len(code)]
    parts = [text[a + 1:b].strip() for a, b in zip(bounds, bounds[1:])]
    return [] if parts == [""] else parts


def _launch(name: str, block_dim: str, args: list[str], original: str) -> str:
    wrapped = ", ".join(f"::opforge_host::gm_arg({a})" for a in args)  # void* data pointers too
    call = f'opforge_asc::launch("{name}", {block_dim}, [&] {{ {name}({wrapped}); }})'
    lost = original.count("\n") - call.count("\n")
    return call + "\n" * max(lost, 0)


def launch_header(kernel: Kernel) -> str:
    """`aclrtlaunch_<kernel>.h`, which CANN's build generates for ACLRT_LAUNCH_KERNEL: the kernel's declaration."""
    return (f"// generated by opforge's AscendC emulator for ACLRT_LAUNCH_KERNEL({kernel.name})\n#pragma once\n"
            f'#include "asc_core.h"\nextern "C" void {kernel.name}({", ".join(kernel.params)});\n')
