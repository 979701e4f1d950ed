"""`load_cuda(CUDA_SRC)`: how a CUDA candidate (and an exported CUDA op) calls its kernels.

A candidate's `CUDA_SRC` holds `__global__` kernels and `extern "C"` launchers
(`void name(<pointers and scalars>, cudaStream_t stream)`); `load_cuda` returns a library whose
attributes are those launchers. A call takes contiguous tensors for the pointer parameters (of the
pointee's dtype) and Python numbers for the scalars; the stream is supplied here. Where the tensors
live decides where the kernels run:

- CUDA tensors: the source is built once per architecture with nvcc into a shared library
  (toolchain.build_shared, cached by source hash; an exported wheel may carry it prebuilt), loaded with ctypes and called on the current
  stream; each call checks the launch error the CUDA runtime reports.
- CPU tensors: opforge's CUDA emulator runs the same source on the CPU under several thread
  schedules (backends/cuda/emulator). An exported op library does not carry the emulator:
  there a CPU call raises CudaUnavailable, which the op library turns into its reference fallback.

Every launcher call is shown to the active observers first (the harness's LaunchLog, while a
candidate is on trial): the launch is recorded like a Triton launch, and the observer may turn it
into a no-op. This file imports only the standard library, torch and its two siblings, so an
exported library can carry it verbatim.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import threading

import torch

from opforge.backends.cuda import signature, toolchain

# Libraries an exported wheel was built with (`<sha256 of the source>-sm_<arch>.so`); none in opforge.
PREBUILT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "prebuilt")
OBSERVERS: list = []  # objects with .cuda_launch(name, args, call) -> result; the innermost is last
LOADED: list["CudaLibrary"] = []  # every library this process loaded (the build job compiles them)

_SCALARS = {"float32": ctypes.c_float, "float64": ctypes.c_double, "int8": ctypes.c_int8,
            "uint8": ctypes.c_uint8, "int16": ctypes.c_int16, "int32": ctypes.c_int32,
            "int64": ctypes.c_int64, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
            "bool": ctypes.c_bool}


class CudaError(RuntimeError):
    """A launch failed (bad arguments, a CUDA error the runtime reported)."""


class CudaUnavailable(CudaError):
    """These tensors' device cannot run CUDA kernels here (a CPU without the emulator)."""


def load_cuda(source: str, name: str | None = None) -> "CudaLibrary":
    """The launchers of `source`, callable with tensors on a GPU (or on a CPU, emulated)."""
    return CudaLibrary(source, name)


class CudaLibrary:
    def __init__(self, source: str, name: str | None = None) -> None:
        if not isinstance(source, str):
            raise TypeError(f"load_cuda takes the CUDA source as a string, not {type(source).__name__}")
        self.source, self.name = source, name or "cuda"
        self.sha256 = hashlib.sha256(source.encode()).hexdigest()
        self.launchers = signature.parse_launchers(source)
        if not self.launchers:
            raise CudaError(f"{self.name}: the CUDA source defines no extern \"C\" launcher")
        self._device_libs: dict[int, ctypes.CDLL] = {}
        self._emulated = None
        self._lock = threading.Lock()
        LOADED.append(self)

    def __getattr__(self, attr: str) -> "Launcher":
        launchers = self.__dict__.get("launchers") or {}
        if attr in launchers:
            return Launcher(self, launchers[attr])
        raise AttributeError(f"{self.__dict__.get('name', 'cuda')}: no extern \"C\" launcher named {attr!r} "
                             f"(it has: {', '.join(sorted(launchers)) or 'none'})")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.launchers))

    # -- where the kernels run --------------------------------------------------------------------
    def device_function(self, launcher: signature.Launcher, device: torch.device):
        index = device.index if device.index is not None else torch.cuda.current_device()
        with self._lock:
            lib = self._device_libs.get(index)
            if lib is None:
                major, minor = torch.cuda.get_device_capability(index)
                prebuilt = os.path.join(PREBUILT_DIR, f"{self.sha256}-sm_{major}{minor}.so")
                try:
                    lib = ctypes.CDLL(prebuilt if os.path.isfile(prebuilt)
                                      else toolchain.build_shared(self.source, major * 10 + minor))
                except toolchain.ToolchainError as exc:
                    raise CudaError(f"{self.name}: cannot build for sm_{major}{minor}: {exc}") from None
                lib.opforge_cuda_last_error.argtypes = [ctypes.c_char_p, ctypes.c_int]
                lib.opforge_cuda_last_error.restype = ctypes.c_int
                self._device_libs[index] = lib
        fn = getattr(lib, launcher.name)
        fn.restype = None
        fn.argtypes = [ctypes.c_void_p if p.kind in ("pointer", "stream") else _SCALARS[p.ctype]
                       for p in launcher.params]
        return lib, fn

    def emulator(self):
        with self._lock:
            if self._emulated is None:
                try:
                    from opforge.backends.cuda.emulator import EmulatedLibrary
                except ImportError:
                    raise CudaUnavailable(f"{self.name}: CPU tensors, and CUDA kernels need a CUDA GPU "
                                          "here (this build carries no CUDA emulator)") from None
                self._emulated = EmulatedLibrary.build(self.source)
        return self._emulated


