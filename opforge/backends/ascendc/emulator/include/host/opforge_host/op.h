// The operator-project host side of CANN as MultiKernelBench's answers use it, written from Huawei's public
// "Ascend C operator development" documentation: ge/gert types, the tiling context a TilingFunc reads and fills,
// tiling data classes (BEGIN_TILING_DATA_DEF), OpDef/OP_ADD registration, platform_ascendc's core and memory
// numbers (from the emulator's target table). EXEC_NPU_CMD (exec.h) ties them to a kernel launch.
#pragma once
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "opforge_host/tensor.h"

namespace ge {
enum graphStatus : uint32_t { GRAPH_SUCCESS = 0, GRAPH_FAILED = 0xFFFFFFFF, GRAPH_PARAM_INVALID = 50331649 };
using Status = uint32_t;
constexpr uint32_t SUCCESS = 0, FAILED = 0xFFFFFFFF;
enum DataType {
    DT_FLOAT = 0, DT_FLOAT16 = 1, DT_INT8 = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT16 = 6, DT_UINT16 = 7,
    DT_UINT32 = 8, DT_INT64 = 9, DT_UINT64 = 10, DT_DOUBLE = 11, DT_BOOL = 12, DT_BF16 = 27, DT_UNDEFINED = 28
};
enum Format { FORMAT_NCHW = 0, FORMAT_NHWC = 1, FORMAT_ND = 2, FORMAT_NC1HWC0 = 3, FORMAT_FRACTAL_Z = 4,
              FORMAT_NCDHW = 30, FORMAT_FRACTAL_NZ = 29, FORMAT_RESERVED = 40 };
inline DataType dtype_of(c10::ScalarType t) {
    switch (t) {
        case c10::ScalarType::Float: return DT_FLOAT; case c10::ScalarType::Half: return DT_FLOAT16;
        case c10::ScalarType::BFloat16: return DT_BF16; case c10::ScalarType::Char: return DT_INT8;
        case c10::ScalarType::Byte: return DT_UINT8; case c10::ScalarType::Short: return DT_INT16;
        case c10::ScalarType::Int: return DT_INT32; case c10::ScalarType::Long: return DT_INT64;
        case c10::ScalarType::Double: return DT_DOUBLE; case c10::ScalarType::Bool: return DT_BOOL;
        default: return DT_UNDEFINED;
    }
}
inline const char* dtype_name(DataType t) {
    switch (t) {
        case DT_FLOAT: return "float32"; case DT_FLOAT16: return "float16"; case DT_BF16: return "bfloat16";
        case DT_INT8: return "int8"; case DT_UINT8: return "uint8"; case DT_INT16: return "int16";
        case DT_UINT16: return "uint16"; case DT_INT32: return "int32"; case DT_UINT32: return "uint32";
        case DT_INT64: return "int64"; case DT_UINT64: return "uint64"; case DT_DOUBLE: return "float64";
        case DT_BOOL: return "bool"; default: return "undefined";
    }
}
inline uint32_t GetSizeByDataType(DataType t) {
    switch (t) {
        case DT_INT8: case DT_UINT8: case DT_BOOL: return 1;
        case DT_FLOAT16: case DT_BF16: case DT_INT16: case DT_UINT16: return 2;
        case DT_FLOAT: case DT_INT32: case DT_UINT32: return 4;
        case DT_INT64: case DT_UINT64: case DT_DOUBLE: return 8;
        default: return 0;
    }
}
struct TypeUtils {
    static bool GetDataTypeLength(DataType t, uint32_t& length) {
        length = GetSizeByDataType(t);
        return length != 0;
    }
};
}  // namespace ge

namespace fe {
struct PlatFormInfos {};
}  // namespace fe

