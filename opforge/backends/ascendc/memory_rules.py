"""The rules on what an AscendC project's kernels do with memory (reason codes as in the contract): the
unified-buffer plan of each kernel entry (ascendc-ub: every InitBuffer the entry reaches through the
classes it instantiates and the functions it calls, summed; 192 KB), each queue's
AllocTensor/FreeTensor and EnQue/DeQue balance (ascendc-queue), 32-byte DataCopy lengths and
DataCopyParams.blockLen in 32-byte blocks (ascendc-datacopy).

Queues balance per kernel class with all its methods that a kernel reaches (the CopyIn/Compute/CopyOut
split lives across methods, so a per-method count would refuse Huawei's own samples), or a free
`__global__` function. What a rule cannot decide (a size from runtime values) is a warning, never a
pass or a guess; a known part over the budget is an error whatever the unknown part adds.
"""
from __future__ import annotations

from opforge.backends.ascendc import api
from opforge.backends.ascendc.fold import INT_TYPES, constants, evaluate
from opforge.backends.ascendc.kernel_rules import Findings, calls, open_paren, split_args
from opforge.backends.ascendc.units import statement_end
from opforge.backends.cuda.cxx import Token, closing_bracket

QUEUE_METHODS = ("AllocTensor", "FreeTensor", "EnQue", "DeQue")


def check_memory(code, dtypes: dict[str, int], out: Findings) -> None:
    """The unified-buffer plan, the queues' balance and the DataCopy lengths, added to `out`."""
    tables = [constants([unit]) for unit in code.units]  # per translation unit, as the compiler sees names
    sizes = {**api.SIZES, **dtypes}
    _ub_plan(code, tables, sizes, out)
    _queues(code, out)
    _datacopy(code, tables, sizes, out)


# -- the unified buffer ----------------------------------------------------------------------------

def _scopes(code):
    scopes: dict[str, list] = {}
    for f in code.functions:
        if f.aicore:
            scopes.setdefault(f.scope or f.name, []).append(f)
    return scopes


ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=", "++", "--"}


def _runtime_names(code) -> set[str]:
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


def _runtime(arg: list, runtime: set[str]) -> bool:
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


def _initialisers(units) -> dict[str, list]:
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


def _hides(arg: list, declared: dict[str, list], depth: int = 0) -> bool:
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
            if depth < 8 and _hides(declared[name], declared, depth + 1):
                return True
        elif t.text not in INT_TYPES and t.text not in FOLDED_CALLS and t.text not in api.SIZES:
            return True  # a name nothing declares as a constant
    return False


def _in_loop(body: list, k: int) -> bool:
    """Is body[k] inside a for/while/do block, or the one statement of a brace-less loop?"""
    depth, j, statement = 0, k - 1, True
    while j >= 0:
        text = body[j].text
        if text in (")", "]") or text == "}" and depth >= 0:
            if text == "}":
                statement = statement and bool(depth)  # a block closed before body[k]: a statement of its own
                depth += 1
            else:
                j = _paren_open(body, j) if text == ")" else j
        elif text == "{" and depth:
            depth -= 1
        elif text in ("{", ";", "}") and not depth:
            if statement and body[j + 1].text in ("for", "while"):
                return True  # for (...) pipe.InitBuffer(...);
            statement = False
            if text == "{":
                head = j - 1
                if head >= 0 and body[head].text == "do":
                    return True
                if head >= 0 and body[head].text == ")":
                    opener = _paren_open(body, head)
                    if opener > 0 and body[opener - 1].text in ("for", "while"):
                        return True
        j -= 1
    return statement and body[0].text in ("for", "while") if body else False


def _paren_open(body: list, close: int) -> int:
    depth = 0
    for j in range(close, -1, -1):
        depth += (body[j].text == ")") - (body[j].text == "(")
        if depth == 0:
            return j
    return -1


