"""One emitter's candidate file taken apart for a program of several kernels: its imports, its
body (kernels, helpers, launcher) with every top-level name given a per-group suffix, and the name of
the launcher its ModelNew calls.

Emitters name things generically (the pointwise launcher is `launch`, the row-wise tiles `TILE`), so
two groups would collide. `ast` finds the names a file binds at top level (not its imports, not
ModelNew, which is dropped); `tokenize` renames them where they occur as names: not as attributes
(`x.launch`), not as strings, and not as keyword arguments of a call to something the file does not
define (`kernel[grid](..., BLOCK=...)` keeps BLOCK when BLOCK is a module-level name too)."""
from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass

MODEL = "ModelNew"


@dataclass(frozen=True)
class Parts:
    imports: list[str]  # the file's import statements, as written
    body: str  # everything else but the docstring and ModelNew, renamed
    launcher: str  # the (renamed) function ModelNew.forward calls


def bound_names(tree: ast.Module) -> list[str]:
    """Names the module binds at top level by def, class or assignment (not imports, not ModelNew)."""
    names: list[str] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            targets = [stmt.name] if stmt.name != MODEL else []
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            nodes = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            targets = [n.id for t in nodes for n in ast.walk(t) if isinstance(n, ast.Name)]
        else:
            continue
        names += [n for n in targets if n not in names]
    return names


def launcher_of(tree: ast.Module) -> str:
    """The function ModelNew.forward returns the call of (every emitter's ModelNew is model_new's)."""
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and stmt.name == MODEL:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Return) and isinstance(node.value, ast.Call) \
                        and isinstance(node.value.func, ast.Name):
                    return node.value.func.id
    raise ValueError("a candidate whose ModelNew.forward does not return a launcher's call")


def _kept_keywords(tree: ast.Module, mapping: dict[str, str], lines: list[str]) -> set[tuple[int, int]]:
    """(row, column) of keyword names in calls of callables the file does not define."""
    kept = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func.value if isinstance(node.func, ast.Subscript) else node.func  # kernel[grid](...)
        if isinstance(func, ast.Name) and func.id in mapping:
            continue
        for kw in node.keywords:
            if kw.arg in mapping:
                line = lines[kw.lineno - 1].encode()
                kept.add((kw.lineno, len(line[:kw.col_offset].decode())))  # ast counts bytes
    return kept


def rename(source: str, mapping: dict[str, str]) -> str:
    """`source` with each name of `mapping` replaced where it is a name, as the module docstring says."""
    lines = source.splitlines(keepends=True)
    kept = _kept_keywords(ast.parse(source), mapping, lines)
    edits, previous = [], None
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME and tok.string in mapping and tok.start not in kept \
                and not (previous is not None and previous.type == tokenize.OP and previous.string == "."):
            edits.append((tok.start, tok.end, mapping[tok.string]))
        elif tok.type == tokenize.STRING and re.match(r"[rRbB]*[fF]", tok.string):
            edits.append((tok.start, tok.end, _in_fields(tok.string, mapping)))
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            previous = tok
    for (row, col), (end_row, end_col), text in reversed(edits):
        if row == end_row:
            line = lines[row - 1]
            lines[row - 1] = line[:col] + text + line[end_col:]
        else:  # a multi-line f-string: the whole token is replaced on its first line
            lines[row - 1] = lines[row - 1][:col] + text + lines[end_row - 1][end_col:]
            del lines[row:end_row]
    return "".join(lines)


def _in_fields(fstring: str, mapping: dict[str, str]) -> str:
    """An f-string with the names in its replacement fields renamed (Python 3.11 tokenizes it whole)."""
    def field(match: re.Match) -> str:
        return re.sub(r"(?<![.\w])[A-Za-z_]\w*", lambda m: mapping.get(m.group(0), m.group(0)), match.group(0))
    return re.sub(r"(?<!{){[^{}]*}", field, fstring)


def parts(source: str, suffix: str, taken: set[str]) -> Parts:
    """`source` split and renamed: each top-level name gets `suffix` (more underscores while the
    result is in `taken`, which collects every name the program binds)."""
    tree = ast.parse(source)
    mapping = {}
    for name in bound_names(tree):
        new = f"{name}{suffix}"
        while new in taken:
            new += "_"
        mapping[name] = new
        taken.add(new)
    launcher = launcher_of(tree)
    renamed = rename(source, mapping).splitlines(keepends=True)
    drop, imports = set(), []
    for i, stmt in enumerate(tree.body):
        doc = i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        model = isinstance(stmt, ast.ClassDef) and stmt.name == MODEL
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            imports.append(ast.get_source_segment(source, stmt))
        elif not (doc or model):
            continue
        drop.update(range(stmt.lineno - 1, stmt.end_lineno))
    body = "".join(line for i, line in enumerate(renamed) if i not in drop).strip("\n")
    return Parts(imports, body + "\n", mapping.get(launcher, launcher))
