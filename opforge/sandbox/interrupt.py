"""Stopping on a signal: SIGINT (Ctrl-C) and SIGTERM become one exception in the main thread, so
every `finally` on the way out runs: a sandbox stops the job it is running (the docker runtime
removes its container, the jail and `none` kill the job's process group or its jail) and the
loop records its run as interrupted (agents/run.py). Repeated signals are ignored while the stack
unwinds: a second Ctrl-C must not cut short the cleanup that stops the job."""
from __future__ import annotations

import signal
from contextlib import contextmanager
from typing import Iterator

STOPPING = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A stopping signal arrived; `exit_code` is the shell's convention, 128 + its number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def signal_name(exc: BaseException) -> str:
    """SIGTERM or SIGINT for an interrupt (a bare KeyboardInterrupt is Python's own Ctrl-C)."""
    return signal.Signals(exc.signum).name if isinstance(exc, Interrupted) else "SIGINT"


def exit_code(exc: BaseException) -> int:
    return exc.exit_code if isinstance(exc, Interrupted) else 128 + signal.SIGINT


_fired: list[int] = []  # the stopping signal that arrived within raise_on_signals, if one did


def check() -> None:
    """Raise Interrupted again if a stopping signal arrived within raise_on_signals. Every wait for a
    job calls it: Python cannot deliver a handler's exception everywhere (in an at-fork hook, such as
    the one logging runs when Popen forks, or in a __del__, it is only printed), and such a signal
    must still stop the job."""
    if _fired:
        raise Interrupted(_fired[0])


@contextmanager
def raise_on_signals() -> Iterator[None]:
    """Within: the first SIGINT or SIGTERM raises Interrupted in the main thread, later ones are
    ignored; the previous handlers come back on the way out."""
    def handler(signum, _frame) -> None:
        if not _fired:
            _fired.append(signum)
            raise Interrupted(signum)

    before = list(_fired)
    previous = {sig: signal.signal(sig, handler) for sig in STOPPING}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
        _fired[:] = before
