"""The expert's AscendC emitter (opforge/backends/ascendc/emit): for every suite op the pointwise
family applies to, the generated project passes the AscendC static checks and has the shape an
AscendC engineer writes (CopyIn/Compute/CopyOut over double-buffered queues, host tiling across
the cores, a DataCopyPad tail); an op it cannot map faithfully is refused by name. Nothing here
compiles or runs AscendC: that needs CANN."""
from __future__ import annotations

import re

import pytest

from conftest import ROOT
from opforge.codegen import Unsupported, generate
from opforge.backends.ascendc.static import check_ascendc

OPS = ROOT / "ops"
POINTWISE = ["gelu_tanh", "silu", "swiglu"]  # the suite's pointwise ops the emitter maps
REFUSED = {"gelu_erf": "aten.erf.default", "softplus": "aten.log1p.default",
           "add_mul_relu": "input bias of shape [48] broadcast to [48, 48]"}


def emit(op: str, config: int = 0, source: str | None = None) -> str:
    kernel = generate(source or (OPS / f"{op}.py").read_text(), op, {}, backend="ascendc")
    assert kernel.family == "pointwise"
    return kernel.render(kernel.space[config])


@pytest.mark.parametrize("op", POINTWISE)
def test_a_generated_project_passes_the_static_checks(op):
    report = check_ascendc(emit(op))
    assert report.reasons == [] and report.warnings == [], (report.reasons, report.warnings)
    assert report.project.form == "direct" and report.kernels == [f"{op}_pointwise"]


def test_every_tuning_configuration_fits_the_unified_buffer():
    for config in range(4):
        source = emit("swiglu", config)
        assert check_ascendc(source).reasons == []
        tile = int(re.search(r"TILE_LENGTH = (\d+);", source).group(1))
        per_element = int(re.search(r"slot\(s\) = (\d+) B", source).group(1))
        assert tile % 128 == 0 and tile * per_element <= 196608, (config, tile, per_element)


def test_the_kernel_has_the_queue_pipeline_and_host_tiling():
    source = emit("silu")
    assert "constexpr int32_t BUFFER_NUM = 2;" in source
    for stage in ("CopyIn", "Compute", "CopyOut"):
        assert re.search(rf"__aicore__ inline void {stage}\(", source), stage
    assert "TQue<AscendC::QuePosition::VECIN, BUFFER_NUM>" in source
    assert "TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM>" in source
    assert "AscendC::GetBlockIdx()" in source and "GetCoreNumAiv()" in source
    assert "AscendC::DataCopyPad(" in source  # the ragged last tile
    assert "silu_pointwise<<<blockDim, nullptr, stream>>>" in source
    assert "PYBIND11_MODULE(silu_pointwise_ops, m)" in source
    assert "return silu_pointwise_ops.silu_pointwise(x.contiguous())" in source
    # sigmoid composed from vector APIs, in place on one scratch tile
    assert re.search(r"Muls\(t0, x0, -1\.0f, len\);\s+AscendC::Exp\(t0, t0, len\);", source)


@pytest.mark.parametrize("op, named", sorted(REFUSED.items()))
def test_an_op_without_a_faithful_ascendc_form_is_refused_by_name(op, named):
    with pytest.raises(Unsupported, match=re.escape(named)):
        generate((OPS / f"{op}.py").read_text(), op, {}, backend="ascendc")


MIXED = '''
import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor(2.0))
    def forward(self, x, y, alpha: float):
        a = (x - y * 3.0) / 7.0
        b = torch.clamp(a, -1.0, 2.0) * self.scale + alpha
        return (torch.tanh(b) - 2.0 / x).to(torch.float16), torch.sqrt(torch.abs(b - 2.0))
def get_inputs():
    return [torch.randn(4, 64), torch.randn(4, 64), 0.5]
def get_init_inputs():
    return []
'''


def test_scalars_half_outputs_and_two_outputs_pass_the_static_checks():
    source = emit("mixed", source=MIXED)
    assert check_ascendc(source).reasons == []
    assert "this->g0 = g0Gm.GetValue(0);" in source  # the one-element parameter, read from GM once
    assert "tiling.scalar3 = static_cast<float>(s3);" in source and "this->a3 = tiling.scalar3;" in source
    assert "AscendC::Cast(y0, " in source and "RoundMode::CAST_RINT" in source  # fp32 -> half store
    assert "AscendC::Duplicate(t0, 7.0f, len);" in source  # x / 7 divides, never multiplies by 1/7
    assert re.search(r"AscendC::Adds\(t\d, t\d, -2\.0f, len\);", source)  # b - 2.0: a negated literal
    assert not re.search(r"--\d", source)  # never a decrement where a double negation was meant
    assert "std::tuple<at::Tensor, at::Tensor>" in source


def test_a_broken_generated_project_fails_the_checks():
    """The checks read the emitter's numbers: a tile past the unified buffer is refused."""
    source = re.sub(r"TILE_LENGTH = \d+;", "TILE_LENGTH = 65536;", emit("silu"))
    assert any(r.startswith("ascendc-ub:") for r in check_ascendc(source).reasons)
