"""The project's C++ as the compiler sees it: one translation unit per source file, its project headers
inlined where it includes them (once), read with the CUDA backend's C++ reader (cuda/cxx.py: lines
spliced, comments and literals set apart, macros expanded, functions outlined; `__global__` is the
same keyword in AscendC). Each token's line maps back to its project file, so every reason says
`file:line`. On top: classes and their member functions (a kernel class's methods are kernel code
whether or not each says `__aicore__`), and plain structs' fields (the tiling structs).

What the rules read is what executes: a unit with conditional compilation (`#if 0`, `#ifdef` of
its own macros) is run through `g++ -E` first (every #include stubbed out: project headers are
already inlined, CANN and C++ headers are not needed to decide the project's own conditions; each
output line put back at its source line), and every function body is pruned (prune): a branch of
`if`/`if constexpr` whose condition folds to a constant (fold.py: `1 == 0`, `!true`, a false
`constexpr bool`) and a `while`/`for` whose condition folds to false are dropped, so a FreeTensor,
EnQue or tiling assignment there does not count as present.
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache

from opforge.backends.ascendc.fold import constants, evaluate
from opforge.backends.cuda.cxx import CxxError, Token, closing_bracket, read, tokenize
from opforge.backends.cuda.cxx.macros import split_directives
from opforge.backends.cuda.cxx.tokens import join_names

INCLUDE = re.compile(r'\s*#\s*include\s*"([^"]+)"')
ANY_INCLUDE = re.compile(r"\s*#\s*include")
CONDITIONAL = re.compile(r"^\s*#\s*(?:if|ifdef|ifndef|elif)\b", re.M)
MARKER = re.compile(r'^# (\d+) "((?:[^"\\]|\\.)*)"')
DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?:\([^)]*\))?(.*)$", re.M)
MAX_DEPTH = 16
MAX_EXPANSION = 20_000  # tokens one macro may expand to (a real project's largest is a few hundred)


class UnitError(ValueError):
    """The C++ cannot be read; the message is the reason line."""


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
        if _conditional(parsed.directives) and "__has_include" not in text:  # a probe of the file system: refused (kernel_rules)
            try:
                parsed = read(_preprocess(text, where, start.display))
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


def _conditional(directives) -> bool:
    """Conditional compilation other than include guards (those need no preprocessor)."""
    for i, (name, rest, _) in enumerate(directives):
        if name in ("if", "elif") or name in ("ifdef", "ifndef") and not (
                name == "ifndef" and len(rest) == 1 and i + 1 < len(directives) and directives[i + 1][0] == "define"
                and directives[i + 1][1][:1] and directives[i + 1][1][0].text == rest[0].text):
            return True
    return False


def _preprocess(text: str, where: list[str], display: str) -> str:
    """The unit after `g++ -E`, every output line at its source line (so `where` still maps it); every
    #include stubbed (project headers are inlined already). UnitError with g++'s first error."""
    lines = text.split("\n")
    stubbed = "\n".join("" if ANY_INCLUDE.match(line) else line for line in lines)
    if not _sealed(stubbed):
        raise FileNotFoundError  # an include g++ would follow (spliced, a digraph): not run; the include rule refuses it
    returncode, stdout, stderr = _gxx(stubbed)
    if returncode:
        error = next((row for row in stderr.splitlines() if "error" in row), stderr.strip()[:200])
        m = re.match(r"<stdin>:(\d+):(?:\d+:)?\s*(.*)", error)
        at = where[min(max(int(m.group(1)), 1), len(where)) - 1] if m else display
        raise UnitError(f"ascendc-format: the preprocessor refuses {display}: {(m.group(2) if m else error)[:200]} ({at})")
    out, line, mine = [""] * len(lines), 0, False
    for row in stdout.split("\n"):
        m = MARKER.match(row) if row.startswith("# ") else None
        if m is not None:
            line, mine = int(m.group(1)), m.group(2) == "<stdin>"
            continue
        if mine and 1 <= line <= len(out) and row.strip():
            out[line - 1] = f"{out[line - 1]} {row}" if out[line - 1] else row
        line += 1
    return "\n".join(out)


def _sealed(text: str) -> bool:
    """Does nothing in this text make g++ read a file: no include left as the compiler reads directives
    (after splices and digraphs), no `__has_include`, no `#pragma GCC dependency`?"""
    try:
        tokens = join_names(tokenize(text))
    except CxxError:
        return False
    if any(t.text in ("__has_include", "__has_include_next", "dependency") for t in tokens):
        return False
    return not any(name in ("include", "include_next", "import", "embed") for name, _, _ in split_directives(tokens)[1])


