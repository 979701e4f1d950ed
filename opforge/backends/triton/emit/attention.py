"""The Triton emitter of the attention family: one flash-attention kernel per plan (families/attention/).

One program per (batch x heads, query block[, packed sequence]); the key loop keeps a running max and
sum (online softmax) and an fp32 accumulator, so no [M, N] score matrix is stored. Every operand is
read through its own strides (GQA: the KV head is the query head's, divided by the group; a paged
cache: each key block's rows are found through the block table at run time). The key loop stops at
what the mask proves can never be kept (j <= i, j < len[b], the end of a packed sequence); the mask
itself is the reference's expression, evaluated on every score tile."""
from __future__ import annotations

import keyword
import re

import torch

from opforge.codegen.candidate import Kernel, model_new
from opforge.backends.triton.emit.common import header
from opforge.backends.triton.emit.exprs import EXPR, TL_DTYPES, lit
from opforge.codegen.exprs import Var
from opforge.codegen.families.attention.plan import Expr, Operand, Plan
from opforge.codegen.lower import Lowered, Unsupported

# BLOCK_N=64 keys per step, BLOCK_M=64 query rows where there are rows, 16 (the smallest tl.dot tile)
# for decode's one query; the interpreter's time is per program, so few large tiles verify fastest.
SPACE = (
    {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2},
    {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 2},
    {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4, "num_stages": 3},
)
DECODE_SPACE = (
    {"BLOCK_M": 16, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2},
    {"BLOCK_M": 16, "BLOCK_N": 128, "num_warps": 4, "num_stages": 2},
)
RESERVED = {"torch", "triton", "tl", "math", "out", "grid", "ModelNew"}
HALF = {torch.float16, torch.bfloat16}

ROUND_BF16 = '''

@triton.jit
def _round_to_bf16(x):
    # Round to nearest even by hand: the CPU interpreter's fp32 -> bf16 cast truncates (on a GPU both agree).
    bits = x.to(tl.uint32, bitcast=True)
    bits = bits + 0x7FFF + ((bits >> 16) & 1)
    return (bits >> 16).to(tl.uint16).to(tl.bfloat16, bitcast=True)
'''


def identifier(name: str, taken: set) -> str:
    name = re.sub(r"\W", "_", name)
    clash = name in taken | RESERVED or keyword.iskeyword(name) or name[0].isdigit()
    return name + "_" if clash else name


class Source:
    """Index expressions of a plan's axes inside the kernel, and the kernel's parameters."""

    def __init__(self, plan: Plan) -> None:
        self.plan, self.ax = plan, plan.axes
        self.ptrs: list[tuple[str, str]] = []  # (kernel parameter, launcher tensor)
        self.stride_args: list[tuple[str, str]] = []  # (kernel parameter, launcher expression)

    def axis(self, a, ctx: dict) -> str:
        p, group = self.plan, self.plan.group_of(a)
        a = self.ax.find(a)
        if group == "batch":
            return f"b{p.batch.index(a)}"
        if group == "n" and len(p.n) == 2:
            return f"({ctx['n']} // n_blk)" if p.n.index(a) == 0 else f"({ctx['n']} % n_blk)"
        return ctx[group]

    def size(self, a) -> str:
        p, group = self.plan, self.plan.group_of(a)
        a = self.ax.find(a)
        if group == "batch":
            return f"n_b{p.batch.index(a)}"
        if group == "n" and len(p.n) == 2:
            return "n_keys // n_blk" if p.n.index(a) == 0 else "n_blk"
        return {"m": "n_rows", "n": "n_keys", "d": "D", "dv": "DV"}[group]

    def dim(self, dim, ctx: dict) -> str:
        axes, p = self.ax.fine(dim), self.plan
        whole = {"m": p.m, "n": p.n}
        for group, members in whole.items():
            if members and tuple(axes) == tuple(members):
                return ctx[group]  # the dim is the whole of the rows or keys: no mixed radix
        out = self.axis(axes[0], ctx)
        for a in axes[1:]:
            out = f"({out} * {self.size(a)} + {self.axis(a, ctx)})"
        return out

    def strides(self, prefix: str, tensor: str, dims: list) -> list[str]:
        """Stride parameters of a tensor's non-unit dims (a unit dim is index 0)."""
        names = []
        for i, d in enumerate(dims):
            if d:
                names.append(f"s_{prefix}{i}")
                self.stride_args.append((f"s_{prefix}{i}", f"{tensor}.stride({i})"))
        return names

    def address(self, dims: list, strides: iter, ctx: dict, skip_first: bool = False) -> str:
        terms, names = [], iter(strides)
        for i, d in enumerate(dims):
            if not d:
                continue
            stride = next(names)
            if not (skip_first and i == 0):
                terms.append(f"{self.dim(d, ctx)} * {stride}")
        return " + ".join(terms) or "0"


