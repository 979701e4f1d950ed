"""The project's C++ as the compiler sees it: one translation unit per source file, its project headers
inlined where it includes them (once), read with the CUDA backend's C++ reader (cuda/cxx.py: lines
spliced, comments and literals set apart, macros expanded, functions outlined; `__global__` is the
same keyword in AscendC). Each token's line maps back to its project file, so every reason says
`file:line`. On top: classes and their member functions (a kernel class's methods are kernel code
whether or not each says `__aicore__`), and plain structs' fields (the tiling structs).

What the rules read is what executes: a unit with conditional compilation (`#if 0`, `#ifdef` of
its own macros) is run through `g++ -E` first (preprocess.py; every #include stubbed out: project headers are
already inlined, CANN and C++ headers are not needed to decide the project's own conditions; each
output line put back at its source line), and every function body is pruned (preprocess.prune): a branch of
`if`/`if constexpr` whose condition folds to a constant (fold.py: `1 == 0`, `!true`, a false
`constexpr bool`) and a `while`/`for` whose condition folds to false are dropped, so a FreeTensor,
EnQue or tiling assignment there does not count as present.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from opforge.backends.ascendc.fold import constants
from opforge.backends.ascendc.preprocess import UnitError, conditional, preprocess, prune
from opforge.backends.cuda.cxx import CxxError, Token, closing_bracket, read

INCLUDE = re.compile(r'\s*#\s*include\s*"([^"]+)"')
CONDITIONAL = re.compile(r"^\s*#\s*(?:if|ifdef|ifndef|elif)\b", re.M)
DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?:\([^)]*\))?(.*)$", re.M)
MAX_DEPTH = 16
MAX_EXPANSION = 20_000  # tokens one macro may expand to (a real project's largest is a few hundred)


@dataclass
class Fn:
    name: str
    params: list[list[Token]]
    body: list[Token]
    head: list[Token]
    where: str  # "file:line"
    scope: str | None  # the enclosing class or struct
    kernel: bool  # __global__ (an entry)
    aicore: bool  # kernel code: __global__, __aicore__, or a method of a kernel class
    unit: int  # index of its translation unit


@dataclass
class Unit:
    tokens: list[Token]
    directives: list[tuple[str, list[Token], str]]
    where: list[str]  # combined line (1-based) - 1 -> "file:line"

    def at(self, token: Token) -> str:
        return self.where[min(max(token.line, 1), len(self.where)) - 1]


@dataclass
class Code:
    units: list[Unit] = field(default_factory=list)
    functions: list[Fn] = field(default_factory=list)
    structs: dict[str, tuple[list[str], str]] = field(default_factory=dict)  # plain struct -> (fields, "file:line")
    classes: set[str] = field(default_factory=set)
    preprocessed: bool = True  # conditionals decided by g++ -E (False: g++ missing, every branch read)
    notes: list[str] = field(default_factory=list)  # warnings: what could not be read as the compiler reads it

    @property
    def kernels(self) -> list[Fn]:
        return [f for f in self.functions if f.kernel]

    def named(self, name: str) -> list[Fn]:
        return [f for f in self.functions if f.name.rpartition("::")[2] == name.rpartition("::")[2]]


def _combine(files: dict, start) -> tuple[str, list[str]]:
    lines, where, seen = [], [], {start.name}

    def emit(src, depth: int) -> None:
        for number, line in enumerate(src.text.split("\n"), 1):
            lines.append(line)
            where.append(f"{src.display}:{number}")
            match = INCLUDE.match(line)
            if match and match.group(1) in files and match.group(1) not in seen and depth < MAX_DEPTH:
                seen.add(match.group(1))
                emit(files[match.group(1)], depth + 1)
    emit(start, 0)
    return "\n".join(lines), where


def read_code(project) -> Code:
    files = {f.name: f for f in project.files}
    included = {m.group(1) for f in project.files for m in INCLUDE.finditer(f.text)}
    starts = [f for f in project.files if f.role == "source" or f.name not in included]
    code, seen = Code(), set()
    for start in starts:
        text, where = _combine(files, start)
        _macro_sizes(text, start.display)
        try:
            parsed = read(text)
        except CxxError as exc:
            at = where[min(max(exc.line, 1), len(where)) - 1]
            raise UnitError(f"ascendc-format: {start.display} is not C++ this checker can read: {exc} ({at})") from None
        directives = [(n, rest, where[min(line, len(where)) - 1]) for n, rest, line in parsed.directives]
        if conditional(parsed.directives) and "__has_include" not in text:  # a probe of the file system: refused (kernel_rules)
            try:
                parsed = read(preprocess(text, where, start.display))
            except FileNotFoundError:  # no g++, or a text it must not read (_sealed)
                code.preprocessed = False
                code.notes.append(f"ascendc-format: {start.display} was not run through g++ -E: its conditional "
                                  "compilation is not evaluated (refused)")
            except CxxError as exc:
                at = where[min(max(exc.line, 1), len(where)) - 1]
                raise UnitError(f"ascendc-format: {start.display} is not C++ this checker can read after the "
                                f"preprocessor: {exc} ({at})") from None
        unit = Unit(parsed.tokens, directives, where)
        code.units.append(unit)
        _outline(code, unit, parsed.functions, len(code.units) - 1, seen)
        _prune_unit(code, unit, len(code.units) - 1)
    return code


# -- what executes: branches under constant conditions dropped ---------------------------------------

def _prune_unit(code: Code, unit: Unit, index: int) -> None:
    """Prune every function body of this unit (prune) and drop the pruned tokens from the unit's."""
    table = constants([unit])
    dropped: set[int] = set()
    for f in code.functions:
        if f.unit != index:
            continue
        try:
            body = prune(f.body, table)
        except RecursionError:
            raise UnitError(f"ascendc-format: {f.name} nests constant conditions too deeply to read ({f.where})") from None
        if len(body) != len(f.body) or any(a is not b for a, b in zip(body, f.body)):
            kept = {id(t) for t in body}
            dropped |= {id(t) for t in f.body if id(t) not in kept}
            f.body = body
    if dropped:
        unit.tokens = [t for t in unit.tokens if id(t) not in dropped]


