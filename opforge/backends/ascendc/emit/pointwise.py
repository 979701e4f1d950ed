"""The AscendC emitter of a pointwise Plan (families/pointwise): a direct-launch project in the
shape of Huawei's Add sample, generalised to the fused chain.

- Multi-core split (host): the output's n elements are cut into one slice per AI vector core
  (GetCoreNumAiv), each a multiple of 32 bytes so every slice starts aligned; the last core takes
  the tail. Slices smaller than MIN_BLOCK_LENGTH are not worth a core: fewer cores are launched.
- Per core: tiles of TILE_LENGTH elements, a compile-time constant sized so every queue (two
  buffers each: BUFFER_NUM = 2) and the fp32 scratch slots fit the unified buffer; the last tile of
  a slice is shorter and moves with DataCopyPad (exact bytes), full tiles with DataCopy.
- CopyIn (MTE2: GM -> UB, one VECIN queue per input tile) / Compute (the chain on the vector
  unit, chain.py) / CopyOut (MTE3: UB -> GM, one VECOUT queue per output): EnQue/DeQue carry the
  synchronisation, so tile i+1's copy overlaps tile i's compute.
The binding checks what the kernel assumes (contiguous inputs of one shape, the dtypes of the
export), computes the tiling, and launches on torch_npu's current stream."""
from __future__ import annotations

import ast

import torch

from opforge.codegen.candidate import Kernel
from opforge.backends.ascendc.emit.chain import TORCH_CPP, Chain, build, ctype
from opforge.backends.ascendc.emit.common import Names, header, model_new, names, sources_literal
from opforge.codegen.families.pointwise.plan import Plan
from opforge.codegen.lower import Lowered, Unsupported

UB_BYTES = 196608  # the 192 KB unified buffer of an Atlas A2 (910B) AI core
# Best guess first. MAX_TILE 4096: 16 KB per fp32 DataCopy, the transfer size from which Huawei's
# performance guide finds MTE2 near its bandwidth; the UB budget leaves room for a larger tile
# when an op has few queues. The rest are for tuning on an NPU.
SPACE = ({"UB_BUDGET": 131072, "MAX_TILE": 4096}, {"UB_BUDGET": 163840, "MAX_TILE": 8192},
         {"UB_BUDGET": 65536, "MAX_TILE": 2048}, {"UB_BUDGET": 163840, "MAX_TILE": 16384})
TILE_ALIGN = 128  # elements: a whole 256-byte repeat of half, two of float, so no repeat is partial
MIN_BLOCK_LENGTH = 1024  # elements: below this a core's launch and pipeline fill cost more than its work
VIEW_METHODS = {"unsqueeze", "squeeze", "reshape", "view", "expand"}  # what ModelNew.forward may replay


def generate(lowered: Lowered, title: str, shapes: dict) -> Kernel:
    plan = Plan(lowered)
    if not plan.used:
        raise Unsupported("a pointwise graph that loads no input")
    chain = build(plan)
    for leaf in chain.leaves:
        _check_view(leaf.view)
    name = names(title, "pointwise")

    def render(config: dict) -> str:
        tile = tile_length(chain, config)
        files = {f"{name.stem}_tiling.h": _tiling_header(name, chain, tile),
                 f"{name.stem}_kernel.cpp": _kernel(name, chain),
                 f"{name.stem}_host.cpp": _host(name, chain)}
        args = [leaf.view + ("" if leaf.kind == "arg_scalar" else ".contiguous()") for leaf in chain.leaves]
        return (header(f"Pointwise AscendC kernel for {title}", "pointwise", lowered, name.module)
                + sources_literal(files) + f"\nimport torch\nimport {name.module}\n"
                + model_new(lowered, shapes, f"{name.module}.{name.stem}", args))

    tile_length(chain, SPACE[0])  # refuse an op whose queues leave no tile in the UB now, not at render
    return Kernel("pointwise", SPACE, render)