def _ub_plan(code, tables, sizes, out: Findings) -> None:
    """The unified buffer a kernel takes: every InitBuffer that the kernel entry reaches (the functions
    it calls, the classes it instantiates, their methods, transitively), summed; where the entry
    chooses between branches (`if (TILING_KEY_IS(1)) { KernelA a; ... } else { KernelB b; ... }`)
    each choice is its own plan and the largest counts. A known part over the budget is an error
    whatever the run-time sizes add to it; a run-time size alone is a warning."""
    runtime = _runtime_names(code)
    declared = _initialisers(code.units)
    sized: dict[int, tuple] = {}  # id(call token) -> (bytes or None, what, where)
    for f in code.functions:
        if not f.aicore:
            continue
        unit = code.units[f.unit]
        for k, name, member in calls(f.body):
            if not member or api.base_name(name) != "InitBuffer":
                continue
            args = split_args(f.body, open_paren(f.body, k))
            at = unit.at(f.body[k])
            if _in_loop(f.body, k):
                out.bad(f"ascendc-ub: InitBuffer in a loop in {f.name}: every call takes more unified buffer, "
                        f"so the plan is one call per queue or buffer ({at})")
                continue
            parts = args[1:] if len(args) in (2, 3) else None
            values = [evaluate(a, tables[f.unit], sizes) for a in parts] if parts else [None]
            queue = " ".join(t.text for t in args[0]) if args else "?"
            if None in values:
                hidden = [a for a, v in zip(parts or [], values)
                          if v is None and not _runtime(a, runtime) and _hides(a, declared)]
                if hidden:
                    out.bad(f"ascendc-ub: InitBuffer({queue}, ...) size `{' '.join(t.text for t in hidden[0])}` "
                            "is neither a constant opforge folds (constexpr/const/#define integers, sizeof) nor "
                            f"computed at run time (a parameter, a member set in code, tiling data, an AscendC "
                            f"query); name it as a constexpr integer ({at})")
                    continue
                sized[id(f.body[k])] = (None, f"InitBuffer({queue}, ...) ({at})", at)
            else:
                sized[id(f.body[k])] = (values[0] * (values[1] if len(values) == 2 else 1), queue, at)
    calls_of = _member_types(code)
    for entry in code.kernels:
        plans = []
        try:
            variants = _variants(entry.body)
        except RecursionError:  # statements nested thousands deep: all of it at once (the sum, an upper bound)
            variants = [entry.body]
        for variant in variants:
            reached = _reach(code, entry, variant, calls_of)
            found = [sized[id(t)] for f in reached for t in f.body if id(t) in sized]
            known = sum(b for b, _, _ in found if b is not None)
            plans.append((known, [w for b, w, _ in found if b is None], next((w for _, _, w in found), entry.where)))
        known, unknown, first = max(plans, key=lambda p: (p[0], len(p[1])))
        if known > api.UB_BYTES:
            more = f", plus {len(unknown)} run-time-sized buffer(s)" if unknown else ""
            out.bad(f"ascendc-ub: kernel {entry.name}'s InitBuffer plan takes {known} bytes ({known / 1024:.0f} KB) "
                    f"of unified buffer{more}, over the {api.UB_BYTES} (192 KB) an AI core has: the buffers of every "
                    f"class and helper the kernel reaches add up ({first})")
        elif unknown:
            out.warn(f"ascendc-ub: kernel {entry.name}'s unified-buffer plan could not be checked: {len(unknown)} "
                     f"InitBuffer size(s) depend on runtime values, e.g. {unknown[0]}; the known part is {known} bytes")


MAX_VARIANTS = 16


def _variants(body: list[Token]) -> list[list[Token]]:
    """The entry's body once per choice of branch of its top-level if/else chains (at most
    MAX_VARIANTS; past that, all of it at once: the sum, an upper bound)."""
    pieces: list[list[list[Token]]] = []
    k = 0
    while k < len(body):
        end = max(statement_end(body, k), k + 1)
        statement = body[k:end]
        if statement[0].text == "if" and statement[0].kind == "id":
            pieces.append(_branches(statement))
        else:
            pieces.append([statement])
        k = end
    count = 1
    for p in pieces:
        count *= len(p)
    if count > MAX_VARIANTS:
        return [body]
    variants: list[tuple[list[Token], bool]] = [([], False)]  # (tokens, returned)
    for p in pieces:
        variants = [v if done else (v[0] + choice, _returns(choice)) for v in variants for done in [v[1]]
                    for choice in (p if not done else p[:1])]
    return [v for v, _ in variants]


def _returns(tokens: list[Token]) -> bool:
    """Does this branch end the entry: a `return` outside any nested block of the branch?"""
    depth = 0
    for t in tokens:
        if t.kind == "punct" and t.text in ("{", "}"):
            depth += 1 if t.text == "{" else -1
        elif t.kind == "id" and t.text == "return" and depth <= 1:
            return True
    return False


def _branches(statement: list[Token]) -> list[list[Token]]:
    """`if (c) A else if (d) B else C` -> [c A, d B, C] (the conditions kept: they may call too);
    without a final else, the empty choice too."""
    found = []
    while True:
        j = 1 + (len(statement) > 1 and statement[1].text == "constexpr")
        if j >= len(statement) or statement[j].text != "(":
            return found + [statement]
        end = statement_end(statement, closing_bracket(statement, j) + 1)
        found.append(statement[j:end])
        if not (end < len(statement) and statement[end].text == "else"):
            return found + [[]]
        statement = statement[end + 1:]
        if not (statement and statement[0].text == "if"):
            return found + [statement]


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