class Launcher:
    """One extern "C" launcher of a CudaLibrary, called like a function."""

    def __init__(self, library: CudaLibrary, launcher: signature.Launcher) -> None:
        self.library, self.launcher, self.__name__ = library, launcher, launcher.name

    def __call__(self, *args):
        device = self._check(args)
        if device.type == "cuda":
            call = lambda: self._on_device(args, device)  # noqa: E731
        elif device.type == "cpu":
            call = lambda: self.library.emulator().call(self.launcher.name, list(args))  # noqa: E731
        else:
            raise CudaUnavailable(f"{self.__name__}: tensors on {device}, and CUDA kernels run on a CUDA GPU")
        if OBSERVERS:
            return OBSERVERS[-1].cuda_launch(self.__name__, args, call)
        return call()

    def _check(self, args: tuple) -> torch.device:
        params = [p for p in self.launcher.params if p.kind != "stream"]
        if len(args) != len(params):
            raise CudaError(f"{self.__name__} takes {len(params)} arguments "
                            f"({', '.join(p.name for p in params)}; the stream is supplied), got {len(args)}")
        devices = set()
        for position, (param, value) in enumerate(zip(params, args), 1):
            if param.kind == "pointer":
                devices.add(_tensor_device(self.__name__, position, param, value))
            elif isinstance(value, torch.Tensor) or not isinstance(value, (int, float, bool)):
                raise CudaError(f"{self.__name__}: argument {position} ({param.name}) is a {param.ctype} scalar; "
                                f"pass a Python number, not {type(value).__name__}")
        if len(devices) > 1:
            raise CudaError(f"{self.__name__}: tensors on several devices ({', '.join(sorted(map(str, devices)))})")
        return devices.pop() if devices else torch.device("cpu")

    def _on_device(self, args: tuple, device: torch.device) -> None:
        lib, fn = self.library.device_function(self.launcher, device)
        with torch.cuda.device(device):
            stream = torch.cuda.current_stream().cuda_stream
            values = [a.data_ptr() if isinstance(a, torch.Tensor) else a for a in args]
            fn(*values, ctypes.c_void_p(stream))
            buf = ctypes.create_string_buffer(256)
            if lib.opforge_cuda_last_error(buf, len(buf)):
                raise CudaError(f"{self.__name__}: CUDA error: {buf.value.decode(errors='replace')}")


def _tensor_device(launcher: str, position: int, param: signature.Param, value) -> torch.device:
    if not isinstance(value, torch.Tensor):
        raise CudaError(f"{launcher}: argument {position} ({param.name}) is a {param.ctype} pointer; "
                        f"pass a tensor, not {type(value).__name__}")
    want = getattr(torch, signature.TORCH_DTYPES[param.ctype])
    if value.dtype != want:
        raise CudaError(f"{launcher}: argument {position} ({param.name}) is {str(value.dtype)[6:]}, "
                        f"but the launcher takes {param.ctype}*")
    if not value.is_contiguous():
        raise CudaError(f"{launcher}: argument {position} ({param.name}) is not contiguous (call .contiguous())")
    return value.device
