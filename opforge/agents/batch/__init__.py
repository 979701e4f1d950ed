"""Batch runs: the agent loop over an op list, in local worker processes or on a Ray cluster, with
skip-if-verified, resume after an interrupt, a per-op time limit and a JSON/CSV report."""
from opforge.agents.batch.plan import OpTask, plan_batch, resolve_specs
from opforge.agents.batch.report import BatchReport, default_report_path, write_report
from opforge.agents.batch.runner import BatchOptions, run_batch

__all__ = ["BatchOptions", "BatchReport", "OpTask", "default_report_path", "plan_batch", "resolve_specs",
           "run_batch", "write_report"]
