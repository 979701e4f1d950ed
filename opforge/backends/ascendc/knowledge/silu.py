"""SiLU, x * sigmoid(x), in AscendC: the CopyIn/Compute/CopyOut pipeline over double-buffered queues.

Host tiling: the n elements are split over the AI vector cores in slices of a multiple of 8 floats
(32 bytes, so each slice starts aligned), the last core taking the tail; each slice is walked in
tiles of TILE_LENGTH, its shorter last tile moved with DataCopyPad. sigmoid(x) = 1 / (1 + exp(-x)):
Muls, Exp, Adds, Reciprocal, then Mul by x, all in place in one scratch tile.
UB plan: 2 x 16 KB (in) + 2 x 16 KB (out) + 16 KB (scratch) = 80 KB of 192 KB.
"""

ASCENDC_SOURCES = {
    "silu_tiling.h": r'''
#ifndef SILU_TILING_H
#define SILU_TILING_H
#include <cstdint>

constexpr uint32_t TILE_LENGTH = 4096;  // floats per tile: 16 KB per DataCopy
constexpr uint32_t BLOCK_ALIGN = 8;     // floats per 32-byte block

struct SiluTilingData {
    uint32_t blockLength;      // elements per core (all but the last)
    uint32_t lastBlockLength;  // the last core's elements
    uint32_t tileNum;          // tiles per core
    uint32_t lastTileNum;      // tiles of the last core
};
#endif
''',
    "silu_kernel.cpp": r'''
#include "kernel_operator.h"
#include "silu_tiling.h"

constexpr int32_t BUFFER_NUM = 2;  // tile i+1 is copied in while tile i computes

class KernelSilu {
public:
    __aicore__ inline KernelSilu() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const SiluTilingData& tiling)
    {
        const uint32_t core = AscendC::GetBlockIdx();
        const bool last = core == AscendC::GetBlockNum() - 1;
        blockLength = last ? tiling.lastBlockLength : tiling.blockLength;
        tileNum = last ? tiling.lastTileNum : tiling.tileNum;
        xGm.SetGlobalBuffer((__gm__ float*)x + tiling.blockLength * core, blockLength);
        yGm.SetGlobalBuffer((__gm__ float*)y + tiling.blockLength * core, blockLength);
        pipe.InitBuffer(inQueue, BUFFER_NUM, TILE_LENGTH * sizeof(float));
        pipe.InitBuffer(outQueue, BUFFER_NUM, TILE_LENGTH * sizeof(float));
        pipe.InitBuffer(calcBuf, TILE_LENGTH * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < tileNum; i++) {
            const uint32_t len = (i + 1 == tileNum) ? blockLength - i * TILE_LENGTH : TILE_LENGTH;
            CopyIn(i, len);
            Compute(len);
            CopyOut(i, len);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t i, uint32_t len)
    {
        AscendC::LocalTensor<float> x = inQueue.AllocTensor<float>();
        if (len == TILE_LENGTH) {
            AscendC::DataCopy(x, xGm[i * TILE_LENGTH], TILE_LENGTH);
        } else {  // the ragged last tile: exact bytes in, the UB tail is padding
            AscendC::DataCopyExtParams copy{1, static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0};
            AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
            AscendC::DataCopyPad(x, xGm[i * TILE_LENGTH], copy, pad);
        }
        inQueue.EnQue(x);
    }
    __aicore__ inline void Compute(uint32_t len)
    {
        AscendC::LocalTensor<float> x = inQueue.DeQue<float>();
        AscendC::LocalTensor<float> y = outQueue.AllocTensor<float>();
        AscendC::LocalTensor<float> t = calcBuf.Get<float>();
        AscendC::Muls(t, x, -1.0f, len);
        AscendC::Exp(t, t, len);
        AscendC::Adds(t, t, 1.0f, len);
        AscendC::Reciprocal(t, t, len);
        AscendC::Mul(y, x, t, len);
        outQueue.EnQue(y);
        inQueue.FreeTensor(x);
    }
    __aicore__ inline void CopyOut(uint32_t i, uint32_t len)
    {
        AscendC::LocalTensor<float> y = outQueue.DeQue<float>();
        if (len == TILE_LENGTH) {
            AscendC::DataCopy(yGm[i * TILE_LENGTH], y, TILE_LENGTH);
        } else {
            AscendC::DataCopyExtParams copy{1, static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0};
            AscendC::DataCopyPad(yGm[i * TILE_LENGTH], y, copy);
        }
        outQueue.FreeTensor(y);
    }

    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueue;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueue;
    AscendC::TBuf<AscendC::QuePosition::VECCALC> calcBuf;
    AscendC::GlobalTensor<float> xGm;
    AscendC::GlobalTensor<float> yGm;
    uint32_t blockLength = 0;
    uint32_t tileNum = 0;
};

extern "C" __global__ __aicore__ void silu_kernel(GM_ADDR x, GM_ADDR y, SiluTilingData tiling)
{
    KernelSilu op;
    op.Init(x, y, tiling);
    op.Process();
}

void silu_do(uint32_t blockDim, void* stream, uint8_t* x, uint8_t* y, SiluTilingData tiling)
{
    silu_kernel<<<blockDim, nullptr, stream>>>(x, y, tiling);
}
''',
    "silu_host.cpp": r'''
#include <cstdint>
#include <torch/extension.h>
#include "torch_npu/csrc/core/npu/NPUStream.h"
#include "tiling/platform/platform_ascendc.h"
#include "silu_tiling.h"

void silu_do(uint32_t blockDim, void* stream, uint8_t* x, uint8_t* y, SiluTilingData tiling);

at::Tensor silu_impl(const at::Tensor& x)
{
    TORCH_CHECK(x.scalar_type() == at::kFloat && x.is_contiguous(), "x: a contiguous float32 tensor");
    at::Tensor y = at::empty_like(x);
    const uint64_t total = static_cast<uint64_t>(x.numel());
    if (total == 0) {
        return y;
    }
    TORCH_CHECK(total <= UINT32_MAX, "silu: at most 2^32 - 1 elements");
    const uint64_t cores = platform_ascendc::PlatformAscendCManager::GetInstance()->GetCoreNumAiv();
    uint64_t block = (total + cores - 1) / cores;
    block = (block + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN;
    const uint64_t blockDim = (total + block - 1) / block;
    SiluTilingData tiling;
    tiling.blockLength = static_cast<uint32_t>(block);
    tiling.lastBlockLength = static_cast<uint32_t>(total - (blockDim - 1) * block);
    tiling.tileNum = static_cast<uint32_t>((block + TILE_LENGTH - 1) / TILE_LENGTH);
    tiling.lastTileNum = (tiling.lastBlockLength + TILE_LENGTH - 1) / TILE_LENGTH;
    auto stream = c10_npu::getCurrentNPUStream().stream(false);
    silu_do(static_cast<uint32_t>(blockDim), stream, static_cast<uint8_t*>(x.data_ptr()),
            static_cast<uint8_t*>(y.data_ptr()), tiling);
    return y;
}

PYBIND11_MODULE(silu_ops, m)
{
    m.def("silu", &silu_impl, "SiLU (AscendC)");
}
''',
}

import torch
import silu_ops


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return silu_ops.silu(x.contiguous())
