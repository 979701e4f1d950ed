"""Static checks on a candidate's source, run on the parsed AST (the harness never imports it).

An allow-list, not a deny-list: every name is resolved (backends/triton/static_resolve.py) to the library
object it denotes — through imports, `from M import y` (judged by importing M in the judge and looking
`y` up on it), simple aliases (`T = torch`, `d = tl.dot`) and Python's scoping — and an attribute chain
rooted at a library name is followed step by step on the live modules. What may be reached: the
modules in ALLOWED_MODULES and their public, existing attributes, minus denied names and objects.
On top of that, rules for what resolution cannot see: attributes denied by name on any value (`.numpy`,
`.data_ptr`, dunders), getattr-like gadgets referenced in any way, attribute stores except on a
method's own instance, dunder bindings, library modules or classes passed around as values (a patch
target in disguise), and, for float32 specs, every route to reduced precision (TF32 dots, half types).
The dynamic guards in harness/guards.py catch what slips past a static reading. Each reason is
`code: detail (line N)`.
"""
from __future__ import annotations

import ast
import builtins
import enum
import types
from dataclasses import dataclass, field
from functools import lru_cache

from opforge.backends.triton.static_names import name_rules
from opforge.backends.triton.static_resolve import (ALLOWED_MODULES, FORBIDDEN_ATTRS, METHOD_DECORATORS, Ref,
                                            Resolver, denied_name, is_dunder, objects)

__all__ = ["ALLOWED_MODULES", "FORBIDDEN_ATTRS", "StaticReport", "check_source"]

ALLOWED_DUNDER_ATTRS = {"__init__"}  # super().__init__()
ALLOWED_DUNDER_NAMES = {"__name__"}  # if __name__ == "__main__":
ALLOWED_DUNDER_STRINGS = {"__main__"}
LOW_PRECISION = {"float16", "half", "bfloat16", "float8e4nv", "float8e5", "float8e4b15", "float8e4b8",
                 "float8e5b16", "float8_e4m3fn", "float8_e5m2", "fp8e4nv", "fp8e5", "HalfTensor",
                 "BFloat16Tensor", "chalf", "complex32", "autocast", "dot_scaled",
                 "inline_asm_elementwise"}  # inline PTX computes in whatever precision it likes
LOW_PRECISION_STRINGS = {"fp16", "bf16", "float16", "bfloat16", "half", "fp8e4nv", "fp8e5", "fp8e4b15",
                         "fp8e4b8", "fp8e5b16", "tf32", "tf32x3"}


@dataclass
class StaticReport:
    reasons: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    has_model_new: bool = False


# -- what a resolved object is ----------------------------------------------------------------------

def _is_module(ref: Ref) -> bool:
    return isinstance(ref.obj, types.ModuleType)


def _is_library_class(ref: Ref) -> bool:
    return isinstance(ref.obj, type) and not ref.path.startswith("builtins.")


def _is_builtin(ref: Ref, *names: str) -> bool:
    return any(ref.obj is getattr(builtins, name) for name in names)


def _is_subclass(ref: Ref, base: type) -> bool:
    return isinstance(ref.obj, type) and issubclass(ref.obj, base)


def _is_tl(ref: Ref, name: str) -> bool:
    import triton.language as tl
    return ref.obj is getattr(tl, name)


@lru_cache(maxsize=1)
def _low_precision_dtypes() -> tuple:
    import torch
    import triton.language as tl
    found = [v for v in vars(torch).values() if isinstance(v, torch.dtype) and (
        v.is_floating_point and v.itemsize < 4 or v.is_complex and v.itemsize < 8)]
    found += [v for v in vars(tl).values() if isinstance(v, tl.dtype) and v.is_floating()
              and v.primitive_bitwidth < 32]
    return tuple(found)


def _is_low_precision(ref: Ref) -> bool:
    return any(ref.obj is dtype for dtype in _low_precision_dtypes())  # identity: dtypes are singletons


