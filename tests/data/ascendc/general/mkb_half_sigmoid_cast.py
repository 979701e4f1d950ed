"""Sigmoid on float16 in MultiKernelBench's five-string form: each half tile is Cast to float
(CAST_NONE), computed as 1 / (1 + exp(-x)) with Muls / Exp / Adds / Reciprocal in float TBuf scratch,
and Cast back with CAST_RINT (round to nearest even); general length (cores take
32-byte-aligned chunks, the last one the tail; the ragged tile moves with DataCopyPad). Written for opforge."""

project_json_src = '''
[
    {
        "op": "SigmoidCustom",
        "language": "cpp",
        "input_desc": [
            {"name": "x", "param_type": "required", "format": ["ND"], "type": ["float16"]}
        ],
        "output_desc": [
            {"name": "y", "param_type": "required", "format": ["ND"], "type": ["float16"]}
        ]
    }
]
'''

host_tiling_src = """
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(SigmoidCustomTilingData)
  TILING_DATA_FIELD_DEF(uint32_t, perCoreLength);
  TILING_DATA_FIELD_DEF(uint32_t, lastCoreLength);
  TILING_DATA_FIELD_DEF(uint32_t, tileLength);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(SigmoidCustom, SigmoidCustomTilingData)
}
"""

host_operator_src = """
#include "sigmoid_custom_tiling.h"
#include "register/op_def_registry.h"

namespace optiling {
constexpr uint32_t MAX_CORES = 8;
constexpr uint32_t ALIGN_ELEMS = 16;    // 32 bytes of half
constexpr uint32_t TILE_LENGTH = 4096;  // elements per tile

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    SigmoidCustomTilingData tiling;
    uint32_t totalLength = context->GetInputShape(0)->GetOriginShape().GetShapeSize();

    uint32_t perCore = (totalLength + MAX_CORES - 1) / MAX_CORES;
    perCore = (perCore + ALIGN_ELEMS - 1) / ALIGN_ELEMS * ALIGN_ELEMS;
    if (perCore == 0) perCore = ALIGN_ELEMS;
    uint32_t coreNum = (totalLength + perCore - 1) / perCore;
    if (coreNum == 0) coreNum = 1;
    uint32_t lastCore = totalLength - perCore * (coreNum - 1);

    context->SetBlockDim(coreNum);
    tiling.set_perCoreLength(perCore);
    tiling.set_lastCoreLength(lastCore);
    tiling.set_tileLength(TILE_LENGTH);
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
static ge::graphStatus InferDataType(gert::InferDataTypeContext* context)
{
    context->SetOutputDataType(0, context->GetInputDataType(0));
    return GRAPH_SUCCESS;
}
}

namespace ops {
class SigmoidCustom : public OpDef {
public:
    explicit SigmoidCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(SigmoidCustom);
}
"""

kernel_src = """
#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

class KernelSigmoid {
public:
    __aicore__ inline KernelSigmoid() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t perCoreLength, uint32_t lastCoreLength,
                                uint32_t tileLength)
    {
        uint32_t idx = GetBlockIdx();
        this->blockLength = (idx == GetBlockNum() - 1) ? lastCoreLength : perCoreLength;
        this->tileLength = tileLength;
        this->tileNum = (this->blockLength + tileLength - 1) / tileLength;
        this->lastTileLength = this->blockLength - (this->tileNum - 1) * tileLength;

        xGm.SetGlobalBuffer((__gm__ half*)x + perCoreLength * idx, this->blockLength);
        yGm.SetGlobalBuffer((__gm__ half*)y + perCoreLength * idx, this->blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(floatBuf, tileLength * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < this->tileNum; i++) {
            uint32_t len = (i == this->tileNum - 1) ? this->lastTileLength : this->tileLength;
            CopyIn(i, len);
            Compute(len);
            CopyOut(i, len);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t progress, uint32_t len)
    {
        LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        DataCopyExtParams copyParams{1, static_cast<uint32_t>(len * sizeof(half)), 0, 0, 0};
        DataCopyPadExtParams<half> padParams{false, 0, 0, 0};
        DataCopyPad(xLocal, xGm[progress * this->tileLength], copyParams, padParams);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute(uint32_t len)
    {
        LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        LocalTensor<half> yLocal = outQueueY.AllocTensor<half>();
        LocalTensor<float> f = floatBuf.Get<float>();
        Cast(f, xLocal, RoundMode::CAST_NONE, len);
        Muls(f, f, -1.0f, len);
        Exp(f, f, len);
        Adds(f, f, 1.0f, len);
        Reciprocal(f, f, len);
        Cast(yLocal, f, RoundMode::CAST_RINT, len);
        outQueueY.EnQue<half>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t progress, uint32_t len)
    {
        LocalTensor<half> yLocal = outQueueY.DeQue<half>();
        DataCopyExtParams copyParams{1, static_cast<uint32_t>(len * sizeof(half)), 0, 0, 0};
        DataCopyPad(yGm[progress * this->tileLength], yLocal, copyParams);
        outQueueY.FreeTensor(yLocal);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<QuePosition::VECCALC> floatBuf;
    GlobalTensor<half> xGm;
    GlobalTensor<half> yGm;
    uint32_t blockLength;
    uint32_t tileNum;
    uint32_t tileLength;
    uint32_t lastTileLength;
};

extern "C" __global__ __aicore__ void sigmoid_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tiling_data, tiling);
    KernelSigmoid op;
    op.Init(x, y, tiling_data.perCoreLength, tiling_data.lastCoreLength, tiling_data.tileLength);
    op.Process();
}
"""

python_bind_src = """
#include <torch/library.h>
#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"

at::Tensor sigmoid_custom_impl_npu(const at::Tensor& self)
{
    at::Tensor result = at::empty_like(self);
    EXEC_NPU_CMD(aclnnSigmoidCustom, self, result);
    return result;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
    m.def("sigmoid_custom", &sigmoid_custom_impl_npu, "sigmoid on float16");
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
        return custom_ops_lib.sigmoid_custom(x)
'''
