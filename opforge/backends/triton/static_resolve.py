"""Name resolution for the static checks: which library object each name and attribute chain denotes.

Two halves. The AST half rebuilds Python's scopes (module, class, function, lambda, comprehension) and
records every binding: an import, a simple alias (`T = torch`, `d = tl.dot`, `a, b = x, y`, a walrus),
a parameter, a def or class, or an opaque value. The live half says what the names denote by looking
at the real objects in the judge process: the allowed library modules are imported (trusted code; the
candidate itself never is) and `torch.a.b` is followed one step at a time, so `torch.os` is known to
be the `os` module and `from torch import multiprocessing` a module off the allow-list. A chain is
followed only through allowed modules and attributes that exist; a step that reaches anything else
is a problem, recorded once, at the node where it happens. Opaque values (call results, parameters)
resolve to nothing: the checks constrain them by name instead.
"""
from __future__ import annotations

import ast
import builtins
import importlib
import re
import types
from dataclasses import dataclass, field
from functools import lru_cache

from opforge.backends.triton.static_tables import (ALLOWED_MODULES, CALL_GADGETS, DENIED_PATHS, FORBIDDEN_ATTRS,  # noqa: F401
                                                      HOOK)

# Decorators after which a method still binds `self` (functools.partial, say, does not: the caller
# would pass any object as `self`).
METHOD_DECORATORS = ("torch.no_grad", "torch.inference_mode", "torch.enable_grad")
DUNDER = re.compile(r"__\w+__")


def is_dunder(name: str) -> bool:
    return DUNDER.fullmatch(name) is not None


def denied_name(name: str) -> bool:
    return name in FORBIDDEN_ATTRS or HOOK.search(name) is not None


@dataclass(frozen=True, eq=False)  # library objects need not hash or compare sanely
class Ref:
    """A library object a name or chain denotes, with the dotted path it was reached by."""

    path: str
    obj: object


# -- the live half ---------------------------------------------------------------------------------

@lru_cache(maxsize=8)
def objects(paths: tuple[str, ...]) -> tuple:
    """The live objects a table of dotted paths names (exit/quit are absent under `python -S`)."""
    found = (getattr(importlib.import_module(p.rpartition(".")[0]), p.rpartition(".")[2], None) for p in paths)
    return tuple(obj for obj in found if obj is not None)


def _is_in(obj: object, objects: tuple) -> bool:
    return any(obj is known for known in objects)  # identity: == on library objects may not be a bool


def live_attribute(obj: object, name: str) -> tuple[bool, object]:
    """`obj.name` in the judge. On a module its namespace (a lazy module __getattr__ would import
    torch.onnx & co. as a side effect), then an allowed submodule not imported yet."""
    if isinstance(obj, types.ModuleType):
        namespace = vars(obj)
        if name in namespace:
            return True, namespace[name]
        full = f"{obj.__name__}.{name}"
        return (True, importlib.import_module(full)) if full in ALLOWED_MODULES else (False, None)
    try:
        return True, getattr(obj, name)
    except Exception:  # noqa: BLE001 - a class attribute that raises is reported as unresolvable, not raised
        return False, None


def _submodule_or_attr(module: types.ModuleType, name: str) -> object:
    """`module.name` on a module reached only on the way to an extra import: its submodule (imported
    if need be: `import torch` does not import torch.utils.cpp_extension) or its attribute."""
    if name in vars(module):
        return vars(module)[name]
    return importlib.import_module(f"{module.__name__}.{name}")


def verdict(ref: Ref) -> tuple[str, str] | None:
    """(code, detail) when the object itself is off-limits, else None."""
    obj = ref.obj
    if isinstance(obj, types.ModuleType) and obj.__name__ not in ALLOWED_MODULES:
        return "forbidden-attribute", f"{ref.path} is the module {obj.__name__}, not an allowed one"
    if _is_in(obj, objects(CALL_GADGETS)):
        return "forbidden-call", f"{ref.path.removeprefix('builtins.')}()"
    if _is_in(obj, objects(DENIED_PATHS)):
        return "forbidden-attribute", f"{ref.path} changes process-wide state or touches files"
    return None


