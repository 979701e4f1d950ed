"""Text similarity without external packages: identifier-aware tokens, TF-IDF, cosine, Jaccard."""
from __future__ import annotations

import keyword
import math
import re
from collections import Counter
from collections.abc import Iterable

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_STOP = frozenset(keyword.kwlist) | {
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "if", "in", "into", "is", "it",
    "its", "of", "on", "one", "or", "so", "than", "that", "the", "then", "this", "to", "with",
    "self", "super", "init", "forward", "model", "module", "class", "def",
    # in nearly every KernelBench spec, so they say nothing about the op
    "torch", "nn", "functional", "dim", "keepdim", "tensor",
}


def tokenize(text: str) -> list[str]:
    """Lower-case words; an identifier also yields its snake_case and CamelCase parts, so
    `rms_norm` matches `norm` and `LayerNorm` matches `layernorm` and `norm`."""
    tokens = []
    for word in _WORD.findall(text):
        parts = [p.lower() for piece in word.split("_") for p in _CAMEL.findall(piece)]
        for token in [word.lower()] + (parts if len(parts) > 1 else []):
            if len(token) > 1 and not token.isdigit() and token not in _STOP:
                tokens.append(token)
    return tokens


Vector = dict[str, float]


class TfIdf:
    """Inverse document frequencies of a fixed corpus; terms it never saw get the largest idf."""

    def __init__(self, documents: Iterable[list[str]]):
        docs = [set(d) for d in documents]
        self.n_docs = len(docs)
        self.df = Counter(term for d in docs for term in d)

    def idf(self, term: str) -> float:
        return math.log((1 + self.n_docs) / (1 + self.df.get(term, 0))) + 1.0

    def vector(self, tokens: list[str]) -> Vector:
        """Sublinear tf (1 + log count) times idf, L2-normalised."""
        weights = {t: (1.0 + math.log(c)) * self.idf(t) for t, c in Counter(tokens).items()}
        norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
        return {t: w / norm for t, w in weights.items()}


def cosine(a: Vector, b: Vector) -> float:
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    return sum(w * large.get(t, 0.0) for t, w in small.items())


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a or b else 0.0
