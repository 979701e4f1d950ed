"""The static corpus: notes (Markdown with a `# Title` and a `tags:` line) and suite examples
(a known-good kernel paired with its spec), parsed once per backend and cached.

Specs are read with `ast`, never executed: retrieval runs on untrusted specs before any sandbox.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from opforge.harness.errors import OpforgeError

ROOT = Path(__file__).resolve().parent.parent  # the opforge package (ops is a link to the checkout's ops/)
BACKENDS_DIR = ROOT / "backends"  # each backend's notes/ and knowledge/ (known-good kernels)
OPS_DIR = ROOT / "ops"


class KnowledgeError(OpforgeError):
    """A file of the curated corpus is malformed (a note without its title or tags line)."""


@dataclass(frozen=True)
class Note:
    title: str
    tags: tuple[str, ...]
    text: str  # the body, without the title and tags lines
    source: str  # path relative to the repository root


@dataclass(frozen=True)
class Example:
    op: str
    tags: tuple[str, ...]
    kernel: str  # the known-good kernel's source
    spec: str  # its spec's source; "" when ops/<op>.py is missing
    source: str


def relative(path: Path) -> str:
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:  # a file outside the repository (a test's temporary note)
        return path.as_posix()


def parse_note(path: Path) -> Note:
    lines = path.read_text(encoding="utf-8").strip().splitlines()
    if len(lines) < 3 or not lines[0].startswith("# ") or not lines[1].lower().startswith("tags:"):
        raise KnowledgeError(f"{relative(path)}: a note starts with '# Title', then 'tags: a, b', then text")
    tags = tuple(t.strip().lower() for t in lines[1].split(":", 1)[1].split(",") if t.strip())
    body = "\n".join(lines[2:]).strip()
    if not tags or not body:
        raise KnowledgeError(f"{relative(path)}: a note needs at least one tag and some text")
    return Note(title=lines[0][2:].strip(), tags=tags, text=body, source=relative(path))


def notes_dir(backend: str) -> Path:
    """A backend's curated notes: opforge/backends/<backend>/notes/."""
    return BACKENDS_DIR / _check_backend(backend) / "notes"


def examples_dir(backend: str) -> Path:
    """A backend's known-good kernels: opforge/backends/<backend>/knowledge/[<suite>/]<op>.py."""
    return BACKENDS_DIR / _check_backend(backend) / "knowledge"


def _check_backend(backend: str) -> str:
    # The name becomes a folder name: a path such as "../ops" must not reach other files.
    if not re.fullmatch(r"[a-z][a-z0-9_]*", backend):
        raise KnowledgeError(f"not a backend name: {backend!r}")
    return backend


@lru_cache(maxsize=None)
def load_notes(backend: str) -> tuple[Note, ...]:
    """The notes of one backend, in file-name order; none for a backend without a notes folder."""
    return tuple(parse_note(p) for p in sorted(notes_dir(backend).glob("*.md")))


@lru_cache(maxsize=None)
def load_examples(backend: str) -> tuple[Example, ...]:
    """Known-good kernels knowledge/<backend>/[<suite>/]<op>.py, each with the tags of its spec
    ops/[<suite>/]<op>.py (the serving suite's are in serving/). A verification header's hash lines
    (scripts/serving_examples.py) are tests' business, not the drafter's, and are left out."""
    examples = []
    folder = examples_dir(backend)
    for path in sorted(folder.rglob("*.py")):
        inside = path.relative_to(folder)
        if path.stem.startswith("_") or any(part.startswith((".", "_")) for part in inside.parts[:-1]):
            continue
        spec_path = OPS_DIR / inside
        spec = spec_path.read_text(encoding="utf-8") if spec_path.is_file() else ""
        tags = tuple(spec_tags(spec)) or tuple(_name_words(path.stem))
        kernel = "".join(line for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
                         if not _HASH_LINE.match(line))
        examples.append(Example(op=path.stem, tags=tags, kernel=kernel, spec=spec, source=relative(path)))
    return tuple(examples)


_HASH_LINE = re.compile(r"# (spec|kernel)-sha256: ([0-9a-f]{64})\s*$")


def verified_example(text: str) -> tuple[dict[str, str], str]:
    """A verified example's header hashes ({"spec": ..., "kernel": ...}, as scripts/serving_examples.py
    writes them) and the kernel below the header; ({}, text) when its leading comments have none."""
    lines = text.splitlines(keepends=True)
    fields: dict[str, str] = {}
    for i, line in enumerate(lines):
        if not line.startswith("#"):
            break
        if m := _HASH_LINE.match(line):
            fields[m.group(1)] = m.group(2)
            if m.group(1) == "kernel":
                return fields, "".join(lines[i + 1:])
    return {}, text


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):  # ValueError: null bytes in the source
        return None


def _literal_fields(value: ast.expr) -> dict:
    """The literal entries of a `{...}` or `dict(...)` expression; non-literal entries are skipped."""
    if isinstance(value, ast.Dict):
        pairs = [(k.value, v) for k, v in zip(value.keys, value.values)
                 if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
        pairs = [(kw.arg, kw.value) for kw in value.keywords if kw.arg]
    else:
        return {}
    fields = {}
    for key, node in pairs:
        try:
            fields[key] = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, RecursionError):
            continue
    return fields


def opforge_fields(spec_source: str) -> dict:
    """The module-level OPFORGE dict of a spec (the last assignment wins, as in Python); {} if absent."""
    tree = _parse(spec_source)
    fields: dict = {}
    for node in tree.body if tree else []:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "OPFORGE" for t in node.targets):
            fields = _literal_fields(node.value)
        elif (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
              and node.target.id == "OPFORGE" and node.value is not None):
            fields = _literal_fields(node.value)
    return fields


def _name_words(name: str) -> list[str]:
    name = name.strip().lower()
    parts = [p for p in re.split(r"[^a-z0-9]+", name) if p]
    return [name] + (parts if len(parts) > 1 else [])


def _dedupe(words) -> list[str]:
    return list(dict.fromkeys(w for w in words if w))


def spec_tags(spec_source: str) -> list[str]:
    """Tags, family and op-name words of a spec's OPFORGE dict, lower-cased, first occurrence
    first; [] when the spec has no OPFORGE (plain KernelBench) or does not parse."""
    fields = opforge_fields(spec_source)
    tags = fields.get("tags", [])
    tags = [tags] if isinstance(tags, str) else tags if isinstance(tags, (list, tuple)) else []
    words = [t.strip().lower() for t in tags if isinstance(t, str)]
    for key in ("family", "name"):
        if isinstance(fields.get(key), str):
            words += _name_words(fields[key]) if key == "name" else [fields[key].strip().lower()]
    return _dedupe(words)


def spec_op(spec_source: str) -> str | None:
    """The op name from OPFORGE, if the spec declares one."""
    name = opforge_fields(spec_source).get("name")
    return name.strip().lower() if isinstance(name, str) and name.strip() else None


def spec_profile(spec_source: str) -> str:
    """The text that says what a spec computes: its module docstring and its Model class
    (forward and __init__, which names modules such as nn.LayerNorm); the whole source if the
    spec does not parse or has no such class."""
    tree = _parse(spec_source)
    if tree is None:
        return spec_source
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    model = next((c for c in classes if c.name == "Model"), None) or next(
        (c for c in classes if any(isinstance(f, ast.FunctionDef) and f.name == "forward" for f in c.body)), None)
    if model is None:
        return spec_source
    return "\n".join([ast.get_docstring(tree) or "", ast.get_source_segment(spec_source, model) or ""])
