"""Reading an AscendC candidate: the Python file's AST (never imported here) gives the project's C++
files as strings, in one of two forms (the contract: /tmp/helpers/ascendc_contract.md, the README's
Ascend section):

- direct launch (opforge's): `ASCENDC_SOURCES = {"name.cpp": "...", ...}`, a dict literal of string
  literals, and a ModelNew whose forward calls the project's pybind module;
- MultiKernelBench's: module-level strings `project_json_src`, `host_tiling_src`, `host_operator_src`,
  `kernel_src`, `python_bind_src`, and ModelNew in the file or in a `model_src` string (its published
  answers carry it there), calling `custom_ops_lib.<fn>`.

Everything read is size-limited first, so a hostile file costs no more than a normal one to refuse.
Each problem is one reason line `code: detail (where)`; the first form problem stops the reading.
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field

MAX_SOURCE = 2 << 20  # the candidate file: 2 MiB
MAX_FILES = 16
MAX_FILE = 256 << 10
MAX_PROJECT = 1 << 20
FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,80}\.(?:asc|cpp|cc|h|hpp)")
MKB_STRINGS = ("project_json_src", "host_tiling_src", "host_operator_src", "kernel_src", "python_bind_src")
MKB_MODULE = "custom_ops_lib"  # the extension MultiKernelBench's setup builds python_bind_src into
PY_IMPORTS = {"torch", "torch.nn", "torch_npu", "__future__", "typing", "math"}
TORCH_ALLOCATORS = {"empty", "empty_like", "zeros", "zeros_like", "empty_strided", "Size"}
TENSOR_METHODS = {"contiguous", "view", "reshape", "size", "dim", "numel", "flatten", "unsqueeze", "squeeze",
                  "expand", "expand_as", "broadcast_to", "stride", "is_contiguous", "__init__", "new_empty"}


class ProjectError(ValueError):
    """The candidate does not carry a readable project; the message is the reason line."""


@dataclass
class SourceFile:
    name: str  # as `#include "name"` reaches it
    display: str  # as reasons name it: the dict key, or MultiKernelBench's variable name
    text: str
    role: str  # "source" | "header"


@dataclass
class Call:
    module: str
    fn: str
    nargs: int | None  # None: *args / **kwargs
    line: int


@dataclass
class Project:
    form: str  # "direct" | "multikernelbench"
    files: list[SourceFile]
    calls: list[Call] = field(default_factory=list)  # binding calls in ModelNew.forward
    modules: set[str] = field(default_factory=set)  # non-torch modules the Python imports
    op: dict | None = None  # MultiKernelBench: the project_json_src entry
    reasons: list[str] = field(default_factory=list)  # Python-side findings


def snake(name: str) -> str:
    """`AddCustom` -> `add_custom` (msopgen's file and kernel names)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def read_project(source: str) -> Project:
    if len(source) > MAX_SOURCE:
        raise ProjectError(f"ascendc-format: the candidate file is {len(source)} characters, over the "
                           f"{MAX_SOURCE} limit")
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ProjectError(f"syntax-error: {exc.msg} (line {exc.lineno})") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ProjectError(f"syntax-error: the file cannot be parsed ({type(exc).__name__})") from None
    strings, dicts, counts = _module_bindings(tree)
    has_direct = "ASCENDC_SOURCES" in counts
    has_mkb = [n for n in MKB_STRINGS if n in counts]
    if has_direct and has_mkb:
        raise ProjectError("ascendc-format: both ASCENDC_SOURCES and MultiKernelBench's strings; use one form")
    if not has_direct and not has_mkb:
        raise ProjectError("ascendc-format: no AscendC project: define ASCENDC_SOURCES (direct launch) or "
                           f"MultiKernelBench's {', '.join(MKB_STRINGS)}")
    for name in (["ASCENDC_SOURCES"] if has_direct else [*MKB_STRINGS, "model_src"]):
        if counts.get(name, 0) > 1:
            raise ProjectError(f"ascendc-format: {name} is bound {counts[name]} times; bind it once")
    project = _direct(dicts) if has_direct else _multikernelbench(strings)
    model_tree = tree
    if not has_direct and "model_src" in strings and not _find_class(tree, "ModelNew"):
        model_tree = _parse_model_src(strings["model_src"].value)
    _check_python(model_tree, project)
    return project


def _module_bindings(tree: ast.Module):
    """Module-level string literals and dict literals, and how often each name is bound anywhere."""
    counts: dict[str, int] = {}
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.NamedExpr)) else []
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    counts[name.id] = counts.get(name.id, 0) + 1
    strings, dicts = {}, {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                strings[name] = value
            elif isinstance(value, ast.Dict):
                dicts[name] = value
            elif name in ("ASCENDC_SOURCES", *MKB_STRINGS, "model_src"):
                kind = "a dict literal" if name == "ASCENDC_SOURCES" else "a string literal"
                raise ProjectError(f"ascendc-format: {name} must be {kind}, not {type(value).__name__} "
                                   f"(line {node.lineno})")
    return strings, dicts, counts


def _direct(dicts: dict) -> Project:
    node = dicts.get("ASCENDC_SOURCES")
    if node is None:
        raise ProjectError("ascendc-format: ASCENDC_SOURCES must be a module-level dict literal")
    if len(node.keys) > MAX_FILES:
        raise ProjectError(f"ascendc-format: ASCENDC_SOURCES has {len(node.keys)} entries, over the {MAX_FILES}-file limit")
    files, total = [], 0
    for key, value in zip(node.keys, node.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            raise ProjectError(f"ascendc-format: every ASCENDC_SOURCES key must be a file name string (line {node.lineno})")
        name = key.value
        if not FILE_NAME.fullmatch(name):
            raise ProjectError(f"ascendc-format: file name {name[:60]!r} is not a plain .asc/.cpp/.cc/.h/.hpp name "
                               "(no directories, no build files)")
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            raise ProjectError(f"ascendc-format: ASCENDC_SOURCES[{name!r}] must be a string literal, not "
                               f"{type(value).__name__} (line {value.lineno})")
        total += _sized(name, value.value)
        if name in {f.name for f in files}:
            raise ProjectError(f"ascendc-format: file {name} appears twice in ASCENDC_SOURCES")
        files.append(SourceFile(name, name, value.value, "header" if name.endswith((".h", ".hpp")) else "source"))
    if total > MAX_PROJECT:
        raise ProjectError(f"ascendc-format: the project is {total} characters, over the {MAX_PROJECT} limit")
    if not any(f.role == "source" for f in files):
        raise ProjectError("ascendc-format: ASCENDC_SOURCES has no .asc/.cpp source file")
    return Project("direct", files)


def _sized(name: str, text: str) -> int:
    if len(text) > MAX_FILE:
        raise ProjectError(f"ascendc-format: {name} is {len(text)} characters, over the {MAX_FILE} limit")
    if "\x00" in text:
        raise ProjectError(f"ascendc-format: {name} contains a NUL character")
    return len(text)


def _multikernelbench(strings: dict) -> Project:
    missing = [n for n in MKB_STRINGS if n not in strings]
    if missing:
        raise ProjectError(f"ascendc-format: MultiKernelBench's form needs {', '.join(MKB_STRINGS)}; missing: "
                           f"{', '.join(missing)} (each a module-level string literal)")
    texts = {n: strings[n].value for n in MKB_STRINGS}
    for name, text in texts.items():
        _sized(name, text)
    op = _project_json(texts["project_json_src"])
    stem = snake(op["op"])
    files = [SourceFile(f"{stem}_tiling.h", "host_tiling_src", texts["host_tiling_src"], "header"),
             SourceFile(f"{stem}.cpp", "host_operator_src", texts["host_operator_src"], "source"),
             SourceFile(f"{stem}_kernel.cpp", "kernel_src", texts["kernel_src"], "source"),
             SourceFile("pybind11.cpp", "python_bind_src", texts["python_bind_src"], "source")]
    return Project("multikernelbench", files, op=op)


def _project_json(text: str) -> dict:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ProjectError(f"ascendc-format: project_json_src is not JSON: {exc}") from None
    if isinstance(data, dict):
        data = [data]
    if not (isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict)):
        raise ProjectError("ascendc-format: project_json_src must be a JSON list holding one operator")
    op = data[0]
    if not (isinstance(op.get("op"), str) and re.fullmatch(r"[A-Z][A-Za-z0-9]{0,80}", op["op"])):
        raise ProjectError("ascendc-format: project_json_src's \"op\" must be a PascalCase operator name")
    for key in ("input_desc", "output_desc", "attr"):
        value = op.get(key, [])
        if not (isinstance(value, list) and all(isinstance(d, dict) and isinstance(d.get("name"), str) for d in value)):
            raise ProjectError(f"ascendc-format: project_json_src's {key} must be a list of {{\"name\": ...}} entries")
    if not op.get("output_desc"):
        raise ProjectError("ascendc-format: project_json_src declares no output")
    return op


def _parse_model_src(text: str) -> ast.Module:
    if len(text) > MAX_FILE:
        raise ProjectError(f"ascendc-format: model_src is {len(text)} characters, over the {MAX_FILE} limit")
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ProjectError(f"syntax-error: model_src does not parse: {getattr(exc, 'msg', type(exc).__name__)}") from None


def _find_class(tree: ast.Module, name: str) -> ast.ClassDef | None:
    return next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)