@lru_cache(maxsize=256)
def _gxx(text: str) -> tuple[int, str, str]:
    try:
        done = subprocess.run(["g++", "-E", "-undef", "-nostdinc", "-std=c++17", "-x", "c++", "-"], input=text, capture_output=True,
                              text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return 1, "", "<stdin>:1: error: the preprocessor ran past 30 s"
    return done.returncode, done.stdout, done.stderr


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


def prune(tokens: list[Token], table: dict[str, int]) -> list[Token]:
    """The tokens with every branch that cannot run removed: `if (C) A else B` keeps `{ C; A }` or
    `{ C; B }` where C folds; `while (C) A` and `for (I; C; S) A` where C folds to false keep `{ C; }`
    and `{ I; C; }` (what still runs: a call in the condition is made). One pass, no recursion: a
    branch kept is read on in place, its closing brace waits on a stack."""
    out, i, n, tails, memo = [], 0, len(tokens), set(), {}
    closes: list[tuple[int, int, int]] = []  # (at, then continue at, line): a kept branch ends at `at`
    while True:
        while closes and i >= closes[-1][0]:
            _, jump, line = closes.pop()
            out.append(Token("punct", "}", line))
            i = max(i, jump)
        if i >= n:
            return out
        t = tokens[i]
        if t.kind == "id" and t.text == "do":
            tails.add(statement_end(tokens, i + 1, memo))  # the `while` of do ... while (C); runs the body once
        elif i and tokens[i - 1].text in (";", "{", "}") and t.text not in STATEMENT_WORDS and t.text not in ("{", "}", ";"):
            end = statement_end(tokens, i, memo)
            kept = _short_circuit(tokens[i:end], table)
            if kept is not None:  # `C ? A : B;`, `false && A;`, `true || A;`: only what runs
                out += [Token("punct", "{", t.line), *kept, Token("punct", "}", t.line)]
                i = end
                continue
        if t.kind == "id" and t.text == "switch" and i + 1 < n and tokens[i + 1].text == "(":
            close = closing_bracket(tokens, i + 1)
            value = evaluate(tokens[i + 2:close], table)
            if value is not None and close + 1 < n and tokens[close + 1].text == "{":
                body_end = closing_bracket(tokens, close + 1)
                target = _case(tokens, close + 1, body_end, value, table)
                out += [Token("punct", "{", t.line), *tokens[i + 2:close], Token("punct", ";", t.line)]
                closes.append((body_end if target is not None else close + 1, body_end + 1, t.line))
                i = target if target is not None else close + 1
                continue
        elif t.kind == "id" and t.text in ("if", "while", "for") and i not in tails:
            j = i + 1 + (t.text == "if" and i + 1 < n and tokens[i + 1].text == "constexpr")
            if j < n and tokens[j].text == "(":
                close = closing_bracket(tokens, j)
                parts = _split(tokens[j + 1:close], ";")
                cond = parts[-1] if t.text != "for" else parts[1] if len(parts) == 3 else []
                value = evaluate(cond, table) if cond else None
                if value is not None and (t.text == "if" or not value):
                    end = statement_end(tokens, close + 1, memo)
                    semi = Token("punct", ";", t.line)
                    ran = parts if t.text != "for" else parts[:2]
                    out += [Token("punct", "{", t.line), *(x for part in ran if part for x in (*part, semi))]
                    if t.text != "if":
                        closes.append((end, end, t.line))
                        i = end
                    elif value:
                        has_else = end < n and tokens[end].text == "else"
                        closes.append((end, statement_end(tokens, end + 1, memo) if has_else else end, t.line))
                        i = close + 1
                    elif end < n and tokens[end].text == "else":
                        closes.append((statement_end(tokens, end + 1, memo), 0, t.line))
                        i = end + 1
                    else:
                        closes.append((end, end, t.line))
                        i = end
                    continue
        out.append(t)
        i += 1


STATEMENT_WORDS = {"if", "for", "while", "do", "switch", "return", "case", "default", "else", "goto", "break",
                   "continue", "co_return", "throw", "try", "catch"}


def _short_circuit(statement: list[Token], table: dict[str, int]) -> list[Token] | None:
    """An expression statement whose top level is `C ? A : B`, `L && R` or `L || R` with C or L
    constant: the tokens that run (`C; A;`, `L;`), or None where nothing folds."""
    depth, first, op = 0, None, None
    for k, t in enumerate(statement):
        if t.kind == "punct" and t.text in ("(", "[", "{"):
            depth += 1
        elif t.kind == "punct" and t.text in (")", "]", "}"):
            depth -= 1
        elif depth == 0 and t.kind == "punct" and t.text in ("?", "&&", "||", "=", ",") and first is None:
            first, op = k, t.text
    if first is None or op in ("=", ","):
        return None
    semi = Token("punct", ";", statement[0].line)
    left, rest = statement[:first], [x for x in statement[first + 1:] if not (x.text == ";" and x is statement[-1])]
    value = evaluate(left, table)
    if value is None:
        return None
    if op == "?":
        depth, colon, nested = 0, None, 0
        for k, t in enumerate(rest):
            if t.kind == "punct" and t.text in ("(", "[", "{"):
                depth += 1
            elif t.kind == "punct" and t.text in (")", "]", "}"):
                depth -= 1
            elif depth == 0 and t.text == "?":
                nested += 1
            elif depth == 0 and t.text == ":" and t.kind == "punct":
                if not nested:
                    colon = k
                    break
                nested -= 1
        if colon is None:
            return None
        return [*left, semi, *(rest[:colon] if value else rest[colon + 1:]), semi]
    runs = (op == "&&") == bool(value)
    return [*left, semi, *(rest if runs else []), *([semi] if runs else [])]


def _case(tokens: list[Token], start: int, end: int, value: int, table: dict[str, int]) -> int | None:
    """Where `switch (value)` jumps in the body between start and end (its `{` `}`): the matching
    `case` label, else `default`, else None (the body never runs). A label that does not fold: None
    is not claimed, the body is kept whole (start + 1)."""
    default, depth, k = None, 0, start + 1
    while k < end:
        t = tokens[k]
        if t.kind == "punct" and t.text in ("{", "("):
            depth += 1
        elif t.kind == "punct" and t.text in ("}", ")"):
            depth -= 1
        elif depth == 0 and t.kind == "id" and t.text == "case":
            colon = next((j for j in range(k + 1, end) if tokens[j].text == ":"), end)
            label = evaluate(tokens[k + 1:colon], table)
            if label is None:
                return start + 1
            if label == value:
                return k
            k = colon
        elif depth == 0 and t.kind == "id" and t.text == "default" and k + 1 < end and tokens[k + 1].text == ":":
            default = k
        k += 1
    return default


def _split(tokens: list[Token], sep: str) -> list[list[Token]]:
    parts, current, depth = [], [], 0
    for t in tokens:
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
        if t.text == sep and t.kind == "punct" and depth == 0:
            parts.append(current)
            current = []
        else:
            current.append(t)
    return parts + [current]


def statement_end(tokens: list[Token], k: int, memo: dict | None = None) -> int:
    """Index just past the statement that starts at tokens[k] (memo: ends found before, by start)."""
    n = len(tokens)
    if k >= n:
        return n
    if memo is not None and k in memo:
        return memo[k]
    t = tokens[k]
    if t.kind == "punct" and t.text == "{":
        return closing_bracket(tokens, k) + 1
    chain = [k]
    while t.kind == "id" and t.text in ("if", "for", "while", "switch"):  # an else-if chain: a loop, not recursion
        j = k + 1 + (t.text == "if" and k + 1 < n and tokens[k + 1].text == "constexpr")
        if not (j < n and tokens[j].text == "("):
            break
        end = statement_end(tokens, closing_bracket(tokens, j) + 1, memo)
        if t.text == "if" and end < n and tokens[end].text == "else":
            if end + 1 < n and tokens[end + 1].text == "if":
                k, t = end + 1, tokens[end + 1]
                chain.append(k)
                continue
            end = statement_end(tokens, end + 1, memo)
        if memo is not None:
            memo.update(dict.fromkeys(chain, end))
        return end
    if t.kind == "id" and t.text == "do":
        end = statement_end(tokens, k + 1)
        if end + 1 < n and tokens[end].text == "while" and tokens[end + 1].text == "(":
            return min(closing_bracket(tokens, end + 1) + 2, n)
        return end
    depth = 0
    for j in range(k, n):
        x = tokens[j]
        if x.kind != "punct":
            continue
        if x.text in "([{":
            depth += 1
        elif x.text in ")]}":
            depth -= 1
            if depth < 0:
                return j
        elif x.text == ";" and depth == 0:
            return j + 1
    return n


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


def _classes(tokens: list[Token]) -> list[tuple[str, str, int, int]]:
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
    classes = _classes(unit.tokens)
    kernel_classes = set()
    for kind, name, start, end in classes:
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
        scope = next((n for _, n, s, e in reversed(classes) if s < at < e), None)
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
