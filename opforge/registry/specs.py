"""Op specs in the registry: one row per source, found by its sha256, so recording or importing the
same spec again returns the id it already has."""
from __future__ import annotations

import hashlib

from sqlalchemy import select
from sqlalchemy.orm import Session

from opforge.registry.models import Spec


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def spec_id(s: Session, name: str, path: str, source: str) -> int:
    """The id of the spec with this source, added with `name` and `path` when there is none."""
    digest = sha256_text(source)
    existing = s.scalar(select(Spec.id).where(Spec.sha256 == digest))
    if existing is not None:
        return existing
    spec = Spec(name=name, path=str(path), sha256=digest, source=source)
    s.add(spec)
    s.flush()
    return spec.id
