"""What the interpreted run may launch: only what Ascend could (worker side, CPU run).

The interpreter runs anything Python can, so two rules of the NPU are enforced at each launch of
the CPU run, or the run would vouch for kernels the NPU refuses:

- a launch has at most 65535 programs (`guard_grid`: checked where the interpreter resolves the
  grid, so a callable grid, a variant's shape and a run-only launch are all counted);
- a load or store touches only the memory of the launch's tensor arguments, and no two programs
  race (backends/triton/memory.py, shared with NVIDIA Triton): the interpreter reads whatever host
  memory an unmasked pointer lands on and writes it too, where the NPU reads other tensors' global
  memory or faults;
- every launch was frontend-compiled (backends/triton/launch_keys.py, shared with NVIDIA Triton):
  a candidate can tell the build's no-op'd forwards from the interpreted run, so it could compile
  a kernel that fits the unified buffer and run one that does not.
"""
from __future__ import annotations

from typing import Any

from opforge.backends.triton import launch_keys
from opforge.backends.triton_ascend import toolchain

class AscendLaunchError(RuntimeError):
    """A launch the NPU could not run as checked: raised in the candidate's forward."""


def key_of_recorded(launch: Any) -> str | None:
    """The key of one build-job launch (as aot.signature_of unwraps it: an autotuner's first config),
    None when it does not bind."""
    from opforge.backends.triton import aot

    try:
        fn, kwargs = aot.unwrap(launch.kernel, launch.kwargs, launch.args)
    except Exception:
        return None
    return launch_keys.key_of(fn, launch.args, kwargs)


def guard_grid() -> None:
    """Refuse, as the NPU's launch would, a grid of more programs than one launch may have."""
    from triton.runtime import interpreter

    builder = type(interpreter.interpreter_builder)
    original = builder.set_grid_dim

    def set_grid_dim(self, nx, ny, nz):
        if nx * ny * nz > toolchain.MAX_PROGRAMS:
            raise AscendLaunchError(f"grid-too-large: a launch of {nx * ny * nz} programs ({nx}, {ny}, {nz}); "
                                    f"{toolchain.GRID_LIMIT}")
        return original(self, nx, ny, nz)

    builder.set_grid_dim = set_grid_dim
