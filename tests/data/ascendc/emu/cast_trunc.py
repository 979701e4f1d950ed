"""float -> half -> float (direct form): the down-cast truncates (CAST_TRUNC) instead of rounding to nearest
even, up to one half ulp off. Expected: exit 1, `mismatch`. Control: cast_ok.py."""
import torch

ASCENDC_SOURCES = {
    "cast_tiling.h": r"""
#ifndef CAST_TILING_H
#define CAST_TILING_H
#include <cstdint>
struct CastTilingData {
    uint32_t totalLength;
};
#endif
""",
    "cast_kernel.cpp": r"""
#include "kernel_operator.h"
#include "cast_tiling.h"

constexpr int32_t BUFFER_NUM = 2;
constexpr uint32_t TILE_LENGTH = 1024;

class KernelCastRoundTrip {
public:
    __aicore__ inline KernelCastRoundTrip() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR z, uint32_t totalLength)
    {
        this->blockLength = totalLength / AscendC::GetBlockNum();
        this->tileNum = this->blockLength / TILE_LENGTH;
        xGm.SetGlobalBuffer((__gm__ float *)x + this->blockLength * AscendC::GetBlockIdx(), this->blockLength);
        zGm.SetGlobalBuffer((__gm__ float *)z + this->blockLength * AscendC::GetBlockIdx(), this->blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, TILE_LENGTH * sizeof(float));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, TILE_LENGTH * sizeof(float));
        pipe.InitBuffer(halfBuf, TILE_LENGTH * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < this->tileNum; i++) {
            AscendC::LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
            AscendC::DataCopy(xLocal, xGm[i * TILE_LENGTH], TILE_LENGTH);
            inQueueX.EnQue(xLocal);
            xLocal = inQueueX.DeQue<float>();
            AscendC::LocalTensor<half> hLocal = halfBuf.Get<half>();
            AscendC::LocalTensor<float> zLocal = outQueueZ.AllocTensor<float>();
            AscendC::Cast(hLocal, xLocal, AscendC::RoundMode::CAST_TRUNC, TILE_LENGTH);
            AscendC::Cast(zLocal, hLocal, AscendC::RoundMode::CAST_NONE, TILE_LENGTH);
            outQueueZ.EnQue<float>(zLocal);
            inQueueX.FreeTensor(xLocal);
            zLocal = outQueueZ.DeQue<float>();
            AscendC::DataCopy(zGm[i * TILE_LENGTH], zLocal, TILE_LENGTH);
            outQueueZ.FreeTensor(zLocal);
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
    AscendC::TBuf<AscendC::TPosition::VECCALC> halfBuf;
    AscendC::GlobalTensor<float> xGm;
    AscendC::GlobalTensor<float> zGm;
    uint32_t blockLength;
    uint32_t tileNum;
};

extern "C" __global__ __aicore__ void cast_round_trip(GM_ADDR x, GM_ADDR z, CastTilingData tiling)
{
    KernelCastRoundTrip op;
    op.Init(x, z, tiling.totalLength);
    op.Process();
}

void cast_round_trip_launch(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *z, CastTilingData tiling)
{
    cast_round_trip<<<blockDim, nullptr, stream>>>(x, z, tiling);
}
""",
    "cast_host.cpp": r"""
#include <torch/extension.h>
#include "torch_npu/csrc/core/npu/NPUStream.h"
#include "cast_tiling.h"

void cast_round_trip_launch(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *z, CastTilingData tiling);

constexpr uint32_t BLOCK_DIM = 8;

at::Tensor cast_round_trip_npu(const at::Tensor &x)
{
    at::Tensor z = at::empty_like(x);
    CastTilingData tiling;
    tiling.totalLength = static_cast<uint32_t>(x.numel());
    auto stream = c10_npu::getCurrentNPUStream().stream(false);
    cast_round_trip_launch(BLOCK_DIM, stream, static_cast<uint8_t *>(x.data_ptr()),
                           static_cast<uint8_t *>(z.data_ptr()), tiling);
    return z;
}

PYBIND11_MODULE(cast_round_trip_ops, m)
{
    m.def("cast_round_trip", &cast_round_trip_npu, "float -> half -> float on an Ascend NPU");
}
""",
}

import cast_round_trip_ops  # noqa: E402  built from ASCENDC_SOURCES


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return cast_round_trip_ops.cast_round_trip(x)
