"""AscendC kernels in an export: each promoted AscendC candidate becomes a buildable project
directory beside the package, `<out>/ascendc/<op>/`, not a module of it.

An AscendC kernel runs only once CANN's bisheng has built it and torch_npu loads it, and CANN's
licence keeps its headers and tools out of anything opforge ships, so the project is source only
and stays out of the wheel: the candidate's own files (read from its module-level strings, the
form opforge's AscendC backend verifies: backends/ascendc/project.py reads them here too), the build opforge renders for them, the candidate itself
(its ModelNew calls the built module) and a README saying how to build and register it.

- Direct launch (`ASCENDC_SOURCES`): the files verbatim plus a CMakeLists.txt with
  `find_package(ASC)`, building one Python extension module (the PYBIND11_MODULE name) against
  torch and torch_npu; files holding `__aicore__` code or a `<<<...>>>` launch compile as ASC.
- MultiKernelBench (`project_json_src`, ...): the msopgen layout (`<Op>.json`, op_host/,
  op_kernel/) and the torch binding as CppExtension/ with its setup.py; msopgen, part of CANN,
  generates the rest of the project (CMake files, build.sh) at build time, as the README says.

Nothing here is compiled: no CANN on the exporting machine is assumed, and promotion already
required a CANN build and run (the ladder's `emulated` or above), recorded in the README.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

import jinja2

from opforge.backends.ascendc.project import MKB_MODULE, ProjectError, read_project, snake
from opforge.exporter.collect import ExportError, check_op_name, describe_spec
from opforge.exporter.hooks import ExportHooks
from opforge.registry.promoted import PromotedKernel

ROOT = "ascendc"  # <out>/ascendc/<op>/
_env = jinja2.Environment(
    loader=jinja2.PackageLoader("opforge.exporter", "templates"), undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, autoescape=False,
)
# MultiKernelBench's strings -> where msopgen's layout keeps them (op type "AddCustom" -> add_custom).
MSOPGEN_LAYOUT = {"host_tiling_src": "op_host/{stem}_tiling.h", "host_operator_src": "op_host/{stem}.cpp",
                  "kernel_src": "op_kernel/{stem}.cpp", "python_bind_src": "CppExtension/csrc/op.cpp"}


@dataclass(frozen=True)
class AscendcProject:
    op: str
    form: str  # "direct" or "multikernelbench" (the harness parser's names)
    files: dict[str, str]  # path under ascendc/<op>/ -> text (the candidate's own files)
    module: str  # the Python module the torch binding defines
    function: str  # what ModelNew.forward calls on it
    kernel_files: tuple[str, ...]  # direct form: the files compiled as ASC
    op_type: str | None  # MultiKernelBench form: the op's type ("AddCustom")


def parse(op: str, source: str) -> AscendcProject:
    """The candidate's project, read by the AscendC backend's own parser (the verifier's reading,
    so the export ships what was verified); ExportError (one line) when it is unreadable."""
    try:
        project = read_project(source)
    except ProjectError as exc:
        raise ExportError(f"{op}: the AscendC candidate cannot be read: {exc}") from None
    call = project.calls[0] if project.calls else None
    if project.form == "direct":
        files = {f.name: f.text for f in project.files}
        kernels = tuple(sorted(f.name for f in project.files if f.role != "header"
                               and ("__aicore__" in f.text or "<<<" in f.text)))
        return AscendcProject(op=op, form="direct", files=dict(sorted(files.items())),
                              module=call.module if call else "", function=call.fn if call else "",
                              kernel_files=kernels, op_type=None)
    op_type = project.op["op"]
    files = {MSOPGEN_LAYOUT[f.display].format(stem=snake(op_type)): f.text for f in project.files}
    files[f"{op_type}.json"] = _strings(source)["project_json_src"]
    files["model.py"] = _strings(source).get("model_src") or source
    return AscendcProject(op=op, form="multikernelbench", files=dict(sorted(files.items())), module=MKB_MODULE,
                          function=call.fn if call else "", kernel_files=(), op_type=op_type)


def _strings(source: str) -> dict[str, str]:
    """Module-level string literals (read_project has checked each is bound once)."""
    return {node.targets[0].id: node.value.value for node in ast.parse(source).body
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}


def project_files(pk: PromotedKernel, package: str) -> dict[str, tuple[str, str]]:
    """`ascendc/<op>/...` -> (text, what it is) for one promoted AscendC version."""
    op = pk.version.op
    check_op_name(op)
    project = parse(op, pk.source)
    inputs = describe_spec(pk)["inputs"]
    ctx = {"p": project, "pk": pk, "package": package, "inputs": inputs,
           "signature": ", ".join(f"{s.name}: {_PY_TYPES[s.kind]}" for s in inputs),
           "args": ", ".join(s.name for s in inputs), "level": pk.evaluation.level or "unknown",
           "verified_on": pk.evaluation.verified_on or "unknown"}
    files = {name: text for name, text in project.files.items()}
    if project.form == "direct":
        files["CMakeLists.txt"] = _env.get_template("ascendc_CMakeLists.txt.j2").render(**ctx)
        files["candidate.py"] = pk.source
    else:
        files["CppExtension/setup.py"] = _env.get_template("ascendc_setup.py.j2").render(**ctx)
    files["README.md"] = _env.get_template("ascendc_README.md.j2").render(**ctx, files=sorted(files))
    return {f"{ROOT}/{op}/{name}": (text, _what(op, name)) for name, text in sorted(files.items())}


def _what(op: str, rel: str) -> str:
    """The README's file-list line for a project file."""
    return {"README.md": f"{op}: how to build it with CANN and register it with torch_npu",
            "CMakeLists.txt": f"{op}: the build (find_package(ASC)), rendered by opforge",
            "candidate.py": f"{op}: the verified candidate; its ModelNew calls the built module",
            "model.py": f"{op}: ModelNew, calling custom_ops_lib",
            "CppExtension/setup.py": f"{op}: builds the torch_npu binding custom_ops_lib"}.get(
        rel, f"{op}: AscendC source from the candidate, verbatim")


_PY_TYPES = {"tensor": "torch.Tensor", "int": "int", "float": "float", "bool": "bool"}

HOOKS = ExportHooks(form="project", project_files=project_files,
                    project_note="source only, build them with CANN: see each README.md")