# -- the Python side: imports and ModelNew.forward ------------------------------------------------

def _check_python(tree: ast.Module, project: Project) -> None:
    imported: dict[str, str] = {}  # local name -> module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                imported[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                imported[alias.asname or alias.name] = f"{module}.{alias.name}"
    for module in dict.fromkeys(imported.values()):
        root = module.split(".")[0]
        if module in PY_IMPORTS or root in ("torch_npu", "__future__", "typing"):
            continue
        if root == "torch":
            project.reasons.append(f"ascendc-python: import of {module} (the op is computed by the kernel, not torch)")
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", module):
            project.modules.add(module)  # the project's extension module: checked against its binding
        else:
            project.reasons.append(f"ascendc-python: import of {module} (the Python side may import torch, "
                                   "torch_npu and the project's own extension module only)")
    model = _find_class(tree, "ModelNew")
    if model is None:
        project.reasons.append("ascendc-format: no class ModelNew (in the file, or in model_src for "
                               "MultiKernelBench's form)")
        return
    forward = next((n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    if forward is None:
        project.reasons.append(f"ascendc-format: ModelNew has no forward method (line {model.lineno})")
        return
    modules = {local for local, module in imported.items() if module in project.modules}
    helpers = {("self", n.name): n for n in model.body if isinstance(n, ast.FunctionDef)}
    helpers |= {("", n.name): n for n in tree.body if isinstance(n, ast.FunctionDef)}
    first = {a.arg for a in forward.args.args[1:] + forward.args.kwonlyargs}
    first |= {a.arg for a in (forward.args.vararg, forward.args.kwarg) if a is not None}
    todo, done, read = [(forward, frozenset(first))], set(), set()
    while todo:  # forward, then every method or function it calls, as forward
        fn, tensors = todo.pop()
        if (id(fn), tensors) in done or len(done) > 64:
            continue
        done.add((id(fn), tensors))
        if id(fn) not in read:
            read.add(id(fn))
            _forward_calls(fn, modules, project, forward)
        todo += _forward_operators(fn, modules, project, set(tensors), helpers)
    if not project.calls:
        project.reasons.append(f"ascendc-signature: ModelNew.forward never calls the project's extension module "
                               f"(line {forward.lineno})")


def _forward_calls(fn: ast.FunctionDef, modules: set[str], project: Project, forward: ast.FunctionDef) -> None:
    where = "ModelNew.forward" if fn is forward else f"ModelNew.forward (through {fn.name})"
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in modules:
            star = any(isinstance(a, ast.Starred) for a in node.args) or node.keywords
            project.calls.append(Call(func.value.id, func.attr, None if star else len(node.args), node.lineno))
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("torch", "F"):
            if func.attr not in TORCH_ALLOCATORS:
                project.reasons.append(f"ascendc-python: {where} computes with {func.value.id}.{func.attr} "
                                       f"(line {node.lineno}); the kernel computes, forward only allocates and calls it")
        elif isinstance(func, ast.Attribute) and func.attr not in TENSOR_METHODS and not (
                isinstance(func.value, ast.Name) and func.value.id == "self"):
            project.reasons.append(f"ascendc-python: {where} calls .{func.attr}() (line {node.lineno}); "
                                   f"only shape methods ({', '.join(sorted(TENSOR_METHODS - {'__init__'}))}) "
                                   "and the project's binding")


TENSOR_RESULTS = TENSOR_METHODS - {"size", "dim", "numel", "stride", "is_contiguous", "__init__"}
NOT_COMPUTE = {"len", "isinstance", "type", "tuple", "list", "print", "id"}


def _forward_operators(fn: ast.FunctionDef, modules: set[str], project: Project, tensors: set[str],
                       helpers: dict) -> list:
    """forward computes nothing itself (as for CUDA: only allocation, views and the kernel's binding):
    no operator (`out + b`, `x * 2`, `-x`, `x > 0`, `out += b`) and no builtin (`abs(x)`, `sum(x)`) on
    a tensor: forward's arguments, what the binding or a torch allocator returns and their views.
    Sizes (`x.size(0) * 2`, `x.numel() // 4`) are not tensors. Returns the methods and functions fn
    calls with tensors, each with the parameters that receive one (judged the same way)."""

    def is_tensor(node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id in tensors
        if isinstance(node, ast.Subscript):
            return is_tensor(node.value)
        if isinstance(node, ast.Starred):
            return is_tensor(node.value)
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            return any(is_tensor(n) for n in ast.iter_child_nodes(node))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Name) and (owner.id in modules or owner.id in ("torch", "F")):
                return owner.id in modules or node.func.attr in TORCH_ALLOCATORS - {"Size"}
            return node.func.attr in TENSOR_RESULTS and is_tensor(owner)
        if isinstance(node, (ast.Tuple, ast.List)):
            return any(is_tensor(e) for e in node.elts)
        return False

    def names(target: ast.AST) -> set[str]:
        return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}

    for _ in range(2):  # assignments reach names used before them in a loop's next round
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and is_tensor(node.value):
                for target in node.targets:
                    tensors |= names(target)
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None and is_tensor(node.value):
                tensors |= names(node.target)
            elif isinstance(node, ast.For) and is_tensor(node.iter):
                tensors |= names(node.target)
    where = "ModelNew.forward" if fn.name == "forward" else f"ModelNew.forward (through {fn.name})"
    callees = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            key = (node.func.value.id, node.func.attr) if isinstance(node.func, ast.Attribute) and isinstance(
                node.func.value, ast.Name) and node.func.value.id == "self" else ("", node.func.id) if isinstance(
                node.func, ast.Name) else None
            callee = helpers.get(key) if key else None
            if callee is not None:
                params = callee.args.args[1 if key[0] == "self" else 0:]
                passed = {p.arg for p, a in zip(params, node.args) if is_tensor(a)}
                passed |= {k.arg for k in node.keywords if k.arg and is_tensor(k.value)}
                if callee.args.vararg is not None and any(is_tensor(a) for a in node.args[len(params):]):
                    passed.add(callee.args.vararg.arg)
                callees.append((callee, frozenset(passed)))
                continue
        operands: list[ast.AST] = []
        if isinstance(node, ast.BinOp):
            operands, what = [node.left, node.right], type(node.op).__name__
        elif isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
            operands, what = [node.operand], type(node.op).__name__
        elif isinstance(node, ast.Compare) and not all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            operands, what = [node.left, *node.comparators], "comparison"
        elif isinstance(node, ast.AugAssign):
            operands, what = [node.target, node.value], type(node.op).__name__ + "="
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id not in NOT_COMPUTE:
            operands, what = list(node.args), f"{node.func.id}()"
        if any(is_tensor(o) for o in operands):
            project.reasons.append(f"ascendc-python: {where} computes {what} on a tensor (line {node.lineno}); "
                                   "the kernel computes, forward only allocates, reshapes and calls the binding")
    return callees
