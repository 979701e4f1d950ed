"""Translation phases 1 to 3 of CUDA C++ (package docstring): backslash-newlines spliced, the text cut
into tokens with comments removed, literals kept whole and digraphs read as what they stand for."""
from __future__ import annotations

import re
from dataclasses import dataclass

_PUNCT = sorted("""%:%: ... <<= >>= ->* <=> <<< >>> ## :: -> ++ -- << >> <= >= == != && || += -= *= /= %= &= |= ^=
.* <: :> <% %> %: { } [ ] ( ) ; : ? . , + - * / % ^ & | ~ ! = < > #""".split(), key=len, reverse=True)
_DIGRAPHS = {"%:%:": "##", "%:": "#", "<:": "[", ":>": "]", "<%": "{", "%>": "}"}
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_NUMBER = re.compile(r"\.?[0-9](?:[eEpP][+-]|'[0-9A-Za-z_]|[0-9A-Za-z_.])*")
_PREFIX = re.compile(r"(?:u8|u|U|L)?R?$")


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


def join_names(tokens: list[Token]) -> list[Token]:
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

