"""Isolation runtimes that run one evaluation job on candidate code. See sandbox/base.py."""
from sandbox.base import Job, JobResult, Sandbox, get_sandbox

__all__ = ["Job", "JobResult", "Sandbox", "get_sandbox"]