class Renderer:
    """The reference's expression before the softmax, on the score tile `s`."""

    def __init__(self, src: Source) -> None:
        self.src, self.loads, self.hoisted, self.inner = src, {}, [], []
        self.ctx = {"m": "offs_m[:, None]", "n": "offs_n[None, :]"}

    def render(self, e: Expr):
        if e.kind == "const":
            return e.value
        if e.kind == "score":
            return Var("s")
        if e.kind == "index":
            return Var(self.src.dim(e.axes, self.ctx))
        if e.kind == "segment":
            return Var("(seq + 1)")  # every row and key a program visits is in its sequence
        if e.kind == "load":
            return Var(self._load(e))
        if e.target not in EXPR:
            raise Unsupported(f"{e.target} in the attention's mask")
        return Var(EXPR[e.target]([self.render(a) for a in e.args], dict(e.kwargs)))

    def _load(self, e: Expr) -> str:
        key = (e.name, e.dims)
        if key in self.loads:
            return self.loads[key]
        var = f"t{len(self.loads)}"
        self.loads[key] = var
        src = self.src
        prefix = f"{var}_"
        strides = src.strides(prefix, e.name, list(e.dims))
        src.ptrs.append((f"{var}_ptr", e.name))
        groups = {src.plan.group_of(a) for d in e.dims for a in src.ax.fine(d)}
        masks = [m for g, m in (("m", "(offs_m[:, None] < row_hi)"), ("n", "(offs_n[None, :] < hi)")) if g in groups]
        mask = f", mask={' & '.join(masks)}, other=0" if masks else ""
        line = f"{var} = tl.load({var}_ptr + {src.address(list(e.dims), strides, self.ctx)}{mask})"
        (self.inner if groups - {"batch"} else self.hoisted).append(line)
        return var


def _operand_lines(src: Source, name: str, op: Operand, ctx: dict, mask: str, blk: str | None) -> tuple:
    """(lines before the loop, lines in it) loading one operand tile into `name`."""
    strides = src.strides(name, op.name, op.dims)
    first = 1 if op.table else 0  # a paged cache's dim 0 is the block, read from the table
    batch = [bool(d) and all(src.plan.group_of(a) == "batch" for a in src.ax.fine(d)) for d in op.dims[first:]]
    base_dims = [()] * first + [d if b else () for b, d in zip(batch, op.dims[first:])]
    tile_dims = [()] * first + [() if b else d for b, d in zip(batch, op.dims[first:])]
    base = _masked_address(src, op.dims, strides, base_dims, ctx)
    tile = _masked_address(src, op.dims, strides, tile_dims, ctx) + _rows(src, ctx)
    if op.table:
        tile += f" + {blk} * s_{name}0"
    return ([f"{name}_base = {base}"],
            [f"{name} = tl.load({name}_ptr + {name}_base + {tile}, mask={mask}, other=0.0)"])


def _rows(src: Source, ctx: dict) -> str:
    """A tile with rows where the op has none (decode's one query): every row reads row 0."""
    return " + offs_m[:, None] * 0" if "m" in ctx and not src.plan.m else ""


def _masked_address(src: Source, dims: list, strides: list, keep: list, ctx: dict) -> str:
    terms, names = [], iter(strides)
    for d, k in zip(dims, keep):
        if not d:
            continue
        stride = next(names)
        if k:
            terms.append(f"{src.dim(d, ctx)} * {stride}")
    return " + ".join(terms) or "0"


