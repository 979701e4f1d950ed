"""Domain errors of the harness. The CLI turns each into one clear line and exit code 2."""


class OpforgeError(Exception):
    """Base of every error a user can cause (bad input, missing toolchain)."""


class SpecError(OpforgeError):
    """The op spec cannot be loaded or used (missing file, no Model, bad get_inputs...)."""


class CandidateError(OpforgeError):
    """The candidate file cannot be read at all (missing, not UTF-8). Bad code in it is a verdict, not this."""


class BackendUnavailable(OpforgeError):
    """An explicitly requested backend is not available on this machine."""
