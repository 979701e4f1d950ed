"""Two static rules on names that the allow-list's resolution (static_resolve.py) does not judge.

- `unbound-name`: a name the candidate loads must be bound somewhere in its own file (an import, a
  def or class, an assignment, a parameter, a for/with/except/comprehension target, a walrus, `del`,
  `global`/`nonlocal`) or be a Python builtin, as pyflakes' F821 says. Anything else could only be
  found at run time in globals someone else put in the candidate's module (Triton's interpreter
  copied `np`, `inspect`, `math`... there), which the allow-list never saw.
- `interpreter-detection`: reading an attribute only one of Triton's two kernel objects has
  (`rewriter` on the interpreter's, `cache_key` on the compiler's...) or the TRITON_INTERPRET
  variable tells the CPU run from the GPU, so code could select what each of them runs. The build
  refuses such a launch as `unbuilt-launch` already (launch_keys.py); this says why, before any run.
"""
from __future__ import annotations

import ast
import builtins

from opforge.backends.triton.static_resolve import Resolver, Scope

MODULE_NAMES = {"__name__", "__doc__", "__file__", "__package__", "__spec__", "__loader__", "__builtins__",
                "__cached__", "__annotations__", "__dict__"}
# Attributes only one of the interpreter's InterpretedFunction and the compiler's JITFunction has
# (triton 3.9 and triton-ascend 3.2), with the interpreter's own names; a string equal to one is the
# same reading through hasattr/getattr.
INTERPRETER_ONLY = frozenset({
    "rewriter", "rewrite", "rewritten_fn", "InterpretedFunction", "GridExecutor", "FunctionRewriter",
    "interpreter", "interpreter_builder", "interpreter_semantic", "interpret",
    "cache_key", "device_caches", "used_global_vals", "create_binder", "def_file_line_number",
    "starting_line_number", "get_capture_scope", "raw_src", "is_gluon", "kernel_cache",
})
ENV_VAR = "TRITON_INTERPRET"


def name_rules(tree: ast.Module, resolver: Resolver) -> list[tuple[str, str, int]]:
    """(code, detail, line) of both rules' findings."""
    found = [*unbound_names(tree, resolver), *interpreter_detection(tree)]
    return [(code, detail, getattr(node, "lineno", 0)) for code, detail, node in found]


def unbound_names(tree: ast.Module, resolver: Resolver) -> list[tuple[str, str, ast.AST]]:
    """(code, detail, node) for each name loaded and never bound in the file."""
    declared = {name for node in ast.walk(tree) if isinstance(node, (ast.Global, ast.Nonlocal))
                for name in node.names}
    lazy = any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
               and any(a.name == "annotations" for a in node.names) for node in tree.body)
    outer = _first_iterables(tree, resolver)
    annotations = _annotation_names(tree) if lazy else set()
    found, seen = [], set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load) or node.id in seen:
            continue
        if node.id in declared or node.id in MODULE_NAMES or hasattr(builtins, node.id):
            continue
        if lazy and id(node) in annotations:  # `from __future__ import annotations`: never evaluated
            continue
        scope = outer.get(id(node)) or resolver.scope_of.get(id(node))
        if scope is None or _bound(node.id, scope, first=True):
            continue
        seen.add(node.id)
        found.append(("unbound-name", f"{node.id} is never bound in this file (no import, def or assignment "
                      "binds it), so only globals put there at run time could give it a value", node))
    return found


def _annotation_names(tree: ast.Module) -> set[int]:
    roots = [n.annotation for n in ast.walk(tree) if isinstance(n, (ast.arg, ast.AnnAssign)) and n.annotation]
    roots += [n.returns for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.returns]
    return {id(inner) for root in roots for inner in ast.walk(root) if isinstance(inner, ast.Name)}


def _bound(name: str, scope: Scope | None, first: bool) -> bool:
    """Python's lookup: the scope itself (a class body too), then the enclosing ones but classes."""
    while scope is not None:
        if name in scope.names and (first or scope.kind != "class"):
            return True
        first = False
        scope = scope.parent
    return False


def _first_iterables(tree: ast.Module, resolver: Resolver) -> dict[int, Scope]:
    """A comprehension's first iterable is evaluated in the enclosing scope (a class body's names
    are visible there): the names in it, mapped to that scope."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            scope = resolver.scopes.get(id(node))
            if scope is not None and scope.parent is not None:
                for inner in ast.walk(node.generators[0].iter):
                    if isinstance(inner, ast.Name):
                        found.setdefault(id(inner), scope.parent)
    return found


def interpreter_detection(tree: ast.Module) -> list[tuple[str, str, ast.AST]]:
    found, prose = [], {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}  # docstrings: never read
    for node in ast.walk(tree):
        if id(node) in prose:
            continue
        if isinstance(node, ast.Attribute) and node.attr in INTERPRETER_ONLY:
            what = f".{node.attr}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                node.value in INTERPRETER_ONLY or ENV_VAR in node.value):
            what = repr(node.value[:60])
        else:
            continue
        found.append(("interpreter-detection", f"reads {what}, which tells Triton's CPU interpreter from the "
                      "GPU compiler; the code must not depend on which one runs it", node))
    return found
