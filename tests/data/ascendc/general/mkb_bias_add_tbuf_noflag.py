"""DELIBERATE BUG: mkb_bias_add_tbuf.py without the MTE3->MTE2 flag: the next row's copy-in overwrites the
buffer the previous row's copy-out may still be reading (a race on the NPU). Expected exit 1."""

project_json_src = '''
[
    {
        "op": "BiasAddCustom",
        "language": "cpp",
        "input_desc": [
            {"name": "x", "param_type": "required", "format": ["ND"], "type": ["float"]},
            {"name": "bias", "param_type": "required", "format": ["ND"], "type": ["float"]}
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
BEGIN_TILING_DATA_DEF(BiasAddCustomTilingData)
  TILING_DATA_FIELD_DEF(uint32_t, rows);
  TILING_DATA_FIELD_DEF(uint32_t, cols);
  TILING_DATA_FIELD_DEF(uint32_t, rowsPerCore);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(BiasAddCustom, BiasAddCustomTilingData)
}
"""

host_operator_src = """
#include "bias_add_custom_tiling.h"
#include "register/op_def_registry.h"

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    BiasAddCustomTilingData tiling;
    uint32_t total = context->GetInputShape(0)->GetOriginShape().GetShapeSize();
    uint32_t cols = context->GetInputShape(1)->GetOriginShape().GetShapeSize();
    uint32_t rows = total / cols;
    uint32_t coreNum = 8;
    if (rows < coreNum) coreNum = rows;
    uint32_t rowsPerCore = (rows + coreNum - 1) / coreNum;
    coreNum = (rows + rowsPerCore - 1) / rowsPerCore;
    context->SetBlockDim(coreNum);
    tiling.set_rows(rows);
    tiling.set_cols(cols);
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
class BiasAddCustom : public OpDef {
public:
    explicit BiasAddCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Input("bias").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(BiasAddCustom);
}
"""

kernel_src = """
#include "kernel_operator.h"

class KernelBiasAdd {
public:
    __aicore__ inline KernelBiasAdd() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR bias, GM_ADDR y, uint32_t rows, uint32_t cols, uint32_t rowsPerCore)
    {
        this->cols = cols;
        uint32_t start = rowsPerCore * AscendC::GetBlockIdx();
        this->myRows = (start + rowsPerCore <= rows) ? rowsPerCore : rows - start;
        xGm.SetGlobalBuffer((__gm__ float*)x + (uint64_t)start * cols, (uint64_t)this->myRows * cols);
        yGm.SetGlobalBuffer((__gm__ float*)y + (uint64_t)start * cols, (uint64_t)this->myRows * cols);
        biasGm.SetGlobalBuffer((__gm__ float*)bias, cols);
        uint32_t bytes = (cols * sizeof(float) + 31) / 32 * 32;
        pipe.InitBuffer(xBuf, bytes);
        pipe.InitBuffer(biasBuf, bytes);
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<float> xLocal = xBuf.Get<float>();
        AscendC::LocalTensor<float> bLocal = biasBuf.Get<float>();
        AscendC::DataCopyExtParams params{1, (uint32_t)(cols * sizeof(float)), 0, 0, 0};
        AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
        AscendC::DataCopyPad(bLocal, biasGm, params, pad);
        for (uint32_t r = 0; r < myRows; r++) {
            AscendC::DataCopyPad(xLocal, xGm[(uint64_t)r * cols], params, pad);
            AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
            AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
            AscendC::Add(xLocal, xLocal, bLocal, cols);
            AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
            AscendC::DataCopyPad(yGm[(uint64_t)r * cols], xLocal, params);
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> xBuf;
    AscendC::TBuf<AscendC::TPosition::VECCALC> biasBuf;
    AscendC::GlobalTensor<float> xGm, yGm, biasGm;
    uint32_t cols;
    uint32_t myRows;
};

extern "C" __global__ __aicore__ void bias_add_custom(GM_ADDR x, GM_ADDR bias, GM_ADDR y, GM_ADDR workspace,
                                                      GM_ADDR tiling)
{
    GET_TILING_DATA(tiling_data, tiling);
    KernelBiasAdd op;
    op.Init(x, bias, y, tiling_data.rows, tiling_data.cols, tiling_data.rowsPerCore);
    op.Process();
}
"""

python_bind_src = """
#include <torch/library.h>
#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"

at::Tensor bias_add_custom_impl_npu(const at::Tensor& x, const at::Tensor& bias)
{
    at::Tensor result = at::empty_like(x);
    EXEC_NPU_CMD(aclnnBiasAddCustom, x, bias, result);
    return result;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
    m.def("bias_add_custom", &bias_add_custom_impl_npu, "x + bias over the rows");
}
"""

model_src = '''
import torch
import torch_npu
import custom_ops_lib


class ModelNew(torch.nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.bias = torch.nn.Parameter(torch.randn(dim))

    def forward(self, x):
        return custom_ops_lib.bias_add_custom(x, self.bias)
'''
