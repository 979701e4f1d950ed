"""KernelBench's `torch.utils.cpp_extension.load_inline` candidates, on a GPU with a CUDA build of
PyTorch: the extension's functions are the candidate's launches.

Installed in the worker before the candidate is imported (and before the module snapshot, so it is
not a 'patch'): `load_inline` builds as the harness's own work (its compiler processes are not the
candidate's), and each function of the module it returns goes through the CUDA runtime's observers,
so the shared LaunchLog records it and can make it a no-op, exactly like an opforge launcher."""
from __future__ import annotations

import os
import sys
import tempfile
from typing import Any


class InlineModule:
    """The module load_inline built, whose callables report to the launch observers."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._module, name)
        if not callable(value) or name.startswith("_"):
            return value
        from opforge.backends.cuda import runtime

        def launch(*args, **kwargs):
            call = lambda: value(*args, **kwargs)  # noqa: E731
            return runtime.OBSERVERS[-1].cuda_launch(name, args, call) if runtime.OBSERVERS else call()

        launch.__name__ = name
        return launch


def install() -> None:
    """Wrap torch.utils.cpp_extension.load_inline for this worker process."""
    import torch.utils.cpp_extension as cpp_extension

    from opforge.harness import guards
    from opforge.backends.cuda import toolchain

    found = toolchain.find_nvcc()
    if found is not None:
        os.environ.setdefault("CUDA_HOME", found.home)
    os.environ.setdefault("TORCH_EXTENSIONS_DIR", os.path.join(tempfile.gettempdir(), "torch_extensions"))
    original = cpp_extension.load_inline

    def load_inline(*args, **kwargs):
        guards.ACCUSED.launch_frames.append(sys._getframe())
        try:
            return InlineModule(original(*args, **kwargs))
        finally:
            guards.ACCUSED.launch_frames.pop()

    cpp_extension.load_inline = load_inline
