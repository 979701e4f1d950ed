"""The outline of expanded CUDA C++: functions (kernels, device and host functions, lambdas outside
every function) with their parameters and bodies, and the bracket matching it rests on."""
from __future__ import annotations

from dataclasses import dataclass, field

from opforge.backends.cuda.cxx.tokens import CxxError, Token


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




def closing_bracket(tokens: list[Token], start: int) -> int:
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
            end = closing_bracket(head, k)
            if head[k].text == "(" and k and head[k - 1].kind == "id" and head[k - 1].text not in NOT_A_NAME:
                found = (k - 1, head[k + 1:end], head[end + 1:])
            k = end + 1
        else:
            k += 1
    after = _template_end(head)
    if found is None or any(t.text == "=" and t.kind == "punct" for t in head[after:found[0]]):
        return None  # `auto f = [](...) {...}`, an initialiser, not a definition (a default
        # template argument, `template <int B = 256>`, is none)
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


def _template_end(head: list[Token]) -> int:
    """Index after the `template <...>` heads that open `head` (0 where there are none)."""
    k = 0
    while k + 1 < len(head) and head[k].text == "template" and head[k + 1].text == "<":
        depth, k = 0, k + 1
        while k < len(head):
            t = head[k]
            if t.kind == "punct" and t.text in "([":
                k = closing_bracket(head, k)
            elif t.kind == "punct" and t.text in ("<", ">", ">>"):
                depth += {"<": 1, ">": -1, ">>": -2}[t.text]
            k += 1
            if depth <= 0:
                break
    return k


def _kind(head: list[Token]) -> str:
    words = {t.text for t in head}
    if "__global__" in words:
        return "kernel"
    return "device" if "__device__" in words and "__host__" not in words else "host"


def outline(tokens: list[Token], start: int, end: int, extern_c: bool, found: list[Function]) -> None:
    head_start, k = start, start
    while k < end:
        t = tokens[k]
        if t.kind == "punct" and t.text in (";", "}"):
            head_start, k = k + 1, k + 1
        elif t.kind == "punct" and t.text in "([" and t.text != "{":
            k = closing_bracket(tokens, k) + 1
        elif t.kind == "punct" and t.text == "{":
            close, head = closing_bracket(tokens, k), tokens[head_start:k]
            words = [h.text for h in head]
            block_c = len(head) >= 2 and words[-2:] == ["extern", '"C"']
            if block_c or "namespace" in words or any(w in words for w in ("struct", "class", "union")) \
                    and "(" not in words:
                outline(tokens, k + 1, close, extern_c or block_c, found)
            elif sig := _signature(head):
                found.append(Function(sig[0], _kind(head), extern_c or 'extern' in words and '"C"' in words,
                                      head, sig[1], tokens[k + 1:close], head[0].line if head else t.line, sig[2]))
            head_start = k = close + 1
        else:
            k += 1



_LAMBDA_AFTER = frozenset({"=", "(", ",", "{", "return", "?", ":"})


def lambdas(tokens: list[Token], functions: list[Function]) -> list[Function]:
    """Lambdas outside every function body (`static auto f = [](...) {...};`, `= [] {...}()`): code
    no function head announces, outlined as functions named after their variable (else "lambda")."""
    covered, found, k = {id(t) for f in functions for t in f.body}, [], 0
    while k < len(tokens):
        t, prev = tokens[k], tokens[k - 1] if k else None
        if t.text != "[" or t.kind != "punct" or id(t) in covered or prev is None or prev.text not in _LAMBDA_AFTER \
                or k + 1 < len(tokens) and tokens[k + 1].text == "[":
            k += 1
            continue
        close = closing_bracket(tokens, k)
        j, params = close + 1, []
        if j < len(tokens) and tokens[j].text == "(":
            end = closing_bracket(tokens, j)
            params, j = [tokens[j + 1:end]] if end > j + 1 else [], end + 1
        start = j
        while j < len(tokens) and j - start < 40 and tokens[j].text not in ("{", ";", ")", ",", "}"):
            j += 1  # mutable, constexpr, noexcept, __device__, -> type
        if j < len(tokens) and tokens[j].text == "{":
            end, head = closing_bracket(tokens, j), tokens[k:j]
            name = tokens[k - 2].text if prev.text == "=" and k >= 2 and tokens[k - 2].kind == "id" else "lambda"
            found.append(Function(name, _kind(head), False, head, params, tokens[j + 1:end], t.line))
            close = end
        k = close + 1
    return found