def _dot(a: str, b: str, loaded: torch.dtype, ref: torch.dtype, acc: str = "") -> str:
    """tl.dot as the reference's bmm computes it: half inputs read exactly into fp32 products
    (`loaded`: the dtype both tiles are loaded as; None where `a` is the fp32 probabilities)."""
    extra = f", {acc}" if acc else ""
    if ref in HALF:  # the reference's bmm gives half scores: rounded as it rounds them
        t = TL_DTYPES[ref]
        return f"tl.dot({a}.to({t}), {b}.to({t}){extra})" + ("" if acc else f".to({t})")
    if loaded in HALF:  # the reference upcast halves: their products are exact in a half dot's fp32 sums
        return f"tl.dot({a}, {b}{extra})"
    return f'tl.dot({a}.to(tl.float32), {b}.to(tl.float32){extra}, input_precision="ieee")'


def kernel_source(plan: Plan, kernel: str) -> tuple[str, Source]:
    src = Source(plan)
    b = plan.bounds
    varlen, paged = b.segments is not None, plan.k.table is not None
    src.ptrs += [("q_ptr", plan.q.name), ("k_ptr", plan.k.name), ("v_ptr", plan.v.name), ("o_ptr", "out")]
    src.ptrs += ([("tab_ptr", plan.k.table)] if paged else []) + ([("cu_ptr", b.segments)] if varlen else [])
    sizes = [f"n_b{i}" for i in range(len(plan.batch))] + ["n_rows", "n_keys"] + (["n_blk"] if paged else [])
    body = ["pid_b = tl.program_id(0).to(tl.int64)  # int64: index * stride passes 2**31 on large caches",
            "pid_m = tl.program_id(1)"]
    rem = "pid_b"
    for i in reversed(range(len(plan.batch))):
        body.append(f"b{i} = {rem} % n_b{i}" if i else f"b{i} = {rem}")
        if i:
            body.append(f"rem{i} = {rem} // n_b{i}")
            rem = f"rem{i}"
    if varlen:
        src.stride_args.append(("s_cu", f"{b.segments}.stride(0)"))
        body += ["seq = tl.program_id(2)  # one packed sequence: rows and keys cu[seq]:cu[seq + 1]",
                 "row_lo = tl.load(cu_ptr + seq * s_cu).to(tl.int64)",
                 "row_hi = tl.load(cu_ptr + (seq + 1) * s_cu).to(tl.int64)",
                 "lo = row_lo", "hi = row_hi"]
    else:
        body += ["row_lo = 0", "row_hi = n_rows", "lo = 0", "hi = n_keys"]
    body += ["first = row_lo + pid_m * BLOCK_M", "if first >= row_hi:", "    return",
             "offs_m = first + tl.arange(0, BLOCK_M).to(tl.int64)",
             "offs_d = tl.arange(0, BLOCK_D)", "offs_dv = tl.arange(0, BLOCK_DV)"]
    if b.causal:
        last = "tl.minimum(first + BLOCK_M, row_hi)"
        body.append(f"hi = tl.minimum(hi, {last}{' - 1' if b.causal == 'lt' else ''})  # causal: no key past the last row")
    renderer = Renderer(src)
    src_q = _operand_lines(src, "q", plan.q, {"m": "offs_m[:, None]", "d": "offs_d[None, :]"},
                           "(offs_m[:, None] < row_hi) & (offs_d[None, :] < D)", None)
    kctx, vctx = {"n": "offs_n[None, :]", "d": "offs_d[:, None]"}, {"n": "offs_n[:, None]", "dv": "offs_dv[None, :]"}
    src_k = _operand_lines(src, "k", plan.k, kctx, "in_keys[None, :] & (offs_d[:, None] < D)", "blk[None, :]")
    src_v = _operand_lines(src, "v", plan.v, vctx, "in_keys[:, None] & (offs_dv[None, :] < DV)", "blk[:, None]")
    out_strides = src.strides("o", "out", [tuple(d) for d in plan.out_dims])
    table_lines = []
    if paged:
        if plan.v.table != plan.k.table:
            raise Unsupported("k and v gathered by different block tables")
        tstrides = src.strides("tab", plan.k.table, plan.k.table_dims)
        table_lines = [f"blk = tl.load(tab_ptr + {src.address(plan.k.table_dims, tstrides, {'n': 'offs_n'})}, "
                       "mask=in_keys, other=0).to(tl.int64)  # each key's block, from the block table"]
    expr = renderer.render(plan.expr)
    scale = "".join(f" {op} {lit(x)}" for op, x in plan.scale)
    body += src_q[0] + src_k[0] + src_v[0] + renderer.hoisted
    if b.length is not None:
        length = renderer.render(b.length)
        body.append(f"hi = tl.minimum(hi, {length}{' + 1' if b.length_inclusive else ''})  # keys past the length are masked")
    scores = ["offs_n = start + tl.arange(0, BLOCK_N).to(tl.int64)", "in_keys = offs_n < hi"] + table_lines + src_k[1]
    scores += [f"s = {_dot('q', 'k', plan.q.dtype if plan.q.dtype == plan.k.dtype else None, plan.qk_dtype)}{scale}"]
    scores += renderer.inner + [f"s = {expr}  # the reference's scale and mask",
                                's = tl.where(in_keys[None, :], s, float("-inf"))']
    body += [src_q[1][0], 'm_i = tl.full([BLOCK_M], float("-inf"), tl.float32)',
             "l_i = tl.zeros([BLOCK_M], tl.float32)", "acc = tl.zeros([BLOCK_M, BLOCK_DV], tl.float32)"]
    body += _softmax_loops(scores, src_v[1], plan)
    o_ctx = {"m": "offs_m[:, None]", "dv": "offs_dv[None, :]"}
    o_addr = src.address([tuple(d) for d in plan.out_dims], out_strides, o_ctx) + _rows(src, o_ctx)
    result = "_round_to_bf16(o)" if plan.out_dtype == torch.bfloat16 else f"o.to({TL_DTYPES[plan.out_dtype]})"
    body += [f"tl.store(o_ptr + {o_addr}, {result}, mask=(offs_m[:, None] < row_hi) & (offs_dv[None, :] < DV))"]
    consts = ["BLOCK_M: tl.constexpr", "BLOCK_N: tl.constexpr", "BLOCK_D: tl.constexpr", "BLOCK_DV: tl.constexpr"]
    params = _wrap([p for p, _ in src.ptrs] + sizes + ["D", "DV"] + [p for p, _ in src.stride_args] + consts)
    text = (f"\n\n@triton.jit\ndef {kernel}(\n{params}\n):\n" + "\n".join("    " + line for line in body) + "\n")
    return text, src


