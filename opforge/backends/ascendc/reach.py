"""What the memory rules share (memory_rules.py: the unified buffer; queue_rules.py: queue balance;
copy_rules.py: DataCopy): the functions a kernel entry reaches (reach: member calls through the
receiver's declared class, a declared object's constructor) and what a size expression is made of
(a run-time value, constants opforge folds, or something the folder does not evaluate: hides).
"""
from __future__ import annotations

from opforge.backends.ascendc import api
from opforge.backends.ascendc.fold import INT_TYPES
from opforge.backends.ascendc.kernel_rules import calls
from opforge.backends.ascendc.units import classes as class_bodies_of
from opforge.backends.cuda.cxx import Token


ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=", "++", "--"}


def runtime_names(code) -> set[str]:
    """Names a value reaches at run time: every function parameter, and every name assigned (or
    incremented) inside a function body."""
    names = set()
    for f in code.functions:
        names |= {ids[-1] for ids in ([t.text for t in p if t.kind == "id"] for p in f.params) if ids}
        body = f.body
        for k in range(1, len(body)):
            if body[k].text in ASSIGN and body[k - 1].kind == "id":
                names.add(body[k - 1].text)
            elif body[k - 1].text in ("++", "--") and body[k].kind == "id":
                names.add(body[k].text)
    return names


def is_runtime(arg: list, runtime: set[str]) -> bool:
    """Does a size expression read a run-time value: a runtime name, tiling data (`t.field`,
    `t->field` on anything but `this`) or an AscendC query (GetBlockNum(), ...)?"""
    for k, t in enumerate(arg):
        if t.kind != "id":
            continue
        if t.text in runtime or api.base_name(t.text).startswith(("Get", "GET_")):
            return True
        if k >= 2 and arg[k - 1].text in (".", "->") and arg[k - 2].text != "this":
            return True
    return False


FOLDED_CALLS = {"sizeof", "static_cast", "reinterpret_cast"}


def initialisers(units) -> dict[str, list]:
    """NAME -> initialiser tokens of every `constexpr`/`const` declaration and object-like #define."""
    found: dict[str, list] = {}
    for unit in units:
        for name, rest, _ in unit.directives:
            if name == "define" and len(rest) >= 2 and rest[0].kind == "id" and not (rest[1].text == "(" and not rest[1].space):
                found[rest[0].text] = list(rest[1:])
        tokens = unit.tokens
        for k, t in enumerate(tokens[:-2]):
            if t.kind == "id" and tokens[k + 1].text == "=" and any(x.text in ("const", "constexpr")
                                                                     for x in tokens[max(0, k - 4):k]):
                end = k + 2
                while end < len(tokens) and tokens[end].text not in (";", ","):
                    end += 1
                found[t.text] = tokens[k + 2:end]
    return found


def hides(arg: list, declared: dict[str, list], depth: int = 0) -> bool:
    """Is a size that did not fold made of what the folder does not evaluate (a function call, a
    template, a ternary or comparison, a member) rather than of constants too large to fold (a
    shift bomb stays unknown, a warning)? Follows the named constants' own initialisers."""
    for k, t in enumerate(arg):
        if t.kind == "punct" and t.text in ("?", "<", ">", "<=", ">=", "==", "!=", ".", "->", "&&", "||"):
            if t.text == "<" and k and arg[k - 1].text in FOLDED_CALLS:
                continue
            if t.text == ">" and k >= 2 and arg[k - 2].text == "<":
                continue  # static_cast<uint32_t>(...)
            return True
        if t.kind != "id":
            continue
        if k + 1 < len(arg) and arg[k + 1].text == "(" and t.text not in FOLDED_CALLS and t.text not in INT_TYPES:
            return True
        if t.text == "this":
            return True
        name = t.text.rpartition("::")[2]
        if name in declared:
            if depth < 8 and hides(declared[name], declared, depth + 1):
                return True
        elif t.text not in INT_TYPES and t.text not in FOLDED_CALLS and t.text not in api.SIZES:
            return True  # a name nothing declares as a constant
    return False


