"""What the harness runs on: a CUDA GPU when torch sees one, else the CPU with Triton's interpreter."""
from __future__ import annotations

import platform
from dataclasses import asdict, dataclass

import torch

DEFAULT_ARCH = 90  # sm_90 (Hopper): the AOT compile target when there is no GPU to ask


@dataclass(frozen=True)
class Hardware:
    device: str  # "cuda" or "cpu"
    name: str
    arch: int  # the compile target, e.g. 90 for sm_90
    fingerprint: str

    def info(self) -> dict:
        return asdict(self) | {"torch": torch.__version__, "machine": platform.machine()}


def detect(force_cpu: bool = False) -> Hardware:
    if not force_cpu and torch.cuda.is_available():
        name = torch.cuda.get_device_name(0)
        major, minor = torch.cuda.get_device_capability(0)
        arch = major * 10 + minor
        return Hardware("cuda", name, arch, f"cuda/{name}/sm_{arch}")
    machine = platform.machine()
    return Hardware("cpu", f"{machine} CPU", DEFAULT_ARCH, f"cpu/{machine}/triton-interpreter")
