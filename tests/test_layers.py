"""The house rules a reader relies on, read from the source with `ast` (nothing is imported):
imports run downhill, and a name that was once used for two things now means one."""
from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "opforge"
WORKBENCH = ("agents", "codegen", "exporter", "harness", "knowledge", "registry", "sandbox", "ui", "cli", "app")
UPPER = {"opforge.agents", "opforge.ui", "opforge.cli", "opforge.app"}
# What each lower floor must never import (the rest of WORKBENCH is allowed). The sandbox knows nothing
# of the workbench: a Job names its worker module and mounts, and its errors have a root of their own.
FORBIDDEN = {
    "sandbox": {f"opforge.{part}" for part in WORKBENCH} - {"opforge.sandbox"},
    "harness": UPPER,
    "registry": UPPER,
    "knowledge": UPPER,
    # The expert's compiler reads a spec and writes source: no drafter, registry or sandbox below it.
    "codegen": UPPER | {"opforge.registry", "opforge.sandbox"},
}
# Names that meant two things (the agents' RunContext and the checker's; the worker's run_job and the
# checker's; the guards' Launch and the UI's): each is defined at most once in the tree now.
ONE_MEANING = ("RunContext", "run_job", "Launch")


def sources(package: str) -> list[Path]:
    """Every module of a package and its folders (the UI's pages included), but backends/triton/knowledge/:
    its example kernels are data the drafters read, not opforge's code."""
    return sorted(p for p in (PACKAGE / package).rglob("*.py") if "backends/triton/knowledge" not in p.as_posix())


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


def codegen_imports() -> dict[str, list[tuple[str, list[str]]]]:
    """Each codegen module -> the codegen modules it imports (at any depth, TYPE_CHECKING blocks
    included) with the names it takes from each."""
    found = {}
    for path in sources("codegen"):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        found[module] = [(node.module, [alias.name for alias in node.names])
                         for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                         if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("opforge.codegen")]
    return found


def test_codegen_has_no_import_cycles_and_takes_no_private_names():
    """The expert's compiler is layered lower -> families -> emit: no two modules import each other,
    directly or around a loop, and no module takes another's _private name."""
    graph = codegen_imports()
    private = sorted(f"{m} takes {name} from {src}" for m, edges in graph.items()
                     for src, names in edges for name in names if name.startswith("_"))
    assert not private, private
    deps = {m: {f"{src}.{n}" if f"{src}.{n}" in graph else src for src, names in edges for n in names} & graph.keys()
            for m, edges in graph.items()}  # `from package import module` depends on that module

    def reaches(start: str, goal: str, seen: set) -> bool:
        return any(d == goal or d not in seen and (seen.add(d) or reaches(d, goal, seen)) for d in deps[start])

    cycles = sorted(m for m in deps if reaches(m, m, set()))
    assert not cycles, f"modules on an import cycle: {cycles}"
