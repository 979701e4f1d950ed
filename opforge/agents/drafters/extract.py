"""Pull a candidate file out of a model's reply: fenced or bare Python, one block or several.

`extract` never raises. Its `Extraction` holds a `source` that parses and defines a module-level
`class ModelNew`, or else a `problem`: one short line that goes into the next prompt as feedback,
e.g. "the code does not parse: line 12: invalid syntax", with what could not be used (`rejected`:
the code that failed, or the reply's text when it held no code) and the line the parser stopped at,
so the next prompt can show the model its own broken code. `extract_candidate` is the short form.

CUDA candidates are one Python file too, with `CUDA_SRC` as a string in it (what the CUDA system
prompt asks for). A reply that puts the C++ in its own ```cuda (cu, cpp, c++) block and a Python
block that uses `CUDA_SRC` without defining it is joined: the last such block becomes the raw
string `CUDA_SRC`, placed after the Python block's imports.
"""
from __future__ import annotations

import ast
import builtins
import re
import textwrap
import threading
from dataclasses import dataclass
from typing import NamedTuple

from opforge.backends import BACKENDS
from opforge.harness.plugin import EmbeddedSource

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
# An opening fence with an optional language tag; the block runs to the closing fence or, when the
# reply was cut off mid-block, to the end of the reply.
_FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+.-]*)[^\n]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.DOTALL | re.MULTILINE)
_PYTHON_TAGS = {"", "python", "py", "python3", "py3"}
_CODE_START = re.compile(r"^(import |from \w|@|class |def |[A-Za-z_]\w* = )", re.MULTILINE)
_BUILTINS = set(dir(builtins))
_NO_CODE = "the reply contains no Python code block"
_NO_MODEL = "the code defines no class ModelNew"
# A reply without code is kept (and quoted back) only this far: the whole reply is in the LLM call.
MAX_REJECTED_CHARS = 20_000


@dataclass(frozen=True)
class Extraction:
    """What one reply gave: a usable `source`, or the `problem` and what could not be used."""

    source: str | None = None
    problem: str | None = None
    rejected: str | None = None  # the unusable code, else the reply's text (clipped); None when empty
    line: int | None = None  # the line of `rejected` where parsing stopped, when it did not parse


class _Parsed(NamedTuple):
    tree: ast.Module | None
    error: str | None = None
    line: int | None = None


def extract_candidate(reply: str) -> tuple[str | None, str | None]:
    """(source, None) for a usable candidate, (None, problem) otherwise."""
    found = extract(reply)
    return found.source, found.problem


def extract(reply: str) -> Extraction:
    text, problem = _strip_reasoning(reply or "")
    if problem:
        return Extraction(problem=problem, rejected=_clip(reply or ""))
    if not text.strip():
        return Extraction(problem="the reply is empty")
    fenced = _FENCE.findall(text)
    blocks = [textwrap.dedent(body) for tag, body in fenced if tag.lower() in _PYTHON_TAGS and body.strip()]
    found = _from_blocks(blocks) if blocks else None
    for label, embedded in embedded_sources():
        code = [body.strip("\n") + "\n" for tag, body in fenced if tag.lower() in embedded.fence_tags and body.strip()]
        if found is None and code:
            return Extraction(problem=f"the reply has a {label} block but no Python block with {embedded.variable}, "
                                      f"{embedded.loader} and class ModelNew", rejected=_clip(text))
        if found is not None and code:
            found = _with_embedded_block(found, code, embedded.variable, label)
    return found if found is not None else _from_bare(text)


def embedded_sources() -> list[tuple[str, EmbeddedSource]]:
    """(label, EmbeddedSource) of each backend whose kernels live in a string of the Python file."""
    plugins = [row.plugin() for row in BACKENDS.values() if row.module]
    return [(p.label, p.embedded_source) for p in plugins if p.embedded_source is not None]


def _with_embedded_block(found: Extraction, blocks: list[str], name: str, label: str) -> Extraction:
    """A usable source that reads `name` (CUDA_SRC) without defining it gets the reply's last such block."""
    if found.source is None:
        return found
    tree = ast.parse(found.source)
    if name not in _free_names(tree) or name in _defined_names(tree):
        return found
    code = blocks[-1]  # ends with a newline, so no backslash can escape the closing quotes
    quote = '"""' if '"""' not in code else "'''"
    lines = found.source.splitlines(keepends=True)
    at = _after_leading_imports(tree)
    source = "".join(lines[:at]) + ("\n" if at else "") + f"{name} = r{quote}\n{code}{quote}\n\n" + "".join(lines[at:])
    joined = _parse(source)
    if joined.tree is None:
        return Extraction(problem=f"the {label} block cannot be quoted into {name} ({joined.error}): "
                                  f"put {name} = r\"\"\"...\"\"\" in the Python block", rejected=source, line=joined.line)
    return Extraction(source=source)


