"""The emulator's errors: every message is one line that starts with a code ("deadlock: ...")."""
from __future__ import annotations


class EmulatorError(RuntimeError):
    """The candidate's CUDA did something the emulator reports (also the base of the others)."""


class EmuBuildError(EmulatorError):
    """g++ rejected the translated source: "emu-build: line 7: error: ... | 7 | <the line>"."""


class UnsupportedFeature(EmulatorError):
    """A construct the emulator cannot run: "unsupported: inline asm (line 12) cannot be emulated"."""


class DeadlockError(EmulatorError):
    """A barrier or warp collective that no thread can pass."""


class RaceError(EmulatorError):
    """Two threads' accesses to the same bytes with no happens-before (the memory model's race
    detector), or two thread schedules that gave bitwise different results."""


class OutOfBoundsError(EmulatorError):
    """A write into the guard zone around a buffer (or past the dynamic shared memory)."""


class MisalignedError(EmulatorError):
    """An access of an aligned type (float4, double...) at an address its size does not divide."""


class StepLimitError(EmulatorError):
    """A launch ran past its CPU-time limit (an endless loop)."""


# The runtime's error codes (emu_sched.h: enum Code) to the exception raised for them.
BY_CODE = {1: DeadlockError, 2: StepLimitError, 3: EmulatorError, 4: EmulatorError, 5: EmulatorError,
           6: EmulatorError, 7: OutOfBoundsError, 8: EmulatorError, 9: RaceError, 10: MisalignedError}
