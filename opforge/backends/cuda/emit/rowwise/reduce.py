"""Accumulators of the row-wise CUDA kernels and the block-level reductions and scans they finish
with.

Each thread folds its strided share of a row's columns into a private accumulator (masked columns
never reach it); the block then combines the threads' values: a butterfly of __shfl_xor_sync inside
each warp (full mask, all 32 lanes active: blocks are whole warps), one value per warp through
shared memory, and the same butterfly over those, so every thread ends with the row's result. NaN
wins a max or min, as in torch; an argmax takes the first column holding the maximum."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.fx import Node

from opforge.backends.cuda.emit.exprs import lit
from opforge.codegen.exprs import Var
from opforge.codegen.families.rowwise.layout import COMBINE, acc_dtype
from opforge.codegen.lower import Unsupported

ACC_TYPES = {torch.float32: "float", torch.int64: "long long", torch.int32: "int"}
SHARED = {"float": "sm_float", "long long": "sm_ll", "int": "sm_int", "double": "sm_double"}
LLONG_MAX, LLONG_MIN = "0x7fffffffffffffffLL", "(-0x7fffffffffffffffLL - 1)"

PRELUDE = r"""
struct SumOp { template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; } };
struct ProdOp { template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a * b; } };
struct MaxOp {
    __device__ __forceinline__ float operator()(float a, float b) const { return nan_max(a, b); }
    __device__ __forceinline__ long long operator()(long long a, long long b) const { return a > b ? a : b; }
    __device__ __forceinline__ int operator()(int a, int b) const { return a > b ? a : b; }
};
struct MinOp {
    __device__ __forceinline__ float operator()(float a, float b) const { return nan_min(a, b); }
    __device__ __forceinline__ long long operator()(long long a, long long b) const { return a < b ? a : b; }
    __device__ __forceinline__ int operator()(int a, int b) const { return a < b ? a : b; }
};

