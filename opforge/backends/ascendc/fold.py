"""Constant folding of the integer expressions the buffer and copy checks need (`BUFFER_NUM`,
`TILE_LENGTH * sizeof(half)`): named constants come from `constexpr`/`const` integer declarations
and object-like `#define`s of the translation unit (its project headers inlined); a name bound to two different values, a runtime
value (`this->tileLength`, a parameter) or anything else this small evaluator does not know gives
None — unknown, never a guess. Values are capped at 2^64 so `1 << (1 << 40)` costs nothing.
"""
from __future__ import annotations

from opforge.backends.ascendc.api import SIZES
from opforge.backends.cuda.cxx import Token

CAP = 1 << 64
INT_TYPES = set(SIZES) | {"long", "short", "signed", "unsigned", "auto"}
_BINARY = {"*": 5, "/": 5, "%": 5, "+": 4, "-": 4, "<<": 3, ">>": 3}


def literal(text: str) -> int | None:
    body = text.replace("'", "").rstrip("uUlL")
    try:
        return int(body, 0) if not body.startswith("0") or body.startswith(("0x", "0X", "0b", "0B")) or body == "0" \
            else int(body, 8)
    except ValueError:
        return None


def constants(units) -> dict[str, int]:
    """NAME -> value for every integer constant with one value in these translation units."""
    found: dict[str, set] = {}
    for unit in units:
        for name, rest, _ in unit.directives:
            if name == "define" and len(rest) >= 2 and rest[0].kind == "id" and not (rest[1].text == "(" and not rest[1].space):
                found.setdefault(rest[0].text, set()).add(tuple((t.kind, t.text) for t in rest[1:]))
        tokens = unit.tokens
        for k, t in enumerate(tokens):
            if t.text in ("constexpr", "const") and t.kind == "id":
                j = k + 1
                while j < len(tokens) and tokens[j].kind == "id" and tokens[j].text in INT_TYPES | {"static", "constexpr", "const"}:
                    j += 1
                if j + 1 < len(tokens) and tokens[j].kind == "id" and tokens[j + 1].text == "=":
                    end = j + 2
                    while end < len(tokens) and tokens[end].text not in (";", ","):
                        end += 1
                    found.setdefault(tokens[j].text, set()).add(tuple((x.kind, x.text) for x in tokens[j + 2:end]))
    table: dict[str, int] = {}
    pending = {name: next(iter(values)) for name, values in found.items() if len(values) == 1}
    for _ in range(8):  # constants defined through other constants
        for name, expr in list(pending.items()):
            value = evaluate([Token(kind, text, 0) for kind, text in expr], table)
            if value is not None:
                table[name] = value
                del pending[name]
    return table


def evaluate(tokens: list[Token], table: dict[str, int], sizes: dict[str, int] | None = None) -> int | None:
    """The value of an integer expression, or None when any part of it is not a known constant."""
    try:
        value, rest = _expr(list(tokens), 0, table, sizes or SIZES)
    except (_Unknown, IndexError, ZeroDivisionError):
        return None
    return value if not rest and value is not None and abs(value) < CAP else None


class _Unknown(Exception):
    pass


def _expr(tokens, floor, table, sizes):
    value, tokens = _atom(tokens, table, sizes)
    while tokens and tokens[0].text in _BINARY and _BINARY[tokens[0].text] >= floor and tokens[0].kind == "punct":
        op = tokens[0].text
        right, tokens = _expr(tokens[1:], _BINARY[op] + 1, table, sizes)
        value = _apply(op, value, right)
    return value, tokens


def _apply(op: str, a: int, b: int) -> int:
    if op in ("<<", ">>") and not 0 <= b < 65:
        raise _Unknown
    value = {"*": lambda: a * b, "/": lambda: int(a / b), "%": lambda: a % b, "+": lambda: a + b,
             "-": lambda: a - b, "<<": lambda: a << b, ">>": lambda: a >> b}[op]()
    if abs(value) >= CAP:
        raise _Unknown
    return value


def _atom(tokens, table, sizes):
    t = tokens[0]
    if t.kind == "num":
        value = literal(t.text)
        if value is None:
            raise _Unknown
        return value, tokens[1:]
    if t.text in ("-", "+") and t.kind == "punct":
        value, rest = _atom(tokens[1:], table, sizes)
        return (-value if t.text == "-" else value), rest
    if t.text == "(":
        if len(tokens) > 2 and tokens[1].kind == "id" and tokens[1].text in INT_TYPES and tokens[2].text == ")":
            return _atom(tokens[3:], table, sizes)  # (uint32_t)x
        value, rest = _expr(tokens[1:], 0, table, sizes)
        if not rest or rest[0].text != ")":
            raise _Unknown
        return value, rest[1:]
    if t.text == "sizeof" and len(tokens) > 3 and tokens[1].text == "(" and tokens[3].text == ")":
        if tokens[2].text in sizes:
            return sizes[tokens[2].text], tokens[4:]
        raise _Unknown
    if t.text in ("static_cast", "reinterpret_cast") and len(tokens) > 4 and tokens[1].text == "<" and tokens[3].text == ">":
        return _atom(tokens[4:], table, sizes)
    if t.kind == "id" and t.text in INT_TYPES and len(tokens) > 1 and tokens[1].text == "(":
        return _atom(tokens[1:], table, sizes)  # uint32_t(x)
    if t.kind == "id" and t.text.rpartition("::")[2] in table:
        return table[t.text.rpartition("::")[2]], tokens[1:]
    raise _Unknown
