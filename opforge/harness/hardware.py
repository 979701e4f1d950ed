"""What the harness runs on: a CUDA GPU when torch sees one (an Ascend NPU for the NPU backends), else
the CPU with the backend's interpreter or emulator."""
from __future__ import annotations

import platform
from dataclasses import asdict, dataclass

import torch

DEFAULT_ARCH = 90  # sm_90 (Hopper): the AOT compile target when there is no GPU to ask
# torch's device type for an NVIDIA GPU: a device, not a backend (several backends run on one).
GPU_DEVICE = "cuda"


@dataclass(frozen=True)
class Hardware:
    device: str  # GPU_DEVICE, "npu" or "cpu"
    name: str
    arch: int  # the compile target, e.g. 90 for sm_90
    fingerprint: str

    def info(self) -> dict:
        return asdict(self) | {"torch": torch.__version__, "machine": platform.machine()}


def detect(force_cpu: bool = False, accelerator: str = "GPU") -> Hardware:
    """The device a backend's kernels run on: a CUDA GPU, or for an NPU backend (Triton-Ascend,
    AscendC) an Ascend NPU that torch_npu reports; else the CPU."""
    if not force_cpu and accelerator == "NPU" and (npu := find_npu()) is not None:
        return npu
    if not force_cpu and accelerator == "GPU" and torch.cuda.is_available():
        name = torch.cuda.get_device_name(0)
        major, minor = torch.cuda.get_device_capability(0)
        arch = major * 10 + minor
        return Hardware(GPU_DEVICE, name, arch, f"{GPU_DEVICE}/{name}/sm_{arch}")
    machine = platform.machine()
    return Hardware("cpu", f"{machine} CPU", DEFAULT_ARCH, f"cpu/{machine}/triton-interpreter")


def find_npu() -> Hardware | None:
    """An Ascend NPU through torch_npu (Huawei's PyTorch adapter registers the `npu` device)."""
    import importlib.util

    if importlib.util.find_spec("torch_npu") is None:
        return None
    try:
        import torch_npu  # noqa: F401  (registers torch.npu)

        if not torch.npu.is_available():
            return None
        name = torch.npu.get_device_name(0)
    except Exception:  # a torch_npu without its CANN runtime: no NPU usable here
        return None
    return Hardware("npu", name, DEFAULT_ARCH, f"npu/{name}")