namespace gert {
class Shape {
  public:
    Shape() = default;
    Shape(std::initializer_list<int64_t> d) : dims_(d) {}
    explicit Shape(std::vector<int64_t> d) : dims_(std::move(d)) {}
    size_t GetDimNum() const { return dims_.size(); }
    int64_t GetDim(size_t i) const { return i < dims_.size() ? dims_[i] : 0; }
    void SetDim(size_t i, int64_t v) { if (i < dims_.size()) dims_[i] = v; }
    void SetDimNum(size_t n) { dims_.resize(n, 1); }
    Shape& AppendDim(int64_t v) { dims_.push_back(v); return *this; }
    int64_t GetShapeSize() const {
        int64_t n = 1;
        for (int64_t d : dims_) n *= d;
        return n;
    }
    bool IsScalar() const { return dims_.empty(); }
    int64_t operator[](size_t i) const { return GetDim(i); }
    int64_t& operator[](size_t i) { return dims_[i]; }
    bool operator==(const Shape& o) const { return dims_ == o.dims_; }
    bool operator!=(const Shape& o) const { return dims_ != o.dims_; }

  private:
    std::vector<int64_t> dims_;
};
class StorageShape {
  public:
    StorageShape() = default;
    explicit StorageShape(const Shape& s) : origin_(s), storage_(s) {}
    const Shape& GetOriginShape() const { return origin_; }
    const Shape& GetStorageShape() const { return storage_; }
    Shape& MutableOriginShape() { return origin_; }
    Shape& MutableStorageShape() { return storage_; }

  private:
    Shape origin_, storage_;
};
class Tensor {  // what GetInputTensor gives: shape and type (the data stays on the device)
  public:
    Tensor() = default;
    Tensor(const Shape& s, ge::DataType t) : shape_(s), dtype_(t) {}
    const Shape& GetOriginShape() const { return shape_.GetOriginShape(); }
    const Shape& GetStorageShape() const { return shape_.GetStorageShape(); }
    const StorageShape& GetShape() const { return shape_; }
    int64_t GetShapeSize() const { return shape_.GetStorageShape().GetShapeSize(); }
    ge::DataType GetDataType() const { return dtype_; }
    ge::Format GetFormat() const { return ge::FORMAT_ND; }
    ge::Format GetOriginFormat() const { return ge::FORMAT_ND; }
    ge::Format GetStorageFormat() const { return ge::FORMAT_ND; }

  private:
    StorageShape shape_;
    ge::DataType dtype_ = ge::DT_UNDEFINED;
};
class CompileTimeTensorDesc {
  public:
    explicit CompileTimeTensorDesc(ge::DataType t = ge::DT_UNDEFINED) : dtype_(t) {}
    ge::DataType GetDataType() const { return dtype_; }
    ge::Format GetOriginFormat() const { return ge::FORMAT_ND; }
    ge::Format GetStorageFormat() const { return ge::FORMAT_ND; }
    ge::Format GetFormat() const { return ge::FORMAT_ND; }

