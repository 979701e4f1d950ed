// EXEC_NPU_CMD(aclnnXxx, inputs..., attrs..., outputs...): what CANN's generated aclnn API does for a registered
// operator, done on the emulator: find the OpDef (OP_ADD), check the call's dtypes and the target against it,
// build the gert::TilingContext from the call's tensors and scalars, run its TilingFunc, allocate the workspace
// (CANN's 16 MB system workspace plus the user's sizes) and the tiling buffer in GM, and launch the kernel named
// after the operator (AddCustom -> add_custom) with (inputs..., outputs..., workspace, tiling).
#pragma once
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "opforge_host/op.h"

namespace opforge_host {
constexpr uint64_t kSystemWorkspace = 16ull * 1024 * 1024;

struct KernelEntry {
    int nparams = 0;
    std::function<void(uint32_t, uint8_t**, opforge_asc::Loc)> launch;
};
inline std::map<std::string, KernelEntry>& kernels() {  // filled by the generated glue (emulator/glue.py)
    static std::map<std::string, KernelEntry> table;
    return table;
}
struct KernelRegistrar {
    KernelRegistrar(const char* name, int nparams, std::function<void(uint32_t, uint8_t**, opforge_asc::Loc)> f) {
        kernels()[name] = KernelEntry{nparams, std::move(f)};
    }
};

// The dtype combination (project_json_src's type column) the kernel unit was compiled for: the glue sets it.
// A call whose dtypes match another column ends with code kColumnBase + column, and Python builds that one.
constexpr int kColumnBase = 100;
inline int& compiled_column() {
    static int column = 0;
    return column;
}

struct TilingState {  // what GET_TILING_DATA and TILING_KEY_IS read in the kernel being launched
    const uint8_t* ptr = nullptr;
    uint64_t bytes = 0;
    uint64_t key = 0;
};
inline TilingState& tiling_state() {
    static TilingState s;
    return s;
}

struct CmdArg {
    int kind = 0;  // 0 absent, 1 tensor, 2 int, 3 float, 4 bool, 5 int list, 6 string
    at::Tensor t;
    int64_t i = 0;
    double f = 0;
    std::vector<int64_t> ints;
    std::string s;
};
inline CmdArg cmd_arg(const at::Tensor& t) { CmdArg a; a.kind = t.defined() ? 1 : 0; a.t = t; return a; }
inline CmdArg cmd_arg(const std::optional<at::Tensor>& t) { return t ? cmd_arg(*t) : CmdArg{}; }
inline CmdArg cmd_arg(bool b) { CmdArg a; a.kind = 4; a.i = b; return a; }
inline CmdArg cmd_arg(const std::vector<int64_t>& v) { CmdArg a; a.kind = 5; a.ints = v; return a; }
inline CmdArg cmd_arg(at::IntArrayRef v) { return cmd_arg(v.vec()); }
inline CmdArg cmd_arg(const char* s) { CmdArg a; a.kind = 6; a.s = s; return a; }
inline CmdArg cmd_arg(const std::string& s) { return cmd_arg(s.c_str()); }
template <class T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, int> = 0>
CmdArg cmd_arg(T v) {
    CmdArg a;
    if constexpr (std::is_integral_v<T>) { a.kind = 2; a.i = (int64_t)v; a.f = (double)v; }
    else { a.kind = 3; a.f = (double)v; a.i = (int64_t)v; }
    return a;
}

inline std::string snake(const std::string& op) {  // msopgen's kernel name: AddCustom -> add_custom
    std::string out;
    for (size_t i = 0; i < op.size(); i++) {
        char c = op[i];
        if (std::isupper((unsigned char)c) && i > 0 && (std::islower((unsigned char)op[i - 1]) || std::isdigit((unsigned char)op[i - 1])))
            out += '_';
        out += (char)std::tolower((unsigned char)c);
    }
    return out;
}

[[noreturn]] inline void cmd_fail(const std::string& api, const std::string& msg, opforge_asc::Loc loc) {
    at::host_fail(("EXEC_NPU_CMD(" + api + ")").c_str(), msg, loc);
}

inline void check_param(const std::string& api, const ops::OpParamDef& p, const CmdArg& a, const char* role,
                        opforge_asc::Loc loc) {
    if (a.kind == 0) {
        if (p.option == ops::REQUIRED) cmd_fail(api, concat(role, " ", p.name, " is required, and the call passes none"), loc);
        return;
    }
    if (a.kind != 1) cmd_fail(api, concat(role, " ", p.name, " is a tensor, and the call passes a scalar"), loc);
    ge::DataType t = ge::dtype_of(a.t.scalar_type());
    if (p.types.empty() || std::find(p.types.begin(), p.types.end(), t) != p.types.end()) return;
    std::string declared;
    for (ge::DataType d : p.types) declared += std::string(declared.empty() ? "" : ", ") + ge::dtype_name(d);
    cmd_fail(api, concat("the operator declares ", role, " ", p.name, " as ", declared,
                         " (OpDef DataType), and the call passes ", ge::dtype_name(t)), loc);
}

inline gert::AttrValue attr_value(const std::string& api, const ops::OpAttrDef& d, const CmdArg& a, opforge_asc::Loc loc) {
    gert::AttrValue v = d.value;
    if (a.kind == 0) return v;
    switch (d.kind) {
        case ops::OpAttrDef::FLOAT: v.f = (float)a.f; break;
        case ops::OpAttrDef::INT: v.i = a.i; break;
        case ops::OpAttrDef::BOOL: v.b = a.i != 0; break;
        case ops::OpAttrDef::STR: v.s = a.s; break;
        case ops::OpAttrDef::LIST_INT: v.ints = gert::TypedContinuousVector<int64_t>(a.ints); break;
        default: cmd_fail(api, concat("attribute ", d.name, " has no type the emulator models (Int, Float, Bool, "
                                      "String, ListInt)"), loc);
    }
    return v;
}

// The first type column every tensor of the call matches (a one-type list matches every column); -1 if none.
inline int match_column(const ops::OpDef& def, const std::vector<CmdArg>& args) {
    size_t ni = def.inputs.size(), na = def.attrs.size(), columns = 1;
    for (auto* list : {&def.inputs, &def.outputs})
        for (const ops::OpParamDef& p : *list) columns = std::max(columns, p.types.size());
    for (size_t c = 0; c < columns; c++) {
        bool ok = true;
        for (size_t k = 0; k < ni + def.outputs.size() && ok; k++) {
            const ops::OpParamDef& p = k < ni ? def.inputs[k] : def.outputs[k - ni];
            const CmdArg& a = args[k < ni ? k : k + na];
            if (a.kind != 1 || p.types.empty()) continue;
            ok = p.types[p.types.size() > c ? c : 0] == ge::dtype_of(a.t.scalar_type());
        }
        if (ok) return (int)c;
    }
    return -1;
}

inline void run_op(const std::string& api, const std::vector<CmdArg>& args, opforge_asc::Loc loc) {
    std::string op = api.rfind("aclnn", 0) == 0 ? api.substr(5) : api;
    auto found = op_defs().find(op);
    if (found == op_defs().end())
        cmd_fail(api, concat("no operator ", op, " is registered (OP_ADD(", op, ") in host_operator_src)"), loc);
    ops::OpDef& def = *found->second;
    size_t ni = def.inputs.size(), na = def.attrs.size(), no = def.outputs.size();
    if (args.size() != ni + na + no)
        cmd_fail(api, concat("the operator has ", ni, " inputs, ", na, " attributes and ", no, " outputs (OpDef), "
                             "and the call passes ", args.size(), " arguments"), loc);
    const char* soc = opforge_asc::target().name;
    auto& cfg = def.aicore.configs;
    if (!cfg.empty() && std::find(cfg.begin(), cfg.end(), soc) == cfg.end())
        cmd_fail(api, concat("the operator is registered for ", cfg[0], cfg.size() > 1 ? " and others" : "",
                             " only (AICore().AddConfig), not for the target ", soc), loc);
    gert::TilingContext ctx;
    ctx.node_name = ctx.node_type = op;
    std::vector<uint8_t*> ptrs;
    for (size_t k = 0; k < ni + no; k++) {
        bool in = k < ni;
        const CmdArg& a = args[in ? k : k + na];
        check_param(api, in ? def.inputs[k] : def.outputs[k - ni], a, in ? "input" : "output", loc);
        auto shape = a.kind ? std::make_unique<gert::StorageShape>(gert::Shape(a.t.sizes().vec())) : nullptr;
        auto tensor = a.kind ? std::make_unique<gert::Tensor>(gert::Shape(a.t.sizes().vec()), ge::dtype_of(a.t.scalar_type()))
                             : nullptr;
        gert::CompileTimeTensorDesc desc(a.kind ? ge::dtype_of(a.t.scalar_type()) : ge::DT_UNDEFINED);
        (in ? ctx.in_shapes : ctx.out_shapes).push_back(std::move(shape));
        (in ? ctx.in_tensors : ctx.out_tensors).push_back(std::move(tensor));
        (in ? ctx.in_descs : ctx.out_descs).push_back(desc);
        ptrs.push_back(a.kind ? (uint8_t*)a.t.data_ptr() : nullptr);
    }
    int column = match_column(def, args);
    if (column >= 0 && column != compiled_column())
        throw opforge_asc::EmuError{kColumnBase + column, concat("the call's dtypes are the operator's type column ",
                                                                 column, "; the kernel was built for column ",
                                                                 compiled_column())};
    for (size_t k = 0; k < na; k++) ctx.attrs.values.push_back(attr_value(api, def.attrs[k], args[ni + k], loc));
    if (!def.aicore.tiling) cmd_fail(api, "the operator sets no tiling function (AICore().SetTiling)", loc);
    if (def.aicore.tiling(&ctx) != ge::GRAPH_SUCCESS) cmd_fail(api, concat("the TilingFunc of ", op, " returned a failure"), loc);
    if (ctx.block_dim == 0) cmd_fail(api, concat("the TilingFunc of ", op, " set no block dimension (SetBlockDim)"), loc);
    if (ctx.raw.GetDataSize() > gert::TilingData::kCapacity)
        cmd_fail(api, concat("SetDataSize(", ctx.raw.GetDataSize(), ") is over the tiling buffer's ",
                             gert::TilingData::kCapacity, " bytes"), loc);
    uint64_t user = 0;
    for (size_t w : ctx.workspace) user += w;
    uint8_t* workspace = (uint8_t*)opforge_asc::gm_alloc(kSystemWorkspace + user, "the workspace", true);
    uint64_t tiling_bytes = ctx.raw.GetDataSize();
    uint8_t* tiling = (uint8_t*)opforge_asc::gm_alloc(tiling_bytes, "the tiling data", false);
    std::memcpy(tiling, ctx.raw.GetData(), tiling_bytes);
    std::string name = snake(op);
    auto kernel = kernels().find(name);
    if (kernel == kernels().end())
        cmd_fail(api, concat("kernel_src defines no kernel ", name, " (CANN launches the operator's snake_case name)"), loc);
    if (kernel->second.nparams != (int)(ni + no + 2))
        cmd_fail(api, concat("kernel ", name, " takes ", kernel->second.nparams, " GM_ADDR parameters, and CANN passes ",
                             ni + no + 2, ": the ", ni, " inputs, the ", no, " outputs, the workspace and the tiling"), loc);
    ptrs.push_back(workspace);
    ptrs.push_back(tiling);
    tiling_state() = TilingState{tiling, tiling_bytes, ctx.tiling_key};
    kernel->second.launch(ctx.block_dim, ptrs.data(), loc);
    tiling_state() = TilingState{};
}

template <class... A> void exec_npu_cmd(opforge_asc::Loc loc, const char* api, const A&... a) {
    std::vector<CmdArg> args{cmd_arg(a)...};
    run_op(api, args, loc);
}
}  // namespace opforge_host

#define EXEC_NPU_CMD(api, ...) ::opforge_host::exec_npu_cmd(::opforge_asc::Loc::here(), #api, ##__VA_ARGS__)

extern "C" {
// the kernel side of GET_TILING_DATA / TILING_KEY_IS (the generated kernel prelude declares them; entry.h defines them)
void opforge_tiling_load(void* dst, const void* src, unsigned long bytes, const char* file, unsigned line);
unsigned long long opforge_tiling_key(void);
}
