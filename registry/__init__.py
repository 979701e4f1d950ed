"""Versioned store of op specs, candidate kernels, evaluations and promotions (SQLite)."""

from registry.errors import RegistryError
from registry.rows import CandidateDetail, EvaluationRow, KernelRow, VersionRow
from registry.store import Registry, resolve_db_path

__all__ = [
    "CandidateDetail",
    "EvaluationRow",
    "KernelRow",
    "Registry",
    "RegistryError",
    "VersionRow",
    "resolve_db_path",
]
