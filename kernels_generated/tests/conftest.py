"""Without a GPU, Triton runs the kernels under its interpreter, which must be switched on before
Triton is first imported; fallbacks are errors unless a test allows them."""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.setdefault("KERNELS_GENERATED_NO_FALLBACK", "1")