  private:
    ge::DataType dtype_;
};
template <class T> class TypedContinuousVector {
  public:
    explicit TypedContinuousVector(std::vector<T> v = {}) : v_(std::move(v)) {}
    size_t GetSize() const { return v_.size(); }
    const T* GetData() const { return v_.data(); }

  private:
    std::vector<T> v_;
};
using ContinuousVector = TypedContinuousVector<int64_t>;
struct AttrValue {  // one attribute, in the type its OpDef declares
    int64_t i = 0;
    float f = 0;
    bool b = false;
    std::string s;
    TypedContinuousVector<int64_t> ints;
    TypedContinuousVector<float> floats;
};
class RuntimeAttrs {
  public:
    std::vector<AttrValue> values;
    size_t GetAttrNum() const { return values.size(); }
    const int64_t* GetInt(size_t i) const { return i < values.size() ? &values[i].i : nullptr; }
    const float* GetFloat(size_t i) const { return i < values.size() ? &values[i].f : nullptr; }
    const bool* GetBool(size_t i) const { return i < values.size() ? &values[i].b : nullptr; }
    const char* GetStr(size_t i) const { return i < values.size() ? values[i].s.c_str() : nullptr; }
    const TypedContinuousVector<int64_t>* GetListInt(size_t i) const { return i < values.size() ? &values[i].ints : nullptr; }
    const TypedContinuousVector<float>* GetListFloat(size_t i) const { return i < values.size() ? &values[i].floats : nullptr; }
    template <class T> const T* GetAttrPointer(size_t i) const {
        if (i >= values.size()) return nullptr;
        if constexpr (std::is_same_v<T, float>) return &values[i].f;
        else if constexpr (std::is_same_v<T, bool>) return &values[i].b;
        else if constexpr (std::is_same_v<T, char>) return values[i].s.c_str();
        else if constexpr (std::is_integral_v<T> && sizeof(T) == 8) return (const T*)&values[i].i;
        else if constexpr (std::is_same_v<T, TypedContinuousVector<int64_t>>) return &values[i].ints;
        else if constexpr (std::is_same_v<T, TypedContinuousVector<float>>) return &values[i].floats;
        else static_assert(sizeof(T) == 0, "GetAttrPointer: float, bool, char, int64_t or a list");
    }
};
class TilingData {  // the raw tiling buffer a TilingFunc saves its tiling class into
  public:
    static constexpr size_t kCapacity = 64 * 1024;
    void* GetData() { return buf_.data(); }
    size_t GetCapacity() const { return buf_.size(); }
    void SetDataSize(size_t n) { size_ = n; set_ = true; }
    size_t GetDataSize() const { return size_; }
    bool size_set() const { return set_; }

  private:
    std::vector<uint8_t> buf_ = std::vector<uint8_t>(kCapacity, 0);
    size_t size_ = 0;
    bool set_ = false;
};
class TilingContext {
  public:
    // filled by EXEC_NPU_CMD (exec.h) from the call's tensors and scalars
    std::vector<std::unique_ptr<StorageShape>> in_shapes, out_shapes;
    std::vector<std::unique_ptr<Tensor>> in_tensors, out_tensors;
    std::vector<CompileTimeTensorDesc> in_descs, out_descs;
    RuntimeAttrs attrs;
    std::string node_name, node_type;
    uint32_t block_dim = 0;
    uint64_t tiling_key = 0;
    TilingData raw;
    std::vector<size_t> workspace;
    fe::PlatFormInfos platform;

