"""Errors of the sandbox layer (configuration only: running a job never raises)."""
from harness.errors import OpforgeError


class SandboxUnavailable(OpforgeError):
    """An explicitly requested runtime cannot be used on this machine."""