def _check_view(code: str) -> None:
    calls = [n.func.attr for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
    bad = [c for c in calls if c not in VIEW_METHODS]
    if bad or any(isinstance(n, ast.Subscript) for n in ast.walk(ast.parse(code))):
        raise Unsupported(f"an input viewed with {', '.join(bad) or 'indexing'} ({code}): the AscendC kernel "
                          "reads contiguous inputs, and ModelNew.forward may only reshape them")


def ub_bytes_per_element(chain: Chain) -> int:
    """UB bytes one element of a tile costs: BUFFER_NUM buffers per queue, 4 per fp32 slot."""
    queued = sum(leaf.dtype.itemsize for _, leaf in chain.tiles) + sum(d.itemsize for d in chain.outputs)
    return 2 * queued + 4 * chain.slots


def tile_length(chain: Chain, config: dict) -> int:
    budget = min(config["UB_BUDGET"], UB_BYTES)
    tile = min(config["MAX_TILE"], budget // ub_bytes_per_element(chain)) // TILE_ALIGN * TILE_ALIGN
    if tile < TILE_ALIGN:
        raise Unsupported(f"{len(chain.tiles)} inputs, {len(chain.outputs)} outputs and {chain.slots} scratch tiles "
                          f"leave no {TILE_ALIGN}-element tile in {budget} bytes of unified buffer")
    return tile


def _block_align(chain: Chain) -> int:
    """Elements per 32-byte block of the narrowest tensor: slices of this many start aligned in all."""
    return 32 // min([leaf.dtype.itemsize for _, leaf in chain.tiles] + [d.itemsize for d in chain.outputs])


def _gm_params(chain: Chain) -> list[str]:
    ins = [f"x{i}" if leaf.kind == "tile" else f"g{i}" for i, leaf in enumerate(chain.leaves) if leaf.kind != "arg_scalar"]
    return ins + [f"y{j}" for j in range(len(chain.outputs))]


def _tiling_header(name: Names, chain: Chain, tile: int) -> str:
    per_element = ub_bytes_per_element(chain)
    scalars = "".join(f"    float scalar{i};  // the Python-number argument {leaf.placeholder}\n"
                      for i, leaf in enumerate(chain.leaves) if leaf.kind == "arg_scalar")
    return f'''
#ifndef {name.guard}
#define {name.guard}
#include <cstdint>

// UB plan per tile element: 2 buffers x the queued tensors' bytes + 4 bytes x {chain.slots} fp32 scratch
// slot(s) = {per_element} B; {tile} x {per_element} = {tile * per_element} B of the {UB_BYTES} B unified buffer.
constexpr uint32_t TILE_LENGTH = {tile};
constexpr uint32_t SCRATCH_SLOTS = {chain.slots};
constexpr uint32_t BLOCK_ALIGN = {_block_align(chain)};  // elements per 32-byte block of the narrowest tensor
constexpr uint32_t MIN_BLOCK_LENGTH = {MIN_BLOCK_LENGTH};  // elements: a smaller slice is not worth a core

struct {name.tiling} {{
    uint32_t totalLength;      // elements of the output
    uint32_t blockLength;      // elements per core, all but the last (a multiple of BLOCK_ALIGN)
    uint32_t lastBlockLength;  // the last core's elements: the tail of the split
    uint32_t tileNum;          // tiles per core
    uint32_t lastTileNum;      // tiles of the last core
{scalars}}};

#endif  // {name.guard}
'''


def _members(chain: Chain) -> list[str]:
    lines = ["AscendC::TPipe pipe;"]
    for i, leaf in chain.tiles:
        lines.append(f"AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueue{i};")
    lines += [f"AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueue{j};" for j in range(len(chain.outputs))]
    if chain.slots:
        lines.append("AscendC::TBuf<AscendC::QuePosition::VECCALC> calcBuf;")
    for i, leaf in chain.tiles:
        lines.append(f"AscendC::GlobalTensor<{ctype(leaf.dtype, '')}> x{i}Gm;")
    lines += [f"AscendC::GlobalTensor<{ctype(d, '')}> y{j}Gm;" for j, d in enumerate(chain.outputs)]
    for i, leaf in enumerate(chain.leaves):
        if leaf.kind != "tile":
            lines.append(f"float {'g' if leaf.kind == 'gm_scalar' else 'a'}{i} = 0.0f;")
    return lines + ["uint32_t blockLength = 0;", "uint32_t tileNum = 0;"]


def _init(name: Names, chain: Chain) -> list[str]:
    lines = ["const uint32_t core = AscendC::GetBlockIdx();",
             "const bool last = core == AscendC::GetBlockNum() - 1;",
             "this->blockLength = last ? tiling.lastBlockLength : tiling.blockLength;",
             "this->tileNum = last ? tiling.lastTileNum : tiling.tileNum;",
             "const uint32_t offset = tiling.blockLength * core;  // < totalLength: the host launches no empty core",
             "if (offset + this->blockLength > tiling.totalLength) { this->tileNum = 0; }"]
    for i, leaf in enumerate(chain.leaves):
        if leaf.kind == "tile":
            t = ctype(leaf.dtype, "")
            lines.append(f"x{i}Gm.SetGlobalBuffer((__gm__ {t}*)x{i} + offset, this->blockLength);")
        elif leaf.kind == "gm_scalar":
            lines += [f"AscendC::GlobalTensor<float> g{i}Gm;", f"g{i}Gm.SetGlobalBuffer((__gm__ float*)g{i}, 1);",
                      f"this->g{i} = g{i}Gm.GetValue(0);  // one scalar read from GM, before the pipeline starts"]
        else:
            lines.append(f"this->a{i} = tiling.scalar{i};")
    lines += [f"y{j}Gm.SetGlobalBuffer((__gm__ {ctype(d, '')}*)y{j} + offset, this->blockLength);"
              for j, d in enumerate(chain.outputs)]
    lines += [f"pipe.InitBuffer(inQueue{i}, BUFFER_NUM, TILE_LENGTH * sizeof({ctype(leaf.dtype, '')}));"
              for i, leaf in chain.tiles]
    lines += [f"pipe.InitBuffer(outQueue{j}, BUFFER_NUM, TILE_LENGTH * sizeof({ctype(d, '')}));"
              for j, d in enumerate(chain.outputs)]
    if chain.slots:
        lines.append("pipe.InitBuffer(calcBuf, SCRATCH_SLOTS * TILE_LENGTH * sizeof(float));")
    return lines


def _stages(chain: Chain) -> tuple[list[str], list[str], list[str]]:
    copy_in, compute, copy_out = [], [], []
    for i, leaf in chain.tiles:
        t = ctype(leaf.dtype, "")
        copy_in += [f"AscendC::LocalTensor<{t}> x{i} = inQueue{i}.AllocTensor<{t}>();",
                    f"LoadTile(x{i}, x{i}Gm[i * TILE_LENGTH], len);", f"inQueue{i}.EnQue(x{i});"]
        compute.append(f"AscendC::LocalTensor<{t}> x{i} = inQueue{i}.DeQue<{t}>();")
    for j, d in enumerate(chain.outputs):
        t = ctype(d, "")
        compute.append(f"AscendC::LocalTensor<{t}> y{j} = outQueue{j}.AllocTensor<{t}>();")
        copy_out += [f"AscendC::LocalTensor<{t}> y{j} = outQueue{j}.DeQue<{t}>();",
                     f"StoreTile(y{j}Gm[i * TILE_LENGTH], y{j}, len);", f"outQueue{j}.FreeTensor(y{j});"]
    if chain.slots:
        compute.append("AscendC::LocalTensor<float> calc = calcBuf.Get<float>();")
        compute += [f"AscendC::LocalTensor<float> t{k} = calc[{k} * TILE_LENGTH];" for k in range(chain.slots)]
    compute.append("// the fused chain, in graph order (fp32)")
    compute += chain.statements
    compute += [f"outQueue{j}.EnQue(y{j});" for j in range(len(chain.outputs))]
    compute += [f"inQueue{i}.FreeTensor(x{i});" for i, _ in chain.tiles]
    return copy_in, compute, copy_out


def _block(lines: list[str], indent: int = 8) -> str:
    return "\n".join(" " * indent + line for line in lines)


def _kernel(name: Names, chain: Chain) -> str:
    gm = _gm_params(chain)
    copy_in, compute, copy_out = _stages(chain)
    params = ", ".join(f"GM_ADDR {p}" for p in gm)
    return f'''
#include "kernel_operator.h"
#include "{name.stem}_tiling.h"

constexpr int32_t BUFFER_NUM = 2;  // double buffering: tile i+1 is copied in while tile i computes

// A tile of `len` elements between GM and UB: whole 32-byte blocks with DataCopy when the tile is
// full, exact bytes with DataCopyPad for a slice's shorter last tile (its UB tail is padding).
template <typename T>
__aicore__ inline void LoadTile(const AscendC::LocalTensor<T>& dst, const AscendC::GlobalTensor<T>& src, uint32_t len)
{{
    if (len == TILE_LENGTH) {{
        AscendC::DataCopy(dst, src, TILE_LENGTH);
    }} else {{
        AscendC::DataCopyExtParams copy{{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0}};
        AscendC::DataCopyPadExtParams<T> pad{{false, 0, 0, 0}};
        AscendC::DataCopyPad(dst, src, copy, pad);
    }}
}}

template <typename T>
__aicore__ inline void StoreTile(const AscendC::GlobalTensor<T>& dst, const AscendC::LocalTensor<T>& src, uint32_t len)
{{
    if (len == TILE_LENGTH) {{
        AscendC::DataCopy(dst, src, TILE_LENGTH);
    }} else {{
        AscendC::DataCopyExtParams copy{{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0}};
        AscendC::DataCopyPad(dst, src, copy);
    }}
}}

class {name.cls} {{
public:
    __aicore__ inline {name.cls}() {{}}
    __aicore__ inline void Init({params}, const {name.tiling}& tiling)
    {{
{_block(_init(name, chain))}
    }}
    __aicore__ inline void Process()
    {{
        for (uint32_t i = 0; i < this->tileNum; i++) {{
            const uint32_t len = (i + 1 == this->tileNum) ? this->blockLength - i * TILE_LENGTH : TILE_LENGTH;
            CopyIn(i, len);
            Compute(len);
            CopyOut(i, len);
        }}
    }}

private:
    __aicore__ inline void CopyIn(uint32_t i, uint32_t len)
    {{
{_block(copy_in)}
    }}
    __aicore__ inline void Compute(uint32_t len)
    {{
{_block(compute)}
    }}
    __aicore__ inline void CopyOut(uint32_t i, uint32_t len)
    {{
{_block(copy_out)}
    }}

{_block(_members(chain), 4)}
}};

extern "C" __global__ __aicore__ void {name.kernel}({params}, {name.tiling} tiling)
{{
    {name.cls} op;
    op.Init({", ".join(gm)}, tiling);
    op.Process();
}}

// The launcher (compiled by bisheng with the kernel): blockDim cores on torch_npu's stream.
void {name.launcher}(uint32_t blockDim, void* stream, {", ".join(f"uint8_t* {p}" for p in gm)}, {name.tiling} tiling)
{{
    {name.kernel}<<<blockDim, nullptr, stream>>>({", ".join(gm)}, tiling);
}}
'''


def _impl_params(chain: Chain) -> list[str]:
    return [f"double s{i}" if leaf.kind == "arg_scalar" else f"const at::Tensor& {'x' if leaf.kind == 'tile' else 'g'}{i}"
            for i, leaf in enumerate(chain.leaves)]


def _checks(chain: Chain) -> list[str]:
    first = chain.tiles[0][0]
    lines = []
    for i, leaf in enumerate(chain.leaves):
        if leaf.kind == "tile":
            lines.append(f'TORCH_CHECK(x{i}.scalar_type() == {TORCH_CPP[leaf.dtype]} && x{i}.is_contiguous(), '
                         f'"{leaf.placeholder}: a contiguous {str(leaf.dtype)[6:]} tensor");')
            if i != first:
                lines.append(f'TORCH_CHECK(x{i}.sizes() == x{first}.sizes(), "{leaf.placeholder}: the shape of '
                             f'{chain.leaves[first].placeholder} (this kernel broadcasts one-element scalars only)");')
        elif leaf.kind == "gm_scalar":
            lines.append(f'TORCH_CHECK(g{i}.numel() == 1 && g{i}.scalar_type() == at::kFloat && g{i}.is_contiguous(), '
                         f'"{leaf.placeholder}: a one-element float32 tensor");')
    return lines


def _host(name: Names, chain: Chain) -> str:
    gm = _gm_params(chain)
    first = chain.tiles[0][0]
    outs = [f"y{j}" for j in range(len(chain.outputs))]
    allocs = [f"at::Tensor y{j} = at::empty(x{first}.sizes(), x{first}.options().dtype({TORCH_CPP[d]}));"
              for j, d in enumerate(chain.outputs)]
    scalars = [f"tiling.scalar{i} = static_cast<float>(s{i});" for i, leaf in enumerate(chain.leaves)
               if leaf.kind == "arg_scalar"]
    result = outs[0] if len(outs) == 1 else f"std::make_tuple({', '.join(outs)})"
    rtype = "at::Tensor" if len(outs) == 1 else f"std::tuple<{', '.join('at::Tensor' for _ in outs)}>"
    pointers = ", ".join(f"static_cast<uint8_t*>({p}.data_ptr())" for p in gm)
    return f'''
#include <cstdint>
#include <tuple>
#include <torch/extension.h>
#include "torch_npu/csrc/core/npu/NPUStream.h"
#include "tiling/platform/platform_ascendc.h"
#include "{name.stem}_tiling.h"

void {name.launcher}(uint32_t blockDim, void* stream, {", ".join(f"uint8_t* {p}" for p in gm)}, {name.tiling} tiling);

namespace {{
uint64_t CeilDiv(uint64_t a, uint64_t b) {{ return (a + b - 1) / b; }}

// Host tiling: one slice per AI vector core, a multiple of BLOCK_ALIGN elements (32 bytes) so every
// slice starts aligned, at least MIN_BLOCK_LENGTH; the last core takes the tail. Returns blockDim.
uint32_t ComputeTiling(uint64_t total, {name.tiling}& tiling)
{{
    const uint64_t cores = platform_ascendc::PlatformAscendCManager::GetInstance()->GetCoreNumAiv();
    uint64_t block = CeilDiv(CeilDiv(total, cores), BLOCK_ALIGN) * BLOCK_ALIGN;
    if (block < MIN_BLOCK_LENGTH) {{
        block = MIN_BLOCK_LENGTH;
    }}
    const uint64_t blockDim = CeilDiv(total, block);
    tiling.totalLength = static_cast<uint32_t>(total);
    tiling.blockLength = static_cast<uint32_t>(block);
    tiling.lastBlockLength = static_cast<uint32_t>(total - (blockDim - 1) * block);
    tiling.tileNum = static_cast<uint32_t>(CeilDiv(block, TILE_LENGTH));
    tiling.lastTileNum = static_cast<uint32_t>(CeilDiv(tiling.lastBlockLength, TILE_LENGTH));
    return static_cast<uint32_t>(blockDim);
}}
}}  // namespace

{rtype} {name.impl}({", ".join(_impl_params(chain))})
{{
{_block(_checks(chain) + allocs, 4)}
    const uint64_t total = static_cast<uint64_t>(y0.numel());
    if (total == 0) {{
        return {result};
    }}
    TORCH_CHECK(total <= UINT32_MAX, "{name.stem}: at most 2^32 - 1 elements (the tiling is 32-bit)");
{_block([f"{name.tiling} tiling;"] + scalars, 4)}
    const uint32_t blockDim = ComputeTiling(total, tiling);
    auto stream = c10_npu::getCurrentNPUStream().stream(false);
    {name.launcher}(blockDim, stream, {pointers}, tiling);
    return {result};
}}

PYBIND11_MODULE({name.module}, m)
{{
    m.def("{name.stem}", &{name.impl}, "{name.stem}: opforge's fused pointwise AscendC kernel");
}}
'''
