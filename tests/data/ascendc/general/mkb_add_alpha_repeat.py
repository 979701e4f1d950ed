"""x + alpha * y in MultiKernelBench's five-string form: alpha an OpDef attribute written as
`this->Attr("alpha").AttrType(OPTIONAL).Float(1.0)` and read with GetAttrs()->GetAttrPointer<float>(0);
the Add in the mask/repeat ("level 0") form with BinaryRepeatParams (64 floats a repeat, a tail repeat
with a shorter mask), Muls in the count form; general length (the last core takes the tail, the ragged
tile moves with DataCopyPad). Written for opforge."""

project_json_src = '''
[
    {
        "op": "AddAlphaCustom",
        "language": "cpp",
        "input_desc": [
            {"name": "x", "param_type": "required", "format": ["ND"], "type": ["float"]},
            {"name": "y", "param_type": "required", "format": ["ND"], "type": ["float"]}
        ],
        "output_desc": [
            {"name": "z", "param_type": "required", "format": ["ND"], "type": ["float"]}
        ],
        "attr": [
            {"name": "alpha", "param_type": "optional", "type": "float", "default_value": "1.0"}
        ]
    }
]
'''

host_tiling_src = """
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(AddAlphaCustomTilingData)
  TILING_DATA_FIELD_DEF(uint32_t, perCoreLength);
  TILING_DATA_FIELD_DEF(uint32_t, lastCoreLength);
  TILING_DATA_FIELD_DEF(uint32_t, tileLength);
  TILING_DATA_FIELD_DEF(float, alpha);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(AddAlphaCustom, AddAlphaCustomTilingData)
}
"""

host_operator_src = """
#include "add_alpha_custom_tiling.h"
#include "register/op_def_registry.h"

namespace optiling {
constexpr uint32_t MAX_CORES = 8;
constexpr uint32_t ALIGN_ELEMS = 8;     // 32 bytes of float
constexpr uint32_t TILE_LENGTH = 4096;  // floats per tile

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    AddAlphaCustomTilingData tiling;
    uint32_t totalLength = context->GetInputShape(0)->GetOriginShape().GetShapeSize();
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    const float* alpha = attrs->GetAttrPointer<float>(0);

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
    tiling.set_alpha(*alpha);
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
class AddAlphaCustom : public OpDef {
public:
    explicit AddAlphaCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Input("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("z").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Attr("alpha").AttrType(OPTIONAL).Float(1.0);
        this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(AddAlphaCustom);
}
"""

kernel_src = """
#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

class KernelAddAlpha {
public:
    __aicore__ inline KernelAddAlpha() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t perCoreLength, uint32_t lastCoreLength,
                                uint32_t tileLength, float alpha)
    {
        uint32_t idx = GetBlockIdx();
        this->blockLength = (idx == GetBlockNum() - 1) ? lastCoreLength : perCoreLength;
        this->tileLength = tileLength;
        this->alpha = alpha;
        this->tileNum = (this->blockLength + tileLength - 1) / tileLength;
        this->lastTileLength = this->blockLength - (this->tileNum - 1) * tileLength;

        xGm.SetGlobalBuffer((__gm__ float*)x + perCoreLength * idx, this->blockLength);
        yGm.SetGlobalBuffer((__gm__ float*)y + perCoreLength * idx, this->blockLength);
        zGm.SetGlobalBuffer((__gm__ float*)z + perCoreLength * idx, this->blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, tileLength * sizeof(float));
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
        LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        LocalTensor<float> yLocal = inQueueY.AllocTensor<float>();
        DataCopyExtParams copyParams{1, static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0};
        DataCopyPadExtParams<float> padParams{false, 0, 0, 0};
        DataCopyPad(xLocal, xGm[progress * this->tileLength], copyParams, padParams);
        DataCopyPad(yLocal, yGm[progress * this->tileLength], copyParams, padParams);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }
    __aicore__ inline void Compute(uint32_t len)
    {
        LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        LocalTensor<float> yLocal = inQueueY.DeQue<float>();
        LocalTensor<float> zLocal = outQueueZ.AllocTensor<float>();
        Muls(yLocal, yLocal, this->alpha, len);
        const uint32_t perRepeat = 256 / sizeof(float);          // 64 floats a repeat
        uint32_t repeats = len / perRepeat;
        uint32_t tail = len % perRepeat;
        BinaryRepeatParams repeatParams(1, 1, 1, 8, 8, 8);
        if (repeats > 0) {
            Add(zLocal, xLocal, yLocal, perRepeat, (uint8_t)repeats, repeatParams);
        }
        if (tail > 0) {
            uint32_t off = repeats * perRepeat;
            Add(zLocal[off], xLocal[off], yLocal[off], tail, 1, repeatParams);
        }
        outQueueZ.EnQue<float>(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }
    __aicore__ inline void CopyOut(uint32_t progress, uint32_t len)
    {
        LocalTensor<float> zLocal = outQueueZ.DeQue<float>();
        DataCopyExtParams copyParams{1, static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0};
        DataCopyPad(zGm[progress * this->tileLength], zLocal, copyParams);
        outQueueZ.FreeTensor(zLocal);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
    GlobalTensor<float> xGm, yGm, zGm;
    uint32_t blockLength;
    uint32_t tileNum;
    uint32_t tileLength;
    uint32_t lastTileLength;
    float alpha;
};

extern "C" __global__ __aicore__ void add_alpha_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tiling_data, tiling);
    KernelAddAlpha op;
    op.Init(x, y, z, tiling_data.perCoreLength, tiling_data.lastCoreLength, tiling_data.tileLength,
            tiling_data.alpha);
    op.Process();
}
"""

python_bind_src = """
#include <torch/library.h>
#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"

at::Tensor add_alpha_custom_impl_npu(const at::Tensor& self, const at::Tensor& other, double alpha)
{
    at::Tensor result = at::empty_like(self);
    EXEC_NPU_CMD(aclnnAddAlphaCustom, self, other, alpha, result);
    return result;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
    m.def("add_alpha_custom", &add_alpha_custom_impl_npu, "x + alpha * y");
}
"""

model_src = '''
import torch
import torch_npu
import custom_ops_lib


class ModelNew(torch.nn.Module):
    def __init__(self, alpha: float = 1.0) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        return custom_ops_lib.add_alpha_custom(x, y, self.alpha)
'''
