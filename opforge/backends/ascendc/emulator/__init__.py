"""opforge's AscendC emulator: a candidate project (either form, ../project.py) compiled for the CPU
with g++ against include/ (the kernel-side model of Ascend C: cores, pipes, unified buffer, queues,
DataCopy, the vector APIs) and include/host/ (the CANN and PyTorch host shims: at::Tensor over
emulator GM, PYBIND11_MODULE, tiling data, gert::TilingContext, OpDef, EXEC_NPU_CMD).

translate.py rewrites launches; glue.py generates what CANN's build would (kernel tiling structs,
DTYPE macros, the kernel registration); build.py compiles and caches; library.py calls the bound
functions under three core schedules; errors.py holds the exceptions and their reason codes."""
from __future__ import annotations

from opforge.backends.ascendc.emulator.errors import (CODES, DeadlockError, EmuBuildError, EmulatorError, HostError,
                                                      MisalignedError, OutOfBoundsError, RaceError, UbOverflowError,
                                                      UnsupportedFeature, UseAfterFreeError)
from opforge.backends.ascendc.emulator.library import EmulatedProject, set_seed

TOOL = "opforge-ascendc-emu"
VERSION = "1.0"

__all__ = ["TOOL", "VERSION", "CODES", "EmulatorError", "EmuBuildError", "UnsupportedFeature", "DeadlockError",
           "RaceError", "HostError", "OutOfBoundsError", "UseAfterFreeError", "MisalignedError", "UbOverflowError",
           "EmulatedProject", "set_seed"]