def _after_leading_imports(tree: ast.Module) -> int:
    """The line count of the module's head: docstring, `from __future__` and other imports."""
    end = 0
    for node in tree.body:
        is_doc = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        if not (isinstance(node, (ast.Import, ast.ImportFrom)) or (is_doc and end == 0)):
            break
        end = node.end_lineno or node.lineno
    return end


def _strip_reasoning(reply: str) -> tuple[str, str | None]:
    """Drop <think> sections; servers that strip the opening tag still leave the closing one."""
    text = _THINK.sub("", reply)
    if "</think>" in text.lower():
        text = text[text.lower().rindex("</think>") + len("</think>"):]
    if "<think>" in text.lower():
        before = text[: text.lower().index("<think>")]
        if not before.strip():
            return "", "the reply was cut off inside its <think> reasoning, before any code"
        text = before
    return text, None


def _from_blocks(blocks: list[str]) -> Extraction:
    parsed = [_parse(b) for b in blocks]
    with_model = [i for i, p in enumerate(parsed) if p.tree is not None and _defines_model_new(p.tree)]
    if not with_model:
        # Report on the block that looks like the answer: the one naming ModelNew, else the last one.
        named = [i for i, b in enumerate(blocks) if re.search(r"^class ModelNew\b", b, re.MULTILINE)]
        shown = named[-1] if named else -1
        error, line = parsed[shown].error, parsed[shown].line
        return Extraction(problem=error or _NO_MODEL, rejected=blocks[shown], line=line)
    chosen = with_model[-1]  # a reply that revises itself ends with its final answer
    keep = _blocks_needed(chosen, [p.tree for p in parsed])
    source = "\n\n".join(blocks[i].strip("\n") for i in sorted(keep)) + "\n"
    joined = _parse(source)
    if joined.tree is None:
        return Extraction(problem=joined.error, rejected=source, line=joined.line)
    return Extraction(source=source)


def _from_bare(text: str) -> Extraction:
    """No fences: the reply is plain Python, possibly after a paragraph of prose."""
    parsed = _parse(text)
    if parsed.tree is None:
        start = _CODE_START.search(text)
        if start is None:
            return Extraction(problem=_NO_CODE, rejected=_clip(text))
        text = text[start.start():]
        parsed = _parse(text)
        if parsed.tree is None:
            return Extraction(problem=parsed.error, rejected=text, line=parsed.line)
    if not _defines_model_new(parsed.tree):
        if not any(isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)) for n in parsed.tree.body):
            return Extraction(problem=_NO_CODE, rejected=_clip(text))
        return Extraction(problem=_NO_MODEL, rejected=text.strip() + "\n")
    return Extraction(source=text.strip() + "\n")


# CPython 3.11's AST validation keeps its recursion depth per interpreter, not per thread: drafts
# parsed at once in the drafter's threads can fail with "AST constructor recursion depth mismatch"
# (gh-106905). One parse at a time.
_PARSE_LOCK = threading.Lock()


def _parse(source: str) -> _Parsed:
    try:
        with _PARSE_LOCK:
            tree = ast.parse(source)
        return _Parsed(tree)
    except SyntaxError as exc:
        return _Parsed(None, f"the code does not parse: line {exc.lineno}: {exc.msg}", exc.lineno)
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
        return _Parsed(None, f"the code does not parse: {exc}")


def _clip(text: str) -> str | None:
    text = text.strip()
    if len(text) <= MAX_REJECTED_CHARS:
        return text or None
    return text[:MAX_REJECTED_CHARS] + f"\n... ({len(text) - MAX_REJECTED_CHARS} more characters not kept)"


def _defines_model_new(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body)


def _blocks_needed(chosen: int, trees: list[ast.Module | None]) -> set[int]:
    """The ModelNew block plus the blocks defining what it (transitively) uses: kernels and launchers
    first, then imports still missing. An echoed spec block (Model, get_inputs) stays out."""
    keep = {chosen}
    for imports in (False, True):
        changed = True
        while changed:
            wanted = set().union(*(_free_names(trees[i]) for i in keep))
            wanted -= set().union(*(_defined_names(trees[i], True) for i in keep))
            extra = [i for i, tree in enumerate(trees) if i not in keep and tree is not None
                     and not _defines_model_new(tree) and _defined_names(tree, imports) & wanted]
            keep |= set(extra[:1] if imports else extra)
            changed = bool(extra)
    return keep


def _defined_names(tree: ast.Module, imports: bool = True) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and imports:
            names |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _free_names(tree: ast.Module) -> set[str]:
    """Names read but bound nowhere in the block (not at module level, not as a local or argument)."""
    used, bound = set(), _defined_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return used - bound - _BUILTINS
