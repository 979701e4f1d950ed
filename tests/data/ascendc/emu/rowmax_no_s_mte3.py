"""Row max (direct form): the scalar unit's SetValue stores reach the copy-out with no S->MTE3 flag, so MTE3
may copy the result buffer before the stores land. Expected: exit 1, `race` naming DataCopy.
Control: rowmax_ok.py."""
import torch

ASCENDC_SOURCES = {
    "rowmax_tiling.h": r"""
#ifndef ROWMAX_TILING_H
#define ROWMAX_TILING_H
#include <cstdint>
struct RowMaxTilingData {
    uint32_t rows;
    uint32_t cols;
};
#endif
""",
    "rowmax_kernel.cpp": r"""
#include "kernel_operator.h"
#include "rowmax_tiling.h"

constexpr int32_t BUFFER_NUM = 2;

class KernelRowMax {
public:
    __aicore__ inline KernelRowMax() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR z, uint32_t rows, uint32_t cols)
    {
        this->cols = cols;
        this->rowsPerCore = rows / AscendC::GetBlockNum();
        uint32_t first = this->rowsPerCore * cols * AscendC::GetBlockIdx();
        xGm.SetGlobalBuffer((__gm__ float *)x + first, this->rowsPerCore * cols);
        zGm.SetGlobalBuffer((__gm__ float *)z + this->rowsPerCore * AscendC::GetBlockIdx(), this->rowsPerCore);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, cols * sizeof(float));
        pipe.InitBuffer(outBuf, (this->rowsPerCore * sizeof(float) + 31) / 32 * 32);
        pipe.InitBuffer(workBuf, cols * sizeof(float));
        pipe.InitBuffer(reduceBuf, 32);
    }
    __aicore__ inline void Process()
    {
        for (uint32_t r = 0; r < this->rowsPerCore; r++) {
            AscendC::LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
            AscendC::DataCopy(xLocal, xGm[r * this->cols], this->cols);
            inQueueX.EnQue(xLocal);
            Compute(r);
        }
        AscendC::LocalTensor<float> maxima = outBuf.Get<float>();
        AscendC::DataCopy(zGm, maxima, this->rowsPerCore);  // 8 floats: one 32-byte block
    }

private:
    __aicore__ inline void Compute(uint32_t r)
    {
        AscendC::LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        AscendC::LocalTensor<float> work = workBuf.Get<float>();
        AscendC::LocalTensor<float> reduced = reduceBuf.Get<float>();
        AscendC::ReduceMax(reduced, xLocal, work, this->cols);
        event_t eventVS = static_cast<event_t>(pipe.FetchEventID(AscendC::HardEvent::V_S));
        AscendC::SetFlag<AscendC::HardEvent::V_S>(eventVS);  // the scalar unit reads the vector unit's max
        AscendC::WaitFlag<AscendC::HardEvent::V_S>(eventVS);
        float rowMax = reduced.GetValue(0);
        outBuf.Get<float>().SetValue(r, rowMax);  // the scalar unit writes the row's maximum
        inQueueX.FreeTensor(xLocal);
    }

    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX;
    AscendC::TBuf<AscendC::TPosition::VECCALC> workBuf, reduceBuf, outBuf;
    AscendC::GlobalTensor<float> xGm;
    AscendC::GlobalTensor<float> zGm;
    uint32_t rowsPerCore;
    uint32_t cols;
};

extern "C" __global__ __aicore__ void row_max(GM_ADDR x, GM_ADDR z, RowMaxTilingData tiling)
{
    KernelRowMax op;
    op.Init(x, z, tiling.rows, tiling.cols);
    op.Process();
}

void row_max_launch(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *z, RowMaxTilingData tiling)
{
    row_max<<<blockDim, nullptr, stream>>>(x, z, tiling);
}
""",
    "rowmax_host.cpp": r"""
#include <torch/extension.h>
#include "torch_npu/csrc/core/npu/NPUStream.h"
#include "rowmax_tiling.h"

void row_max_launch(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *z, RowMaxTilingData tiling);

constexpr uint32_t BLOCK_DIM = 8;

at::Tensor row_max_npu(const at::Tensor &x)
{
    at::Tensor z = at::empty({x.size(0)}, x.options());
    RowMaxTilingData tiling;
    tiling.rows = static_cast<uint32_t>(x.size(0));
    tiling.cols = static_cast<uint32_t>(x.size(1));
    auto stream = c10_npu::getCurrentNPUStream().stream(false);
    row_max_launch(BLOCK_DIM, stream, static_cast<uint8_t *>(x.data_ptr()), static_cast<uint8_t *>(z.data_ptr()),
                       tiling);
    return z;
}

PYBIND11_MODULE(row_max_ops, m)
{
    m.def("row_max", &row_max_npu, "the maximum of each row on an Ascend NPU");
}
""",
}

import row_max_ops  # noqa: E402  built from ASCENDC_SOURCES


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return row_max_ops.row_max(x)
