"""Data types Atlas A2/A3 (Ascend 910B/910C) cannot compute, read from the TTIR the front end makes
of each compiled launch, and spelled in the source.

Triton-Ascend's own docs (docs/zh/triton_api/*: each op's "DataType 支持" table, and
docs/*/python-api/_ascend_constraints.py) mark as unsupported on A2/A3, as a hardware limitation:
- fp64 for every op: tl.load/tl.store, tl.cast, arithmetic (add, div, ...), math (exp, erf, ...),
  comparisons, reductions, atomics. Loading fp64 and converting it at once is no exception: the
  load and the cast are fp64 ops.
- int64 (and uint64) for atomic_add, atomic_max and atomic_min: the vector units' atomics take
  int8/int16/int32, fp16/bf16/fp32 (CANN's SetAtomicAdd/Max/Min type lists for A2/A3 agree).
  atomic_cas, atomic_xchg and the bitwise atomics are documented with int64 support.

The front end stops before the stage that would refuse most of these (bishengir-compile refuses a
plain fp64 multiply, but not one between an extf and a truncf, and no int64 atomic), so they are
refused here, exactly: an op of the TTIR with an f64 operand or result, a `tt.atomic_rmw`
add/max/min on i64 elements.
"""
from __future__ import annotations

import ast
import re

DOCS = "Triton-Ascend docs, triton_api DataType tables"
FP64 = f"Atlas A2/A3 vector units have no fp64 arithmetic; {DOCS}: fp64 unsupported for every op (hardware limitation)"
INT64_ATOMIC = (f"Atlas A2/A3 atomics take 8/16/32-bit integers and fp16/bf16/fp32 only; {DOCS}: "
                "atomic_add/max/min unsupported for int64 (hardware limitation)")
OP = re.compile(r"^\s*(?:%[\w#:,\s%]+=\s*)?\"?([a-z_]+\.[\w.]+)\"?")
LOC = re.compile(r"\s+loc\((?:[^()]|\([^()]*\))*\)")
# `tt.atomic_rmw add, acq_rel, gpu, %ptr, %v, %m : (tensor<64x!tt.ptr<i64>>, ...) -> ...`
ATOMIC = re.compile(r"\btt\.atomic_rmw\s+(\w+),[^:]*:\s*\(\s*(?:tensor<(?:\d+x)*)?!tt\.ptr<(\w+)>")
F64 = re.compile(r"(?:(?<=\dx)|(?<!\w))f64\b")  # `f64`, `tensor<64xf64>`, `!tt.ptr<f64>`
MEMORY_OPS = ("tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas")
NO_INT64_ATOMIC = {"add": "atomic_add", "max": "atomic_max", "min": "atomic_min", "umax": "atomic_max",
                   "umin": "atomic_min"}


def _f64_types(line: str, op: str) -> bool:
    """Does this op compute on f64? A value of f64 among its types, or, for a memory op (whose
    TTIR shows only the pointer type), a pointer to f64: `!tt.ptr<f64>` elsewhere (an addptr, a
    splat of the pointer) moves an address, not an fp64 value."""
    if op in MEMORY_OPS:
        return bool(F64.search(line))
    return bool(F64.search(re.sub(r"!tt\.ptr<[^<>]*(?:<[^<>]*>)?>", "PTR", line)))


def ttir_findings(kernel: str, ttir: str) -> list[str]:
    """`unsupported-dtype` reasons for one kernel's TTIR: the first fp64 op (with how many there
    are) and each distinct int64 atomic the hardware lacks."""
    f64_ops, atomics = [], {}
    for raw in ttir.splitlines():
        line = LOC.sub("", raw).strip()
        if not line or line.startswith(("#loc", "module", "tt.func", "}", "^")):
            continue
        if (m := ATOMIC.search(line)) and m.group(2) == "i64" and m.group(1) in NO_INT64_ATOMIC:
            atomics.setdefault(NO_INT64_ATOMIC[m.group(1)], line)
        if (op := OP.match(line)) and _f64_types(line, op.group(1)):
            f64_ops.append((op.group(1), line))
    reasons = []
    if f64_ops:
        names = ", ".join(dict.fromkeys(name for name, _ in f64_ops))
        first = next((line for name, line in f64_ops if name != "arith.constant"), f64_ops[0][1])
        reasons.append(f"unsupported-dtype: {kernel} computes in fp64 ({len(f64_ops)} ops: {names}; first "
                       f"`{first[:160]}`): {FP64}")
    for name, line in atomics.items():
        reasons.append(f"unsupported-dtype: {kernel} uses tl.{name} on int64 (`{line[:160]}`): {INT64_ATOMIC}")
    return reasons


# --- the source ----------------------------------------------------------------------------------
FP64_NAMES = ("float64", "fp64")


def _language_aliases(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(dotted names that mean triton.language, local names bound to its float64)."""
    modules, floats = {"triton.language"}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "triton.language" and a.asname:
                    modules.add(a.asname)
        elif isinstance(node, ast.ImportFrom) and node.module in ("triton", "triton.language"):
            for a in node.names:
                if node.module == "triton" and a.name == "language":
                    modules.add(a.asname or a.name)
                elif node.module == "triton.language" and a.name in FP64_NAMES:
                    floats.add(a.asname or a.name)
    return modules, floats


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def source_findings(tree: ast.Module) -> list[str]:
    """`unsupported-dtype` reasons for tl.float64 handed to a call (a cast, a constant, a dtype=):
    what the source spells. A comparison with it (dtype dispatch) is not a use."""
    modules, floats = _language_aliases(tree)

    def is_fp64(node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id in floats
        name = _dotted(node)
        return bool(name) and name.rsplit(".", 1)[-1] in FP64_NAMES and name.rsplit(".", 1)[0] in modules

    reasons, seen = [], set()
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            if is_fp64(arg) and call.lineno not in seen:
                seen.add(call.lineno)
                reasons.append(f"unsupported-dtype: {ast.unparse(arg)} in {ast.unparse(call.func)}(...) "
                               f"(line {call.lineno}): {FP64}")
    return reasons
