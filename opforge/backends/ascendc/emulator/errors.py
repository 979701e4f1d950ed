"""The AscendC emulator's errors: every message is one line that starts with its reason code
("deadlock: DeQue in kernel add_custom, core 3 of 8 (kernel_src:57): ..."). The codes mirror
include/asc_core.h's `enum Code`; BY_CODE maps each to its exception class."""
from __future__ import annotations


class EmulatorError(RuntimeError):
    """The candidate's project did something the emulator reports (also the base of the others)."""

    code = "emulator"


class EmuBuildError(EmulatorError):
    """g++ rejected the project: "emu-build: kernel_src:12: error: ... | <the line>"."""

    code = "emu-build"


class UnsupportedFeature(EmulatorError):
    """An AscendC or CANN API the emulator does not model: the level stays `static`, naming it."""

    code = "unsupported"


class OutOfBoundsError(EmulatorError):
    code = "out-of-bounds"


class RaceError(EmulatorError):
    """Two pipes or two cores touching the same bytes unordered, or schedules that disagree bitwise."""

    code = "race"


class UseAfterFreeError(EmulatorError):
    code = "use-after-free"


class DeadlockError(EmulatorError):
    """A DeQue on an empty queue, an AllocTensor past the buffer count, a WaitFlag never set."""

    code = "deadlock"


class MisalignedError(EmulatorError):
    code = "misaligned"


class UbOverflowError(EmulatorError):
    code = "ub-overflow"


class BadArgumentError(EmulatorError):
    code = "bad-argument"


class StepLimitError(EmulatorError):
    code = "step-limit"


class HostError(EmulatorError):
    """The host side failed: a TORCH_CHECK, a TilingFunc, EXEC_NPU_CMD's checks against the OpDef."""

    code = "host-error"


class CrashError(EmulatorError):
    """A signal in the kernel or host code (an integer division by zero, a wild pointer): the call stopped."""

    code = "crash"


# include/asc_core.h: E_OOB=1 E_RACE=2 E_UAF=3 E_DEADLOCK=4 E_ALIGN=5 E_UB=6 E_UNSUPPORTED=7 E_BADARG=8
# E_LIMIT=9 E_HOST=10; include/host/opforge_host/entry.h: E_CRASH=11
BY_CODE = {1: OutOfBoundsError, 2: RaceError, 3: UseAfterFreeError, 4: DeadlockError, 5: MisalignedError,
           6: UbOverflowError, 7: UnsupportedFeature, 8: BadArgumentError, 9: StepLimitError, 10: HostError,
           11: CrashError}
CODES = tuple(cls.code for cls in BY_CODE.values())


def from_code(code: int, message: str) -> EmulatorError:
    cls = BY_CODE.get(code, EmulatorError)
    return cls(f"{cls.code}: {message}")
