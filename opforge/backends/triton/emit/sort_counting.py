"""The Triton kernels of a counting sort (families/sort/counting.py), three launches:

1. histogram: one program per block of BLOCK keys counts each key value in the block (a one-hot
   [BLOCK, E] sum) and adds how many keys fall outside [0, E) to one flag;
2. scan: one program adds the blocks' counts up (the bincount), takes their exclusive scan (where
   each key value's run starts), writes every block's starting position per key value, and computes
   and stores the per-key outputs (counts, cumsum, the [E + 1] offsets);
3. scatter: one program per block places each key at its run's start for the block plus its rank,
   the number of equal keys before it in the block (a column-wise exclusive cumsum of the one-hot),
   so equal keys keep their order: a stable sort, writing the slot indices and the sorted keys.

Keys outside [0, E) are refused after the histogram (RuntimeError): torch.bincount would grow past
minlength (or fail on a negative key), and the graph's own shapes are those of E bins."""
from __future__ import annotations

import triton
from torch.fx import Node

from opforge.backends.triton.emit.sort_common import ROUND_BF16, elementwise, register, stored
from opforge.codegen.exprs import Var
from opforge.codegen.families.sort.common import IDENTITY, RESHAPES
from opforge.codegen.families.sort.counting import CountingPlan
from opforge.codegen.lower import Unsupported, val

# CELLS: one-hot cells per block; BLOCK = CELLS / E keys per program (64 experts: 128 keys at 8192).
SPACE = ({"CELLS": 8192, "num_warps": 4}, {"CELLS": 16384, "num_warps": 8}, {"CELLS": 4096, "num_warps": 4},
         {"CELLS": 32768, "num_warps": 8})

HISTOGRAM = '''

@triton.jit
def {p}_histogram(keys_ptr, hist_ptr, bad_ptr, n, E: tl.constexpr, BLOCK: tl.constexpr, BLOCK_E: tl.constexpr):
    b = tl.program_id(0)
    offs = b.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    key = tl.load(keys_ptr + offs, mask=inside, other=0).to(tl.int64)
    bins = tl.arange(0, BLOCK_E)
    onehot = (key[:, None] == bins[None, :]) & inside[:, None]
    tl.store(hist_ptr + b * E + bins, tl.sum(onehot.to(tl.int32), axis=0), mask=bins < E)
    outside = inside & ((key < 0) | (key >= E))
    tl.atomic_add(bad_ptr, tl.sum(outside.to(tl.int32), axis=0))
'''
SCAN = '''

@triton.jit
def {p}_scan(hist_ptr, base_ptr, {outs}nb, E: tl.constexpr, BLOCK_E: tl.constexpr):
    bins = tl.arange(0, BLOCK_E)
    inside = bins < E
    counts = tl.zeros([BLOCK_E], dtype=tl.int64)
    for b in range(nb):
        counts += tl.load(hist_ptr + b * E + bins, mask=inside, other=0).to(tl.int64)
    # Exclusive scan: where each key value's run starts; then each block's start within the run.
    running = tl.cumsum(counts, axis=0) - counts
    for b in range(nb):
        tl.store(base_ptr + b * E + bins, running, mask=inside)
        running += tl.load(hist_ptr + b * E + bins, mask=inside, other=0).to(tl.int64)
{body}'''
SCATTER = '''

@triton.jit
def {p}_scatter(keys_ptr, base_ptr, {outs}n, E: tl.constexpr, BLOCK: tl.constexpr, BLOCK_E: tl.constexpr):
    b = tl.program_id(0)
    offs = b.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    key = tl.load(keys_ptr + offs, mask=inside, other=0).to(tl.int64)
    bins = tl.arange(0, BLOCK_E)
    onehot = ((key[:, None] == bins[None, :]) & inside[:, None]).to(tl.int32)
    # rank: the equal keys before this one in the block, so equal keys keep their order (stable)
    rank = tl.sum((tl.cumsum(onehot, axis=0) - onehot) * onehot, axis=1)
    pos = tl.load(base_ptr + b * E + key, mask=inside, other=0) + rank
{body}'''


class _Body:
    def __init__(self, plan: CountingPlan, prefix: str) -> None:
        self.plan, self.round = plan, f"{prefix}_round_bf16"
        self.names: dict[Node, object] = dict(plan.consts)
        self.lines: list[str] = []

    def value(self, a):
        if isinstance(a, Node):
            return self.names[a]
        if isinstance(a, (list, tuple)):
            raise Unsupported("a list argument in a counting sort")
        return a

    def emit(self, node: Node) -> None:
        target, name = str(node.target), Var(f"v_{node.name}")
        plan = self.plan
        if node is plan.counts:
            self.names[node] = Var("counts")
        elif node in plan.picks:
            self.names[node] = Var("offs") if plan.picks[node] == "indices" else Var(
                f"key.to({register(val(node).dtype)})")
        elif node in plan.tails:
            self.names[node] = self.names[plan.tails[node]]
        elif target == "aten.copy.default":
            self.names[node] = self.names[node.args[1]]
        elif target in RESHAPES or target in IDENTITY:
            self.names[node] = self.names[node.args[0]]
        elif target == "aten.cumsum.default":
            self.lines.append(f"{name} = tl.cumsum({self.names[node.args[0]]}, axis=0)  # {target}")
            self.names[node] = name
        else:
            args = [self.value(a) for a in node.args]
            kwargs = {k: self.value(v) if isinstance(v, Node) else v for k, v in node.kwargs.items()}
            self.lines.append(f"{name} = {elementwise(node, args, kwargs, self.round)}  # {target}")
            self.names[node] = name


