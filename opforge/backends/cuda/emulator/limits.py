"""The launch-resource model's Python side: ptxas's per-kernel numbers (backends/cuda/nvcc.py) and
the target's per-block limits (backends/triton/resources.py's table) loaded into an emulated
library, whose launches then fail as the GPU's would (include/emu_limits.h): registers x threads
over 64K, static + dynamic shared memory over the opt-in, more threads than __launch_bounds__, a
recursion deeper than cudaLimitStackSize allows. What a launch refused is kept as a finding
(`out-of-resources: ...`), so a forward that catches the error is still judged by it.

In a verification's run job the CUDA plugin installs a provider (`install`): every library the
candidate loads gets the numbers of its source's sm_<arch> compile (a cache hit after the build
job). Without nvcc there are none: launches are checked for shape, heap and shared memory against
the launch only, and the verdict's warnings say that registers, static shared memory,
__launch_bounds__ and stack frames were not checked.
"""
from __future__ import annotations

import ctypes
from typing import Callable

from opforge.backends.triton.resources import KB, REGISTER_UNIT, limits

SMEM_DEFAULT = 48 * KB  # dynamic + static above this needs cudaFuncSetAttribute's opt-in
CODE = "out-of-resources"
UNCHECKED = ("launch resources not checked: no nvcc here, so no ptxas numbers (registers x threads, "
             "static shared memory, __launch_bounds__, stack frames) to hold the launches against")

_provider: Callable[[str], dict | None] | None = None
FINDINGS: list[str] = []


def install(provider: Callable[[str], dict | None] | None) -> None:
    """Set what EmulatedLibrary.build asks for a source's compile report (None: nothing loaded)."""
    global _provider
    _provider = provider


def apply(library) -> None:
    """Load the installed provider's numbers for `library`'s source, if there is a provider."""
    if _provider is not None and (report := _provider(library.source)) is not None:
        load(library, report)


def load(library, report: dict) -> None:
    """Load a compile report (nvcc.compile_cubin's: arch, kernels, functions) into the library."""
    arch = int(str(report.get("arch", "sm_90")).removeprefix("sm_"))
    limit = limits(arch) or limits(90)
    lib = library._lib
    lib.opforge_emu_set_arch.argtypes = [ctypes.c_int, *[ctypes.c_long] * 4]
    lib.opforge_emu_set_kernel.argtypes = [ctypes.c_char_p, *[ctypes.c_int] * 4]
    lib.opforge_emu_set_frame.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.opforge_emu_set_arch(limit.arch, limit.registers_per_block, REGISTER_UNIT, limit.shared_bytes, SMEM_DEFAULT)
    for k in report.get("kernels") or []:
        lib.opforge_emu_set_kernel(str(k["kernel"]).encode(), k.get("registers") or 0, k.get("shared_bytes") or 0,
                                   k.get("max_threads") or 0, k.get("stack_bytes") or 0)
    for f in report.get("functions") or []:
        if f.get("stack_bytes"):
            lib.opforge_emu_set_frame(str(f["name"]).encode(), int(f["stack_bytes"]))


def noted(error: Exception) -> Exception:
    """An emulator error, kept as a finding when it is a launch the resources refused."""
    if str(error).startswith(CODE + ":"):
        FINDINGS.append(str(error))
    return error


def findings() -> dict:
    """The CUDA plugin's call_findings: what the launches since the last call were refused for."""
    found = list(dict.fromkeys(FINDINGS))[:4]
    FINDINGS.clear()
    return {"memory": found} if found else {}
