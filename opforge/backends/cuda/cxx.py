"""A reading of CUDA C++ good enough to judge it: the compiler's own first phases, then its outline.

What static.py's rules see must be what nvcc compiles, or a rule can be dodged. So this follows the
translation phases in order: backslash-newlines are spliced first (`fo\\<newline>pen` is `fopen`),
then the text is cut into tokens with comments removed and string, character and raw-string literals
kept whole (a `/* fopen */` hides nothing, a `"fopen("` calls nothing, and `1'000` is a number, not a
character literal hiding the code after it); digraphs are read as what they stand for (`%:include`).
Directives are set apart, object-like and function-like macros are expanded (so a launcher body
cannot hide in a macro), and the expanded text is outlined into functions: kernels (`__global__`),
device functions, and host functions (everything else, `__host__ __device__` included), with their
parameters and bodies. Anything this reading cannot follow is a CxxError, which refuses the file.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["CxxError", "Function", "Token", "Unit", "read"]

_PUNCT = sorted("""%:%: ... <<= >>= ->* <=> <<< >>> ## :: -> ++ -- << >> <= >= == != && || += -= *= /= %= &= |= ^=
.* <: :> <% %> %: { } [ ] ( ) ; : ? . , + - * / % ^ & | ~ ! = < > #""".split(), key=len, reverse=True)
_DIGRAPHS = {"%:%:": "##", "%:": "#", "<:": "[", ":>": "]", "<%": "{", "%>": "}"}
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_NUMBER = re.compile(r"\.?[0-9](?:[eEpP][+-]|'[0-9A-Za-z_]|[0-9A-Za-z_.])*")
_PREFIX = re.compile(r"(?:u8|u|U|L)?R?$")
SPECIFIERS = ("__global__", "__device__", "__host__")
MAX_TOKENS = 200_000  # macros expanding past this are refused (`#define B A A` nested 30 deep is 2**30)


class CxxError(ValueError):
    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class Token:
    kind: str  # id (a name, qualified ones joined: "std::min"), num, str, chr, punct
    text: str
    line: int  # 1-based line of the source string
    bol: bool = False  # the first token of its line
    space: bool = False  # whitespace or a comment before it (`F (x)` is not a macro call's `F(x)`)


@dataclass
class Function:
    name: str
    kind: str  # kernel | device | host
    extern_c: bool
    head: list[Token]
    params: list[list[Token]]  # one token list per parameter
    body: list[Token]  # between the braces
    line: int
    tail: list[Token] = field(default_factory=list)  # between the parameters and the body: `: v(p[0])`


@dataclass
class Unit:
    tokens: list[Token]  # macros expanded, directives removed
    directives: list[tuple[str, list[Token], int]]  # (name, the rest of its line, line)
    macro_bodies: list[Token] = field(default_factory=list)
    functions: list[Function] = field(default_factory=list)


# -- phases 2 and 3: splice lines, cut tokens ------------------------------------------------------

def _splice(source: str) -> tuple[str, list[int]]:
    """The text with every backslash-newline removed, and the source line of each character."""
    chars, lines, line, i = [], [], 1, 0
    text = source.replace("\r\n", "\n")
    while i < len(text):
        if text[i] == "\\" and text[i + 1:i + 2] == "\n":
            i, line = i + 2, line + 1
            continue
        chars.append(text[i])
        lines.append(line)
        line += text[i] == "\n"
        i += 1
    lines.append(line)
    return "".join(chars), lines


def _literal_end(text: str, start: int, quote: str, line: int) -> int:
    i = start + 1
    while i < len(text) and text[i] != quote:
        if text[i] == "\n":
            raise CxxError("unterminated string or character literal", line)
        i += 2 if text[i] == "\\" else 1
    if i >= len(text):
        raise CxxError("unterminated string or character literal", line)
    return i + 1


def _raw_end(text: str, start: int, line: int) -> int:
    """`start` at the opening quote of R"delim( ... )delim"."""
    match = re.compile(r'"([^()\\\s"]{0,16})\(').match(text, start)
    if not match:
        raise CxxError("malformed raw string literal", line)
    end = text.find(f'){match.group(1)}"', match.end())
    if end < 0:
        raise CxxError("unterminated raw string literal", line)
    return end + len(match.group(1)) + 2