def _member_types(code):
    """Class -> {member variable -> its project classes}."""
    classes = code.classes
    members: dict[str, dict[str, set[str]]] = {}
    for unit in code.units:
        for kind, name, open_at, close_at in _class_bodies(unit.tokens, classes):
            _typed(unit.tokens[open_at + 1:close_at], classes, members.setdefault(name, {}))
    return members


def _class_bodies(tokens, classes):
    from opforge.backends.ascendc.units import _classes

    return [c for c in _classes(tokens) if c[1] in classes]


def _reach(code, entry, body: list[Token], members) -> list:
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


# -- queues ------------------------------------------------------------------------------------------

def _declared(tokens: list[Token], kinds: tuple[str, ...]) -> set[str]:
    names, k = set(), 0
    while k < len(tokens):
        if tokens[k].kind == "id" and api.base_name(tokens[k].text) in kinds and k + 1 < len(tokens) and tokens[k + 1].text == "<":
            depth, j = 0, k + 1
            while j < len(tokens):
                depth += (tokens[j].text == "<") - (tokens[j].text == ">") - 2 * (tokens[j].text == ">>")
                j += 1
                if depth <= 0:
                    break
            while j < len(tokens) and tokens[j].text not in (";", ")", "{", "="):
                if tokens[j].kind == "id":
                    names.add(tokens[j].text)
                j += 1
            k = j
        k += 1
    return names


def _early_return(f, unit, queues: set, scope: str, out: Findings) -> None:
    """A `return` after a queue's AllocTensor/DeQue and before its EnQue/FreeTensor in the same
    function leaves the tensor held on that path: the call sites balance, the run does not."""
    returns = [j for j, t in enumerate(f.body) if t.kind == "id" and t.text == "return"]
    opened: dict[str, int] = {}
    for k, name, member in calls(f.body):
        method = api.base_name(name)
        receiver = f.body[k - 2].text if member and k >= 2 else None
        if receiver not in queues:
            continue
        if method in ("AllocTensor", "DeQue"):
            opened.setdefault(receiver, k)
        elif receiver in opened and any(opened[receiver] < r < k for r in returns):
            out.bad(f"ascendc-queue: {scope}: a return in {f.name} before {receiver}.{method} leaves its tensor held "
                    f"on that path ({unit.at(f.body[k])})")
            return


def _queues(code, out: Findings) -> None:
    queues = set().union(*(_declared(u.tokens, ("TQue", "TQueBind")) for u in code.units)) if code.units else set()
    members = _member_types(code)
    runs = {id(f) for entry in code.kernels for f in _reach(code, entry, entry.body, members)}
    for scope, functions in _scopes(code).items():
        if code.kernels:  # what runs: a method no kernel reaches frees nothing
            functions = [f for f in functions if id(f) in runs or f.kernel]
        counts: dict[str, dict[str, int]] = {}
        where: dict[str, str] = {}
        initialised = set()
        for f in functions:
            unit = code.units[f.unit]
            for k, name, member in calls(f.body):
                method = api.base_name(name)
                receiver = f.body[k - 2].text if member and k >= 2 else None
                if method == "InitBuffer":
                    args = split_args(f.body, open_paren(f.body, k))
                    initialised |= {t.text for t in (args[0] if args else []) if t.kind == "id"}
                if method in QUEUE_METHODS and receiver in queues:
                    counts.setdefault(receiver, dict.fromkeys(QUEUE_METHODS, 0))[method] += 1
                    where.setdefault(receiver, unit.at(f.body[k]))
        for f in functions:
            _early_return(f, code.units[f.unit], queues, scope, out)
        for queue, n in counts.items():
            if n["AllocTensor"] != n["FreeTensor"]:
                out.bad(f"ascendc-queue: {scope}: {queue} has {n['AllocTensor']} AllocTensor but {n['FreeTensor']} "
                        f"FreeTensor ({where[queue]})")
            if n["EnQue"] != n["DeQue"]:
                out.bad(f"ascendc-queue: {scope}: {queue} has {n['EnQue']} EnQue but {n['DeQue']} DeQue ({where[queue]})")
            if queue not in initialised and any(n.values()):
                out.bad(f"ascendc-queue: {scope}: {queue} is used but never given memory with pipe.InitBuffer "
                        f"({where[queue]})")


# -- DataCopy lengths --------------------------------------------------------------------------------

