"""Rank what a drafter should read for one spec: notes of the backend, the suite's known-good
kernels (examples) and verified kernels from the registry (history, passed in by the caller so
this package never imports the registry).

Score = 0.5 * Jaccard(tag sets) + 0.5 * TF-IDF cosine(spec text), plus 1.0 for the same op.
A spec's text is its docstring and Model class; a plain KernelBench spec without OPFORGE gets
as tags the corpus tag words its code uses (gelu, softmax, LayerNorm -> layernorm, norm).
"""
from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from opforge.backends import BACKENDS, DEFAULT, describe
from opforge.knowledge.corpus import load_examples, load_notes, notes_dir, relative, spec_op, spec_profile, spec_tags
from opforge.knowledge.textsim import TfIdf, Vector, cosine, jaccard, tokenize

TAG_WEIGHT = 0.5
TEXT_WEIGHT = 0.5
SAME_OP_BONUS = 1.0  # same spec text or same OPFORGE name: ranks first among examples and history
MAX_CODE = 3  # examples + history together: whole kernels are long and crowd out the notes
MIN_NOTES = 2  # when the backend has that many

History = tuple[str, str, str, float | None]  # (op, spec_source, kernel_source, speedup)


@dataclass(frozen=True)
class KnowledgeItem:
    """One ranked piece a drafter reads (agents' DraftRequest carries these)."""

    kind: str  # "note" | "example" | "history"
    title: str
    text: str
    score: float = 0.0
    source: str = ""  # where it came from: a file path or "registry:candidate/ID"


@dataclass(frozen=True)
class _Doc:
    kind: str
    title: str
    text: str
    source: str
    tags: frozenset[str]
    vector: Vector
    op: str = ""
    spec: str = ""


@dataclass(frozen=True)
class _Corpus:
    notes: tuple[_Doc, ...]
    examples: tuple[_Doc, ...]
    index: TfIdf
    vocabulary: frozenset[str]  # every tag a note or example carries


def _spec_terms(spec_source: str, tags: Iterable[str]) -> list[str]:
    return tokenize(spec_profile(spec_source)) + tokenize(" ".join(tags))


def _docstring(source: str) -> str:
    try:
        return ast.get_docstring(ast.parse(source)) or ""
    except (SyntaxError, ValueError):
        return ""


@lru_cache(maxsize=None)
def _corpus(backend: str) -> _Corpus:
    notes, examples = load_notes(backend), load_examples(backend)
    note_terms = [tokenize(f"{n.title}\n{' '.join(n.tags)}\n{n.text}") for n in notes]
    example_terms = [_spec_terms(e.spec, e.tags) + tokenize(_docstring(e.kernel)) for e in examples]
    index = TfIdf(note_terms + example_terms)
    label = describe(backend).label if backend in BACKENDS else backend
    return _Corpus(
        notes=tuple(_Doc("note", n.title, n.text, n.source, frozenset(n.tags), index.vector(t))
                    for n, t in zip(notes, note_terms)),
        examples=tuple(_Doc("example", f"Known-good {label} kernel for {e.op}", e.kernel, e.source,
                            frozenset(e.tags), index.vector(t), op=e.op, spec=e.spec)
                       for e, t in zip(examples, example_terms)),
        index=index,
        vocabulary=frozenset(tag for d in (*notes, *examples) for tag in d.tags),
    )


def _tags_of(spec_source: str, corpus: _Corpus) -> list[str]:
    tags = spec_tags(spec_source)
    if tags:
        return tags
    return sorted(set(tokenize(spec_profile(spec_source))) & corpus.vocabulary)


