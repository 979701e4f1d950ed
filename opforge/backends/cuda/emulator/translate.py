"""CUDA source to host C++ for the emulator's header, line for line.

Four rewrites, each keeping the newlines of what it replaces so that g++'s line numbers are
CUDA_SRC's (a `#line 1 "CUDA_SRC"` follows the header include):
- `k<<<grid, block, smem, stream>>>(args)` and `k<T><<<...>>>(args)` become
  `::opforge_emu::launch(__LINE__, "k", ::opforge_emu::cfg(grid, block, smem, stream), k, args)`
  (a template launched without its arguments gets a lambda that calls it, so they are deduced);
- `extern __shared__ T name[];` becomes a `T*` into the launch's dynamic shared-memory buffer;
- `#include <cassert>` / `<assert.h>` are dropped, so `assert` stays the emulator's (a trap); so is
  `static` beside `__shared__` (the header defines `__shared__` as `static`);
- a `__shared__` declaration inside a function is followed by `::opforge_emu::shared_seen(&v, sizeof v)`
  for each variable, so the runtime can fill it with NaN bytes before every block (uninitialised
  shared memory must not read as the previous block's values, or as zeros); a namespace-scope one
  is registered at load (statics.py);
- every variable of static storage (`__device__`, `__constant__`, host globals, `static` locals) is
  registered after its declaration with its load-time bytes (statics.py), so a call that leaves
  them changed can be checked (state.py).
Everything else (`__shared__`, qualifiers, intrinsics) is the header's business.
"""
from __future__ import annotations

import re

from opforge.backends.cuda.emulator import device_calls
from opforge.backends.cuda.emulator import statics
from opforge.backends.cuda.signature import SignatureError, blank_comments, line_of, matching, parse_launchers

PREAMBLE = '#include "opforge_cuda_emu.h"\n#line 1 "CUDA_SRC"\n'
FILE_NAME = "CUDA_SRC"
INVOKE_PREFIX = "opforge_emu_invoke_"


class TranslateError(ValueError):
    """A construct the translator cannot rewrite; the message names the line."""


_ASSERT_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*<(?:cassert|assert\.h)>[^\n]*", re.M)
_EXTERN_SHARED = re.compile(r"\bextern\s+__shared__\s+([^;\[\]]*?)\s*\b([A-Za-z_]\w*)\s*\[\s*\]\s*;")
_ALIGN = re.compile(r"__align__\s*\(\s*\d+\s*\)|alignas\s*\(\s*\d+\s*\)|__attribute__\s*\(\(.*?\)\)")


def translate(source: str) -> str:
    """The host C++ translation unit for `source`."""
    code = blank_comments(source, strings=True)
    edits = [(m.start(), m.end(), "") for m in _ASSERT_INCLUDE.finditer(code)]
    edits += [(m.start(), m.end(), "") for m in re.finditer(r"\bstatic\b", code) if _beside_shared(code, m)]
    edits += [_extern_shared(source, m) for m in _EXTERN_SHARED.finditer(code)]
    edits += [_launch(source, code, m.start()) for m in re.finditer(r"<<<", code)]
    bodies = function_bodies(code)
    edits += [e for m in re.finditer(r"\b__shared__\b", code) if (e := _shared(code, m, bodies))]
    edits += [(d.end, d.end + 1, ";" + statics.registration(d, line_of(source, d.end), d.end))
              for d in statics.declarations(code, bodies)]
    edits += device_calls.edits(code, bodies)  # the launch-resource model's stack frames and device heap
    out, pos = [], 0
    for start, end, text in sorted(edits):
        if start < pos:
            raise TranslateError(f"line {line_of(source, start)}: overlapping constructs the emulator cannot rewrite")
        newlines = source.count("\n", start, end) - text.count("\n")
        out += [source[pos:start], text, "\n" * max(newlines, 0)]
        pos = end
    out.append(source[pos:])
    return PREAMBLE + "".join(out) + _invokers(source)


def _beside_shared(code: str, m: re.Match) -> bool:
    """`static __shared__` or `__shared__ static`: the header's `__shared__` is `static` already."""
    before = re.search(r"\b__shared__\s*$", code[max(0, m.start() - 64):m.start()])
    return before is not None or re.match(r"\s*__shared__\b", code[m.end():m.end() + 64]) is not None


def _invokers(source: str) -> str:
    """`opforge_emu_invoke_NAME(void** args)` for every launcher: the call under the watchdog."""
    try:
        names = list(parse_launchers(source))
    except SignatureError as e:
        raise TranslateError(str(e)) from None
    lines = [f'extern "C" __attribute__((visibility("default"))) int {INVOKE_PREFIX}{name}(void** args) '
             f"{{ return ::opforge_emu::invoke(&{name}, args); }}" for name in names]
    return '\n#line 1 "opforge-invokers"\n' + "\n".join(lines) + "\n"