def _is_jit(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr == "jit" or (
        isinstance(target, ast.Name) and target.id == "jit")


def _is_const(node: ast.AST | None, value: object) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is type(value) and node.value == value


def _type_expressions(tree: ast.Module) -> set[int]:
    """Ids of the nodes that make up annotations (`x: torch.Tensor`, `Optional[tl.tensor]`): a class
    named there is read as a type, never handed to code."""
    roots = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            roots.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            roots.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
    found = set()
    while roots:
        node = roots.pop()
        found.add(id(node))
        if isinstance(node, ast.Subscript):
            roots += [node.value, node.slice]
        elif isinstance(node, (ast.Tuple, ast.List)):
            roots += node.elts
        elif isinstance(node, ast.BinOp):
            roots += [node.left, node.right]
    return found


class _Checker:
    def __init__(self, tree: ast.Module, float32: bool, extra_imports: dict | None = None):
        self.tree, self.float32 = tree, float32
        self.resolver = Resolver(tree, extra_imports)
        self.parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        self.type_exprs = _type_expressions(tree)
        self.found: list[str] = []
        self._owned: set[str] | None = None

    def add(self, code: str, detail: str, node: ast.AST) -> None:
        self.found.append(f"{code}: {detail} (line {getattr(node, 'lineno', '?')})")

    def run(self) -> list[str]:
        for node in ast.walk(self.tree):
            self._check(node)
        self.found += [f"{c}: {d} (line {n})" for c, d, n in (*self.resolver.problems, *name_rules(self.tree, self.resolver))]
        return list(dict.fromkeys(self.found))

    def _check(self, node: ast.AST) -> None:
        if isinstance(node, ast.Name):
            self._name(node)
        elif isinstance(node, ast.Attribute):
            self._attribute(node)
        elif isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load):
            self._subscript_store(node)
        elif isinstance(node, ast.Call):
            self._call(node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            self._string(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom, ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
            self._bound_strings(node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):  # both rebind names this reading keeps apart
            self.add("forbidden-global", f"{type(node).__name__.lower()} {', '.join(node.names)}", node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._definition(node)
        if isinstance(node, ast.ClassDef) and node.keywords:  # a metaclass receives the class itself
            self.add("forbidden-construct", f"class {node.name}({ast.unparse(node.keywords[0])})", node)
        if isinstance(node, (ast.AsyncFunctionDef, ast.Await, ast.Yield, ast.YieldFrom)):
            self.add("forbidden-construct", type(node).__name__, node)

    # -- names and attributes -----------------------------------------------------------------------

    def _name(self, node: ast.Name) -> None:
        if is_dunder(node.id) and not (isinstance(node.ctx, ast.Load) and node.id in ALLOWED_DUNDER_NAMES):
            if isinstance(node.ctx, ast.Load):
                self.add("forbidden-attribute", f"dunder name {node.id}", node)
            else:  # a dunder bound in a class body is a protocol hook, like a dunder def
                self.add("forbidden-def", f"binds {node.id}", node)
        if not isinstance(node.ctx, ast.Load):
            return
        self._uses(node, self.resolver.refs(node))
        _, bindings = self.resolver.lookup(node)
        for binding in bindings:
            if binding.kind == "class":
                self._local_class_use(node, binding.node)

    def _attribute(self, node: ast.Attribute) -> None:
        name = node.attr
        if denied_name(name) or is_dunder(name) and name not in ALLOWED_DUNDER_ATTRS:
            self.add("forbidden-attribute", f".{name}", node)
        if self.float32 and name in LOW_PRECISION:
            self.add("low-precision", f"uses {name} in a float32 op", node)
        if isinstance(node.ctx, ast.Load):
            self._uses(node, self.resolver.refs(node))
        elif not self._is_own_attribute(node):
            verb = "deletes" if isinstance(node.ctx, ast.Del) else "assigns"
            self.add("patches-module", f"{verb} {ast.unparse(node)}", node)

    def _uses(self, node: ast.expr, refs: list[Ref]) -> None:
        """Rules on what a resolved reference is and where it stands."""
        for ref in refs:
            if (_is_module(ref) or _is_library_class(ref)) and not self._in_type_position(node):
                self.add("forbidden-attribute", f"{ref.path} used as a value (only attribute access, "
                         "calls, annotations, isinstance and simple aliases)", node)
            if _is_builtin(ref, "type", "super"):
                self._type_or_super(node, ref)
            if self.float32:
                self._precision(node, ref)

    def _parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))

    def _is_call_of(self, node: ast.AST, *builtin_names: str) -> bool:
        return isinstance(node, ast.Call) and any(
            _is_builtin(ref, *builtin_names) for ref in self.resolver.refs(node.func))

    def _in_type_position(self, node: ast.expr, alias_ok: bool = True) -> bool:
        """Where a class or module is read, not handed to code: an attribute base, a call, an
        annotation, a comparison, a decorator or base, an except clause, isinstance, a tracked alias."""
        parent = self._parent(node)
        if id(node) in self.type_exprs or alias_ok and id(node) in self.resolver.alias_values:
            return True
        if isinstance(parent, (ast.Attribute, ast.Compare, ast.ExceptHandler)) or isinstance(
                parent, ast.Call) and parent.func is node:
            return True
        if isinstance(parent, (ast.FunctionDef, ast.ClassDef)) and (
                any(node is d for d in parent.decorator_list) or any(node is b for b in getattr(parent, "bases", []))):
            return True
        if isinstance(parent, ast.Tuple):
            node, parent = parent, self._parent(parent)
        return self._is_call_of(parent, "isinstance", "issubclass") and any(node is a for a in parent.args)

    def _local_class_use(self, node: ast.Name, cls: ast.ClassDef) -> None:
        """A class of the file may be built, subclassed, tested against and read for constants; handed
        around, its methods could be called unbound with any object (torch.Tensor) as `self`."""
        parent = self._parent(node)
        if isinstance(parent, ast.Attribute):
            bindings = self.resolver.scopes[id(cls)].names.get(parent.attr, [])
            if bindings and all(b.kind == "value" for b in bindings):
                return
        elif isinstance(parent, ast.Call) and (parent.func is node or self._is_call_of(parent, "super")):
            return
        elif self._in_type_position(node, alias_ok=False):  # an alias would hide it from this rule
            return
        self.add("forbidden-attribute", f"class {node.id} used other than to build, subclass or test "
                 "against it", node)

    def _type_or_super(self, node: ast.expr, ref: Ref) -> None:
        call = self._parent(node)
        direct = isinstance(call, ast.Call) and call.func is node
        if _is_builtin(ref, "type"):
            if not (direct and len(call.args) == 1 and not call.keywords
                    and isinstance(self._parent(call), ast.Compare)):
                self.add("forbidden-call", "type() other than in `type(x) is T` (3 args build a class; "
                         "1 arg hands out one)", node)
        elif not (direct and (not call.args or self._super_of_self(call))):
            self.add("forbidden-call", "super() other than super() or super(Class, self)", node)

    def _super_of_self(self, call: ast.Call) -> bool:
        args = call.args
        return len(args) == 2 and not call.keywords and isinstance(args[1], ast.Name) \
            and self._method_of_self(args[1]) is not None

    # -- stores --------------------------------------------------------------------------------------

    def _is_own_attribute(self, node: ast.Attribute) -> bool:
        """`self.x = ...` in a method; `self.sub.x = ...` only where `sub` is a module the class built."""
        base, owner = node.value, None
        if isinstance(base, ast.Attribute):
            base, owner = base.value, base.attr
        if not isinstance(base, ast.Name) or self._method_of_self(base) is None:
            return False
        return owner is None or owner in self._owned_submodules()

    def _method_of_self(self, node: ast.Name) -> ast.FunctionDef | None:
        """The method whose first parameter this name is, when that parameter is surely the instance:
        a def directly in a class body, bound once there and never read there (no `m = staticmethod(m)`),
        decorated only by binding-preserving decorators, in a class whose decorators are the library's
        (a local one receives the class and could call `m` unbound); the parameter never rebound."""
        scope, bindings = self.resolver.lookup(node)
        if scope is None or scope.kind != "function" or scope.parent.kind != "class":
            return None
        fn, cls = scope.node, scope.parent
        if not isinstance(fn, ast.FunctionDef) or len(bindings) != 1 or bindings[0].index != 0:
            return None
        if len(cls.names.get(fn.name, [])) != 1 or fn.name in cls.loads:
            return None
        keeps = self._decorated_by(fn, lambda ref: any(ref.obj is d for d in objects(METHOD_DECORATORS)))
        return fn if keeps and self._decorated_by(cls.node, lambda ref: not ref.path.startswith("builtins.")) \
            else None

    def _decorated_by(self, node, accept) -> bool:
        """Every decorator resolves (a call's callee for `@d(...)`) and whatever it may be is accepted."""
        for decorator in node.decorator_list:
            refs = self.resolver.refs(decorator.func if isinstance(decorator, ast.Call) else decorator)
            if not refs or not all(accept(ref) for ref in refs):
                return False
        return True

    def _owned_submodules(self) -> set[str]:
        """Instance attributes that every store in the file sets to a freshly built torch.nn.Module
        (`self.bn = torch.nn.Module()`) and no class body binds: their attributes are the model's own."""
        if self._owned is None:
            values: dict[str, list] = {}
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load) \
                        and isinstance(node.value, ast.Name) and self._method_of_self(node.value):
                    parent = self._parent(node)
                    single = isinstance(parent, ast.Assign) and any(node is t for t in parent.targets)
                    values.setdefault(node.attr, []).append(parent.value if single else None)
            in_classes = {n for s in self.resolver.scopes.values() if s.kind == "class" for n in s.names}
            self._owned = {name for name, vs in values.items()
                           if name not in in_classes and all(self._builds_module(v) for v in vs)}
        return self._owned

    def _builds_module(self, value: ast.AST | None) -> bool:
        import torch
        refs = self.resolver.refs(value.func) if isinstance(value, ast.Call) else []
        return bool(refs) and all(_is_subclass(ref, torch.nn.Module) for ref in refs)

    def _subscript_store(self, node: ast.Subscript) -> None:
        if self.resolver.refs(node.value):
            self.add("patches-module", f"writes {ast.unparse(node)}", node)

    # -- definitions and strings ---------------------------------------------------------------------

    def _definition(self, node) -> None:
        in_class = isinstance(self._parent(node), ast.ClassDef)
        if is_dunder(node.name) and not (in_class and node.name in ALLOWED_DUNDER_ATTRS
                                         and isinstance(node, ast.FunctionDef)):
            self.add("forbidden-def", node.name, node)

    def _bound_strings(self, node: ast.AST) -> None:
        names = [a.asname or a.name for a in node.names] if hasattr(node, "names") else [node.name]
        for name in filter(None, names):
            if is_dunder(name.split(".")[0]):
                self.add("forbidden-def", f"binds {name}", node)

    def _string(self, node: ast.Constant) -> None:
        # a dunder spelled as a string is how class factories and name-based gadgets reach hooks
        if is_dunder(node.value) and node.value not in ALLOWED_DUNDER_STRINGS:
            self.add("forbidden-attribute", f"dunder string {node.value!r}", node)
        if self.float32 and node.value in LOW_PRECISION_STRINGS:
            self.add("low-precision", f"names {node.value!r} in a float32 op", node)

    # -- calls and precision -------------------------------------------------------------------------

    def _call(self, node: ast.Call) -> None:
        if self.float32 and isinstance(node.func, ast.Attribute) and node.func.attr in ("half", "bfloat16"):
            self.add("low-precision", f".{node.func.attr}() in a float32 op", node)
        refs = self.resolver.refs(node.func)
        if any(_is_subclass(ref, enum.Enum) for ref in refs) and (
                len(node.args) > 1 or any(k.arg in ("names", None) for k in node.keywords)):
            self.add("forbidden-call", "the functional Enum API builds a class from strings", node)

    def _precision(self, node: ast.expr, ref: Ref) -> None:
        name = node.attr if isinstance(node, ast.Attribute) else node.id
        if _is_low_precision(ref) or name in LOW_PRECISION or ref.path.rpartition(".")[2] in LOW_PRECISION:
            self.add("low-precision", f"uses {name} in a float32 op", node)
        if _is_tl(ref, "dot"):
            call = self._parent(node)
            if isinstance(call, ast.Call) and call.func is node:
                self._dot_call(call)
            else:
                self.add("low-precision", "tl.dot referenced without a direct call hides its precision", node)

    def _dot_call(self, call: ast.Call) -> None:
        """tl.dot(input, other, acc, input_precision, allow_tf32, ...): precision by literal only."""
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return self.add("low-precision", "tl.dot with *args/**kwargs hides its precision", call)
        kwargs = {k.arg: k.value for k in call.keywords}
        precision = kwargs.get("input_precision", call.args[3] if len(call.args) > 3 else None)
        tf32 = kwargs.get("allow_tf32", call.args[4] if len(call.args) > 4 else None)
        if tf32 is not None and not _is_const(tf32, False):
            self.add("low-precision", f"tl.dot(allow_tf32={ast.unparse(tf32)}): only the literal False", call)
        if precision is None:
            self.add("low-precision", 'tl.dot defaults to TF32 on float32; pass input_precision="ieee"', call)
        elif not _is_const(precision, "ieee"):
            self.add("low-precision", f"tl.dot(input_precision={ast.unparse(precision)}): only the literal "
                     '"ieee" keeps a float32 op in float32', call)


