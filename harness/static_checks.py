"""Static checks on a candidate's source, run on the parsed AST (the harness never imports it).

They catch, before anything runs, what a kernel has no business doing: importing the OS, threads or
timers, reaching into interpreter internals, patching torch or Triton, seeding the RNG to predict the
inputs, and running a float32 op at lower precision. The dynamic guards in harness/guards.py catch
what slips past a static reading. Each reason is `code: detail (line N)`.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

# Module roots a Triton candidate may import; anything else (os, sys, time, subprocess, threading,
# ctypes, numpy...) has no place in a kernel file.
ALLOWED_IMPORTS = {
    "torch", "torch.nn", "torch.nn.functional", "triton", "triton.language", "math", "typing",
    "functools", "itertools", "operator", "dataclasses", "__future__", "numbers", "enum",
}
ALLOWED_PREFIXES = ("triton.language.",)
FORBIDDEN_CALLS = {
    "eval", "exec", "compile", "open", "__import__", "globals", "locals", "vars", "getattr",
    "setattr", "delattr", "breakpoint", "input", "exit", "quit", "memoryview",
}
FORBIDDEN_ATTRS = {
    "_C", "_dynamo", "_inductor", "_python_dispatch", "library", "compile", "manual_seed", "seed",
    "set_rng_state", "get_rng_state", "initial_seed", "Generator", "TorchDispatchMode",
    "TorchFunctionMode", "__torch_function__", "__torch_dispatch__", "__globals__", "__builtins__",
    "__dict__", "__code__", "__closure__", "__subclasses__", "__bases__", "__mro__", "__class__",
    "__getattribute__", "__self__", "__func__", "__module__", "__loader__", "__spec__", "f_back",
    "f_globals", "f_locals", "gi_frame", "tb_frame", "modules", "data_ptr", "untyped_storage",
    "set_", "cuda_graph", "CUDAGraph", "Event", "synchronize", "testing", "runtime", "knobs",
    # modules re-exported as attributes (torch.multiprocessing, torch.os...) reach what imports can't
    "multiprocessing", "os", "sys", "subprocess", "threading", "_thread", "ctypes", "builtins",
    "importlib", "time", "socket", "signal",
}
FORBIDDEN_DEFS = {"__torch_function__", "__torch_dispatch__", "__del__", "__getattr__"}
LOW_PRECISION = {"float16", "half", "bfloat16", "float8e4nv", "float8e5", "float8e4b15", "float8_e4m3fn",
                 "float8_e5m2", "fp8e4nv", "fp8e5"}


@dataclass
class StaticReport:
    reasons: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    has_model_new: bool = False


def _module_aliases(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names |= {a.asname or a.name for a in node.names}
    return names


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_jit(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr == "jit" or (
        isinstance(target, ast.Name) and target.id == "jit")


def _check_import(node: ast.AST, report: StaticReport) -> None:
    if isinstance(node, ast.Import):
        modules = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        modules = [base] if node.level == 0 else ["<relative import>"]
        # `from torch import nn` imports torch.nn: judge the full name of module-like members
        modules += [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in ALLOWED_IMPORTS]
    else:
        return
    for name in modules:
        if name not in ALLOWED_IMPORTS and not name.startswith(ALLOWED_PREFIXES):
            report.reasons.append(f"forbidden-import: {name} (line {node.lineno})")
            return


def _check_node(node: ast.AST, aliases: set[str], report: StaticReport) -> None:
    line = getattr(node, "lineno", "?")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
        report.reasons.append(f"forbidden-call: {node.func.id}() (line {line})")
    elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRS:
        report.reasons.append(f"forbidden-attribute: .{node.attr} (line {line})")
    elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        for target in targets:
            root = _root_name(target)
            if isinstance(target, ast.Attribute) and root in aliases:
                report.reasons.append(f"patches-module: assigns {ast.unparse(target)} (line {line})")
    elif isinstance(node, ast.Global):
        report.reasons.append(f"forbidden-global: global {', '.join(node.names)} (line {line})")
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in FORBIDDEN_DEFS:
        report.reasons.append(f"forbidden-def: {node.name} (line {line})")
    elif isinstance(node, (ast.AsyncFunctionDef, ast.Await, ast.Yield, ast.YieldFrom)):
        report.reasons.append(f"forbidden-construct: {type(node).__name__} (line {line})")


def _check_precision(tree: ast.Module, report: StaticReport) -> None:
    """For a float32 spec: no casts to half/fp8 types, no TF32 dots (the default of tl.dot on fp32)."""
    for node in ast.walk(tree):
        line = getattr(node, "lineno", "?")
        if isinstance(node, ast.Attribute) and node.attr in LOW_PRECISION:
            report.reasons.append(f"low-precision: uses {node.attr} in a float32 op (line {line})")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("half", "bfloat16"):
                report.reasons.append(f"low-precision: .{node.func.attr}() in a float32 op (line {line})")
            elif node.func.attr == "dot":
                _check_dot(node, line, report)


def _check_dot(node: ast.Call, line: object, report: StaticReport) -> None:
    kwargs = {k.arg: k.value for k in node.keywords}
    precision = kwargs.get("input_precision")
    tf32 = kwargs.get("allow_tf32")
    if isinstance(tf32, ast.Constant) and tf32.value is True:
        report.reasons.append(f"low-precision: tl.dot(allow_tf32=True) in a float32 op (line {line})")
    elif precision is None and tf32 is None:
        report.reasons.append(
            f"low-precision: tl.dot defaults to TF32 on float32; pass input_precision=\"ieee\" (line {line})")
    elif isinstance(precision, ast.Constant) and precision.value != "ieee":
        report.reasons.append(f"low-precision: tl.dot(input_precision={precision.value!r}) (line {line})")


def check_source(source: str, *, float32_spec: bool) -> StaticReport:
    """All static reasons for one candidate; an empty `reasons` list means it may be run."""
    report = StaticReport()
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        report.reasons.append(f"syntax-error: {exc.msg} (line {exc.lineno})")
        return report
    aliases = _module_aliases(tree)
    for node in ast.walk(tree):
        _check_import(node, report)
        _check_node(node, aliases, report)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            report.has_model_new = True
        if isinstance(node, ast.FunctionDef) and any(_is_jit(d) for d in node.decorator_list):
            report.kernels.append(node.name)
    if float32_spec:
        _check_precision(tree, report)
    if not report.has_model_new:
        report.reasons.append("no-model-new: the file defines no module-level `class ModelNew`")
    if not report.kernels:
        report.reasons.append("no-kernel: the file defines no module-level @triton.jit function")
    return report
