"""Every AscendC tiling field must be set on the host and read in the kernel (ascendc-tiling): set in a
host function the framework reaches (the pybind/torch module bodies, the OpDef that registers
SetTiling, what they call), before the struct is handed on (SaveToBuffer, the launch), and read
through a tiling variable in kernel code; a field the kernel reads that no struct declares is refused.
Both forms: the direct launch's plain structs, MultiKernelBench's TILING_DATA_FIELD_DEF.
"""
from __future__ import annotations

from opforge.backends.ascendc import api
from opforge.backends.ascendc.kernel_rules import Findings, calls, open_paren, split_args


def _tiling_vars(f, structs) -> set[str]:
    """Names of f's parameters and locals of a tiling struct's type (`AddCustomTilingData tiling`,
    `const T *t`), and GET_TILING_DATA's variable: the only receivers whose fields are tiling fields
    (a kernel class's own `this->tileNum` is not the tiling's)."""
    found = set()
    for tokens in [*f.params, f.body]:
        for k, t in enumerate(tokens):
            if t.kind == "id" and t.text.rpartition("::")[2] in structs:
                j = k + 1
                while j < len(tokens) and tokens[j].text in ("*", "&", "const", "__gm__"):
                    j += 1
                if j < len(tokens) and tokens[j].kind == "id":
                    found.add(tokens[j].text)
    for k, name, member in calls(f.body):
        if name.startswith("GET_TILING_DATA"):
            args = split_args(f.body, open_paren(f.body, k))
            picked = args[1] if name.endswith("WITH_STRUCT") and len(args) > 1 else args[0] if args else []
            found |= {t.text for t in picked[:1] if t.kind == "id"}
    return found


def _handoffs(body, names: set[str]) -> dict[str, list[int]]:
    """Where each tiling variable leaves the function: `t.SaveToBuffer(...)` (MultiKernelBench), or the
    whole struct passed on (`launch(..., t)`, `k<<<...>>>(..., &t)`); a field set after the last one is
    not what the kernel gets."""
    found: dict[str, list[int]] = {}
    for k, t in enumerate(body):
        if t.kind != "id" or t.text not in names:
            continue
        after = body[k + 1].text if k + 1 < len(body) else ""
        before = body[k - 1].text if k else ""
        if after == "." and k + 3 < len(body) and body[k + 2].text == "SaveToBuffer" and body[k + 3].text == "(":
            found.setdefault(t.text, []).append(k)
        elif after in (")", ",") and (before in ("(", ",") or before == "&" and k >= 2 and body[k - 2].text in ("(", ",")):
            found.setdefault(t.text, []).append(k)
    return found


HOST_ROOTS = ("PYBIND11_MODULE", "TORCH_LIBRARY", "TORCH_LIBRARY_IMPL", "TORCH_LIBRARY_FRAGMENT")


def _live_host(code) -> set[int]:
    """The host functions that run: those the framework calls (the pybind/torch module bodies, the OpDef
    constructor that registers SetTiling) and every function they name, transitively (a call, `&f`,
    `optiling::TilingFunc`). No root found: all of them."""
    host = [f for f in code.functions if not f.aicore]
    roots = [f for f in host if f.name in HOST_ROOTS or any(name == "SetTiling" for _, name, _ in calls(f.body))]
    if not roots:
        return {id(f) for f in host}
    by_name: dict[str, list] = {}
    for f in host:
        by_name.setdefault(api.base_name(f.name), []).append(f)
    live, todo = set(), list(roots)
    while todo:
        f = todo.pop()
        if id(f) in live:
            continue
        live.add(id(f))
        todo += [g for t in f.body if t.kind == "id" for g in by_name.get(api.base_name(t.text), ()) if id(g) not in live]
    return live


