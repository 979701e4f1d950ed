"""Translation phase 4 of CUDA C++: directives set apart, #define and #undef followed, object-like and
function-like macros expanded (so a launcher body cannot hide in a macro)."""
from __future__ import annotations

from dataclasses import dataclass

from opforge.backends.cuda.cxx.tokens import CxxError, Token

MAX_TOKENS = 200_000  # macros expanding past this are refused (`#define B A A` nested 30 deep is 2**30)


@dataclass
class Macro:
    params: list[str] | None  # None: object-like
    body: list[Token]


def split_directives(tokens: list[Token]) -> tuple[list[Token], list[tuple[str, list[Token], int]]]:
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


def _define(rest: list[Token], line: int) -> tuple[str, Macro]:
    if not rest or rest[0].kind != "id":
        raise CxxError("#define without a name", line)
    name, params, body = rest[0].text, None, rest[1:]
    if body and body[0].text == "(" and not body[0].space:  # `#define F(x)`, not `#define F (x)`
        close = next((k for k, t in enumerate(body) if t.text == ")"), None)
        if close is None:
            raise CxxError(f"macro {name}: unterminated parameter list", line)
        params = [t.text for t in body[1:close] if t.text != ","]
        body = body[close + 1:]
    return name, Macro(params, body)


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


def _substitute(macro: Macro, args: list[list[Token]], at: Token, expand) -> list[Token]:
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


def expand(tokens: list[Token], macros: dict[str, Macro], hidden: frozenset = frozenset(), depth: int = 0) -> list[Token]:
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


def defines(directives) -> tuple[dict[str, Macro], list[Token]]:
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

