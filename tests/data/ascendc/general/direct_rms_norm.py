"""RMSNorm with a weight in opforge's direct-launch form (`<<<blockDim, nullptr, stream>>>` from a launch
function in the kernel file): rows split over the cores, the last one taking the rest; the weight
loaded once into TBuf scratch (MTE2->V flag); per row Mul + ReduceSum for the sum of squares, then
Muls / Adds / Sqrt / Reciprocal on a one-element tensor and GetValue after a V->S flag; the tiling a
plain struct passed by value. Written for opforge."""
import torch

ASCENDC_SOURCES = {
    "rms_norm_tiling.h": r'''
#ifndef RMS_NORM_TILING_H
#define RMS_NORM_TILING_H
#include <cstdint>
struct RmsNormTilingData {
    uint32_t rows;
    uint32_t cols;
    uint32_t rowsPerCore;
    float eps;
};
#endif
''',
    "rms_norm_kernel.cpp": r'''
#include "kernel_operator.h"
#include "rms_norm_tiling.h"

constexpr int32_t BUFFER_NUM = 2;

class KernelRmsNorm {
public:
    __aicore__ inline KernelRmsNorm() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR w, GM_ADDR y, RmsNormTilingData t)
    {
        cols = t.cols;
        eps = t.eps;
        uint32_t start = t.rowsPerCore * AscendC::GetBlockIdx();
        myRows = (start + t.rowsPerCore <= t.rows) ? t.rowsPerCore : t.rows - start;
        alignedCols = (cols + 7) / 8 * 8;
        xGm.SetGlobalBuffer((__gm__ float*)x + (uint64_t)start * cols, (uint64_t)myRows * cols);
        yGm.SetGlobalBuffer((__gm__ float*)y + (uint64_t)start * cols, (uint64_t)myRows * cols);
        wGm.SetGlobalBuffer((__gm__ float*)w, cols);
        pipe.InitBuffer(inQueue, BUFFER_NUM, alignedCols * sizeof(float));
        pipe.InitBuffer(outQueue, BUFFER_NUM, alignedCols * sizeof(float));
        pipe.InitBuffer(wBuf, alignedCols * sizeof(float));
        pipe.InitBuffer(sqBuf, alignedCols * sizeof(float));
        pipe.InitBuffer(workBuf, alignedCols * sizeof(float));
        pipe.InitBuffer(statBuf, 32);
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<float> wLocal = wBuf.Get<float>();
        AscendC::DataCopyExtParams params{1, (uint32_t)(cols * sizeof(float)), 0, 0, 0};
        AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
        AscendC::DataCopyPad(wLocal, wGm, params, pad);
        AscendC::TEventID evt = pipe.FetchEventID(AscendC::HardEvent::MTE2_V);
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(evt);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(evt);
        for (uint32_t r = 0; r < myRows; r++) {
            CopyIn(r);
            Compute();
            CopyOut(r);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t r)
    {
        AscendC::LocalTensor<float> xLocal = inQueue.AllocTensor<float>();
        AscendC::DataCopyExtParams params{1, (uint32_t)(cols * sizeof(float)), 0, 0, 0};
        AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
        AscendC::DataCopyPad(xLocal, xGm[(uint64_t)r * cols], params, pad);
        inQueue.EnQue(xLocal);
    }
    __aicore__ inline void Compute()
    {
        AscendC::LocalTensor<float> xLocal = inQueue.DeQue<float>();
        AscendC::LocalTensor<float> yLocal = outQueue.AllocTensor<float>();
        AscendC::LocalTensor<float> wLocal = wBuf.Get<float>();
        AscendC::LocalTensor<float> sq = sqBuf.Get<float>();
        AscendC::LocalTensor<float> work = workBuf.Get<float>();
        AscendC::LocalTensor<float> stat = statBuf.Get<float>();

        AscendC::Mul(sq, xLocal, xLocal, cols);
        AscendC::ReduceSum<float>(stat, sq, work, cols);
        AscendC::Muls(stat, stat, 1.0f / cols, 1);
        AscendC::Adds(stat, stat, eps, 1);
        AscendC::Sqrt(stat, stat, 1);
        AscendC::Reciprocal(stat, stat, 1);
        AscendC::TEventID evt = pipe.FetchEventID(AscendC::HardEvent::V_S);
        AscendC::SetFlag<AscendC::HardEvent::V_S>(evt);
        AscendC::WaitFlag<AscendC::HardEvent::V_S>(evt);
        float rrms = stat.GetValue(0);

        AscendC::Muls(yLocal, xLocal, rrms, cols);
        AscendC::Mul(yLocal, yLocal, wLocal, cols);
        outQueue.EnQue<float>(yLocal);
        inQueue.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t r)
    {
        AscendC::LocalTensor<float> yLocal = outQueue.DeQue<float>();
        AscendC::DataCopyExtParams params{1, (uint32_t)(cols * sizeof(float)), 0, 0, 0};
        AscendC::DataCopyPad(yGm[(uint64_t)r * cols], yLocal, params);
        outQueue.FreeTensor(yLocal);
    }

    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueue;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueue;
    AscendC::TBuf<AscendC::QuePosition::VECCALC> wBuf, sqBuf, workBuf, statBuf;
    AscendC::GlobalTensor<float> xGm, yGm, wGm;
    uint32_t cols, alignedCols, myRows;
    float eps;
};

extern "C" __global__ __aicore__ void rms_norm_custom(GM_ADDR x, GM_ADDR w, GM_ADDR y, RmsNormTilingData tiling)
{
    KernelRmsNorm op;
    op.Init(x, w, y, tiling);
    op.Process();
}

void rms_norm_launch(uint32_t blockDim, void* stream, uint8_t* x, uint8_t* w, uint8_t* y, RmsNormTilingData tiling)
{
    rms_norm_custom<<<blockDim, nullptr, stream>>>(x, w, y, tiling);
}
''',
    "rms_norm_host.cpp": r'''
#include <torch/extension.h>
#include "torch_npu/csrc/core/npu/NPUStream.h"
#include "rms_norm_tiling.h"

void rms_norm_launch(uint32_t blockDim, void* stream, uint8_t* x, uint8_t* w, uint8_t* y, RmsNormTilingData tiling);

at::Tensor rms_norm_npu(const at::Tensor& x, const at::Tensor& weight, double eps)
{
    at::Tensor y = at::empty_like(x);
    RmsNormTilingData tiling;
    tiling.cols = static_cast<uint32_t>(x.size(-1));
    tiling.rows = static_cast<uint32_t>(x.numel() / tiling.cols);
    tiling.eps = static_cast<float>(eps);
    uint32_t blockDim = tiling.rows < 16 ? tiling.rows : 16;
    tiling.rowsPerCore = (tiling.rows + blockDim - 1) / blockDim;
    blockDim = (tiling.rows + tiling.rowsPerCore - 1) / tiling.rowsPerCore;
    auto stream = c10_npu::getCurrentNPUStream().stream(false);
    rms_norm_launch(blockDim, stream, static_cast<uint8_t*>(x.data_ptr()), static_cast<uint8_t*>(weight.data_ptr()),
                    static_cast<uint8_t*>(y.data_ptr()), tiling);
    return y;
}

PYBIND11_MODULE(rms_norm_ops, m)
{
    m.def("rms_norm", &rms_norm_npu, "RMSNorm with a weight on an Ascend NPU");
}
''',
}

import rms_norm_ops  # noqa: E402  built from ASCENDC_SOURCES


class ModelNew(torch.nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(hidden))
        self.eps = 1e-6

    def forward(self, x):
        return rms_norm_ops.rms_norm(x, self.weight, self.eps)