def tokenize(source: str) -> list[Token]:
    text, lines = _splice(source)
    tokens, i, bol, space = [], 0, True, False
    while i < len(text):
        c, line = text[i], lines[i]
        if c in " \t\f\v\n":
            i, bol, space = i + 1, bol or c == "\n", True
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            i, space = (end if end >= 0 else len(text)), True
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise CxxError("unterminated comment", line)
            bol = bol or "\n" in text[i:end]  # GCC: a directive may follow a comment that ends a line
            i, space = end + 2, True
            continue
        kind, stop = _token_at(text, i, line)
        word = text[i:stop]
        tokens.append(Token(kind, _DIGRAPHS.get(word, word) if kind == "punct" else word, line, bol, space))
        i, bol, space = stop, False, False
    return tokens


def _token_at(text: str, i: int, line: int) -> tuple[str, int]:
    """(kind, end) of the token starting at `i`."""
    c = text[i]
    if match := _NUMBER.match(text, i):
        return "num", match.end()
    if match := _IDENT.match(text, i):
        end = match.end()
        if end < len(text) and text[end] in "\"'" and _PREFIX.match(match.group()):  # u8"..", R"(..)", L'x'
            if match.group().endswith("R") and text[end] == '"':
                return "str", _raw_end(text, end, line)
            return ("str" if text[end] == '"' else "chr"), _literal_end(text, end, text[end], line)
        return "id", end
    if c in "\"'":
        return ("str" if c == '"' else "chr"), _literal_end(text, i, c, line)
    op = next((p for p in _PUNCT if text.startswith(p, i)), None)
    if op is None:
        raise CxxError(f"unexpected character {c!r} outside a literal", line)
    return "punct", i + len(op)


def _join_names(tokens: list[Token]) -> list[Token]:
    """`std :: min` -> one id token "std::min" (a leading `::` kept)."""
    out: list[Token] = []
    for tok in tokens:
        prev = out[-1] if out else None
        if tok.kind == "id" and prev is not None and prev.text == "::" and prev.kind == "punct":
            out.pop()
            base = out[-1] if out and out[-1].kind == "id" and not out[-1].text.endswith("::") else None
            name = f"{out.pop().text}::{tok.text}" if base else f"::{tok.text}"
            out.append(Token("id", name, tok.line, base.bol if base else prev.bol))
        else:
            out.append(tok)
    return out


# -- phase 4: directives and macros -----------------------------------------------------------------

@dataclass
class _Macro:
    params: list[str] | None  # None: object-like
    body: list[Token]


def _directives(tokens: list[Token]) -> tuple[list[Token], list[tuple[str, list[Token], int]]]:
    code, directives, i = [], [], 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.text == "#" and tok.kind == "punct" and tok.bol:
            j = i + 1
            while j < len(tokens) and not tokens[j].bol:
                j += 1
            rest = tokens[i + 1:j]
            name = rest[0].text if rest and rest[0].kind == "id" else ""
            directives.append((name, rest[1:], tok.line))
            i = j
        else:
            code.append(tok)
            i += 1
    return code, directives


def _define(rest: list[Token], line: int) -> tuple[str, _Macro]:
    if not rest or rest[0].kind != "id":
        raise CxxError("#define without a name", line)
    name, params, body = rest[0].text, None, rest[1:]
    if body and body[0].text == "(" and not body[0].space:  # `#define F(x)`, not `#define F (x)`
        close = next((k for k, t in enumerate(body) if t.text == ")"), None)
        if close is None:
            raise CxxError(f"macro {name}: unterminated parameter list", line)
        params = [t.text for t in body[1:close] if t.text != ","]
        body = body[close + 1:]
    return name, _Macro(params, body)


def _arguments(tokens: list[Token], start: int, name: str) -> tuple[list[list[Token]], int]:
    """The comma-separated arguments of a macro call whose `(` is at `start`; index after `)`."""
    args, current, depth, i = [], [], 0, start + 1
    while i < len(tokens):
        t = tokens[i]
        if t.text in "([{" and t.kind == "punct":
            depth += 1
        elif t.text in ")]}" and t.kind == "punct":
            if depth == 0 and t.text == ")":
                return args + [current], i + 1
            depth -= 1
        if t.text == "," and depth == 0:
            args.append(current)
            current = []
        else:
            current.append(t)
        i += 1
    raise CxxError(f"macro {name}: unterminated argument list", tokens[start].line)


