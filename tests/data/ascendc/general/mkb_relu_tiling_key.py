"""ReLU in MultiKernelBench's five-string form with two kernels behind a tiling key: the host calls
SetTilingKey(1) when every core's chunk is a whole number of 32-byte blocks (DataCopy with
DataCopyParams{1, blocks, 0, 0}) and SetTilingKey(2) otherwise (DataCopyPad), the kernel branches on
TILING_KEY_IS; the compute is Relu then Maxs(0) with PipeBarrier<PIPE_V> between (the redundant barrier
LLM answers often add). Written for opforge."""

project_json_src = '''
[
    {
        "op": "ReluCustom",
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
BEGIN_TILING_DATA_DEF(ReluCustomTilingData)
  TILING_DATA_FIELD_DEF(uint32_t, perCoreLength);
  TILING_DATA_FIELD_DEF(uint32_t, lastCoreLength);
  TILING_DATA_FIELD_DEF(uint32_t, tileLength);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(ReluCustom, ReluCustomTilingData)
}
"""

host_operator_src = """
#include "relu_custom_tiling.h"
#include "register/op_def_registry.h"

namespace optiling {
constexpr uint32_t MAX_CORES = 8;
constexpr uint32_t ALIGN_ELEMS = 8;     // 32 bytes of float
constexpr uint32_t TILE_LENGTH = 4096;  // floats per tile

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    ReluCustomTilingData tiling;
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
    bool aligned = (perCore % TILE_LENGTH == 0) && (lastCore % TILE_LENGTH == 0);
    context->SetTilingKey(aligned ? 1 : 2);
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
class ReluCustom : public OpDef {
public:
    explicit ReluCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ReluCustom);
}
"""

kernel_src = """
#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

class KernelRelu {
public:
    __aicore__ inline KernelRelu() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t perCoreLength, uint32_t lastCoreLength,
                                uint32_t tileLength)
    {
        uint32_t idx = GetBlockIdx();
        this->blockLength = (idx == GetBlockNum() - 1) ? lastCoreLength : perCoreLength;
        this->tileLength = tileLength;
        this->tileNum = (this->blockLength + tileLength - 1) / tileLength;
        this->lastTileLength = this->blockLength - (this->tileNum - 1) * tileLength;

        xGm.SetGlobalBuffer((__gm__ float*)x + perCoreLength * idx, this->blockLength);
        yGm.SetGlobalBuffer((__gm__ float*)y + perCoreLength * idx, this->blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileLength * sizeof(float));
    }
    template <bool ALIGNED>
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < this->tileNum; i++) {
            uint32_t len = (i == this->tileNum - 1) ? this->lastTileLength : this->tileLength;
            CopyIn<ALIGNED>(i, len);
            Compute(len);
            CopyOut<ALIGNED>(i, len);
        }
    }

private:
    template <bool ALIGNED>
    __aicore__ inline void CopyIn(uint32_t progress, uint32_t len)
    {
        LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        if constexpr (ALIGNED) {
            DataCopyParams params;
            params.blockCount = 1;
            params.blockLen = static_cast<uint16_t>(len * sizeof(float) / 32);
            params.srcStride = 0;
            params.dstStride = 0;
            DataCopy(xLocal, xGm[progress * this->tileLength], params);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0};
            DataCopyPadExtParams<float> padParams{false, 0, 0, 0};
            DataCopyPad(xLocal, xGm[progress * this->tileLength], copyParams, padParams);
        }
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute(uint32_t len)
    {
        LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        LocalTensor<float> yLocal = outQueueY.AllocTensor<float>();
        Relu(yLocal, xLocal, len);
        PipeBarrier<PIPE_V>();
        Maxs(yLocal, yLocal, 0.0f, len);
        outQueueY.EnQue<float>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }
    template <bool ALIGNED>
    __aicore__ inline void CopyOut(uint32_t progress, uint32_t len)
    {
        LocalTensor<float> yLocal = outQueueY.DeQue<float>();
        if constexpr (ALIGNED) {
            DataCopy(yGm[progress * this->tileLength], yLocal, len);
        } else {
            DataCopyExtParams copyParams{1, static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0};
            DataCopyPad(yGm[progress * this->tileLength], yLocal, copyParams);
        }
        outQueueY.FreeTensor(yLocal);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    GlobalTensor<float> xGm;
    GlobalTensor<float> yGm;
    uint32_t blockLength;
    uint32_t tileNum;
    uint32_t tileLength;
    uint32_t lastTileLength;
};

extern "C" __global__ __aicore__ void relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tiling_data, tiling);
    KernelRelu op;
    op.Init(x, y, tiling_data.perCoreLength, tiling_data.lastCoreLength, tiling_data.tileLength);
    if (TILING_KEY_IS(1)) {
        op.Process<true>();
    } else if (TILING_KEY_IS(2)) {
        op.Process<false>();
    }
}
"""

python_bind_src = """
#include <torch/library.h>
#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"

at::Tensor relu_custom_impl_npu(const at::Tensor& self)
{
    at::Tensor result = at::empty_like(self);
    EXEC_NPU_CMD(aclnnReluCustom, self, result);
    return result;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
    m.def("relu_custom", &relu_custom_impl_npu, "relu");
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
        return custom_ops_lib.relu_custom(x)
'''