def _softmax_loops(scores: list[str], load_v: list[str], plan: Plan) -> list[str]:
    """The key loop(s). fp32 probabilities: one pass, online softmax. Half ones (the reference rounds
    the normalised probabilities to half before `@ v`): a first pass for each row's max and sum,
    a second that rounds exp(s - max) / sum as the reference does; the online form's unnormalised
    half probabilities left 7 of 131072 outputs past fp16's tolerance on sdpa_causal_gqa_attention."""
    running = ["m_new = tl.maximum(m_i, tl.max(s, 1))",
               'm_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row with nothing kept yet stays 0',
               "p = tl.exp(s - m_safe[:, None])", "alpha = tl.exp(m_i - m_safe)",
               "l_i = l_i * alpha + tl.sum(p, 1)"]
    loop = "for start in range(lo, hi, BLOCK_N):"
    if plan.pv_dtype not in HALF:
        one = scores + ["# Online softmax: rescale what was summed so far to the new running max."] + running
        one += load_v + [f"acc = {_dot('p', 'v', None, plan.pv_dtype, 'acc * alpha[:, None]')}", "m_i = m_new"]
        return [loop] + ["    " + line for line in one] + [
            "o = acc / l_i[:, None]  # a row that kept no key is 0 / 0 = nan, as the reference's softmax"]
    first = scores + running + ["m_i = m_new"]
    second = scores + ["p = tl.exp(s - m_safe[:, None]) / l_i[:, None]  # a row that kept no key: nan, as the reference"]
    second += load_v + [f"acc = {_dot('p', 'v', None, plan.pv_dtype, 'acc')}"]
    return (["# Pass 1: each row's max and sum of exponentials.", loop] + ["    " + line for line in first]
            + ['m_safe = tl.where(m_i == float("-inf"), 0.0, m_i)',
               "# Pass 2: the normalised probabilities, rounded as the reference rounds them, times v.", loop]
            + ["    " + line for line in second] + ["o = acc"])