def _element_types(tokens: list[Token]) -> dict[str, set[str]]:
    """Tensor variable -> element types, from `LocalTensor<T> x`, `GlobalTensor<T> x`, `x = q.AllocTensor<T>()`."""
    found: dict[str, set[str]] = {}
    for k in range(len(tokens) - 4):
        a, b, c, d, e = tokens[k:k + 5]
        if a.kind == "id" and api.base_name(a.text) in ("LocalTensor", "GlobalTensor") and b.text == "<" \
                and d.text == ">" and e.kind == "id":
            found.setdefault(e.text, set()).add(c.text)
        if a.kind == "id" and b.text == "=" and c.kind == "id" and d.text in (".", "->"):
            if k + 7 < len(tokens) and tokens[k + 4].text in ("AllocTensor", "DeQue", "Get") and tokens[k + 5].text == "<":
                found.setdefault(a.text, set()).add(tokens[k + 6].text)
    return found


def _root(arg: list[Token]) -> str | None:
    ids = [t.text for t in arg if t.kind == "id" and t.text != "this"]
    return ids[0] if ids else None


def _datacopy(code, tables, sizes, out: Findings) -> None:
    runtime, declared = _runtime_names(code), _initialisers(code.units)
    unknown: list[str] = []
    types = [_element_types(u.tokens) for u in code.units]
    params = set().union(*(_params_names(u.tokens) for u in code.units)) if code.units else set()
    buffers = _buffer_bytes(code, tables, sizes)
    for f in code.functions:
        if not f.aicore:
            continue
        unit = code.units[f.unit]
        for k, name, member in calls(f.body):
            if member or api.base_name(name) != "DataCopy":
                continue
            args = split_args(f.body, open_paren(f.body, k))
            if len(args) == 3 and args[2] and (args[2][0].text == "{" or _root(args[2]) in params
                                                or api.base_name(args[2][0].text) == "DataCopyParams"):
                _block_params(f, unit, args, tables[f.unit], sizes, buffers, out)
                continue  # a DataCopyParams form counts 32-byte blocks: aligned by construction
            if len(args) != 3 or not args[2]:
                continue
            count = evaluate(args[2], tables[f.unit], sizes)
            elements = {t for a in args[:2] for t in types[f.unit].get(_root(a) or "", set())}
            size = sizes.get(next(iter(elements))) if len(elements) == 1 else None
            at = unit.at(f.body[k])
            if count is None and not _runtime(args[2], runtime) and _hides(args[2], declared):
                out.bad(f"ascendc-datacopy: DataCopy length `{' '.join(t.text for t in args[2])}` is neither a "
                        "constant opforge folds nor computed at run time, so its 32-byte alignment cannot be "
                        f"checked; name it as a constexpr integer ({at})")
            elif count is None or size is None and count % api.DMA_ALIGN:
                unknown.append(at)
            elif size is not None and count * size % api.DMA_ALIGN:
                out.bad(f"ascendc-datacopy: DataCopy of {count} {next(iter(elements))} elements moves {count * size} "
                        f"bytes, not a multiple of 32 (DataCopy moves whole 32-byte blocks; use DataCopyPad) ({at})")
    if unknown:
        out.warn(f"ascendc-datacopy: {len(unknown)} DataCopy length(s) depend on runtime values or unknown element "
                 f"types and were not checked for 32-byte alignment ({', '.join(unknown[:3])})")


def _params_names(tokens: list[Token]) -> set[str]:
    return {tokens[k + 1].text for k in range(len(tokens) - 1)
            if tokens[k].kind == "id" and api.base_name(tokens[k].text).endswith("Params") and tokens[k + 1].kind == "id"}


# -- DataCopyParams: blockLen counts 32-byte blocks -------------------------------------------------------

PARAM_FIELDS = ("blockCount", "blockLen", "srcStride", "dstStride")


def _buffer_bytes(code, tables, sizes) -> dict[str, int]:
    """Queue or TBuf -> bytes of one of its buffers, where every InitBuffer of it folds to one value."""
    found: dict[str, set] = {}
    for f in code.functions:
        for k, name, member in calls(f.body):
            if member and api.base_name(name) == "InitBuffer":
                args = split_args(f.body, open_paren(f.body, k))
                if len(args) in (2, 3) and len(args[0]) == 1:
                    found.setdefault(args[0][0].text, set()).add(evaluate(args[-1], tables[f.unit], sizes))
    return {q: next(iter(v)) for q, v in found.items() if len(v) == 1 and None not in v}


