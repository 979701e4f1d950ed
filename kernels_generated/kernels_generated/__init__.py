"""kernels_generated: kernels exported by opforge from its registry (26 ops). Do not edit, re-export.

Each op is `kernels_generated.<op>(*inputs)` (the spec's forward with get_init_inputs() bound), a module
class constructed like the spec's Model, and `torch.ops.kernels_generated.<op>`; see README.md and
metadata.json (versions, spec hashes, hardware, speedups)."""
from __future__ import annotations

from kernels_generated._runtime import FallbackForbidden, fallbacks, kernel_calls, load_json, stats
from kernels_generated.ops.add_mul_relu import _ExportModule as AddMulRelu, _export_op as add_mul_relu
from kernels_generated.ops.bmm import _ExportModule as Bmm, _export_op as bmm
from kernels_generated.ops.cross_entropy import _ExportModule as CrossEntropy, _export_op as cross_entropy
from kernels_generated.ops.cumsum import _ExportModule as Cumsum, _export_op as cumsum
from kernels_generated.ops.fused_add_rms_norm import _ExportModule as FusedAddRmsNorm, _export_op as fused_add_rms_norm
from kernels_generated.ops.gelu_and_mul import _ExportModule as GeluAndMul, _export_op as gelu_and_mul
from kernels_generated.ops.gelu_erf import _ExportModule as GeluErf, _export_op as gelu_erf
from kernels_generated.ops.gelu_tanh import _ExportModule as GeluTanh, _export_op as gelu_tanh
from kernels_generated.ops.gelu_tanh_and_mul import _ExportModule as GeluTanhAndMul, _export_op as gelu_tanh_and_mul
from kernels_generated.ops.layer_norm import _ExportModule as LayerNorm, _export_op as layer_norm
from kernels_generated.ops.linear_bias_gelu import _ExportModule as LinearBiasGelu, _export_op as linear_bias_gelu
from kernels_generated.ops.log_softmax import _ExportModule as LogSoftmax, _export_op as log_softmax
from kernels_generated.ops.matmul import _ExportModule as Matmul, _export_op as matmul
from kernels_generated.ops.rms_norm import _ExportModule as RmsNorm, _export_op as rms_norm
from kernels_generated.ops.rms_norm_bf16 import _ExportModule as RmsNormBf16, _export_op as rms_norm_bf16
from kernels_generated.ops.rotary_gptj import _ExportModule as RotaryGptj, _export_op as rotary_gptj
from kernels_generated.ops.rotary_neox import _ExportModule as RotaryNeox, _export_op as rotary_neox
from kernels_generated.ops.row_argmax import _ExportModule as RowArgmax, _export_op as row_argmax
from kernels_generated.ops.row_max import _ExportModule as RowMax, _export_op as row_max
from kernels_generated.ops.row_mean import _ExportModule as RowMean, _export_op as row_mean
from kernels_generated.ops.row_sum import _ExportModule as RowSum, _export_op as row_sum
from kernels_generated.ops.silu import _ExportModule as Silu, _export_op as silu
from kernels_generated.ops.silu_and_mul import _ExportModule as SiluAndMul, _export_op as silu_and_mul
from kernels_generated.ops.softmax import _ExportModule as Softmax, _export_op as softmax
from kernels_generated.ops.softplus import _ExportModule as Softplus, _export_op as softplus
from kernels_generated.ops.swiglu import _ExportModule as Swiglu, _export_op as swiglu

OPS = ("add_mul_relu", "bmm", "cross_entropy", "cumsum", "fused_add_rms_norm", "gelu_and_mul", "gelu_erf", "gelu_tanh", "gelu_tanh_and_mul", "layer_norm", "linear_bias_gelu", "log_softmax", "matmul", "rms_norm", "rms_norm_bf16", "rotary_gptj", "rotary_neox", "row_argmax", "row_max", "row_mean", "row_sum", "silu", "silu_and_mul", "softmax", "softplus", "swiglu", )
__version__ = "1.0.0+gcf6471affdad"


def metadata() -> dict:
    """Per op and version: backend, verification level and where it ran, candidate, spec sha256,
    the hardware it was verified and timed on, speedups."""
    return load_json("metadata.json")


__all__ = ["FallbackForbidden", "OPS", "fallbacks", "kernel_calls", "metadata", "stats", "add_mul_relu", "AddMulRelu", "bmm", "Bmm", "cross_entropy", "CrossEntropy", "cumsum", "Cumsum", "fused_add_rms_norm", "FusedAddRmsNorm", "gelu_and_mul", "GeluAndMul", "gelu_erf", "GeluErf", "gelu_tanh", "GeluTanh", "gelu_tanh_and_mul", "GeluTanhAndMul", "layer_norm", "LayerNorm", "linear_bias_gelu", "LinearBiasGelu", "log_softmax", "LogSoftmax", "matmul", "Matmul", "rms_norm", "RmsNorm", "rms_norm_bf16", "RmsNormBf16", "rotary_gptj", "RotaryGptj", "rotary_neox", "RotaryNeox", "row_argmax", "RowArgmax", "row_max", "RowMax", "row_mean", "RowMean", "row_sum", "RowSum", "silu", "Silu", "silu_and_mul", "SiluAndMul", "softmax", "Softmax", "softplus", "Softplus", "swiglu", "Swiglu", ]
