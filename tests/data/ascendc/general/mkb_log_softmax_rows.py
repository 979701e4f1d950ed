"""Row log-softmax in MultiKernelBench's five-string form: as mkb_softmax_rows.py (rows over the cores,
the last core taking the rest, DataCopyPad rows, V->S flags before GetValue) but x - max - ln(sum(exp(x -
max))), the log taken by Ln on a one-element tensor. Written for opforge."""

project_json_src = '''
[
    {
        "op": "LogSoftmaxCustom",
        "language": "cpp",
        "input_desc": [
            {"name": "x", "param_type": "required", "format": ["ND"], "type": ["float"]}
        ],
        "output_desc": [
            {"name": "y", "param_type": "required", "format": ["ND"], "type": ["float"]}
        ]
    }
]
'''

host_tiling_src = """
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(LogSoftmaxCustomTilingData)
  TILING_DATA_FIELD_DEF(uint32_t, rows);
  TILING_DATA_FIELD_DEF(uint32_t, cols);
  TILING_DATA_FIELD_DEF(uint32_t, alignedCols);
  TILING_DATA_FIELD_DEF(uint32_t, rowsPerCore);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(LogSoftmaxCustom, LogSoftmaxCustomTilingData)
}
"""

host_operator_src = """
#include "log_softmax_custom_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    LogSoftmaxCustomTilingData tiling;
    const gert::StorageShape* xShape = context->GetInputShape(0);
    const gert::Shape& shape = xShape->GetStorageShape();
    uint32_t dimNum = shape.GetDimNum();
    uint32_t cols = shape.GetDim(dimNum - 1);
    uint32_t rows = 1;
    for (uint32_t i = 0; i + 1 < dimNum; i++) {
        rows *= shape.GetDim(i);
    }
    uint32_t alignedCols = (cols + 7) / 8 * 8;

    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t coreNum = ascendcPlatform.GetCoreNumAiv();
    if (coreNum > rows) coreNum = rows;
    if (coreNum == 0) coreNum = 1;
    uint32_t rowsPerCore = (rows + coreNum - 1) / coreNum;
    coreNum = (rows + rowsPerCore - 1) / rowsPerCore;

    context->SetBlockDim(coreNum);
    tiling.set_rows(rows);
    tiling.set_cols(cols);
    tiling.set_alignedCols(alignedCols);
    tiling.set_rowsPerCore(rowsPerCore);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* currentWorkspace = context->GetWorkspaceSizes(1);
    currentWorkspace[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}

namespace ge {
static ge::graphStatus InferShape(gert::InferShapeContext* context)
{
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}
}

namespace ops {
class LogSoftmaxCustom : public OpDef {
public:
    explicit LogSoftmaxCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(LogSoftmaxCustom);
}
"""

kernel_src = """
#include "kernel_operator.h"
using namespace AscendC;

class KernelLogSoftmax {
public:
    __aicore__ inline KernelLogSoftmax() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t cols, uint32_t alignedCols,
                                uint32_t rowsPerCore)
    {
        this->cols = cols;
        uint32_t start = rowsPerCore * GetBlockIdx();
        this->myRows = (start + rowsPerCore <= rows) ? rowsPerCore : rows - start;
        xGm.SetGlobalBuffer((__gm__ float*)x + (uint64_t)start * cols, (uint64_t)this->myRows * cols);
        yGm.SetGlobalBuffer((__gm__ float*)y + (uint64_t)start * cols, (uint64_t)this->myRows * cols);
        pipe.InitBuffer(inQueue, 1, alignedCols * sizeof(float));
        pipe.InitBuffer(outQueue, 1, alignedCols * sizeof(float));
        pipe.InitBuffer(workBuf, alignedCols * sizeof(float));
        pipe.InitBuffer(reduceBuf, 32);
    }
    __aicore__ inline void Process()
    {
        for (uint32_t r = 0; r < this->myRows; r++) {
            CopyIn(r);
            Compute();
            CopyOut(r);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t r)
    {
        LocalTensor<float> xLocal = inQueue.AllocTensor<float>();
        DataCopyExtParams params{1, (uint32_t)(this->cols * sizeof(float)), 0, 0, 0};
        DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
        DataCopyPad(xLocal, xGm[(uint64_t)r * this->cols], params, pad);
        inQueue.EnQue(xLocal);
    }
    __aicore__ inline void Compute()
    {
        LocalTensor<float> xLocal = inQueue.DeQue<float>();
        LocalTensor<float> yLocal = outQueue.AllocTensor<float>();
        LocalTensor<float> work = workBuf.Get<float>();
        LocalTensor<float> red = reduceBuf.Get<float>();

        ReduceMax<float>(red, xLocal, work, this->cols, false);
        event_t evt = static_cast<event_t>(pipe.FetchEventID(HardEvent::V_S));
        SetFlag<HardEvent::V_S>(evt);
        WaitFlag<HardEvent::V_S>(evt);
        float maxVal = red.GetValue(0);

        Adds(xLocal, xLocal, -maxVal, this->cols);      // x - max
        Exp(yLocal, xLocal, this->cols);
        ReduceSum<float>(red, yLocal, work, this->cols);
        Ln(red, red, 1);                                 // ln(sum(exp(x - max)))
        SetFlag<HardEvent::V_S>(evt);
        WaitFlag<HardEvent::V_S>(evt);
        float logSum = red.GetValue(0);
        Adds(yLocal, xLocal, -logSum, this->cols);

        outQueue.EnQue<float>(yLocal);
        inQueue.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t r)
    {
        LocalTensor<float> yLocal = outQueue.DeQue<float>();
        DataCopyExtParams params{1, (uint32_t)(this->cols * sizeof(float)), 0, 0, 0};
        DataCopyPad(yGm[(uint64_t)r * this->cols], yLocal, params);
        outQueue.FreeTensor(yLocal);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQueue;
    TQue<QuePosition::VECOUT, 1> outQueue;
    TBuf<QuePosition::VECCALC> workBuf;
    TBuf<QuePosition::VECCALC> reduceBuf;
    GlobalTensor<float> xGm;
    GlobalTensor<float> yGm;
    uint32_t cols;
    uint32_t myRows;
};

extern "C" __global__ __aicore__ void log_softmax_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tiling_data, tiling);
    KernelLogSoftmax op;
    op.Init(x, y, tiling_data.rows, tiling_data.cols, tiling_data.alignedCols, tiling_data.rowsPerCore);
    op.Process();
}
"""

python_bind_src = """
#include <torch/library.h>
#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"

at::Tensor log_softmax_custom_impl_npu(const at::Tensor& self)
{
    at::Tensor result = at::empty_like(self);
    EXEC_NPU_CMD(aclnnLogSoftmaxCustom, self, result);
    return result;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
    m.def("log_softmax_custom", &log_softmax_custom_impl_npu, "log-softmax over the last dim");
}
"""

model_src = '''
import torch
import torch_npu
import custom_ops_lib


class ModelNew(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x):
        return custom_ops_lib.log_softmax_custom(x)
'''