    const StorageShape* GetInputShape(size_t i) const { return i < in_shapes.size() ? in_shapes[i].get() : nullptr; }
    const StorageShape* GetOptionalInputShape(size_t i) const { return GetInputShape(i); }
    const StorageShape* GetDynamicInputShape(size_t i, size_t) const { return GetInputShape(i); }
    const StorageShape* GetOutputShape(size_t i) const { return i < out_shapes.size() ? out_shapes[i].get() : nullptr; }
    const Tensor* GetInputTensor(size_t i) const { return i < in_tensors.size() ? in_tensors[i].get() : nullptr; }
    const Tensor* GetOptionalInputTensor(size_t i) const { return GetInputTensor(i); }
    const Tensor* GetOutputTensor(size_t i) const { return i < out_tensors.size() ? out_tensors[i].get() : nullptr; }
    const CompileTimeTensorDesc* GetInputDesc(size_t i) const { return i < in_descs.size() ? &in_descs[i] : nullptr; }
    const CompileTimeTensorDesc* GetOptionalInputDesc(size_t i) const { return GetInputDesc(i); }
    const CompileTimeTensorDesc* GetOutputDesc(size_t i) const { return i < out_descs.size() ? &out_descs[i] : nullptr; }
    const RuntimeAttrs* GetAttrs() const { return &attrs; }
    size_t GetComputeNodeInputNum() const { return in_shapes.size(); }
    size_t GetComputeNodeOutputNum() const { return out_shapes.size(); }
    const char* GetNodeName() const { return node_name.c_str(); }
    const char* GetNodeType() const { return node_type.c_str(); }
    ge::graphStatus SetBlockDim(uint32_t n) { block_dim = n; return ge::GRAPH_SUCCESS; }
    uint32_t GetBlockDim() const { return block_dim; }
    ge::graphStatus SetTilingKey(uint64_t k) { tiling_key = k; return ge::GRAPH_SUCCESS; }
    uint64_t GetTilingKey() const { return tiling_key; }
    ge::graphStatus SetScheduleMode(uint32_t) { return ge::GRAPH_SUCCESS; }
    ge::graphStatus SetNeedAtomic(bool) { return ge::GRAPH_SUCCESS; }
    TilingData* GetRawTilingData() { return &raw; }
    template <class T> T* GetTilingData() {
        raw.SetDataSize(sizeof(T));
        return new (raw.GetData()) T();
    }
    size_t* GetWorkspaceSizes(size_t n) {
        if (workspace.size() < n) workspace.resize(n, 0);
        return workspace.data();
    }
    size_t GetWorkspaceNum() const { return workspace.size(); }
    fe::PlatFormInfos* GetPlatformInfo() { return &platform; }
};
class InferShapeContext {  // declared for InferShape functions; the emulator never calls them
  public:
    const Shape* GetInputShape(size_t) const { return nullptr; }
    const Shape* GetOptionalInputShape(size_t) const { return nullptr; }
    Shape* GetOutputShape(size_t) { return nullptr; }
    const RuntimeAttrs* GetAttrs() const { return nullptr; }
    const Tensor* GetInputTensor(size_t) const { return nullptr; }
    const char* GetNodeName() const { return ""; }
};
class InferDataTypeContext {
  public:
    ge::DataType GetInputDataType(size_t) const { return ge::DT_UNDEFINED; }
    ge::graphStatus SetOutputDataType(size_t, ge::DataType) { return ge::GRAPH_SUCCESS; }
    const RuntimeAttrs* GetAttrs() const { return nullptr; }
};
using TilingFunc = ge::graphStatus (*)(TilingContext*);
}  // namespace gert

namespace opforge_host {
// A tiling class's fields are its only data members (the base is empty), in declaration order: the bytes
// SaveToBuffer writes are the struct's, which is how the kernel-side struct Python generates reads them.
template <class D> struct TilingBase {
    void SaveToBuffer(void* buf, size_t capacity, opforge_asc::Loc loc = opforge_asc::Loc::here()) const {
        if (sizeof(D) > capacity)
            at::host_fail("SaveToBuffer", concat("the tiling data is ", sizeof(D), " bytes, over the buffer's ",
                                                 capacity), loc);
        std::memcpy(buf, static_cast<const D*>(this), sizeof(D));
    }
    size_t GetDataSize() const { return sizeof(D); }
    void SetDataPtr(void*) {}
};
}  // namespace opforge_host

#define BEGIN_TILING_DATA_DEF(cls) class cls : public ::opforge_host::TilingBase<cls> { public:
#define TILING_DATA_FIELD_DEF(type, name)        \
    type name{};                                 \
    void set_##name(type v) { this->name = v; }  \
    type get_##name() const { return this->name; }
#define TILING_DATA_FIELD_DEF_ARR(type, n, name)                                               \
    type name[n]{};                                                                            \
    void set_##name(const type* v) { std::memcpy(this->name, v, sizeof(this->name)); }         \
    const type* get_##name() const { return this->name; }
#define TILING_DATA_FIELD_DEF_STRUCT(stype, name) \
    stype name{};                                 \
    stype& get_##name() { return this->name; }
#define END_TILING_DATA_DEF }
#define REGISTER_TILING_DATA_CLASS(op, cls) static_assert(sizeof(cls) > 0, "");

