"""Errors of the sandbox layer (configuration only: running a job never raises). A root of their
own: the sandbox imports nothing of the workbench above it, whose entry points catch SandboxError
beside their own errors."""


class SandboxError(Exception):
    """Base of every error the sandbox layer raises."""


class SandboxUnavailable(SandboxError):
    """An explicitly requested runtime cannot be used on this machine."""