def _fields_of(body: list, name: str) -> dict[str, list]:
    """The fields a DataCopyParams variable is given in this body: `P name{c, l, s, d}` / `(c, l, s, d)` /
    `= {...}`, designated `{.blockLen = l}`, and `name.blockLen = l;`."""
    fields: dict[str, list] = {}
    for k in range(len(body) - 2):
        t = body[k]
        if t.kind == "id" and t.text == name and k and api.base_name(body[k - 1].text) in ("DataCopyParams", ">"):
            j = k + 1 + (body[k + 1].text == "=")
            if j < len(body) and body[j].text in ("{", "("):
                fields.update(_positional(split_args(body, j)))
        elif t.kind == "id" and t.text == name and body[k + 1].text in (".", "->") and k + 3 < len(body) \
                and body[k + 2].text in PARAM_FIELDS and body[k + 3].text == "=":
            end = k + 4
            while end < len(body) and body[end].text not in (";", ","):
                end += 1
            fields[body[k + 2].text] = body[k + 4:end]
    return fields


def _positional(args: list[list]) -> dict[str, list]:
    if args and args[0] and args[0][0].text == ".":
        return {a[1].text: a[3:] for a in args if len(a) > 3 and a[1].text in PARAM_FIELDS and a[2].text == "="}
    return {field: a for field, a in zip(PARAM_FIELDS, args) if a}


def _byte_count(expr: list) -> bool:
    """Is this a count of bytes: a `sizeof` outside any call's parentheses, and no division or right
    shift anywhere (`n * sizeof(float) / 32` is blocks)?"""
    if any(t.text in ("/", ">>", "/=", ">>=") and t.kind == "punct" for t in expr):
        return False
    depth = 0
    for k, t in enumerate(expr):
        if t.text == "sizeof" and depth == 0:
            return True
        if t.text == "(" and k and expr[k - 1].kind == "id" and expr[k - 1].text != "sizeof":
            depth += 1
        elif t.text == ")" and depth:
            depth -= 1
    return False


def _block_params(f, unit, args, table, sizes, buffers, out: Findings) -> None:
    """`DataCopy(dst, src, params)`: params.blockLen is in 32-byte blocks (DataCopyPad's is bytes). A
    blockLen that is a byte count, or blocks that overrun the local buffer, move up to 32x too much."""
    third = args[2]
    if third[0].text == "{":
        fields = _positional(split_args(third, 0))
    elif api.base_name(third[0].text) == "DataCopyParams" and len(third) > 1 and third[1].text in ("{", "("):
        fields = _positional(split_args(third, 1))
    else:
        fields = _fields_of(f.body, _root(third) or "")
    length = fields.get("blockLen")
    if not length:
        return
    at = unit.at(args[2][0])
    text = " ".join(t.text for t in length)
    count_expr = fields.get("blockCount")
    count = evaluate(count_expr, table, sizes) if count_expr else 1
    blocks = evaluate(length, table, sizes)
    local = next((b for a in args[:2] for b in [buffers.get(_queue_of(f.body, _root(a) or ""))] if b), None)
    if _byte_count(length):
        numbers = ""
        if blocks is not None:
            moved = (count or 1) * blocks * api.DMA_ALIGN
            numbers = (f" (= {blocks}: DataCopy moves {count if count is not None else '?'} x {blocks} blocks x 32 = "
                       f"{moved} bytes{f', the local buffer holds {local}' if local else ''})")
        out.bad(f"ascendc-datacopy: DataCopyParams.blockLen counts 32-byte blocks, but `{text}` is a byte count"
                f"{numbers}: a 32x overrun; divide by 32, or use DataCopyPad with DataCopyExtParams (bytes) ({at})")
    elif blocks is not None and blocks > 0xFFFF:
        out.bad(f"ascendc-datacopy: DataCopyParams.blockLen `{text}` = {blocks} does not fit its 16 bits ({at})")
    elif blocks is not None and count is not None and local and count * blocks * api.DMA_ALIGN > local:
        out.bad(f"ascendc-datacopy: DataCopy with DataCopyParams moves {count} x {blocks} blocks x 32 = "
                f"{count * blocks * api.DMA_ALIGN} bytes, but the local buffer holds {local} ({at})")


def _queue_of(body: list, tensor: str) -> str:
    """The queue or TBuf a LocalTensor variable was taken from in this body (`t = q.AllocTensor<T>()`)."""
    for k in range(len(body) - 4):
        if body[k].text == tensor and body[k + 1].text == "=" and body[k + 3].text in (".", "->") \
                and body[k + 4].text in ("AllocTensor", "DeQue", "Get"):
            return body[k + 2].text
    return ""
