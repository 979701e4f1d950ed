"""The interpreter's own names stay out of the candidate's reach (worker side, CPU run; NVIDIA
Triton and Triton-Ascend).

Triton's interpreter rewrites each kernel's AST (a chained comparison becomes calls of
`_InterpreterComparison`, an assignment a call of `interpreter_semantic.to_tensor`; triton-ascend
3.2 calls `triton.language.semantic.to_tensor(value, interpreter_builder, ...)`) and, at the first
launch, copies every global of its own module (`np`, `inspect`, `math`, `time`...) into the
candidate's module so that the rewritten code finds those names. Host code could then reach numpy
views of the outputs and `inspect.getattr_static` past every guard, and a kernel's launch identity
changed after its first launch.

`install` replaces the rewriter's last step: only the names the transform itself inserted are
bound, renamed to a per-process random name that candidate code cannot spell, as parameters of a
closure around the kernel, so nothing at all is added to the candidate's module. A name the
candidate wrote itself is never renamed: one it never bound fails as Python would (and the static
rule `unbound-name` refuses it before any run).
"""
from __future__ import annotations

import __future__
import ast
import secrets
from typing import Any

TOKEN = secrets.token_hex(8)
MAKER = f"_opforge_kernel_{TOKEN}"


def hidden(name: str) -> str:
    return f"_opforge_{name}_{TOKEN}"


def install() -> None:
    """Patch the interpreter's FunctionRewriter (whichever Triton is imported)."""
    from triton.runtime import interpreter

    rewriter = interpreter.FunctionRewriter
    if getattr(rewriter, "_opforge_hidden", False):
        return
    own_globals = vars(interpreter)

    def _transform_ast(self, src):
        parsed = ast.parse(src)
        written = [node for node in ast.walk(parsed) if isinstance(node, ast.Name)]  # kept alive: ids stay unique
        seen = {id(node) for node in written}
        transformed = self.ast_transformer.visit(parsed)
        self._opforge_inserted = {}
        for node in ast.walk(transformed):
            if isinstance(node, ast.Name) and id(node) not in seen and node.id in own_globals:
                self._opforge_inserted[hidden(node.id)] = own_globals[node.id]
                node.id = hidden(node.id)
        transformed = _in_closure(transformed, sorted(self._opforge_inserted), self.fn.__name__)
        ast.fix_missing_locations(transformed)
        ast.increment_lineno(transformed, self.def_file_lineno - 1)
        return transformed

    # the interpreter's own compile() inherits its module's `from __future__` (NVIDIA's: annotations)
    feature = own_globals.get("annotations")
    flags = feature.compiler_flag if isinstance(feature, __future__._Feature) else 0

    def _compile_and_exec(self, transformed_ast):
        code = compile(transformed_ast, filename=self.filename, mode="exec", flags=flags, dont_inherit=True)
        local_namespace: dict[str, Any] = {**self.kwargs}
        exec(code, self.fn.__globals__, local_namespace)
        inserted = getattr(self, "_opforge_inserted", {})
        return local_namespace.pop(MAKER)(*(inserted[name] for name in sorted(inserted)))

    rewriter._transform_ast = _transform_ast
    rewriter._compile_and_exec = _compile_and_exec
    rewriter._opforge_hidden = True


def _in_closure(tree: ast.Module, names: list[str], kernel: str) -> ast.Module:
    """`def MAKER(names...): <the kernel's def>; return <kernel>`: the inserted names are the
    kernel's free variables, never the module's globals."""
    maker = ast.parse(f"def {MAKER}({', '.join(names)}):\n    return {kernel}\n").body[0]
    first = tree.body[0]  # the rewriter's source starts at the kernel's `def` line
    maker.body[:0] = tree.body
    for node in (maker, maker.body[-1]):
        ast.copy_location(node, first)
    tree.body = [maker]
    return tree
