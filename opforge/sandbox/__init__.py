"""Isolation runtimes that run one evaluation job on candidate code: docker, jail, none."""
from opforge.sandbox.base import Job, JobResult, Sandbox
from opforge.sandbox.select import RUNTIMES, get_sandbox

__all__ = ["Job", "JobResult", "RUNTIMES", "Sandbox", "get_sandbox"]
