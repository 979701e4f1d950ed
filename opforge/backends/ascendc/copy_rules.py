"""The AscendC rules on DataCopy (ascendc-datacopy): a DataCopy length moves whole 32-byte blocks, and
DataCopyParams.blockLen counts 32-byte blocks (a byte count there is a 32x overrun), within 16 bits
and the local buffer. A length from run-time values is a warning, never a pass or a guess.
"""
from __future__ import annotations

from opforge.backends.ascendc import api
from opforge.backends.ascendc.fold import evaluate
from opforge.backends.ascendc.kernel_rules import Findings, calls, open_paren, split_args
from opforge.backends.ascendc.reach import hides, initialisers, is_runtime, runtime_names
from opforge.backends.cuda.cxx import Token


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


def check_datacopy(code, tables, sizes, out: Findings) -> None:
    runtime, declared = runtime_names(code), initialisers(code.units)
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
            if count is None and not is_runtime(args[2], runtime) and hides(args[2], declared):
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