def _outputs(plan: CountingPlan, body: _Body, spaces: tuple[str, ...]) -> tuple[list[str], list[str]]:
    params, lines = [], []
    for i, node in enumerate(plan.outputs):
        space = plan.space[node]
        if space not in spaces:
            continue
        p, x, dtype = f"out{i}_ptr", body.names[node], val(node).dtype
        params.append(p)
        if space == "slot":
            lines.append(f"tl.store({p} + pos, {stored(x, dtype)}, mask=inside)")
        elif space == "bin":
            lines.append(f"tl.store({p} + bins, {stored(x, dtype)}, mask=inside)")
        else:  # the head, then the per-key values one place on
            lines.append(f"tl.store({p} + 1 + bins, {stored(x, dtype)}, mask=inside)")
            lines.append(f"tl.store({p} + bins, tl.full([BLOCK_E], {plan.heads[node]!r}, "
                         f"dtype={register(dtype)}).to({p}.dtype.element_ty), mask=bins == 0)")
    return params, lines


def kernel_source(plan: CountingPlan, prefix: str) -> str:
    bins = _Body(plan, prefix)
    for node in plan.bin_nodes:
        bins.emit(node)
    params, stores = _outputs(plan, bins, ("bin", "bin1"))
    text = HISTOGRAM.format(p=prefix)
    text += SCAN.format(p=prefix, outs="".join(f"{x}, " for x in params),
                        body="".join(f"    {line}\n" for line in bins.lines + stores))
    if plan.sort is not None:
        slots = _Body(plan, prefix)
        for node in [n for n in plan.picks] + plan.slot_nodes:
            slots.emit(node)
        params, stores = _outputs(plan, slots, ("slot",))
        text += SCATTER.format(p=prefix, outs="".join(f"{x}, " for x in params),
                               body="".join(f"    {line}\n" for line in slots.lines + stores))
    return (ROUND_BF16.format(name=bins.round) if f"{bins.round}(" in text else "") + text


LAUNCHER = '''

# {comment}
# CELLS={cells} (BLOCK={block} keys of {bins} bins per program), num_warps={warps}: one tuning configuration.
def {launcher}(a0):
    keys = a0.reshape(-1)
    n = keys.numel()
    nb = triton.cdiv(n, {block})
    hist = torch.empty((max(nb, 1), {bins}), dtype=torch.int32, device=keys.device)
    bad = torch.zeros((1,), dtype=torch.int32, device=keys.device)  # keys outside [0, E), all blocks
    if nb:
        {p}_histogram[(nb,)](keys, hist, bad, n, E={bins}, BLOCK={block}, BLOCK_E={block_e}, num_warps={warps})
        if bad.item():  # one host read; torch.bincount syncs to size its output too
            raise RuntimeError("bincount: a key outside [0, {bins}) (minlength {bins}): the counting sort needs "
                               "every key below minlength and none negative")
    base = torch.empty((max(nb, 1), {bins}), dtype=torch.int64, device=keys.device)
{outs}    {p}_scan[(1,)](hist, base, {bin_outs}nb, E={bins}, BLOCK_E={block_e}, num_warps={warps})
{scatter}    return {result}
'''


def launcher_source(plan: CountingPlan, prefix: str, launcher: str, config: dict) -> str:
    e = plan.bins
    block_e = triton.next_power_of_2(e)
    block = max(16, min(1024, config["CELLS"] // block_e))
    outs, bin_outs, slot_outs = [], [], []
    for i, node in enumerate(plan.outputs):
        space = plan.space[node]
        size = {"slot": "(n,)", "bin": f"({e},)", "bin1": f"({e + 1},)"}[space]
        outs.append(f"    out{i} = torch.empty({size}, dtype={val(node).dtype}, device=keys.device)\n")
        (slot_outs if space == "slot" else bin_outs).append(f"out{i}")
    scatter = ""
    if plan.sort is not None:
        scatter = (f"    if nb:\n        {prefix}_scatter[(nb,)](keys, base, {''.join(o + ', ' for o in slot_outs)}n, "
                   f"E={e}, BLOCK={block}, BLOCK_E={block_e}, num_warps={config['num_warps']})\n")
    result = ", ".join(f"out{i}" for i in range(len(plan.outputs)))
    what = "a stable counting sort of the flat keys" if plan.sort is not None else "a histogram of the flat keys"
    return LAUNCHER.format(
        comment=f"{what} over {e} bins (bincount's minlength), with its scans.", cells=config["CELLS"],
        block=block, bins=e, warps=config["num_warps"], launcher=launcher, p=prefix, block_e=block_e,
        outs="".join(outs), bin_outs="".join(o + ", " for o in bin_outs), scatter=scatter, result=result)
