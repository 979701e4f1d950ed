"""Constant folding of the integer expressions the checks need: buffer and copy sizes (`BUFFER_NUM`,
`TILE_LENGTH * sizeof(half)`) and the conditions of `if`/`while`/`for` (`1 == 0`, `!true`,
`kFree && n > 0` with `constexpr bool kFree = false`), so the rules judge the code that runs
(preprocess.prune drops a branch whose condition folds to a constant). Named constants come from
`constexpr`/`const` integer and bool declarations and object-like `#define`s of the translation unit
(its project headers inlined); a name bound to two different values, a runtime value
(`this->tileLength`, a parameter, a call) or anything else this small evaluator does not know is
unknown (None), never a guess — except where C++ itself does not need it: `false && x` is false and
`true || x` true whatever x is. Values are capped at 2^64 so `1 << (1 << 40)` costs nothing.
"""
from __future__ import annotations

from opforge.backends.ascendc.api import SIZES
from opforge.backends.cuda.cxx import Token

CAP = 1 << 64
INT_TYPES = set(SIZES) | {"long", "short", "signed", "unsigned", "auto"}
_BINARY = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7, "<=": 7, ">=": 7,
           "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}
_BOOLS = {"true": 1, "false": 0}


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
    """The value of an integer (or bool: 0/1) expression, or None when it is not a known constant."""
    parser = _Parser(list(tokens), table, sizes or SIZES)
    try:
        value = parser.conditional()
    except (_Malformed, IndexError, RecursionError):
        return None
    return value if parser.at == len(parser.tokens) and value is not None and abs(value) < CAP else None


class _Malformed(Exception):
    pass


class _Parser:
    """Recursive descent over C++'s expression grammar; an unknown operand is None and is still
    parsed (so `false && f(x)` folds), a token it cannot place ends the parse (None overall)."""

    def __init__(self, tokens, table, sizes):
        self.tokens, self.table, self.sizes, self.at = tokens, table, sizes, 0

    def peek(self, ahead: int = 0) -> Token | None:
        k = self.at + ahead
        return self.tokens[k] if k < len(self.tokens) else None

    def take(self, text: str) -> None:
        t = self.peek()
        if t is None or t.text != text:
            raise _Malformed
        self.at += 1

    def conditional(self):
        cond = self.binary(1)
        t = self.peek()
        if t is None or t.text != "?":
            return cond
        self.at += 1
        a = self.conditional()
        self.take(":")
        b = self.conditional()
        if cond is None:
            return a if a == b else None
        return a if cond else b

    def binary(self, floor: int):
        left = self.unary()
        while True:
            t = self.peek()
            if t is None or t.kind != "punct" or t.text not in _BINARY or _BINARY[t.text] < floor:
                return left
            self.at += 1
            left = _apply(t.text, left, self.binary(_BINARY[t.text] + 1))

    def unary(self):
        t = self.peek()
        if t is not None and t.kind == "punct" and t.text in ("-", "+", "!", "~", "*", "&"):
            self.at += 1
            value = self.unary()
            if value is None or t.text in ("*", "&"):
                return None
            return {"-": -value, "+": value, "!": int(not value), "~": ~value}[t.text]
        return self.postfix(self.atom())

    def postfix(self, value):
        """Calls, members and subscripts after an operand: the operand is then unknown."""
        while True:
            t = self.peek()
            if t is None:
                return value
            if t.text in ("(", "["):
                self._skip_group()
                value = None
            elif t.text in (".", "->") and self.peek(1) is not None and self.peek(1).kind == "id":
                self.at += 2
                value = None
            elif t.text in ("++", "--"):
                self.at += 1
                value = None
            else:
                return value

    def _skip_group(self) -> None:
        pairs, depth = {"(": ")", "[": "]", "{": "}"}, []
        while True:
            t = self.peek()
            if t is None:
                raise _Malformed
            self.at += 1
            if t.kind == "punct" and t.text in pairs:
                depth.append(pairs[t.text])
            elif t.kind == "punct" and t.text in (")", "]", "}"):
                if not depth or depth.pop() != t.text:
                    raise _Malformed
                if not depth:
                    return

    def atom(self):
        t = self.peek()
        if t is None:
            raise _Malformed
        nxt = self.peek(1)
        if t.kind == "num":
            self.at += 1
            return literal(t.text)
        if t.kind in ("str", "chr"):
            self.at += 1
            return None
        if t.text == "(":
            if nxt is not None and nxt.kind == "id" and nxt.text in INT_TYPES and self.peek(2) is not None \
                    and self.peek(2).text == ")":
                self.at += 3
                return self.unary()  # (uint32_t)x
            self.at += 1
            value = self.conditional()
            self.take(")")
            return value
        if t.kind != "id":
            raise _Malformed
        if t.text in _BOOLS:
            self.at += 1
            return _BOOLS[t.text]
        if t.text == "sizeof" and nxt is not None and nxt.text == "(":
            inner = self.peek(2)
            if inner is not None and inner.text in self.sizes and self.peek(3) is not None and self.peek(3).text == ")":
                self.at += 4
                return self.sizes[inner.text]
            self.at += 1
            self._skip_group()
            return None
        if t.text in ("static_cast", "reinterpret_cast") and nxt is not None and nxt.text == "<":
            self.at += 2
            while self.peek() is not None and self.peek().text != ">":
                self.at += 1
            self.take(">")
            self.take("(")
            value = self.conditional()
            self.take(")")
            return value
        if t.text in INT_TYPES and nxt is not None and nxt.text == "(":
            self.at += 1
            return self.atom()  # uint32_t(x)
        self.at += 1
        name = t.text.rpartition("::")[2]
        if name in self.table and (nxt is None or nxt.text not in ("(", ".", "->", "[")):
            return self.table[name]
        return None


def _apply(op: str, a: int | None, b: int | None) -> int | None:
    if op == "&&":
        return 0 if a == 0 or b == 0 else (1 if a is not None and b is not None else None)
    if op == "||":
        return 1 if a or b else (0 if a == 0 and b == 0 else None)
    if a is None or b is None:
        return None
    if op in ("<<", ">>") and not 0 <= b < 65:
        return None
    if op in ("/", "%") and b == 0:
        return None
    value = {"*": lambda: a * b, "/": lambda: int(a / b), "%": lambda: a - int(a / b) * b, "+": lambda: a + b,
             "-": lambda: a - b, "<<": lambda: a << b, ">>": lambda: a >> b, "&": lambda: a & b, "|": lambda: a | b,
             "^": lambda: a ^ b, "==": lambda: int(a == b), "!=": lambda: int(a != b), "<": lambda: int(a < b),
             ">": lambda: int(a > b), "<=": lambda: int(a <= b), ">=": lambda: int(a >= b)}[op]()
    return value if abs(value) < CAP else None
