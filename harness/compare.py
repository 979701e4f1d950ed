"""Comparing a candidate's outputs with the reference: shape, then dtype, then NaN/Inf parity,
then values, each failure named with its numbers (`max abs err 3.1e-2 at [17, 430] (atol 1e-4)`).

The absolute tolerance scales with the reference's magnitude (its RMS), so a kernel returning zeros
cannot hide under a fixed atol when the true values are small (a softmax over 16k columns is ~6e-5).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

# Per-dtype defaults in one place: (atol, rtol). fp32 is tight enough that TF32 matmuls and fp16
# round-trips fail; half types allow ~2 ulps of their mantissa.
TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1e-4, 1e-4),
    torch.float16: (2e-3, 2e-3),
    torch.bfloat16: (1.6e-2, 1.6e-2),
}
EXACT = (0.0, 0.0)


def tolerance(dtype: torch.dtype, atol: float | None = None, rtol: float | None = None) -> tuple[float, float]:
    """The spec's explicit tolerance wins; otherwise the table; integers and bools compare exactly."""
    default = TOLERANCES.get(dtype, EXACT)
    return (default[0] if atol is None else atol, default[1] if rtol is None else rtol)


@dataclass
class OutputReport:
    """How one output compared; `problem` is None when it matched."""

    index: int
    shape: list[int]
    dtype: str
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    atol: float = 0.0
    rtol: float = 0.0
    problem: str | None = None
    tags: list[str] = field(default_factory=list)


def _index(flat: int, shape: torch.Size) -> list[int]:
    idx = []
    for size in reversed(shape):
        idx.append(flat % size if size else 0)
        flat = flat // size if size else 0
    return list(reversed(idx))


def _parity(ref: torch.Tensor, out: torch.Tensor) -> str | None:
    if bool(torch.isfinite(ref).all()) and bool(torch.isfinite(out).all()):
        return None
    for name, test in (("NaN", torch.isnan), ("+Inf", lambda t: torch.isposinf(t)), ("-Inf", torch.isneginf)):
        r, o = test(ref), test(out)
        if not torch.equal(r, o):
            where = (r != o).nonzero()[0].tolist()
            return f"{name} mismatch at {where}: reference {'has' if r[tuple(where)] else 'lacks'} {name}"
    return None


def compare_tensor(index: int, ref: torch.Tensor, out: object, atol: float | None, rtol: float | None) -> OutputReport:
    report = OutputReport(index=index, shape=list(ref.shape), dtype=str(ref.dtype).removeprefix("torch."))
    if not isinstance(out, torch.Tensor):
        report.problem = f"output {index}: expected a tensor, got {type(out).__name__}"
        return report
    if out.shape != ref.shape:
        report.problem = f"output {index}: shape {list(out.shape)} != reference {list(ref.shape)}"
        return report
    if out.dtype != ref.dtype:
        report.problem = f"output {index}: dtype {out.dtype} != reference {ref.dtype}"
        return report
    report.atol, report.rtol = tolerance(ref.dtype, atol, rtol)
    ref_c, out_c = ref.detach().cpu(), out.detach().cpu()
    if ref.is_floating_point() or ref.is_complex():
        report.problem = _parity(ref_c, out_c)
        if report.problem:
            report.problem = f"output {index}: {report.problem}"
            return report
    return _compare_values(report, ref_c, out_c)


def _compare_values(report: OutputReport, ref: torch.Tensor, out: torch.Tensor) -> OutputReport:
    if ref.numel() == 0:
        return report
    ref64, out64 = ref.to(torch.float64), out.to(torch.float64)
    finite = torch.isfinite(ref64) & torch.isfinite(out64)
    ref64 = torch.where(finite, ref64, 0.0)
    out64 = torch.where(finite, out64, 0.0)
    scale = ref64.square().mean().sqrt().item() if ref.is_floating_point() else 1.0
    atol_eff = report.atol * max(scale, torch.finfo(torch.float32).tiny)
    diff = (out64 - ref64).abs()
    report.max_abs_err = diff.max().item()
    report.max_rel_err = (diff / ref64.abs().clamp_min(1e-12)).max().item()
    bad = diff > atol_eff + report.rtol * ref64.abs()
    if bool(bad.any()):
        where = _index(int(torch.argmax(diff * bad).item()), ref.shape)
        at = tuple(where)
        report.problem = (
            f"output {report.index}: max abs err {report.max_abs_err:.3g} at {where} "
            f"(got {out[at].item():.6g}, expected {ref[at].item():.6g}; "
            f"atol {atol_eff:.3g} = {report.atol:g} x rms {scale:.3g}, rtol {report.rtol:g}); "
            f"{int(bad.sum())} of {ref.numel()} elements differ"
        )
    return report


def flatten_outputs(value: object) -> list:
    """A model may return a tensor, a tuple/list of tensors, or a Python scalar."""
    if isinstance(value, (tuple, list)):
        return [v for item in value for v in flatten_outputs(item)]
    if isinstance(value, (int, float, bool)):
        return [torch.tensor(value)]
    return [value]


def compare_outputs(ref: object, out: object, atol: float | None, rtol: float | None) -> list[OutputReport]:
    refs, outs = flatten_outputs(ref), flatten_outputs(out)
    if len(refs) != len(outs):
        report = OutputReport(index=0, shape=[], dtype="")
        report.problem = f"returned {len(outs)} outputs, reference returns {len(refs)}"
        return [report]
    return [compare_tensor(i, r, o, atol, rtol) for i, (r, o) in enumerate(zip(refs, outs))]
