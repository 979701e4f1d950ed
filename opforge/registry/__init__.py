"""Versioned store of op specs, candidate kernels, evaluations, promotions, runs and LLM calls (SQLite)."""

from opforge.registry.errors import RegistryError
from opforge.registry.rows import CandidateDetail, EvaluationRow, KernelRow, OpSummary, ReviewRow, RunRow, VersionRow
from opforge.registry.runs import new_run_key
from opforge.registry.store import Registry, resolve_db_path

__all__ = [
    "CandidateDetail",
    "EvaluationRow",
    "KernelRow",
    "OpSummary",
    "Registry",
    "RegistryError",
    "ReviewRow",
    "RunRow",
    "VersionRow",
    "new_run_key",
    "resolve_db_path",
]