def _owner(f, classes: set[str]) -> str | None:
    if f.scope:
        return f.scope
    prefix = f.name.rpartition("::")[0].rpartition("::")[2]
    return prefix if prefix in classes else None


def _typed(tokens: list[Token], classes: set[str], found: dict[str, set[str]]) -> dict[str, set[str]]:
    """Variable -> project classes, from declarations `Kernel op;`, `Kernel<T> &op`, `Kernel *p = ...`."""
    for k, t in enumerate(tokens):
        if t.kind != "id" or api.base_name(t.text) not in classes:
            continue
        j = k + 1
        if j < len(tokens) and tokens[j].text == "<":
            depth = 0
            while j < len(tokens):
                depth += (tokens[j].text == "<") - (tokens[j].text == ">") - 2 * (tokens[j].text == ">>")
                j += 1
                if depth <= 0 or tokens[j - 1].text in (";", "{", "}"):
                    break
        while j < len(tokens) and tokens[j].text in ("*", "&", "&&", "const"):
            j += 1
        if j < len(tokens) and tokens[j].kind == "id":
            found.setdefault(tokens[j].text, set()).add(api.base_name(t.text))
        elif k >= 2 and tokens[k - 1].text == "=" and tokens[k - 2].kind == "id" and j < len(tokens) \
                and tokens[j].text in ("(", "{"):
            found.setdefault(tokens[k - 2].text, set()).add(api.base_name(t.text))  # auto op = Kernel(...)
    return found


def member_types(code):
    """Class -> {member variable -> its project classes}."""
    classes = code.classes
    members: dict[str, dict[str, set[str]]] = {}
    for unit in code.units:
        for kind, name, open_at, close_at in _class_bodies(unit.tokens, classes):
            _typed(unit.tokens[open_at + 1:close_at], classes, members.setdefault(name, {}))
    return members


def _class_bodies(tokens, classes):
    return [c for c in class_bodies_of(tokens) if c[1] in classes]


def reach(code, entry, body: list[Token], members) -> list:
    """The aicore functions the entry reaches from `body`: member calls resolved through the
    receiver's declared class where known (else every method of that name), plain calls to the
    caller's own class first, then free functions; a declared object reaches its constructor."""
    classes, by_name = code.classes, {}
    for f in code.functions:
        if f.aicore:
            by_name.setdefault(api.base_name(f.name), []).append(f)
    seen, todo, order = set(), [(entry, body)], []
    while todo:
        f, tokens = todo.pop()
        if id(f) in seen and tokens is f.body:
            continue
        seen.add(id(f))
        order.append(f) if tokens is f.body else order.append(_Part(f, tokens))
        owner = _owner(f, classes)
        local = _typed([t for p in f.params for t in p] + list(tokens), classes, {})
        for name in {c for v in local.values() for c in v}:
            todo += [(g, g.body) for g in by_name.get(name, []) if _owner(g, classes) == name and id(g) not in seen]
        for k, name, member in calls(tokens):
            base = api.base_name(name)
            targets = by_name.get(base, [])
            if member:
                receiver = tokens[k - 2].text if k >= 2 else ""
                types = {owner} if receiver == "this" else local.get(receiver) or members.get(owner or "", {}).get(receiver)
                if types:
                    targets = [g for g in targets if _owner(g, classes) in types] or targets
            else:
                mine = [g for g in targets if owner and _owner(g, classes) == owner]
                targets = mine or [g for g in targets if _owner(g, classes) is None] or targets
            todo += [(g, g.body) for g in targets if id(g) not in seen]
    return order


class _Part:
    """A part of a function's body (one branch choice of the entry), read as a function."""

    def __init__(self, f, body):
        self.body, self.name, self.unit = body, f.name, f.unit
