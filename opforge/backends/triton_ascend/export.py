"""Triton-Ascend kernels in the exported library: the candidate verbatim, always in a module of its
own, `<op>__npu`, which the package's runtime imports only where triton-ascend's `triton` is the
importable one (never next to NVIDIA's Triton), so it never carries the op's entry points."""
from __future__ import annotations

from opforge.exporter.hooks import ExportHooks

# What configs/<op>.json keeps of each built kernel: the front end reports these, not a GPU's metrics.
LAUNCH_KEYS = ("kernel", "target", "mix_mode", "constexprs")


def arch_key(fingerprint: str) -> str:
    """Always "npu", wherever the kernel was verified (triton-ascend's interpreter or an NPU): its only
    target is an Ascend NPU (as a CUDA kernel's is a CUDA GPU), so the runtime runs it on an NPU only."""
    return "npu"


HOOKS = ExportHooks(cpu_runner="triton-ascend interpreter", own_module=True, launch_keys=LAUNCH_KEYS,
                    arch=arch_key, module_note=", imported only under triton-ascend")
