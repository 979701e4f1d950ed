"""One generated kernel per dtype combination a spec's input lists use (a decoder op verified in bf16
and fp32): the graph is traced again with the main inputs cast to each other combination, each
rendering's top-level names get a suffix, and a ModelNew picks by the arguments' dtypes. A spec whose
lists share one combination (most) keeps its single kernel unchanged."""
from __future__ import annotations

import ast
import io
import tempfile
import tokenize
from pathlib import Path

import torch

from opforge.harness.spec import input_lists, load_module

Dtypes = tuple[str | None, ...]  # per forward argument: a tensor's dtype ("bfloat16"), None for a number


def of(args) -> Dtypes:
    return tuple(str(a.dtype).removeprefix("torch.") if isinstance(a, torch.Tensor) else None for a in args)


def combinations(spec_source: str, sizes: dict) -> list[Dtypes]:
    """Each distinct dtype combination of the spec's input lists at `sizes`, the main inputs' first."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "spec.py"
        path.write_text(spec_source)
        torch.manual_seed(0)
        try:
            return list(dict.fromkeys(of(xs) for xs in input_lists(load_module(path, sizes), path)))
        except Exception:  # a spec that cannot build its lists here: the main trace says why, if it fails
            return []


def cast(args: tuple, dtypes: Dtypes | None) -> tuple:
    """The inputs with each tensor cast to its dtype in `dtypes` (None: as they are)."""
    if dtypes is None:
        return args
    return tuple(a.to(getattr(torch, d)) if isinstance(a, torch.Tensor) and d else a for a, d in zip(args, dtypes))


def _top_level_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _helper_methods(tree: ast.Module) -> set[str]:
    """Methods of the file's classes other than forward and dunders (ModelNew's `_computed`)."""
    return {m.name for node in tree.body if isinstance(node, ast.ClassDef) for m in node.body
            if isinstance(m, ast.FunctionDef) and m.name != "forward" and not m.name.startswith("__")}


def rename(source: str, suffix: str, keep_docstring: bool = True) -> tuple[list[str], str]:
    """(import lines, the rest with every top-level name defined here given `suffix`): a name is
    renamed wherever it is a name (its definition, calls, keyword arguments of its own functions),
    never as an attribute (`x.name`), in a string or a comment; a class's helper methods are renamed
    as attributes too, so each combination's forward reaches its own."""
    tree = ast.parse(source)
    names, methods = _top_level_names(tree), _helper_methods(tree)
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    lines = source.splitlines(keepends=True)
    import_lines = {i for n in imports for i in range(n.lineno - 1, n.end_lineno)}
    if not keep_docstring and ast.get_docstring(tree) is not None:  # the first rendering's says it for all
        import_lines |= set(range(tree.body[0].lineno - 1, tree.body[0].end_lineno))
    head = ["".join(lines[n.lineno - 1:n.end_lineno]).rstrip("\n") for n in imports]
    body = "".join(line for i, line in enumerate(lines) if i not in import_lines)
    out, previous = [], None
    for tok in tokenize.generate_tokens(io.StringIO(body).readline):
        attribute = previous is not None and previous.string == "."
        if tok.type == tokenize.NAME and (tok.string in names and not attribute or tok.string in methods):
            tok = tok._replace(string=tok.string + suffix)
        out.append(tok)
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            previous = tok
    return head, tokenize.untokenize(out)


def merge(sources: list[str], combos: list[Dtypes]) -> str:
    """One candidate holding each combination's rendering (names suffixed _dt0, _dt1, ...) and a
    ModelNew that runs the one generated for its arguments' dtypes (the first for any other): it
    subclasses every combination's ModelNew (each declares the same parameters) and reaches
    combination k's forward as super(ModelNew_dt{k-1}, self).forward."""
    heads, bodies = [], []
    for i, source in enumerate(sources):
        head, body = rename(source, f"_dt{i}", keep_docstring=i == 0)
        heads += head
        bodies.append(f"# ---- for input dtypes {combos[i]} ----\n{body.strip()}\n")
    future = [h for h in dict.fromkeys(heads) if h.startswith("from __future__")]
    imports = future + [h for h in dict.fromkeys(heads) if h not in future]
    if "import torch" not in imports:
        imports.append("import torch")
    bases = ", ".join(f"ModelNew_dt{i}" for i in range(len(sources)))
    branches = "".join(f"        if key == {combos[i]!r}:\n"
                       f"            return super(ModelNew_dt{i - 1}, self).forward(*args)\n"
                       for i in range(1, len(sources)))
    dispatch = (f"\n\nclass ModelNew({bases}):\n"
                '    """One generated kernel per dtype combination of the inputs, chosen by the arguments\' dtypes."""\n\n'
                "    def forward(self, *args):\n"
                "        key = tuple(str(a.dtype).removeprefix(\"torch.\") if isinstance(a, torch.Tensor) else None\n"
                "                    for a in args)\n"
                f"{branches}        return super().forward(*args)\n")
    return "\n".join(imports) + "\n\n\n" + "\n\n".join(bodies) + dispatch
