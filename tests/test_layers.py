"""The house rules a reader relies on, read from the source with `ast` (nothing is imported):
imports run downhill, no two modules import each other or take each other's private names, a name
that was once used for two things now means one, and no module is over the house's line limit."""
from __future__ import annotations

import ast
import importlib.util
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "opforge"
WORKBENCH = ("agents", "backends", "codegen", "exporter", "harness", "knowledge", "registry", "sandbox", "ui", "cli",
             "app", "reward")
UPPER = {"opforge.agents", "opforge.ui", "opforge.cli", "opforge.app", "opforge.reward"}
# What each lower floor must never import (the rest of WORKBENCH is allowed). The sandbox knows nothing
# of the workbench: a Job names its worker module and mounts, and its errors have a root of their own.
FORBIDDEN = {
    "sandbox": {f"opforge.{part}" for part in WORKBENCH} - {"opforge.sandbox"},
    "harness": UPPER,
    "registry": UPPER,
    "knowledge": UPPER,
    # The expert's compiler reads a spec and writes source: no drafter, registry or sandbox below it.
    "codegen": UPPER | {"opforge.registry", "opforge.sandbox"},
    # A backend is a plugin the harness and the expert call: it never reaches up to who chose it.
    "backends": UPPER,
}
# Names that meant two things (the agents' RunContext and the checker's; the worker's run_job and the
# checker's; the guards' Launch and the UI's): each is defined at most once in the tree now.
ONE_MEANING = ("RunContext", "run_job", "Launch")


def is_knowledge(path: Path) -> bool:
    """A backend's example kernels (backends/<name>/knowledge/): data the drafters read, not opforge's code."""
    parts = path.relative_to(PACKAGE).parts
    return parts[0] == "backends" and len(parts) > 2 and parts[2] == "knowledge"


def sources(package: str) -> list[Path]:
    """Every module of a package and its folders (the UI's pages included), but the backends' example
    kernels."""
    root = PACKAGE / package
    paths = root.rglob("*.py") if root.is_dir() else [root.with_suffix(".py")]
    return sorted(p for p in paths if not is_knowledge(p))


def part(module: str) -> str:
    """The floor a module name belongs to: `opforge.harness.verify` -> `opforge.harness`; anything
    else by its top-level name (`torch.nn` -> `torch`)."""
    bits = module.split(".")
    return ".".join(bits[:2]) if bits[0] == "opforge" and len(bits) > 1 else bits[0]