def _substitute(macro: _Macro, args: list[list[Token]], at: Token, expand) -> list[Token]:
    params = macro.params or []
    named = dict(zip(params, args))
    if params and params[-1] == "...":
        named["__VA_ARGS__"] = [t for arg in args[len(params) - 1:] for t in [*arg, Token("punct", ",", at.line)]][:-1]
    out, body, k = [], macro.body, 0
    while k < len(body):
        t = body[k]
        if t.text == "#" and k + 1 < len(body) and body[k + 1].text in named:
            out.append(Token("str", '"' + " ".join(x.text for x in named[body[k + 1].text]) + '"', at.line))
            k += 2
            continue
        out += expand(named[t.text]) if t.kind == "id" and t.text in named else [Token(t.kind, t.text, at.line)]
        k += 1
    return out


def expand(tokens: list[Token], macros: dict[str, _Macro], hidden: frozenset = frozenset(), depth: int = 0) -> list[Token]:
    """Object-like and function-like macros replaced, recursively (a macro is not re-expanded inside
    its own expansion, as in the standard)."""
    if depth > 64:
        raise CxxError("macros nest more than 64 deep", tokens[0].line if tokens else 0)
    out, i = [], 0
    while i < len(tokens):
        t = tokens[i]
        macro = macros.get(t.text) if t.kind == "id" and t.text not in hidden else None
        if macro is None or macro.params is not None and not (i + 1 < len(tokens) and tokens[i + 1].text == "("):
            out.append(t)
            i += 1
            continue
        args, after = ([], i + 1) if macro.params is None else _arguments(tokens, i + 1, t.text)
        inner = hidden | {t.text}
        body = _substitute(macro, args, t, lambda ts: expand(ts, macros, hidden, depth + 1))
        out += expand(body, macros, inner, depth + 1)
        if len(out) > MAX_TOKENS:
            raise CxxError(f"macros expand to more than {MAX_TOKENS} tokens", t.line)
        i = after
    return out


def _macros(directives) -> tuple[dict[str, _Macro], list[Token]]:
    """Every #define, in order; a name defined twice, or undefined inside a conditional, is refused:
    which definition the compiler keeps would depend on conditions this reading does not evaluate."""
    macros, bodies, level = {}, [], 0
    for name, rest, line in directives:
        if name in ("if", "ifdef", "ifndef"):
            level += 1
        elif name == "endif":
            level -= 1
        elif name == "define":
            macro_name, macro = _define(rest, line)
            if macro_name in macros:
                raise CxxError(f"macro {macro_name} is defined twice", line)
            macros[macro_name] = macro
            bodies += macro.body
        elif name == "undef" and rest:
            if level:
                raise CxxError(f"#undef {rest[0].text} inside a conditional block", line)
            macros.pop(rest[0].text, None)
    return macros, bodies


# -- the outline: functions and their bodies ---------------------------------------------------------