def check_source(source: str, *, float32_spec: bool, extra_imports: dict | None = None,
                 kernels_required: bool = True) -> StaticReport:
    """All static reasons for one candidate's Python; an empty `reasons` list means it may be run.
    Another backend whose launcher is Python reuses these rules: CUDA's Python part may also import
    what `extra_imports` names (`{module: names}`, each by `from M import name`) and needs no
    @triton.jit kernel (kernels_required=False): backends/cuda/static.py checks its C++."""
    report = StaticReport()
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        report.reasons.append(f"syntax-error: {exc.msg} (line {exc.lineno})")
        return report
    except RecursionError:  # the parser's own limit on nesting
        report.reasons.append("syntax-error: too deeply nested to parse (line 1)")
        return report
    try:
        report.reasons = _Checker(tree, float32_spec, extra_imports).run()
    except RecursionError:  # a chain thousands of attributes deep: refused, not half-read
        report.reasons = ["forbidden-construct: nesting too deep to check (line 1)"]
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            report.has_model_new = True
        if isinstance(node, ast.FunctionDef) and any(_is_jit(d) for d in node.decorator_list):
            report.kernels.append(node.name)
    if not report.has_model_new:
        report.reasons.append("no-model-new: the file defines no module-level `class ModelNew`")
    if not report.kernels and kernels_required:
        report.reasons.append("no-kernel: the file defines no module-level @triton.jit function")
    return report