namespace platform_ascendc {
enum class CoreMemType { L0_A = 0, L0_B, L0_C, L1, L2, UB, HBM, RESERVED };
enum class SocVersion { ASCEND910 = 0, ASCEND910B, ASCEND910_93, ASCEND310P, ASCEND310B, RESERVED_VERSION };
class PlatformAscendC {
  public:
    PlatformAscendC() = default;
    explicit PlatformAscendC(const fe::PlatFormInfos*) {}
    uint32_t GetCoreNum() const { return opforge_asc::target().aiv_cores; }
    uint32_t GetCoreNumAic() const { return opforge_asc::target().aic_cores; }
    uint32_t GetCoreNumAiv() const { return opforge_asc::target().aiv_cores; }
    void GetCoreMemSize(CoreMemType t, uint64_t& size) const {
        // UB from the target table; L1 512 KB, L0A/L0B 64 KB, L0C 128 KB (Atlas A2's published sizes)
        switch (t) {
            case CoreMemType::UB: size = opforge_asc::target().ub_bytes; break;
            case CoreMemType::L1: size = 512 * 1024; break;
            case CoreMemType::L0_A: case CoreMemType::L0_B: size = 64 * 1024; break;
            case CoreMemType::L0_C: size = 128 * 1024; break;
            default: size = 0;
        }
    }
    SocVersion GetSocVersion() const {
        return std::strcmp(opforge_asc::target().name, "ascend310p") == 0 ? SocVersion::ASCEND310P : SocVersion::ASCEND910B;
    }
    uint32_t GetLibApiWorkSpaceSize() const { return 16 * 1024 * 1024; }
    uint32_t CalcTschBlockDim(uint32_t slices, uint32_t aic, uint32_t aiv) const {
        (void)aic; (void)aiv;
        return slices;
    }
    void GetCoreMemBw(CoreMemType, uint64_t& bw) const { bw = 0; }
};
class PlatformAscendCManager {
  public:
    static PlatformAscendC* GetInstance() {
        static PlatformAscendC p;
        return &p;
    }
    static PlatformAscendC* GetInstance(const char*) { return GetInstance(); }
};
}  // namespace platform_ascendc