def _macro_sizes(text: str, display: str) -> None:
    """Refuse a macro chain that would expand past MAX_EXPANSION tokens before the reader expands it
    (`#define A1 A0 A0` forty deep is 2^40 tokens: the reader's own cap trips only after seconds)."""
    bodies = {m.group(1): re.findall(r"[A-Za-z_]\w*|\S", m.group(2)) for m in DEFINE.finditer(text.replace("\\\n", ""))}
    sizes: dict[str, int] = {}

    def size(name: str, depth: int) -> int:
        if name not in sizes:
            sizes[name] = 1  # a macro is not expanded inside itself
            total = sum(size(w, depth + 1) if w in bodies and depth < 64 else 1 for w in bodies[name])
            sizes[name] = min(total, MAX_EXPANSION + 1)
        return sizes[name]
    for name in bodies:
        if size(name, 0) > MAX_EXPANSION:
            raise UnitError(f"ascendc-format: macro {name} in {display} expands to more than {MAX_EXPANSION} tokens")


def classes(tokens: list[Token]) -> list[tuple[str, str, int, int]]:
    """(kind, name, open, close) of every class/struct body."""
    found, k = [], 0
    while k < len(tokens):
        t = tokens[k]
        if t.kind == "id" and t.text in ("class", "struct") and k + 1 < len(tokens) and tokens[k + 1].kind == "id":
            j = k + 1
            while j < len(tokens) and tokens[j].text not in ("{", ";", "(", ")", ">", ","):
                j += 1
            if j < len(tokens) and tokens[j].text == "{":
                found.append((t.text, tokens[k + 1].text, j, closing_bracket(tokens, j)))
        k += 1
    return found


def _outline(code: Code, unit: Unit, functions, index: int, seen: set) -> None:
    position = {id(t): i for i, t in enumerate(unit.tokens)}
    bodies = classes(unit.tokens)
    kernel_classes = set()
    for kind, name, start, end in bodies:
        code.classes.add(name)
        inner = unit.tokens[start + 1:end]
        if any(t.text == "__aicore__" for t in inner):
            kernel_classes.add(name)
        elif kind == "struct" or not any(t.text == "(" for t in inner):
            code.structs.setdefault(name, (_fields(inner), unit.at(unit.tokens[start])))
    for f in functions:
        anchor = f.head[0] if f.head else (f.body[0] if f.body else None)
        if anchor is None or id(anchor) not in position:
            continue
        at = position[id(anchor)]
        scope = next((n for _, n, s, e in reversed(bodies) if s < at < e), None)
        where = unit.at(anchor)
        words = {t.text for t in f.head}
        key = (where, f.name)
        if key in seen:
            continue
        seen.add(key)
        code.functions.append(Fn(f.name, f.params, f.body, f.head, where, scope, "__global__" in words,
                                 bool(words & {"__global__", "__aicore__"}) or scope in kernel_classes, index))


def _fields(tokens: list[Token]) -> list[str]:
    names, statement = [], []
    for t in tokens + [Token("punct", ";", 0)]:
        if t.text != ";":
            statement.append(t)
            continue
        while len(statement) >= 2 and statement[0].text in ("public", "private", "protected") and statement[1].text == ":":
            statement = statement[2:]
        texts = [s.text for s in statement]
        if statement and "(" not in texts and not {"static", "using", "typedef", "friend"} & set(texts):
            depth, piece = 0, []
            for s in statement + [Token("punct", ",", 0)]:
                if s.text in "[{<" and s.kind == "punct":
                    depth += 1
                elif s.text in "]}>" and s.kind == "punct":
                    depth -= 1
                if s.text == "," and depth == 0:
                    cut = next((i for i, p in enumerate(piece) if p.text in ("=", "[", "{")), len(piece))
                    ids = [p.text for p in piece[:cut] if p.kind == "id"]
                    if ids:
                        names.append(ids[-1])
                    piece = []
                else:
                    piece.append(s)
        statement = []
    return names
