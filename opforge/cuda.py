"""What a CUDA candidate imports: `from opforge.cuda import load_cuda` (see
opforge/backends/cuda/runtime.py for the launcher contract)."""
from opforge.backends.cuda.runtime import CudaError, CudaUnavailable, load_cuda

__all__ = ["CudaError", "CudaUnavailable", "load_cuda"]