def _set_and_read(code, structs) -> tuple[set[str], set[str], dict[str, list[int]], dict[str, str]]:
    """Field names assigned in host code, field names read in kernel code, brace-initialised structs,
    and fields set only after their struct left the function (field -> where)."""
    assigned, read, braced, late = set(), set(), {}, {}
    live = _live_host(code)
    for f in code.functions:
        if not f.aicore and id(f) not in live:
            continue  # a host function nothing the framework calls reaches sets nothing
        body, names = f.body, _tiling_vars(f, structs)
        handoffs = _handoffs(body, names) if not f.aicore else {}
        for k in range(2, len(body) - 1):
            if body[k - 1].text not in (".", "->") or body[k].kind != "id" or body[k - 2].text not in names:
                continue
            written = body[k + 1].text in ("=", "+=", "-=", "*=", "/=", "|=", "<<=", ">>=")
            setter = body[k].text.startswith("set_") and body[k + 1].text == "("
            if f.aicore and not written and body[k + 1].text != "(":
                read.add(body[k].text)
            elif not f.aicore and (written or setter):
                field_name = body[k].text[4:] if setter else body[k].text
                leaves = handoffs.get(body[k - 2].text)
                if leaves and max(leaves) < k:
                    late.setdefault(field_name, f"{body[k - 2].text}.{body[k].text} at {code.units[f.unit].at(body[k])}, "
                                                f"after {body[k - 2].text} left {f.name} at "
                                                f"{code.units[f.unit].at(body[max(leaves)])}")
                else:
                    assigned.add(field_name)
        for k in range(len(body) - 2):
            if not f.aicore and body[k].kind == "id" and body[k].text in structs and body[k + 1].kind == "id":
                j = k + 2 + (body[k + 2].text == "=")
                if j < len(body) and body[j].text == "{":
                    fields = split_args(body, j)
                    braced.setdefault(body[k].text, []).append(len(fields))
                    assigned |= {a[1].text for a in fields if len(a) > 2 and a[0].text == "." and a[2].text == "="}
    return assigned, read, braced, late


def check_tiling(code, project, out: Findings) -> None:
    structs = {name: spec for name, spec in code.structs.items() if "tiling" in name.lower()}
    if project.form == "multikernelbench":
        structs = _mkb_tiling(code, out)
    assigned, read, braced, late = _set_and_read(code, structs)
    for name, (fields, where) in structs.items():
        whole = max(braced.get(name, [0]))
        for i, field_name in enumerate(fields):
            if field_name not in assigned and i >= whole:
                if field_name in late:
                    out.bad(f"ascendc-tiling: tiling field {name}.{field_name} is set only after the tiling was "
                            f"handed on ({late[field_name]}): the kernel reads 0 ({where})")
                else:
                    out.bad(f"ascendc-tiling: tiling field {name}.{field_name} is never set on the host ({where})")
            if field_name not in read:
                out.warn(f"ascendc-tiling: tiling field {name}.{field_name} is never read in the kernel: set for "
                         f"nothing (harmless, unless the kernel computes with something else instead) ({where})")
    declared = {f for fields, _ in structs.values() for f in fields}
    for field_name in sorted(read - declared) if structs else []:
        out.bad(f"ascendc-tiling: the kernel reads tiling field {field_name}, which no tiling struct declares "
                f"({', '.join(sorted(structs))}): nothing on the host sets it")


def _mkb_tiling(code, out: Findings) -> dict[str, tuple[list[str], str]]:
    structs: dict[str, tuple[list[str], str]] = {}
    current = None
    for unit in code.units:
        for k, name, member in calls(unit.tokens):
            args = split_args(unit.tokens, open_paren(unit.tokens, k))
            words = [a[-1].text for a in args if a]
            if name == "BEGIN_TILING_DATA_DEF" and words:
                current = words[0]
                structs.setdefault(current, ([], unit.at(unit.tokens[k])))
            elif name.startswith("TILING_DATA_FIELD_DEF") and current and words:
                if words[-1] not in structs[current][0]:
                    structs[current][0].append(words[-1])
    return structs
