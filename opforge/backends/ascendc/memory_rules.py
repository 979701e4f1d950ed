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
from opforge.backends.ascendc.copy_rules import check_datacopy
from opforge.backends.ascendc.fold import constants, evaluate
from opforge.backends.ascendc.kernel_rules import Findings, calls, open_paren, split_args
from opforge.backends.ascendc.preprocess import statement_end
from opforge.backends.ascendc.queue_rules import check_queues
from opforge.backends.ascendc.reach import hides, initialisers, is_runtime, member_types, reach, runtime_names
from opforge.backends.cuda.cxx import Token, closing_bracket

def check_memory(code, dtypes: dict[str, int], out: Findings) -> None:
    """The unified-buffer plan, the queues' balance and the DataCopy lengths, added to `out`."""
    tables = [constants([unit]) for unit in code.units]  # per translation unit, as the compiler sees names
    sizes = {**api.SIZES, **dtypes}
    _ub_plan(code, tables, sizes, out)
    check_queues(code, out)
    check_datacopy(code, tables, sizes, out)


# -- the unified buffer ----------------------------------------------------------------------------

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
    runtime = runtime_names(code)
    declared = initialisers(code.units)
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
                          if v is None and not is_runtime(a, runtime) and hides(a, declared)]
                if hidden:
                    out.bad(f"ascendc-ub: InitBuffer({queue}, ...) size `{' '.join(t.text for t in hidden[0])}` "
                            "is neither a constant opforge folds (constexpr/const/#define integers, sizeof) nor "
                            f"computed at run time (a parameter, a member set in code, tiling data, an AscendC "
                            f"query); name it as a constexpr integer ({at})")
                    continue
                sized[id(f.body[k])] = (None, f"InitBuffer({queue}, ...) ({at})", at)
            else:
                sized[id(f.body[k])] = (values[0] * (values[1] if len(values) == 2 else 1), queue, at)
    calls_of = member_types(code)
    for entry in code.kernels:
        plans = []
        try:
            variants = _variants(entry.body)
        except RecursionError:  # statements nested thousands deep: all of it at once (the sum, an upper bound)
            variants = [entry.body]
        for variant in variants:
            reached = reach(code, entry, variant, calls_of)
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
