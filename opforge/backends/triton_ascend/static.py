"""Static checks for Triton-Ascend candidates: every Triton rule (backends/triton/static.py), plus
what Ascend's compiler cannot take or silently ignores.

- `inline_asm_elementwise` is PTX (or AMDGPU) text: Ascend has neither, refused.
- `tl.extra.cuda` / CUDA libdevice: NVIDIA's device library, refused (`tl.math` and
  `triton.language.extra.libdevice` dispatch per backend and stay allowed).
- A grid literal of more than 65535 programs is refused here; computed grids are checked on the
  recorded launches (frontend.grid_findings), where more programs than vector cores is a warning.
- `tl.float64` handed to a call (a cast, a constant, `dtype=`): A2/A3 have no fp64 (dtypes.py;
  the build refuses every fp64 op and int64 atomic_add/max/min from the TTIR).
- `num_warps` / `num_stages` are GPU scheduling knobs triton-ascend ignores: a warning, so the
  drafter learns to tune BLOCK sizes and sub-block loops instead.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from opforge.backends.triton_ascend import dtypes, toolchain

CUDA_ONLY_MODULES = ("triton.language.extra.cuda",)
IGNORED_OPTIONS = ("num_warps", "num_stages")


@dataclass
class AscendFindings:
    reasons: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _literal_programs(node: ast.AST) -> int | None:
    """The program count of a grid written as int literals (`(70000,)`, `(256, 300)`, `70000`)."""
    dims = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    total = 1
    for d in dims:
        try:
            value = ast.literal_eval(d)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        total *= value
    return total


def check_ascend(tree: ast.Module) -> AscendFindings:
    found = AscendFindings()
    ignored: dict[str, int] = {}
    called = {id(c.func) for c in ast.walk(tree) if isinstance(c, ast.Call)}  # `kernel[grid](...)` launches
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Attribute) and node.attr == "inline_asm_elementwise" or (
                isinstance(node, ast.Name) and node.id == "inline_asm_elementwise"):
            found.reasons.append(f"ascend-unsupported: inline_asm_elementwise (line {line}): inline assembly is "
                                 "PTX/AMDGPU text, which Ascend's compiler cannot take; write it with tl ops")
        elif isinstance(node, ast.Attribute) and node.attr == "cuda" and (_dotted(node) or "").endswith("extra.cuda"):
            found.reasons.append(f"ascend-unsupported: {_dotted(node)} (line {line}) is NVIDIA's device library; "
                                 "use tl.math or triton.language.extra.libdevice, which Triton-Ascend maps to its own")
        elif isinstance(node, ast.ImportFrom) and node.module and (
                node.module.startswith(CUDA_ONLY_MODULES) or (node.module == "triton.language.extra"
                                                              and any(a.name == "cuda" for a in node.names))):
            found.reasons.append(f"ascend-unsupported: from {node.module} import ... (line {line}) is NVIDIA's "
                                 "device library; use tl.math or triton.language.extra.libdevice")
        elif isinstance(node, ast.Import) and any(a.name.startswith(CUDA_ONLY_MODULES) for a in node.names):
            found.reasons.append(f"ascend-unsupported: import of NVIDIA's device library (line {line})")
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.value, (
                ast.Name, ast.Attribute)):
            count = _literal_programs(node.slice)
            if count is not None and count > toolchain.MAX_PROGRAMS and id(node) in called:
                found.reasons.append(f"grid-too-large: {ast.unparse(node.value)}[...] (line {line}) launches {count} "
                                     f"programs; {toolchain.GRID_LIMIT}")
        if isinstance(node, ast.keyword) and node.arg in IGNORED_OPTIONS:
            ignored.setdefault(node.arg, getattr(node.value, "lineno", 0))
    found.reasons += dtypes.source_findings(tree)  # the build reads every fp64 op from the TTIR
    for option, line in sorted(ignored.items(), key=lambda kv: kv[1]):
        found.warnings.append(f"ascend-ignored: {option} (line {line}) is a GPU scheduling option that "
                              "Triton-Ascend ignores; tune the block sizes and the sub-block loop instead")
    return found

