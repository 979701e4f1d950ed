"""The AscendC rule on queues (ascendc-queue): each queue's AllocTensor/FreeTensor and EnQue/DeQue
balance, per kernel class with all its methods that a kernel reaches (the CopyIn/Compute/CopyOut
split lives across methods, so a per-method count would refuse Huawei's own samples), or a free
`__global__` function; a return between a queue's AllocTensor/DeQue and its EnQue/FreeTensor; a queue
used but never given memory.
"""
from __future__ import annotations

from opforge.backends.ascendc import api
from opforge.backends.ascendc.kernel_rules import Findings, calls, open_paren, split_args
from opforge.backends.ascendc.reach import member_types, reach
from opforge.backends.cuda.cxx import Token

QUEUE_METHODS = ("AllocTensor", "FreeTensor", "EnQue", "DeQue")


def _scopes(code):
    scopes: dict[str, list] = {}
    for f in code.functions:
        if f.aicore:
            scopes.setdefault(f.scope or f.name, []).append(f)
    return scopes


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


def check_queues(code, out: Findings) -> None:
    queues = set().union(*(_declared(u.tokens, ("TQue", "TQueBind")) for u in code.units)) if code.units else set()
    members = member_types(code)
    runs = {id(f) for entry in code.kernels for f in reach(code, entry, entry.body, members)}
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
