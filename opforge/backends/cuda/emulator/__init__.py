"""opforge's strict CUDA emulator: CUDA_SRC compiled for the host with g++ against the emulator's
header (include/), one fiber per CUDA thread, blocks one at a time, every launcher call run under
several thread and block schedules on guarded copies of its buffers.

translate.py rewrites launches and dynamic shared memory; build.py compiles and caches; library.py
runs a launcher and compares the schedules; buffers.py holds the guarded copies; statics.py finds the
variables of static storage the translator registers and state.py checks what a call leaves in them
(StatefulError); features.py names what cannot be emulated; errors.py the exceptions."""
from __future__ import annotations

from opforge.backends.cuda.emulator.errors import (DeadlockError, EmuBuildError, EmulatorError,
                                                           OutOfBoundsError, RaceError, StepLimitError,
                                                           UnsupportedFeature)
from opforge.backends.cuda.emulator.features import unsupported_features
from opforge.backends.cuda.emulator.library import EmulatedLibrary
from opforge.backends.cuda.emulator.state import StatefulError

TOOL = "opforge-cuda-emu"
VERSION = "1.0"

__all__ = ["TOOL", "VERSION", "EmulatorError", "EmuBuildError", "UnsupportedFeature", "DeadlockError",
           "RaceError", "OutOfBoundsError", "StepLimitError", "StatefulError", "unsupported_features",
           "EmulatedLibrary"]
