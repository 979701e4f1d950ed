"""The candidate's variables of static storage duration, found for the translator to register.

A GPU keeps them from launch to launch and from call to call: namespace-scope `__device__` and
`__constant__` variables (initialised at module load, zero without an initialiser), host variables
at namespace scope and `static` locals of any function (a launcher's call counter). Each gets
`::opforge_emu::static_var(name, "name", line)` right after its declaration (include/emu_globals.h:
the load-time bytes are kept, state.py checks every call against them). A namespace-scope
`__shared__` array is per block instead: it gets `shared_at_load`, so the runtime poisons it before
every block as it does function-scope ones.

What is read is a declaration a reader can see to be one: decl-specifiers, then declarators that
are a name with array bounds and an initialiser. Anything with a parameter list (a function, a
function pointer), a qualified or templated name, `extern`, `typedef`, `using` or `constexpr` is left
alone; a registration must never make g++ refuse a source nvcc takes."""
from __future__ import annotations

import re
from dataclasses import dataclass

from opforge.backends.cuda.signature import matching

_DIRECTIVE = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_ATTRIBUTES = re.compile(r"__align__\s*\(\s*\d+\s*\)|alignas\s*\([^()]*\)|__attribute__\s*\(\(.*?\)\)|\[\[.*?\]\]",
                         re.S)
_OPEN_SCOPE = re.compile(r"\bnamespace\b[\w\s:]*$|\bextern\s*$")
_SKIP = re.compile(r"\b(?:typedef|using|template|extern|friend|static_assert|constexpr|consteval|constinit|"
                   r"namespace|struct|class|union|enum|operator|return|goto|__managed__|decltype|asm|__asm__)\b")
_NAME = re.compile(r"[A-Za-z_]\w*")
_TYPE = re.compile(r"^[\w\s*&:<>,]*$")  # decl-specifiers and a declarator's pointer marks
_LOCAL_STATIC = re.compile(r"\bstatic\b")


@dataclass(frozen=True)
class Declaration:
    end: int  # offset of its terminating `;`
    names: tuple[str, ...]
    shared: bool  # a namespace-scope __shared__ array: per block, not state


def registration(decl: Declaration, line: int, tag: int) -> str:
    """What follows the `;` of `decl` (on the same line: line numbers are kept)."""
    if decl.shared:
        calls = "".join(f"::opforge_emu::shared_at_load(&{n}, sizeof({n})), " for n in decl.names)
        return f" static const bool opforge_emu_shared_{tag} = ({calls}true);"
    return "".join(f' static const bool opforge_emu_static_{tag}_{i} = ::opforge_emu::static_var({n}, "{n}", {line});'
                   for i, n in enumerate(decl.names))


def declarations(code: str, bodies: list[tuple[int, int]]) -> list[Declaration]:
    """The variables of static storage in `code` (comments and strings blanked), in source order.
    `bodies` are its function bodies (translate.function_bodies)."""
    code = _DIRECTIVE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), code)
    return sorted(_namespace_scope(code, bodies) + _local_statics(code, bodies), key=lambda d: d.end)


def _namespace_scope(code: str, bodies: list[tuple[int, int]]) -> list[Declaration]:
    found, start, i = [], 0, 0
    inside = {a: b for a, b in bodies}
    while i < len(code):
        ch = code[i]
        if ch == ";":
            decl = _declaration(code[start:i], i, namespace=True)
            found += [decl] if decl else []
            start = i = i + 1
        elif ch == "{":
            if _OPEN_SCOPE.search(code[start:i]):
                start = i = i + 1  # a namespace or extern "C" block: its statements are namespace scope
            elif i in inside:
                start = i = inside[i]  # a function definition ends the statement
            else:
                end = matching(code, i, "{", "}")  # an initialiser or a type's body: part of the statement
                i = end if end > 0 else len(code)
        elif ch == "}":
            start = i = i + 1  # the end of a namespace
        elif ch == "(":
            end = matching(code, i)
            i = end if end > 0 else len(code)
        else:
            i += 1
    return found


def _local_statics(code: str, bodies: list[tuple[int, int]]) -> list[Declaration]:
    """`static` variables declared in function bodies (not `__shared__` ones: those are per block)."""
    found = []
    for a, b in bodies:
        for m in _LOCAL_STATIC.finditer(code, a, b):
            before = code[a:m.start()].rstrip()
            if not before.endswith(("{", "}", ";")):
                continue  # not the first word of a statement
            end = _statement_end(code, m.start(), b)
            decl = _declaration(code[m.start():end], end, namespace=False) if end > 0 else None
            found += [decl] if decl else []
    return found


def _statement_end(code: str, i: int, limit: int) -> int:
    while i < limit:
        if code[i] == ";":
            return i
        if code[i] in "({[":
            end = matching(code, i, code[i], ")}]"["({[".index(code[i])])
            if end < 0:
                return -1
            i = end
        else:
            i += 1
    return -1


def _declaration(text: str, end: int, namespace: bool) -> Declaration | None:
    text = _ATTRIBUTES.sub(" ", text)
    if not text.strip() or _SKIP.search(text):
        return None
    shared = re.search(r"\b__shared__\b", text) is not None
    if shared and not namespace:
        return None  # function-scope __shared__: translate._shared registers it at run time
    if not (shared or namespace or re.match(r"\s*static\b", text)):
        return None
    names = []
    for part in _split_top(text):
        head = re.split(r"[=\[{]", part, maxsplit=1)[0]
        if "(" in head or not _TYPE.match(head):
            return None  # a function, a function pointer, a constructor call: not read here
        name = re.search(r"(?<![\w:])([A-Za-z_]\w*)\s*$", head)
        if "&" in head or not name:
            return None  # a reference, or a qualified name (a class's static member)
        if name.group(1) in _KEYWORDS:
            return None
        names.append(name.group(1))
    if not names or len(_NAME.findall(_split_top(text)[0].split("=")[0].split("[")[0])) < 2:
        return None  # a lone name is no declaration (a macro call, an expression)
    return Declaration(end, tuple(names), shared)


_KEYWORDS = frozenset({"const", "volatile", "static", "int", "float", "double", "char", "unsigned", "signed",
                       "long", "short", "bool", "void", "auto", "thread_local", "__thread", "__device__",
                       "__constant__", "__shared__", "inline"})


def _split_top(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([{<" and 1 or ch in ")]}>" and -1 or 0
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]