# -- the AST half ----------------------------------------------------------------------------------

@dataclass
class Binding:
    kind: str  # import | alias | param | def | class | value
    node: ast.AST | None = None  # alias: the value expression; def/class: the statement; param: the function
    refs: tuple[Ref, ...] = ()  # import: what it binds (empty when refused)
    index: int = -1  # param: position among the positional parameters


@dataclass
class Scope:
    node: ast.AST
    parent: Scope | None
    kind: str  # module | class | function | comprehension
    names: dict[str, list[Binding]] = field(default_factory=dict)
    loads: set[str] = field(default_factory=set)  # names read directly in this scope

    def bind(self, name: str, binding: Binding) -> None:
        self.names.setdefault(name, []).append(binding)


def is_chain(expr: ast.AST) -> bool:
    """`a` or `a.b.c`: what a simple alias may be bound to."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return isinstance(expr, ast.Name)


class _ScopeBuilder(ast.NodeVisitor):
    """One pass that records each scope's bindings and the scope every Name is read or bound in."""

    def __init__(self, resolver: Resolver):
        self.r = resolver
        self.scope: Scope | None = None
        self.handled: set[int] = set()  # Name targets already bound as aliases

    def _enter(self, node: ast.AST, kind: str, body: list) -> None:
        outer, self.scope = self.scope, Scope(node, self.scope, kind)
        self.r.scopes[id(node)] = self.scope
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            self._params(node)
        for child in body:
            self.visit(child)
        self.scope = outer

    def visit_Module(self, node: ast.Module) -> None:
        self._enter(node, "module", node.body)

    def _params(self, fn) -> None:
        a = fn.args
        for i, arg in enumerate([*a.posonlyargs, *a.args]):
            self.scope.bind(arg.arg, Binding("param", fn, index=i))
        for arg in [a.vararg, *a.kwonlyargs, a.kwarg]:
            if arg is not None:
                self.scope.bind(arg.arg, Binding("param", fn))

    def _outside(self, fn) -> None:
        """Decorators, defaults and annotations are evaluated in the enclosing scope."""
        a = fn.args
        parts = [*getattr(fn, "decorator_list", []), *a.defaults, *filter(None, a.kw_defaults),
                 getattr(fn, "returns", None)]
        parts += [arg.annotation for arg in [*a.posonlyargs, *a.args, a.vararg, *a.kwonlyargs, a.kwarg]
                  if arg is not None]
        for part in filter(None, parts):
            self.visit(part)

    def visit_FunctionDef(self, node) -> None:
        self.scope.bind(node.name, Binding("def", node))
        self._outside(node)
        self._enter(node, "function", node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._outside(node)
        self._enter(node, "function", [node.body])

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.scope.bind(node.name, Binding("class", node))
        for part in [*node.decorator_list, *node.bases, *node.keywords]:
            self.visit(part)
        self._enter(node, "class", node.body)

    def _comprehension(self, node) -> None:
        self._enter(node, "comprehension", [*node.generators, *(getattr(node, f) for f in
                                                                ("elt", "key", "value") if hasattr(node, f))])

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_Import(self, node) -> None:
        if self.scope.kind == "class":  # the module would be an attribute of every instance, untracked
            self.r._report(("forbidden-import", "import in a class body"), node)
        for name, refs in self.r.import_bindings(node):
            self.scope.bind(name, Binding("import", node, refs))

    visit_ImportFrom = visit_Import

    def _alias(self, target: ast.AST, value: ast.AST, scope: Scope) -> None:
        if isinstance(target, ast.Name) and is_chain(value):
            scope.bind(target.id, Binding("alias", value))
            self.handled.add(id(target))
            if scope.kind != "class":  # a class attribute is reachable from any instance, untracked
                self.r.alias_values.add(id(value))
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(value.elts) and not any(
                    isinstance(e, ast.Starred) for e in [*target.elts, *value.elts]):
            for t, v in zip(target.elts, value.elts):
                self._alias(t, v, scope)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._alias(target, node.value, self.scope)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._alias(node.target, node.value, self.scope)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        scope = self.scope  # a walrus in a comprehension binds in the enclosing function
        while scope.kind == "comprehension":
            scope = scope.parent
        self._alias(node.target, node.value, scope)
        if id(node.target) not in self.handled:
            scope.bind(node.target.id, Binding("value"))
            self.handled.add(id(node.target))
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        self.r.scope_of[id(node)] = self.scope
        if isinstance(node.ctx, ast.Load):
            self.scope.loads.add(node.id)
        elif id(node) not in self.handled:
            self.scope.bind(node.id, Binding("value"))

    def _named(self, node) -> None:  # except-as, match captures: bound by a bare string
        for name in (getattr(node, "name", None), getattr(node, "rest", None)):
            if isinstance(name, str):
                self.scope.bind(name, Binding("value"))
        self.generic_visit(node)

    visit_ExceptHandler = visit_MatchAs = visit_MatchStar = visit_MatchMapping = _named


class Resolver:
    """Scopes, bindings and the library objects names denote, for one parsed candidate.
    `problems` collects (code, detail, line) for every refused import or attribute step."""

    def __init__(self, tree: ast.Module, extra_imports: dict[str, frozenset[str]] | None = None):
        self.extra_imports = extra_imports or {}  # module -> the names `from module import name` may bind
        self.scope_of: dict[int, Scope] = {}
        self.scopes: dict[int, Scope] = {}
        self.alias_values: set[int] = set()
        self.problems: list[tuple[str, str, int]] = []
        self._memo: dict[int, list[Ref]] = {}
        self._active: set[int] = set()
        _ScopeBuilder(self).visit(tree)

    def _report(self, problem: tuple[str, str], node: ast.AST) -> list:
        self.problems.append((*problem, getattr(node, "lineno", 0)))
        return []

    def lookup(self, node: ast.Name) -> tuple[Scope | None, list[Binding]]:
        """The scope that binds this name and its bindings there; (None, []) for a builtin."""
        start = scope = self.scope_of[id(node)]
        while scope is not None:
            if node.id in scope.names and (scope is start or scope.kind != "class"):
                return scope, scope.names[node.id]
            scope = scope.parent
        return None, []

    def refs(self, expr: ast.AST) -> list[Ref]:
        """The library objects `expr` may denote (every alias binding counts); [] when opaque."""
        key = id(expr)
        if key in self._memo:
            return self._memo[key]
        if key in self._active:  # an alias cycle (a = b; b = a) denotes nothing
            return []
        self._active.add(key)
        if isinstance(expr, ast.Name):
            found = self._name_refs(expr)
        elif isinstance(expr, ast.Attribute):
            found = [ref for base in self.refs(expr.value) for ref in self._step(base, expr)]
        else:
            found = []
        self._active.discard(key)
        self._memo[key] = list({(ref.path, id(ref.obj)): ref for ref in found}.values())
        return self._memo[key]

    def _name_refs(self, node: ast.Name) -> list[Ref]:
        """Every binding the name may read. A function's local is local throughout it; a module or
        class name may be read before it is bound (`g = getattr; getattr = None`), so the search
        goes on outward, to the builtins at the end."""
        found, start = [], self.scope_of[id(node)]
        scope = start
        while scope is not None:
            if node.id in scope.names and (scope is start or scope.kind != "class"):
                for binding in scope.names[node.id]:
                    found += binding.refs if binding.kind == "import" else []
                    found += self.refs(binding.node) if binding.kind == "alias" else []
                if scope.kind in ("function", "comprehension"):
                    return found
            scope = scope.parent
        return found + self._builtin_refs(node)

    def _builtin_refs(self, node: ast.Name) -> list[Ref]:
        value = getattr(builtins, node.id, None)
        if value is None or is_dunder(node.id) and not callable(value):  # __spec__ & co: refused by name
            return []
        ref = Ref(f"builtins.{node.id}", value)
        problem = verdict(ref)
        return self._report(problem, node) if problem else [ref]

    def _step(self, base: Ref, node: ast.Attribute) -> list[Ref]:
        name, path = node.attr, f"{base.path}.{node.attr}"
        if denied_name(name) or is_dunder(name):  # reported by name wherever it appears
            return []
        if name.startswith("_"):
            return self._report(("forbidden-attribute", f"{path} is private"), node)
        passage = isinstance(base.obj, types.ModuleType) and base.obj.__name__ not in ALLOWED_MODULES
        if passage and not self._on_extra_path(path):  # torch.utils.cpp_extension.load: not load_inline
            allowed = sorted(p for p in self._extra_paths() if p.startswith(base.path + "."))
            return self._report(("forbidden-attribute", f"{path}: {base.path} leads only to {', '.join(allowed)}"),
                                node)
        found, value = (True, _submodule_or_attr(base.obj, name)) if passage else live_attribute(base.obj, name)
        if not found:
            return self._report(("forbidden-attribute", f"{path} is not a known attribute"), node)
        ref = Ref(path, value)
        if self._on_extra_path(path):  # `torch.utils.cpp_extension.load_inline`, spelt in full
            return [ref]
        problem = verdict(ref)
        return self._report(problem, node) if problem else [ref]

    def _extra_paths(self) -> set[str]:
        return {f"{module}.{name}" for module, names in self.extra_imports.items() for name in names}

    def _on_extra_path(self, path: str) -> bool:
        """`path` is a name extra_imports allows (`torch.utils.cpp_extension.load_inline`), or a module
        on the way to one (`torch.utils`): a candidate may spell the name in full."""
        return any(full == path or full.startswith(path + ".") for full in self._extra_paths())

    def import_bindings(self, node: ast.Import | ast.ImportFrom) -> list[tuple[str, tuple[Ref, ...]]]:
        if isinstance(node, ast.Import):
            return [self._import(alias, node) for alias in node.names]
        names = [(a.asname or a.name, a.name) for a in node.names if a.name != "*"]
        if node.level:
            return self._report(("forbidden-import", "<relative import>"), node) + [(n, ()) for n, _ in names]
        extra = self.extra_imports.get(node.module)
        if extra and len(names) == len(node.names) and all(name in extra for _, name in names):
            module = importlib.import_module(node.module)
            return [(bound, (Ref(f"{node.module}.{name}", getattr(module, name)),)) for bound, name in names]
        if node.module not in ALLOWED_MODULES:
            return self._report(("forbidden-import", node.module), node) + [(n, ()) for n, _ in names]
        if len(names) < len(node.names):
            self._report(("forbidden-import", f"{node.module}.* (a star import hides what it binds)"), node)
        base = Ref(node.module, importlib.import_module(node.module))
        return [(bound, tuple(self._import_from(base, name, node))) for bound, name in names]

    def _import(self, alias: ast.alias, node: ast.Import) -> tuple[str, tuple[Ref, ...]]:
        parts = alias.name.split(".")
        bound = alias.asname or parts[0]
        for i in range(1, len(parts) + 1):
            if ".".join(parts[:i]) not in ALLOWED_MODULES and not self._on_extra_path(".".join(parts[:i])):
                return bound, tuple(self._report(("forbidden-import", ".".join(parts[:i])), node))
        name = alias.name if alias.asname else parts[0]
        return bound, (Ref(name, importlib.import_module(name)),)

    def _import_from(self, base: Ref, name: str, node: ast.ImportFrom) -> list[Ref]:
        full = f"{base.path}.{name}"
        if full in ALLOWED_MODULES:
            return [Ref(full, importlib.import_module(full))]
        if denied_name(name) or name.startswith("_"):
            return self._report(("forbidden-import", full), node)
        found, value = live_attribute(base.obj, name)
        if not found:
            return self._report(("forbidden-import", f"{full} is not a known name"), node)
        ref = Ref(full, value)
        problem = verdict(ref)
        if problem:  # a gadget stays forbidden-call; a module or denied function is a forbidden import
            return self._report((problem[0] if problem[0] == "forbidden-call" else "forbidden-import",
                                 problem[1]), node)
        return [ref]