def _extern_shared(source: str, m: re.Match) -> tuple[int, int, str]:
    ctype = " ".join(_ALIGN.sub(" ", source[m.start(1):m.end(1)]).split())
    if not ctype:
        raise TranslateError(f"line {line_of(source, m.start())}: extern __shared__ without a type")
    name = m.group(2)
    text = f"{ctype}* const {name} = reinterpret_cast<{ctype}*>(::opforge_emu::g_dyn_smem);"
    return m.start(), m.end(), text


def _launch(source: str, code: str, at: int) -> tuple[int, int, str]:
    where = f"line {line_of(source, at)}"
    start = _kernel_start(code, at)
    if start is None:
        raise TranslateError(f"{where}: cannot find the kernel name before <<<")
    close = _config_end(code, at + 3)
    if close < 0:
        raise TranslateError(f"{where}: <<< without a matching >>>")
    paren = close + 3 + (len(code[close + 3:]) - len(code[close + 3:].lstrip()))
    if not code.startswith("(", paren):
        raise TranslateError(f"{where}: a launch needs an argument list after >>>")
    end = matching(code, paren)
    if end < 0:
        raise TranslateError(f"{where}: unclosed argument list of a launch")
    kernel = source[start:at].strip()
    name = " ".join(kernel.split()).replace("\\", "\\\\").replace('"', '\\"')
    config, args = source[at + 3:close], source[paren + 1:end - 1]
    kernel = " ".join(kernel.split())
    head = f'::opforge_emu::launch(__LINE__, "{name}", ::opforge_emu::cfg({config}), '
    if "<" in kernel or not _is_template(code, kernel.split("::")[-1]):
        return start, end, head + kernel + (f", {args})" if args.strip() else ")")
    # A function template whose arguments are deduced at the call: no function pointer to take, so
    # each thread calls it from a lambda holding the launch's argument values (evaluated once).
    values = [a for a in _split_top(args, "([{") if a.strip()]
    captures = ", ".join(f"a{i} = ({v})" for i, v in enumerate(values))
    call = ", ".join(f"a{i}" for i in range(len(values)))
    return start, end, head + f"nullptr, [{captures}]() {{ {kernel}({call}); }})"


def _is_template(code: str, name: str) -> bool:
    return re.search(rf"\btemplate\s*<[^;{{}}]*>[^;{{}}()]*\b{re.escape(name)}\s*\(", code) is not None


def _kernel_start(code: str, at: int) -> int | None:
    """Offset where the kernel expression before `<<<` starts: `ns::name` or `name<T, 4>`."""
    i = len(code[:at].rstrip())
    if i and code[i - 1] == ">":
        depth = 0
        while i > 0:
            i -= 1
            depth += {">": 1, "<": -1}.get(code[i], 0)
            if depth == 0:
                break
        i = len(code[:i].rstrip())
    m = re.search(r"(?:[A-Za-z_]\w*\s*::\s*)*[A-Za-z_]\w*$", code[:i])
    return m.start() if m else None


def _config_end(code: str, start: int) -> int:
    depth = 0
    for i in range(start, len(code) - 2):
        ch = code[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and code.startswith(">>>", i):
            return i
    return -1


def function_bodies(code: str) -> list[tuple[int, int]]:
    """(start, end) of every outermost function body (namespaces and extern "C" blocks are open)."""
    bodies, stack, last = [], [], 0
    for m in re.finditer(r"[{};]", code):
        token = m.group(0)
        if token == "{":
            if any(kind == "code" for kind, _ in stack):
                stack.append(("code", m.start()))
            else:
                header = code[last:m.start()]
                open_ = re.search(r"\bnamespace\b[\w\s:]*$|\bextern\s*$", header)
                function = re.search(r"\)[\s\w]*$", header)
                stack.append(("ns" if open_ else "code" if function else "type", m.start()))
        elif token == "}" and stack:
            kind, start = stack.pop()
            if kind == "code" and not any(k == "code" for k, _ in stack):
                bodies.append((start, m.end()))
        last = m.end()
    return bodies


def _shared(code: str, m: re.Match, bodies: list[tuple[int, int]]) -> tuple[int, int, str] | None:
    """The registration of the variables of a function-scope `__shared__` declaration."""
    if code[:m.start()].rstrip().endswith("extern") or not any(a < m.start() < b for a, b in bodies):
        return None
    end, depth = m.end(), 0
    while end < len(code) and not (code[end] == ";" and depth == 0):
        depth += code[end] in "([{" and 1 or code[end] in ")]}" and -1 or 0
        end += 1
    names = []
    for part in _split_top(code[m.end():end]):
        bare = re.sub(r"\[[^\]]*\]|=.*$", "", part, flags=re.S).strip()
        name = re.search(r"([A-Za-z_]\w*)\s*$", bare)
        if name:
            names.append(name.group(1))
    calls = "".join(f" ::opforge_emu::shared_seen(&{n}, sizeof({n}));" for n in names)
    return end, end + 1, ";" + calls


def _split_top(text: str, brackets: str = "([{<") -> list[str]:
    closing = {"(": ")", "[": "]", "{": "}", "<": ">"}
    ends = "".join(closing[b] for b in brackets)
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in brackets and 1 or ch in ends and -1 or 0
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]
