"""What the compiler's preprocessor and its constant conditions leave of a translation unit (units.py
reads the units): a unit with conditional compilation is run through `g++ -E` (conditional,
preprocess: every #include stubbed, each output line put back at its source line, never run on a
text that would make g++ read a file), and a function body's branches under constant conditions
are dropped (prune: `if`/`if constexpr`, `while`/`for`, `switch`, `C ? A : B;`, `false && A;`;
fold.py decides the conditions). statement_end finds where a statement ends.
"""
from __future__ import annotations

import re
import subprocess
from functools import lru_cache

from opforge.backends.ascendc.fold import evaluate
from opforge.backends.cuda.cxx import CxxError, Token, closing_bracket, tokenize
from opforge.backends.cuda.cxx.macros import split_directives
from opforge.backends.cuda.cxx.tokens import join_names

ANY_INCLUDE = re.compile(r"\s*#\s*include")
MARKER = re.compile(r'^# (\d+) "((?:[^"\\]|\\.)*)"')


class UnitError(ValueError):
    """The C++ cannot be read; the message is the reason line."""


def conditional(directives) -> bool:
    """Conditional compilation other than include guards (those need no preprocessor)."""
    for i, (name, rest, _) in enumerate(directives):
        if name in ("if", "elif") or name in ("ifdef", "ifndef") and not (
                name == "ifndef" and len(rest) == 1 and i + 1 < len(directives) and directives[i + 1][0] == "define"
                and directives[i + 1][1][:1] and directives[i + 1][1][0].text == rest[0].text):
            return True
    return False


def preprocess(text: str, where: list[str], display: str) -> str:
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