def _match(tokens: list[Token], start: int) -> int:
    """Index of the bracket closing the one at `start`."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    opener, depth = tokens[start].text, 0
    for k in range(start, len(tokens)):
        if tokens[k].kind != "punct":
            continue
        if tokens[k].text == opener:
            depth += 1
        elif tokens[k].text == pairs[opener]:
            depth -= 1
            if depth == 0:
                return k
    raise CxxError(f"unbalanced {opener!r}", tokens[start].line)


NOT_A_NAME = {"__launch_bounds__", "__attribute__", "alignas", "decltype", "noexcept", "throw", "__align__",
              "__declspec", "requires", "sizeof"}


def _signature(head: list[Token]) -> tuple[str, list[list[Token]], list[Token]] | None:
    """(name, params, tail) when `head` declares a function: the first top-level `name(...)` (a
    constructor's initialiser list `: v(p[0])` comes after it, in `tail`)."""
    found, k = None, 0
    while k < len(head) and found is None:
        if head[k].text in "([" and head[k].kind == "punct":
            end = _match(head, k)
            if head[k].text == "(" and k and head[k - 1].kind == "id" and head[k - 1].text not in NOT_A_NAME:
                found = (k - 1, head[k + 1:end], head[end + 1:])
            k = end + 1
        else:
            k += 1
    if found is None or any(t.text == "=" and t.kind == "punct" for t in head[:found[0]]):
        return None  # `auto f = [](...) {...}`, an initialiser, not a definition
    name, inside, tail = head[found[0]].text, found[1], found[2]
    params, current, depth = [], [], 0
    for t in inside:
        depth += (t.text in "(<[") - (t.text in ")>]") if t.kind == "punct" else 0
        if t.text == "," and depth == 0:
            params.append(current)
            current = []
        else:
            current.append(t)
    params += [current] if current else []
    return name, params, tail


def _kind(head: list[Token]) -> str:
    words = {t.text for t in head}
    if "__global__" in words:
        return "kernel"
    return "device" if "__device__" in words and "__host__" not in words else "host"


def _outline(tokens: list[Token], start: int, end: int, extern_c: bool, found: list[Function]) -> None:
    head_start, k = start, start
    while k < end:
        t = tokens[k]
        if t.kind == "punct" and t.text in (";", "}"):
            head_start, k = k + 1, k + 1
        elif t.kind == "punct" and t.text in "([" and t.text != "{":
            k = _match(tokens, k) + 1
        elif t.kind == "punct" and t.text == "{":
            close, head = _match(tokens, k), tokens[head_start:k]
            words = [h.text for h in head]
            block_c = len(head) >= 2 and words[-2:] == ["extern", '"C"']
            if block_c or "namespace" in words or any(w in words for w in ("struct", "class", "union")) \
                    and "(" not in words:
                _outline(tokens, k + 1, close, extern_c or block_c, found)
            elif sig := _signature(head):
                found.append(Function(sig[0], _kind(head), extern_c or 'extern' in words and '"C"' in words,
                                      head, sig[1], tokens[k + 1:close], head[0].line if head else t.line, sig[2]))
            head_start = k = close + 1
        else:
            k += 1


def read(source: str) -> Unit:
    """Tokens, directives, macros expanded, functions outlined; CxxError when it cannot be followed."""
    try:
        return _read(source)
    except RecursionError:  # thousands of nested namespaces or macros: refused, not half-read
        raise CxxError("nested too deeply to read", 1) from None


def _read(source: str) -> Unit:
    raw = _join_names(tokenize(source))
    code, directives = _directives(raw)
    macros, bodies = _macros(directives)
    unit = Unit(expand(code, macros), directives, bodies)
    _outline(unit.tokens, 0, len(unit.tokens), False, unit.functions)
    unit.functions += _lambdas(unit.tokens, unit.functions)
    return unit


_LAMBDA_AFTER = frozenset({"=", "(", ",", "{", "return", "?", ":"})


def _lambdas(tokens: list[Token], functions: list[Function]) -> list[Function]:
    """Lambdas outside every function body (`static auto f = [](...) {...};`, `= [] {...}()`): code
    no function head announces, outlined as functions named after their variable (else "lambda")."""
    covered, found, k = {id(t) for f in functions for t in f.body}, [], 0
    while k < len(tokens):
        t, prev = tokens[k], tokens[k - 1] if k else None
        if t.text != "[" or t.kind != "punct" or id(t) in covered or prev is None or prev.text not in _LAMBDA_AFTER \
                or k + 1 < len(tokens) and tokens[k + 1].text == "[":
            k += 1
            continue
        close = _match(tokens, k)
        j, params = close + 1, []
        if j < len(tokens) and tokens[j].text == "(":
            end = _match(tokens, j)
            params, j = [tokens[j + 1:end]] if end > j + 1 else [], end + 1
        start = j
        while j < len(tokens) and j - start < 40 and tokens[j].text not in ("{", ";", ")", ",", "}"):
            j += 1  # mutable, constexpr, noexcept, __device__, -> type
        if j < len(tokens) and tokens[j].text == "{":
            end, head = _match(tokens, j), tokens[k:j]
            name = tokens[k - 2].text if prev.text == "=" and k >= 2 and tokens[k - 2].kind == "id" else "lambda"
            found.append(Function(name, _kind(head), False, head, params, tokens[j + 1:end], t.line))
            close = end
        k = close + 1
    return found
