"""Add of 4100 floats on one core (direct form): the 4-float tail is never processed, so the output's last
elements keep their poison. Expected: exit 1, `mismatch`. Control: tail_pad_ok.py."""
import torch

ASCENDC_SOURCES = {
    "tail_add_tiling.h": r"""
#ifndef TAIL_ADD_TILING_H
#define TAIL_ADD_TILING_H
#include <cstdint>
struct TailAddTilingData {
    uint32_t totalLength;
};
#endif
""",
    "tail_add_kernel.cpp": r"""
#include "kernel_operator.h"
#include "tail_add_tiling.h"

constexpr int32_t BUFFER_NUM = 2;
constexpr uint32_t TILE_LENGTH = 1024;

class KernelTailAdd {
public:
    __aicore__ inline KernelTailAdd() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength)
    {
        this->totalLength = totalLength;
        xGm.SetGlobalBuffer((__gm__ float *)x, totalLength);
        yGm.SetGlobalBuffer((__gm__ float *)y, totalLength);
        zGm.SetGlobalBuffer((__gm__ float *)z, totalLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, TILE_LENGTH * sizeof(float));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, TILE_LENGTH * sizeof(float));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, TILE_LENGTH * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        uint32_t full = this->totalLength / TILE_LENGTH;
        uint32_t tail = this->totalLength % TILE_LENGTH;
        for (uint32_t i = 0; i < full; i++) {
            Tile(i * TILE_LENGTH, TILE_LENGTH);
        }
        // the tail (totalLength % TILE_LENGTH floats) is left out
    }

private:
    __aicore__ inline void Tile(uint32_t offset, uint32_t length)
    {
        AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(length * sizeof(float)), 0, 0, 0};
        AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0};
        AscendC::LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        AscendC::LocalTensor<float> yLocal = inQueueY.AllocTensor<float>();
        AscendC::DataCopyPad(xLocal, xGm[offset], params, pad);
        AscendC::DataCopyPad(yLocal, yGm[offset], params, pad);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
        xLocal = inQueueX.DeQue<float>();
        yLocal = inQueueY.DeQue<float>();
        AscendC::LocalTensor<float> zLocal = outQueueZ.AllocTensor<float>();
        AscendC::Add(zLocal, xLocal, yLocal, length);
        outQueueZ.EnQue(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
        zLocal = outQueueZ.DeQue<float>();
        AscendC::DataCopyPad(zGm[offset], zLocal, params);
        outQueueZ.FreeTensor(zLocal);
    }

    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
    AscendC::GlobalTensor<float> xGm;
    AscendC::GlobalTensor<float> yGm;
    AscendC::GlobalTensor<float> zGm;
    uint32_t totalLength;
};

extern "C" __global__ __aicore__ void tail_add(GM_ADDR x, GM_ADDR y, GM_ADDR z, TailAddTilingData tiling)
{
    KernelTailAdd op;
    op.Init(x, y, z, tiling.totalLength);
    op.Process();
}

void tail_add_launch(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *y, uint8_t *z, TailAddTilingData tiling)
{
    tail_add<<<blockDim, nullptr, stream>>>(x, y, z, tiling);
}
""",
    "tail_add_host.cpp": r"""
#include <torch/extension.h>
#include "torch_npu/csrc/core/npu/NPUStream.h"
#include "tail_add_tiling.h"

void tail_add_launch(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *y, uint8_t *z, TailAddTilingData tiling);

at::Tensor tail_add_npu(const at::Tensor &x, const at::Tensor &y)
{
    at::Tensor z = at::empty_like(x);
    TailAddTilingData tiling;
    tiling.totalLength = static_cast<uint32_t>(x.numel());
    auto stream = c10_npu::getCurrentNPUStream().stream(false);
    tail_add_launch(1, stream, static_cast<uint8_t *>(x.data_ptr()), static_cast<uint8_t *>(y.data_ptr()),
                    static_cast<uint8_t *>(z.data_ptr()), tiling);
    return z;
}

PYBIND11_MODULE(tail_add_ops, m)
{
    m.def("tail_add", &tail_add_npu, "z = x + y on an Ascend NPU, any length");
}
""",
}

import tail_add_ops  # noqa: E402  built from ASCENDC_SOURCES


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return tail_add_ops.tail_add(x, y)