def _wrap(items: list[str]) -> str:
    import textwrap
    return textwrap.fill(", ".join(items) + ",", 100, initial_indent="    ", subsequent_indent="    ")


def _launcher(plan: Plan, src: Source, kernel: str, launcher: str, args: list[str], config: dict) -> str:
    ax, b = plan.axes, plan.bounds
    size = ax.size
    batch = [size(a) for a in plan.batch]
    out_shape = [" * ".join(f"({size(a)})" if "/" in size(a) else size(a) for a in d) or "1" for d in plan.out_dims]
    rows = size(plan.m[0]) if plan.m else "1"
    keys = " * ".join(size(a) for a in plan.n)
    lines = [f"n_b = ({', '.join(batch)}{',' if len(batch) == 1 else ''})  # batch and heads",
             f"n_rows, n_keys = {rows}, {keys}",
             f"D, DV = {size(plan.d[0])}, {size(plan.dv[0])}",
             f"out = torch.empty(({', '.join(out_shape)}{',' if len(out_shape) == 1 else ''}), "
             f"dtype={plan.out_dtype}, device={plan.q.name}.device)"]
    seqs = "1"
    if b.segments:
        cu = b.segments
        lines += [f"seqs = {cu}.shape[0] - 1",
                  "# Query blocks for the longest possible sequence (all tokens): reading the lengths here would",
                  "# sync with the device; a block past its sequence's end returns at once."]
        seqs = "seqs"
    lines += ["if out.numel() == 0:", "    return out",
              f"grid = (math.prod(n_b), triton.cdiv(n_rows, {config['BLOCK_M']}), {seqs})"]
    call = [t for _, t in src.ptrs] + [f"n_b[{i}]" for i in range(len(plan.batch))] + ["n_rows", "n_keys"] + (
        [size(plan.n[1])] if plan.k.table else []) + ["D", "DV"] + [e for _, e in src.stride_args]
    call += [f"BLOCK_M={config['BLOCK_M']}", f"BLOCK_N={config['BLOCK_N']}",
             "BLOCK_D=triton.next_power_of_2(D)", "BLOCK_DV=triton.next_power_of_2(DV)",
             f"num_warps={config['num_warps']}", f"num_stages={config['num_stages']}"]
    lines += [f"{kernel}[grid](", _wrap(call)[:-1] + ")", "return out"]
    head = (f"\n\n# BLOCK_M={config['BLOCK_M']}, BLOCK_N={config['BLOCK_N']}, {config['num_warps']} warps, "
            f"{config['num_stages']} stages: one configuration of the tuning space.\n")
    return head + f"def {launcher}({', '.join(args)}):\n" + "\n".join("    " + ln for ln in lines) + "\n"


def generate(lowered: Lowered, title: str, shapes: dict) -> Kernel:
    """One flash-attention kernel for softmax(q @ kᵀ ...) @ v; Unsupported names what is not."""
    if "aten._local_scalar_dense.default" in lowered.ops:
        raise Unsupported("the reference reads tensor data into Python (.item(), .tolist()): torch.export "
                          "unrolled its graph for one input's data-dependent values; write it vectorised")
    names: dict[str, str] = {}
    for p in lowered.placeholders:
        names[p.name] = identifier(p.name, set(names.values()))
    if any(p.kind in ("parameter", "buffer") for p in lowered.placeholders):
        raise Unsupported("attention with parameters or buffers (projections are the matmul family's)")
    plan = Plan(lowered, names)
    name = re.sub(r"\W", "_", title).strip("_") or "op"
    name = "op_" + name if name[0].isdigit() else name
    kernel = f"_{name}_attention_kernel"
    launcher = identifier(name, set(names.values()))
    text, src = kernel_source(plan, kernel)
    args = list(names.values())

    def render(config: dict) -> str:
        return (header(f"Attention kernel for {title}", "attention", lowered).replace(
                    "import torch\n", "import math\n\nimport torch\n", 1)
                + (ROUND_BF16 if plan.out_dtype == torch.bfloat16 else "") + text
                + _launcher(plan, src, kernel, launcher, args, config) + model_new(lowered, launcher, shapes))

    return Kernel("attention", DECODE_SPACE if not plan.m else SPACE, render)