def _speedup(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _language_test(backend: str):
    """The registry's history spans backends, and a kernel in the wrong language is no example: a
    backend with a source marker (CUDA's `load_cuda(`) reads only kernels that have it, every other
    backend only kernels that have no backend's marker. The markers are read once per retrieval."""
    markers = {name: row.plugin().source_marker for name, row in BACKENDS.items() if row.module}
    own = markers.get(backend)
    if own is not None:
        return lambda kernel: bool(own.search(kernel))
    others = [m for m in markers.values() if m is not None]
    return lambda kernel: not any(m.search(kernel) for m in others)


def _history_docs(history: Iterable[History], corpus: _Corpus, backend: str) -> list[_Doc]:
    """One doc per op, its fastest kernel in the backend's language (unmeasured last); copies of
    suite kernels dropped."""
    suite = {d.text.strip() for d in corpus.examples}
    same_language = _language_test(backend)
    entries = [(op.strip().lower(), spec, kernel, _speedup(s)) for op, spec, kernel, s in history
               if same_language(kernel or "")]
    entries.sort(key=lambda e: (e[0], -e[3] if e[3] is not None else math.inf, e[2]))
    docs, seen = [], set()
    for op, spec, kernel, speedup in entries:
        if op in seen or not kernel or kernel.strip() in suite:
            continue
        seen.add(op)
        tags = _tags_of(spec, corpus) + [op]
        measured = f"{speedup:.2f}x vs PyTorch" if speedup is not None else "speedup not measured"
        docs.append(_Doc("history", f"Verified kernel for {op} from the registry ({measured})", kernel,
                         "registry", frozenset(tags), corpus.index.vector(_spec_terms(spec, tags)),
                         op=op, spec=spec))
    return docs


def _score(doc: _Doc, tags: set[str], vector: Vector, spec_source: str, op: str | None) -> float:
    score = TAG_WEIGHT * jaccard(tags, doc.tags) + TEXT_WEIGHT * cosine(vector, doc.vector)
    same_spec = bool(doc.spec.strip()) and doc.spec.strip() == spec_source.strip()
    if doc.kind != "note" and (same_spec or (op is not None and doc.op == op)):
        score += SAME_OP_BONUS
    return round(score, 4)


Scored = tuple[float, _Doc]


def _order(item: Scored) -> tuple:
    return (-item[0], item[1].title, item[1].source)


def _select(notes: list[Scored], code: list[Scored], k: int, pinned: str | None,
            tags: set[str] = frozenset()) -> list[Scored]:
    """The pinned note, the best notes up to MIN_NOTES, the best relevant code up to MAX_CODE, then
    the best of what is left (code still capped) until k. Relevant code scores above 0 and shares a
    tag with the spec (or is its own op's): words alone (`x`, `dim`, `row`) are common to every
    kernel, and a kernel that merely uses a cumsum is no example for a scan."""
    chosen = [n for n in notes if n[1].source == pinned][:1]
    for note in notes:
        if len(chosen) >= min(MIN_NOTES, k):
            break
        if note not in chosen:
            chosen.append(note)
    def unrelated(item: Scored) -> bool:
        score, doc = item
        return doc.kind != "note" and not (score > 0 and (score >= SAME_OP_BONUS or doc.tags & tags))

    code = sorted(code, key=unrelated)  # stable: relevant code first, each part still best first
    n_code = min(MAX_CODE, k - len(chosen), sum(not unrelated(c) for c in code))
    chosen += code[:n_code]
    # A note is more useful than an unrelated kernel, whatever their scores; on equal scores
    # (typically 0: nothing in common) a note beats a relevant kernel too.
    rest = sorted([n for n in notes if n not in chosen] + code[n_code:MAX_CODE],
                  key=lambda item: (unrelated(item), -item[0], item[1].kind != "note", item[1].title))
    return sorted(chosen + rest[:k - len(chosen)], key=_order)


def retrieve(spec_source: str, backend: str = DEFAULT, k: int = 6,
             history: Iterable[History] = ()) -> list[KnowledgeItem]:
    """The k most useful items for writing `backend` kernels for this spec, best first
    (ties by title); only notes, examples and history kernels of `backend`'s language; history
    tuples are (op, spec, kernel, speedup)."""
    if k <= 0:
        return []
    corpus = _corpus(backend)
    tags = set(_tags_of(spec_source, corpus))
    vector = corpus.index.vector(_spec_terms(spec_source, tags))
    op = spec_op(spec_source)

    def ranked(docs: Iterable[_Doc]) -> list[Scored]:
        return sorted(((_score(d, tags, vector, spec_source, op), d) for d in docs), key=_order)

    notes = ranked(corpus.notes)
    code = ranked([*corpus.examples, *_history_docs(history, corpus, backend)])
    return [KnowledgeItem(kind=d.kind, title=d.title, text=d.text, score=s, source=d.source)
            for s, d in _select(notes, code, k, _pinned(backend), tags)]


def _pinned(backend: str) -> str | None:
    """The note every retrieval for this backend leads with (its plugin's pinned_note), as a source path."""
    name = describe(backend).pinned_note if backend in BACKENDS else None
    return relative(notes_dir(backend) / name) if name else None
