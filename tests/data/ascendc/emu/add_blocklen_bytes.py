"""Add (direct form): the x copy-in gives DataCopyParams.blockLen in bytes (8192) instead of 32-byte blocks
(256): a 32x overrun of the 8 KB tile. Expected: exit 1, `ascendc-datacopy` (the static rules see the
constant) or the emulator's `out-of-bounds` naming DataCopy.
Control: add_blocklen_ok.py (blockLen = bytes / 32)."""
import torch

ASCENDC_SOURCES = {
    "add_custom_tiling.h": r'''
#ifndef ADD_CUSTOM_TILING_H
#define ADD_CUSTOM_TILING_H
#include <cstdint>
struct AddCustomTilingData {
    uint32_t totalLength;
    uint32_t tileNum;
};
#endif
''',
    "add_custom_kernel.cpp": r'''
#include "kernel_operator.h"
#include "add_custom_tiling.h"

constexpr int32_t BUFFER_NUM = 2;   // double buffering: copy-in of tile i+1 overlaps compute of tile i
constexpr int32_t TILE_LENGTH = 2048;  // floats per tile: 3 queues x 2 x 8 KB = 48 KB of the 192 KB UB

class KernelAdd {
public:
    __aicore__ inline KernelAdd() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength, uint32_t tileNum)
    {
        this->blockLength = totalLength / AscendC::GetBlockNum();
        this->tileNum = tileNum;
        xGm.SetGlobalBuffer((__gm__ float *)x + this->blockLength * AscendC::GetBlockIdx(), this->blockLength);
        yGm.SetGlobalBuffer((__gm__ float *)y + this->blockLength * AscendC::GetBlockIdx(), this->blockLength);
        zGm.SetGlobalBuffer((__gm__ float *)z + this->blockLength * AscendC::GetBlockIdx(), this->blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, TILE_LENGTH * sizeof(float));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, TILE_LENGTH * sizeof(float));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, TILE_LENGTH * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (int32_t i = 0; i < this->tileNum; i++) {
            CopyIn(i);
            Compute(i);
            CopyOut(i);
        }
    }

private:
    __aicore__ inline void CopyIn(int32_t progress)
    {
        AscendC::LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        AscendC::LocalTensor<float> yLocal = inQueueY.AllocTensor<float>();
        AscendC::DataCopyParams params{1, static_cast<uint16_t>(TILE_LENGTH * sizeof(float)), 0, 0};
        AscendC::DataCopy(xLocal, xGm[progress * TILE_LENGTH], params);
        AscendC::DataCopy(yLocal, yGm[progress * TILE_LENGTH], TILE_LENGTH);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }
    __aicore__ inline void Compute(int32_t progress)
    {
        AscendC::LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        AscendC::LocalTensor<float> yLocal = inQueueY.DeQue<float>();
        AscendC::LocalTensor<float> zLocal = outQueueZ.AllocTensor<float>();
        AscendC::Add(zLocal, xLocal, yLocal, TILE_LENGTH);
        outQueueZ.EnQue<float>(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }
    __aicore__ inline void CopyOut(int32_t progress)
    {
        AscendC::LocalTensor<float> zLocal = outQueueZ.DeQue<float>();
        AscendC::DataCopy(zGm[progress * TILE_LENGTH], zLocal, TILE_LENGTH);
        outQueueZ.FreeTensor(zLocal);
    }

    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
    AscendC::GlobalTensor<float> xGm;
    AscendC::GlobalTensor<float> yGm;
    AscendC::GlobalTensor<float> zGm;
    uint32_t blockLength;
    uint32_t tileNum;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, AddCustomTilingData tiling)
{
    KernelAdd op;
    op.Init(x, y, z, tiling.totalLength, tiling.tileNum);
    op.Process();
}

void add_custom_launch(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *y, uint8_t *z, AddCustomTilingData tiling)
{
    add_custom<<<blockDim, nullptr, stream>>>(x, y, z, tiling);
}
''',
    "add_custom_host.cpp": r'''
#include <torch/extension.h>
#include "torch_npu/csrc/core/npu/NPUStream.h"
#include "add_custom_tiling.h"

void add_custom_launch(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *y, uint8_t *z, AddCustomTilingData tiling);

constexpr uint32_t BLOCK_DIM = 8;
constexpr uint32_t TILE_LENGTH = 2048;

at::Tensor add_custom_npu(const at::Tensor &x, const at::Tensor &y)
{
    at::Tensor z = at::empty_like(x);
    AddCustomTilingData tiling;
    tiling.totalLength = static_cast<uint32_t>(x.numel());
    tiling.tileNum = tiling.totalLength / BLOCK_DIM / TILE_LENGTH;
    auto stream = c10_npu::getCurrentNPUStream().stream(false);
    add_custom_launch(BLOCK_DIM, stream, static_cast<uint8_t *>(x.data_ptr()), static_cast<uint8_t *>(y.data_ptr()),
                      static_cast<uint8_t *>(z.data_ptr()), tiling);
    return z;
}

PYBIND11_MODULE(add_custom_ops, m)
{
    m.def("add_custom", &add_custom_npu, "z = x + y on an Ascend NPU");
}
''',
}

import add_custom_ops  # noqa: E402  built from ASCENDC_SOURCES where CANN is installed


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return add_custom_ops.add_custom(x, y)
