"""The AscendC static checks, in order: read the candidate (project.py: its Python, and forward, which
may only allocate, reshape and call the binding), read its C++ as it executes (units.py: conditional
compilation decided by g++ -E, branches under constant conditions pruned), then the code rules
(kernel_rules.py: calls and includes; memory_rules.py: the unified buffer per kernel entry;
queue_rules.py: queues; copy_rules.py: DataCopy lengths and params) and the agreement of its parts
(agree.py: signatures, the declared types and target; tiling_rules.py: tiling set before it is
handed on). Each finding is a reason line
`code: message (file:line)`; what could not be checked is a warning. Nothing here imports, compiles
or runs the candidate."""
from __future__ import annotations

from dataclasses import dataclass, field

from opforge.backends.ascendc import agree, api, tiling_rules
from opforge.backends.ascendc.kernel_rules import check_code
from opforge.backends.ascendc.memory_rules import check_memory
from opforge.backends.ascendc.project import Project, ProjectError, read_project
from opforge.backends.ascendc.units import UnitError, read_code

__all__ = ["AscendCStatic", "check_ascendc"]


@dataclass
class AscendCStatic:
    reasons: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    project: Project | None = None
    kernels: list[str] = field(default_factory=list)


def check_ascendc(source: str, float32_spec: bool | None = None) -> AscendCStatic:
    """Every static reason; `float32_spec` (the plugin's: the spec's float inputs are float32) refuses an
    operator declared for half-width floats (None: not known, not checked)."""
    try:
        project = read_project(source)
        code = read_code(project)
    except (ProjectError, UnitError) as exc:
        return AscendCStatic(reasons=[str(exc)])
    found = check_code(code, project)
    check_memory(code, _dtype_sizes(project), found)
    if project.form == "direct":
        agree.check_direct(code, project, found)
    else:
        agree.check_multikernelbench(code, project, found)
    tiling_rules.check_tiling(code, project, found)
    agree.check_types(code, project, float32_spec, found)
    reasons = project.reasons + [r for r in found.reasons if r not in project.reasons]
    return AscendCStatic(reasons, code.notes + found.warnings, project, [f.name for f in code.kernels])


def _dtype_sizes(project: Project) -> dict[str, int]:
    """MultiKernelBench's DTYPE_<NAME> macros (msopgen defines them from project_json_src): their sizes
    where an input or output has exactly one type."""
    if project.op is None:
        return {}
    sizes = {}
    for desc in project.op.get("input_desc", []) + project.op.get("output_desc", []):
        types = desc.get("type") or []
        if isinstance(types, list) and len(types) == 1 and api.JSON_TYPES.get(types[0]) in api.SIZES:
            sizes[f"DTYPE_{desc['name'].upper()}"] = api.SIZES[api.JSON_TYPES[types[0]]]
    return sizes