def imported_roots(path: Path) -> set[str]:
    """The floors a module imports, at any depth (function-level imports included)."""
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {part(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "opforge":
            roots |= {f"opforge.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(part(node.module))
        elif isinstance(node, ast.ImportFrom) and node.level:  # relative: a way around the rule
            roots.add("relative import")
    return roots


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_run_downhill(package):
    uphill = {f"{path.relative_to(ROOT)} imports {sorted(imported_roots(path) & FORBIDDEN[package])}"
              for path in sources(package) if imported_roots(path) & FORBIDDEN[package]}
    assert not uphill, sorted(uphill)


def test_the_sandbox_imports_only_itself_the_standard_library_and_docker():
    allowed = set(sys.stdlib_module_names) | {"opforge.sandbox", "docker", "__future__"}
    foreign = {f"{path.relative_to(ROOT)}: {sorted(imported_roots(path) - allowed)}"
               for path in sources("sandbox") if imported_roots(path) - allowed}
    assert not foreign, sorted(foreign)


def definitions() -> dict[str, list[str]]:
    """Module-level class and function names of the workbench's own code -> where each is defined."""
    found: dict[str, list[str]] = defaultdict(list)
    files = [p for pkg in WORKBENCH[:-2] for p in sources(pkg)] + [PACKAGE / "cli.py", PACKAGE / "app.py"]
    for path in files:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                found[node.name].append(str(path.relative_to(ROOT)))
    return found


@pytest.mark.parametrize("name", ONE_MEANING)
def test_a_name_means_one_thing(name):
    where = definitions().get(name, [])
    assert len(where) <= 1, f"{name} is defined in {where}"


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def opforge_imports() -> dict[str, list[tuple[str, list[str]]]]:
    """Each opforge module (the backends' example kernels aside) -> the opforge modules it imports,
    at any depth (function-level imports and TYPE_CHECKING blocks included), with the names it takes
    from each (`import opforge.x` takes none)."""
    found = {}
    for path in sources(""):
        edges = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "opforge":
                edges.append((node.module, [alias.name for alias in node.names]))
            elif isinstance(node, ast.Import):
                edges += [(alias.name, []) for alias in node.names if alias.name.split(".")[0] == "opforge"]
        found[module_name(path)] = edges
    return found


def private_attributes(path: Path, modules: set[str]) -> list[str]:
    """`alias._name` where `alias` is an opforge module the file imported (`from opforge.harness
    import spec as loader` ... `loader._check`): a private name taken without importing it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "opforge":
            aliases |= {alias.asname or alias.name: f"{node.module}.{alias.name}" for alias in node.names
                        if f"{node.module}.{alias.name}" in modules}
        elif isinstance(node, ast.Import):
            aliases |= {alias.asname: alias.name for alias in node.names if alias.asname and alias.name in modules}
    return [f"{aliases[n.value.id]}.{n.attr}" for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in aliases
            and n.attr.startswith("_") and not n.attr.startswith("__")]


def test_opforge_has_no_import_cycles_and_takes_no_private_names():
    """No two opforge modules import each other, directly or around a loop (at module or function
    level: a function-level import is still a circle, only deferred), and no module takes another's
    _private name, by import or through the module (`loader._check`).

    The edges are the imports as written: `from opforge.a import b` depends on the module a.b when
    there is one, else on the package a's __init__. A package's __init__ importing its own modules
    (re-exports: `from opforge.backends.cuda.cxx.tokens import Token` in cxx/__init__.py) counts like
    any import; what Python does implicitly, running a package's __init__ before any module in it, is
    not an edge, or every package that re-exports would be a circle with each module it re-exports.
    The expert's compiler stays layered lower -> families -> emit, each backend's emitters reading the
    same plans."""
    graph = opforge_imports()
    private = sorted(f"{m} takes {name} from {src}" for m, edges in graph.items()
                     for src, names in edges for name in names if name.startswith("_"))
    private += sorted(f"{module_name(path)} takes {name}" for path in sources("")
                      for name in private_attributes(path, graph.keys()))
    assert not private, private
    deps = {m: {f"{src}.{n}" if f"{src}.{n}" in graph else src for src, names in edges for n in names or [""]}
            & graph.keys() for m, edges in graph.items()}  # `from package import module` depends on that module

    def reaches(start: str, goal: str, seen: set) -> bool:
        return any(d == goal or d not in seen and (seen.add(d) or reaches(d, goal, seen)) for d in deps[start])

    cycles = sorted(m for m in deps if reaches(m, m, set()))
    assert not cycles, f"modules on an import cycle: {cycles}"
    codegen = [m for m in graph if m.startswith("opforge.codegen")]
    assert len(codegen) > 30 and len(graph) > 200  # the whole package was read, the compiler in it


def test_no_module_is_over_the_line_limit():
    """The house limit, ~400 lines a module (STYLE.md 3), over every module under opforge/: the
    backends' example kernels included (the longest is about 250 lines). scripts/sz.py prints the same
    bar in CI."""
    spec = importlib.util.spec_from_file_location("sz", ROOT / "scripts" / "sz.py")
    sz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sz)
    assert sz.LIMIT == 400
    over = {line.rpartition(" (")[0]: line for line in sz.over_limit()}
    assert not over, f"modules over {sz.LIMIT} lines: {sorted(over.values())}"