template <typename T, typename F>
__device__ __forceinline__ T warp_reduce(T v, F f) {
    for (int o = 16; o > 0; o >>= 1) v = f(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Every thread gets the block's result. `sm` holds one value per warp; the leading barrier lets
// a previous reduction's readers finish before it is overwritten.
template <typename T, typename F>
__device__ T block_reduce(T v, T identity, T* sm, F f) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_reduce(v, f);
    __syncthreads();
    if (lane == 0) sm[warp] = v;
    __syncthreads();
    v = lane < (int)(blockDim.x >> 5) ? sm[lane] : identity;
    return warp_reduce(v, f);
}

// Inclusive scan of one value per thread in thread order; *total is the block's combination.
template <typename T, typename F>
__device__ T block_scan(T v, T identity, T* sm, T* total, F f) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    for (int o = 1; o < 32; o <<= 1) {
        const T other = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o) v = f(other, v);
    }
    __syncthreads();
    if (lane == 31) sm[warp] = v;
    __syncthreads();
    if (warp == 0) {
        T w = lane < warps ? sm[lane] : identity;
        for (int o = 1; o < 32; o <<= 1) {
            const T other = __shfl_up_sync(0xffffffffu, w, o);
            if (lane >= o) w = f(other, w);
        }
        sm[lane] = w;
    }
    __syncthreads();
    if (warp > 0) v = f(sm[warp - 1], v);
    *total = sm[warps - 1];
    return v;
}
"""
FUNCTORS = {"sum": "SumOp()", "sumsq": "SumOp()", "pick": "SumOp()", "prod": "ProdOp()", "max": "MaxOp()",
            "min": "MinOp()", "any": "MaxOp()", "all": "MinOp()"}


def identity(op: str, ctype: str) -> str:
    floating = ctype == "float"
    if op in ("max", "argmax"):
        return "(-INFINITY)" if floating else LLONG_MIN if ctype == "long long" else "(-2147483647 - 1)"
    if op in ("min", "argmin"):
        return "INFINITY" if floating else LLONG_MAX if ctype == "long long" else "2147483647"
    one, zero = {"float": ("1.0f", "0.0f"), "long long": ("1LL", "0LL")}.get(ctype, ("1", "0"))
    return one if op in ("prod", "all") else zero


@dataclass
class Acc:
    """One accumulator of a column pass and the row value it finishes into."""

    name: str  # the C++ row value it produces
    op: str  # sum sumsq max min prod any all argmax argmin pick
    source: Node
    ctype: str
    key: tuple[str, Node]  # ("value" | "mean" | "partial", node) the result is recorded under
    center: Node | None = None  # sumsq: the var/std node whose mean is subtracted
    index: Node | None = None  # pick: the row value naming the column to take
    post: str = "{r}"  # turns the reduced accumulator into the value
    pair: bool = False  # argmax of aten.max.dim: the value is (max, index)

    def init(self) -> list[str]:
        lines = [f"{self.ctype} acc_{self.name} = {identity(self.op, self.ctype)};"]
        if self.op in ("argmax", "argmin"):
            lines.append(f"long long idx_{self.name} = -1;")
        return lines

    def update(self, value, center=None, index=None) -> list[str]:
        """Fold one column (inside `if (in)`) into this thread's accumulator."""
        a, v = f"acc_{self.name}", f"({self.ctype})({lit(value)})"
        if self.op == "sumsq":
            return [f"const float d_{self.name} = {v} - {lit(center)};", f"{a} += d_{self.name} * d_{self.name};"]
        if self.op == "pick":  # only the index's column adds its value
            return [f"if (c == {lit(index)}) {a} += {v};"]
        if self.op in ("argmax", "argmin"):
            cmp = ">" if self.op == "argmax" else "<"
            nan = f" || ({v} != {v} && {a} == {a})" if self.ctype == "float" else ""
            return [f"if (idx_{self.name} < 0 || {v} {cmp} {a}{nan}) {{ {a} = {v}; idx_{self.name} = c; }}"]
        if self.op in ("any", "all"):
            v = f"(int)(({lit(value)}) != 0)"
        return [f"{a} = {FUNCTORS[self.op]}({a}, {v});"]

    def finish(self, shared: set[str]) -> list[str]:
        """The block's combination of every thread's accumulator, as the row value (every thread)."""
        a, ident = f"acc_{self.name}", identity(self.op, self.ctype)
        if self.op in ("argmax", "argmin"):
            return self._finish_arg(shared)
        shared.add(self.ctype)
        reduced = f"block_reduce({a}, {ident}, {SHARED[self.ctype]}, {FUNCTORS[self.op]})"
        if self.op in ("any", "all"):
            reduced = f"({reduced} != 0)"
        return [f"const auto {self.name} = {self.post.format(r=reduced)};"]

    def _finish_arg(self, shared: set[str]) -> list[str]:
        """The row's extreme (NaN first), then the lowest column among the threads holding it."""
        shared |= {self.ctype, "long long"}
        a, op = f"acc_{self.name}", "max" if self.op == "argmax" else "min"
        top = f"{self.name}_{op}"
        hit = f"({top} != {top} ? {a} != {a} : {a} == {top})" if self.ctype == "float" else f"{a} == {top}"
        functor = "MaxOp()" if op == "max" else "MinOp()"
        return [f"const {self.ctype} {top} = block_reduce({a}, {identity(op, self.ctype)}, "
                f"{SHARED[self.ctype]}, {functor});",
                f"const long long {self.name} = block_reduce((idx_{self.name} >= 0 && {hit}) ? idx_{self.name} : "
                f"{LLONG_MAX}, {LLONG_MAX}, sm_ll, MinOp());"]

    def result(self):
        if self.op in ("argmax", "argmin"):
            op = "max" if self.op == "argmax" else "min"
            return (Var(f"{self.name}_{op}"), Var(self.name)) if self.pair else Var(self.name)
        return Var(self.name)


def ctype(dtype: torch.dtype) -> str:
    if dtype not in ACC_TYPES:
        raise Unsupported(f"a {dtype} accumulator in a CUDA row kernel")
    return ACC_TYPES[dtype]


def accumulators(node: Node, red, name: str) -> list[Acc]:
    """The accumulators of one row reduction, in pass order (var/std: the mean, then the deviations)."""
    kind = ctype(acc_dtype(red.kind, red.source, node))
    if red.kind in ("var", "std"):
        divisor = f"(n_cols - {lit(float(red.correction))})" if red.correction else "n_cols"
        post = f"sqrtf({{r}} / {divisor})" if red.kind == "std" else f"{{r}} / {divisor}"
        return [Acc(f"{name}_mean", "sum", red.source, kind, ("mean", node), post="{r} / n_cols"),
                Acc(name, "sumsq", red.source, kind, ("value", node), center=node, post=post)]
    op = "sum" if red.kind == "mean" else red.kind
    post = "{r} / (float)n_cols" if red.kind == "mean" else "{r}"
    pair = str(node.target) in ("aten.max.dim", "aten.min.dim")
    return [Acc(name, op, red.source, kind, ("value", node), post=post, pair=pair, index=red.index)]


def partial_acc(node: Node, red, name: str) -> Acc:
    """A full reduction's per-row partial (a mean's partial is a sum: the count divides once, at the end)."""
    op = COMBINE[red.kind]
    return Acc(name, op, red.source, ctype(acc_dtype(op, red.source, node)), ("partial", node))
