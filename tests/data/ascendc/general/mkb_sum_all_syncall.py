"""The sum of all elements in MultiKernelBench's five-string form, in two phases across the cores: each
core's partial goes to the user workspace (GetUserWorkspace; the host asks for the system workspace plus
32 bytes a core), SyncAll() waits for every core, then core 0 reads the partials back and writes the
total. A correct kernel; the emulator does not model SyncAll (cross-core sync), so today it must stop
at exit 3 naming it. Written for opforge."""

project_json_src = '''
[
    {
        "op": "SumAllSyncCustom",
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
BEGIN_TILING_DATA_DEF(SumAllSyncCustomTilingData)
  TILING_DATA_FIELD_DEF(uint32_t, perCoreLength);
  TILING_DATA_FIELD_DEF(uint32_t, lastCoreLength);
  TILING_DATA_FIELD_DEF(uint32_t, tileLength);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(SumAllSyncCustom, SumAllSyncCustomTilingData)
}
"""

host_operator_src = """
#include "sum_all_sync_custom_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
constexpr uint32_t MAX_CORES = 8;
constexpr uint32_t ALIGN_ELEMS = 8;     // 32 bytes of float
constexpr uint32_t TILE_LENGTH = 4096;  // floats per tile

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    SumAllSyncCustomTilingData tiling;
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
    auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    size_t* currentWorkspace = context->GetWorkspaceSizes(1);
    currentWorkspace[0] = ascendcPlatform.GetLibApiWorkSpaceSize() + coreNum * 32;
    return ge::GRAPH_SUCCESS;
}
}

namespace ge {
static ge::graphStatus InferShape(gert::InferShapeContext* context)
{
    gert::Shape* y = context->GetOutputShape(0);
    y->SetDimNum(0);
    return GRAPH_SUCCESS;
}
static ge::graphStatus InferDataType(gert::InferDataTypeContext* context)
{
    context->SetOutputDataType(0, context->GetInputDataType(0));
    return GRAPH_SUCCESS;
}
}

namespace ops {
class SumAllSyncCustom : public OpDef {
public:
    explicit SumAllSyncCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(SumAllSyncCustom);
}
"""

kernel_src = """
#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

class KernelSumAllSync {
public:
    __aicore__ inline KernelSumAllSync() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR usrWorkspace, uint32_t perCoreLength, uint32_t lastCoreLength,
                                uint32_t tileLength)
    {
        uint32_t idx = GetBlockIdx();
        this->blockLength = (idx == GetBlockNum() - 1) ? lastCoreLength : perCoreLength;
        this->tileLength = tileLength;
        this->tileNum = (this->blockLength + tileLength - 1) / tileLength;
        this->lastTileLength = this->blockLength - (this->tileNum - 1) * tileLength;

        xGm.SetGlobalBuffer((__gm__ float*)x + perCoreLength * idx, this->blockLength);
        yGm.SetGlobalBuffer((__gm__ float*)y, 1);
        partGm.SetGlobalBuffer((__gm__ float*)usrWorkspace, GetBlockNum() * 8);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(workBuf, tileLength * sizeof(float));
        pipe.InitBuffer(partBuf, 32);
        pipe.InitBuffer(accBuf, 32);
    }
    __aicore__ inline void Process()
    {
        LocalTensor<float> acc = accBuf.Get<float>();
        Duplicate(acc, 0.0f, 8);
        for (uint32_t i = 0; i < this->tileNum; i++) {
            uint32_t len = (i == this->tileNum - 1) ? this->lastTileLength : this->tileLength;
            CopyIn(i, len);
            Compute(len);
        }
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(partGm[GetBlockIdx() * 8], acc, 8);
        SyncAll();
        if (GetBlockIdx() == 0) {
            LocalTensor<float> parts = workBuf.Get<float>();
            DataCopy(parts, partGm, GetBlockNum() * 8);
            SetFlag<HardEvent::MTE2_S>(EVENT_ID1);
            WaitFlag<HardEvent::MTE2_S>(EVENT_ID1);
            float total = 0.0f;
            for (uint32_t c = 0; c < GetBlockNum(); c++) {
                total += parts.GetValue(c * 8);
            }
            yGm.SetValue(0, total);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t progress, uint32_t len)
    {
        LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        DataCopyExtParams copyParams{1, static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0};
        DataCopyPadExtParams<float> padParams{false, 0, 0, 0};
        DataCopyPad(xLocal, xGm[progress * this->tileLength], copyParams, padParams);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute(uint32_t len)
    {
        LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        LocalTensor<float> work = workBuf.Get<float>();
        LocalTensor<float> part = partBuf.Get<float>();
        LocalTensor<float> acc = accBuf.Get<float>();
        ReduceSum<float>(part, xLocal, work, len);
        Add(acc, acc, part, 1);
        inQueueX.FreeTensor(xLocal);
    }
private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TBuf<QuePosition::VECCALC> workBuf, partBuf, accBuf;
    GlobalTensor<float> xGm;
    GlobalTensor<float> yGm;
    GlobalTensor<float> partGm;
    uint32_t blockLength;
    uint32_t tileNum;
    uint32_t tileLength;
    uint32_t lastTileLength;
};

extern "C" __global__ __aicore__ void sum_all_sync_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tiling_data, tiling);
    GM_ADDR usrWorkspace = AscendC::GetUserWorkspace(workspace);
    KernelSumAllSync op;
    op.Init(x, y, usrWorkspace, tiling_data.perCoreLength, tiling_data.lastCoreLength, tiling_data.tileLength);
    op.Process();
}
"""

python_bind_src = """
#include <torch/library.h>
#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"

at::Tensor sum_all_sync_custom_impl_npu(const at::Tensor& self)
{
    at::Tensor result = at::empty({}, self.options());
    EXEC_NPU_CMD(aclnnSumAllSyncCustom, self, result);
    return result;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
    m.def("sum_all_sync_custom", &sum_all_sync_custom_impl_npu, "sum of all elements");
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
        return custom_ops_lib.sum_all_sync_custom(x)
'''
