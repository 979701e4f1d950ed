"""vLLM IR providers from this package's ops (copied verbatim into every exported package as
<package>/_vllm_ir.py; <package>._vllm.install() calls register()). The ops implementing
vllm:rms_norm / vllm:fused_add_rms_norm become the provider "<package>" of vllm.ir.ops.rms_norm /
fused_add_rms_norm, used only when chosen:
  LLM(..., ir_op_priority={"rms_norm": ["<package>"], "fused_add_rms_norm": ["<package>"]})
vLLM appends "native", which takes every call the provider declines (supports_args: weight None,
variance_size, an eps or dtypes not verified). The signatures are vLLM's own (checked by vLLM
against its native implementation: keep them without `from __future__ import annotations`)."""
import importlib

import torch

PACKAGE = __name__.rpartition(".")[0]


def adapter():
    """The package's _vllm module (eps and dtype choice, the op call), imported when first used."""
    return importlib.import_module(f"{PACKAGE}._vllm")


def register(found: dict, notes: list) -> list:
    """Register the ops of vllm:rms_norm / vllm:fused_add_rms_norm (found: {key: [Entry]}) as this
    package's provider of vllm.ir.ops.rms_norm / fused_add_rms_norm where this vLLM has them; the
    names of those registered (a problem is a note)."""
    try:
        from vllm import ir
    except ImportError:
        return []
    done = []
    for name, key in (("rms_norm", "vllm:rms_norm"), ("fused_add_rms_norm", "vllm:fused_add_rms_norm")):
        op = getattr(ir.ops, name, None)
        if not found.get(key) or op is None or PACKAGE in op.impls:
            continue
        try:
            IR_IMPLS[name](op, found[key], key)
        except (ValueError, TypeError) as exc:  # this vLLM's IR signature is not the one written here
            notes.append(f"vllm.ir.ops.{name}: not registered ({exc})")
            continue
        done.append(name)
    return done


def _ir_entry(entries, key, x, residual, weight, epsilon, variance_size):
    if weight is None or variance_size is not None:
        return None
    fit, _ = adapter().eps_problem(entries, epsilon, key)
    flat = (x.reshape(-1, x.shape[-1]).contiguous(),) + (
        () if residual is None else (residual.reshape(-1, x.shape[-1]).contiguous(),))
    return adapter().pick(fit, flat + (weight,), key)[0]


def _ir_rms_norm(op, entries, key):
    def supports(x, weight, epsilon, variance_size=None):
        return _ir_entry(entries, key, x, None, weight, epsilon, variance_size) is not None

    @op.register_impl(PACKAGE, supports_args=supports)
    def impl(x: torch.Tensor, weight: torch.Tensor | None, epsilon: float,
             variance_size: int | None = None) -> torch.Tensor:
        entry = _ir_entry(entries, key, x, None, weight, epsilon, variance_size)
        return adapter().call(entry, x.reshape(-1, x.shape[-1]).contiguous(), weight).view(x.shape)


def _ir_fused_add(op, entries, key):
    def supports(x, x_residual, weight, epsilon, variance_size=None):
        return _ir_entry(entries, key, x, x_residual, weight, epsilon, variance_size) is not None

    @op.register_impl(PACKAGE, supports_args=supports)
    def impl(x: torch.Tensor, x_residual: torch.Tensor, weight: torch.Tensor | None, epsilon: float,
             variance_size: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        entry = _ir_entry(entries, key, x, x_residual, weight, epsilon, variance_size)
        h = x.shape[-1]
        out, res = adapter().call(entry, x.reshape(-1, h).contiguous(), x_residual.reshape(-1, h).contiguous(), weight)
        return out.view(x.shape), res.view(x_residual.shape)


IR_IMPLS = {"rms_norm": _ir_rms_norm, "fused_add_rms_norm": _ir_fused_add}