namespace ops {
enum Option { REQUIRED = 0, OPTIONAL = 1, DYNAMIC = 2 };
class OpParamDef {
  public:
    explicit OpParamDef(const char* n) : name(n) {}
    std::string name;
    Option option = REQUIRED;
    std::vector<ge::DataType> types;
    OpParamDef& ParamType(Option o) { option = o; return *this; }
    OpParamDef& DataType(std::vector<ge::DataType> t) { types = std::move(t); return *this; }
    OpParamDef& DataTypeList(std::vector<ge::DataType> t) { types = std::move(t); return *this; }
    OpParamDef& Format(std::vector<ge::Format>) { return *this; }
    OpParamDef& FormatList(std::vector<ge::Format>) { return *this; }
    OpParamDef& UnknownShapeFormat(std::vector<ge::Format>) { return *this; }
    OpParamDef& ValueDepend(Option) { return *this; }
    OpParamDef& AutoContiguous() { return *this; }
    OpParamDef& IgnoreContiguous() { return *this; }
    OpParamDef& Scalar() { return *this; }
    OpParamDef& ScalarList() { return *this; }
    OpParamDef& InitValue(uint64_t) { return *this; }
    OpParamDef& Follow(const char*) { return *this; }
};
class OpAttrDef {
  public:
    enum Kind { NONE, INT, FLOAT, BOOL, STR, LIST_INT, LIST_FLOAT, LIST_BOOL };
    explicit OpAttrDef(const char* n) : name(n) {}
    std::string name;
    Option option = REQUIRED;
    Kind kind = NONE;
    gert::AttrValue value;
    OpAttrDef& AttrType(Option o) { option = o; return *this; }
    OpAttrDef& Int() { kind = INT; return *this; }
    OpAttrDef& Int(int64_t v) { kind = INT; value.i = v; return *this; }
    OpAttrDef& Float() { kind = FLOAT; return *this; }
    OpAttrDef& Float(float v) { kind = FLOAT; value.f = v; return *this; }
    OpAttrDef& Bool() { kind = BOOL; return *this; }
    OpAttrDef& Bool(bool v) { kind = BOOL; value.b = v; return *this; }
    OpAttrDef& String() { kind = STR; return *this; }
    OpAttrDef& String(const char* v) { kind = STR; value.s = v; return *this; }
    OpAttrDef& ListInt() { kind = LIST_INT; return *this; }
    OpAttrDef& ListInt(std::vector<int64_t> v) { kind = LIST_INT; value.ints = gert::TypedContinuousVector<int64_t>(v); return *this; }
    OpAttrDef& ListFloat() { kind = LIST_FLOAT; return *this; }
    OpAttrDef& ListFloat(std::vector<float> v) { kind = LIST_FLOAT; value.floats = gert::TypedContinuousVector<float>(v); return *this; }
    OpAttrDef& ListBool() { kind = LIST_BOOL; return *this; }
    OpAttrDef& ListBool(std::vector<bool>) { kind = LIST_BOOL; return *this; }
};
class OpAICoreConfig {
  public:
    std::deque<OpParamDef> params;
    OpAICoreConfig& DynamicCompileStaticFlag(bool) { return *this; }
    OpAICoreConfig& DynamicFormatFlag(bool) { return *this; }
    OpAICoreConfig& DynamicRankSupportFlag(bool) { return *this; }
    OpAICoreConfig& DynamicShapeSupportFlag(bool) { return *this; }
    OpAICoreConfig& NeedCheckSupportFlag(bool) { return *this; }
    OpAICoreConfig& PrecisionReduceFlag(bool) { return *this; }
    OpAICoreConfig& ExtendCfgInfo(const char*, const char*) { return *this; }
    OpParamDef& Input(const char* n) { return params.emplace_back(n); }
    OpParamDef& Output(const char* n) { return params.emplace_back(n); }
};
class OpAICoreDef {
  public:
    gert::TilingFunc tiling = nullptr;
    std::vector<std::string> configs;
    template <class F> OpAICoreDef& SetTiling(F f) { tiling = f; return *this; }
    OpAICoreDef& AddConfig(const char* soc) { configs.emplace_back(soc); return *this; }
    OpAICoreDef& AddConfig(const char* soc, OpAICoreConfig&) { return AddConfig(soc); }
    template <class F> OpAICoreDef& SetCheckSupport(F) { return *this; }
    template <class F> OpAICoreDef& SetOpSelectFormat(F) { return *this; }
    template <class F> OpAICoreDef& SetOpSupportInfo(F) { return *this; }
};
class OpMC2Def {
  public:
    OpMC2Def& HcclGroup(const char*) { return *this; }
};
class OpDef {
  public:
    explicit OpDef(const char* type) : type_(type) {}
    virtual ~OpDef() = default;
    OpParamDef& Input(const char* n) { return inputs.emplace_back(n); }
    OpParamDef& Output(const char* n) { return outputs.emplace_back(n); }
    OpAttrDef& Attr(const char* n) { return attrs.emplace_back(n); }
    template <class F> OpDef& SetInferShape(F) { return *this; }
    template <class F> OpDef& SetInferShapeRange(F) { return *this; }
    template <class F> OpDef& SetInferDataType(F) { return *this; }
    OpAICoreDef& AICore() { return aicore; }
    OpMC2Def& MC2() { return mc2; }
    const std::string& type() const { return type_; }
    std::deque<OpParamDef> inputs, outputs;
    std::deque<OpAttrDef> attrs;
    OpAICoreDef aicore;
    OpMC2Def mc2;

  private:
    std::string type_;
};
}  // namespace ops

namespace opforge_host {
inline std::map<std::string, std::unique_ptr<ops::OpDef>>& op_defs() {
    static std::map<std::string, std::unique_ptr<ops::OpDef>> table;
    return table;
}
template <class T> struct OpRegistrar {
    explicit OpRegistrar(const char* name) { op_defs()[name] = std::make_unique<T>(name); }
};
}  // namespace opforge_host
#define OP_ADD(op, ...) static ::opforge_host::OpRegistrar<op> opforge_op_add_##op(#op)
