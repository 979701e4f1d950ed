"""A pointwise Plan's fused chain as the statements of one AscendC Compute stage.

The leaves the kernel reads are classified first: an input of the output's shape is a tile (loaded
through its own VECIN queue), a one-element tensor is a scalar read from GM once in Init, a Python
number is a scalar carried in the tiling struct. Any other broadcast (a bias row, a [B, 1] column)
is refused: tiles are flat runs of the output, so such an input has no run of its own to load.

Intermediate tiles live in slots of one fp32 VECCALC buffer; a slot is reused once the last op
reading it has run (linear scan over graph order). An fp32 output is written by its op directly
into the output queue's tile; a half/bf16 one is rounded into it at the end (Cast, CAST_RINT:
round half to even, as torch's float-to-half)."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from opforge.backends.ascendc.emit.exprs import CASTS, IDENTITY, WRITERS, Value, lit, operand, scalar_expr
from opforge.codegen.families.pointwise.plan import Plan
from opforge.codegen.lower import Unsupported, val

# Element types the chain loads and stores; it computes in fp32.
CTYPES = {torch.float32: "float", torch.float16: "half", torch.bfloat16: "bfloat16_t"}
TORCH_CPP = {torch.float32: "at::kFloat", torch.float16: "at::kHalf", torch.bfloat16: "at::kBFloat16"}


@dataclass(frozen=True)
class Leaf:
    """One input the kernel reads: `kind` tile (x<i>), gm_scalar (g<i>) or arg_scalar (tiling.scalar<i>)."""

    node: str
    kind: str
    dtype: torch.dtype | None
    view: str  # the torch code the binding's caller replays on the placeholder (a squeeze, a reshape...)
    placeholder: str


@dataclass
class Chain:
    leaves: list[Leaf]
    outputs: list[torch.dtype]
    shape: tuple[int, ...]
    statements: list[str] = field(default_factory=list)
    slots: int = 0

    @property
    def tiles(self) -> list[tuple[int, Leaf]]:
        return [(i, leaf) for i, leaf in enumerate(self.leaves) if leaf.kind == "tile"]


def ctype(dtype: torch.dtype, what: str) -> str:
    if dtype not in CTYPES:
        raise Unsupported(f"{what} in {dtype}: the AscendC emitter loads and stores float32, float16, bfloat16")
    return CTYPES[dtype]


def _leaves(plan: Plan, shape: tuple[int, ...]) -> list[Leaf]:
    kinds = {p.name: p.kind for p in plan.lowered.placeholders}
    leaves = []
    for name in plan.used:
        placeholder, view = plan.leaves[name]
        if kinds[placeholder] == "scalar":
            leaves.append(Leaf(name, "arg_scalar", None, view, placeholder))
            continue
        value = val(next(n for n in plan.lowered.graph.nodes if n.name == name))
        ctype(value.dtype, f"input {name}")
        if tuple(value.shape) == shape:
            leaves.append(Leaf(name, "tile", value.dtype, view, placeholder))
        elif value.numel() == 1:
            if value.dtype != torch.float32:
                raise Unsupported(f"a one-element {value.dtype} input ({name}): scalars are read as float32")
            leaves.append(Leaf(name, "gm_scalar", value.dtype, view, placeholder))
        else:
            raise Unsupported(f"input {name} of shape {list(value.shape)} broadcast to {list(shape)}: the AscendC "
                              "emitter takes inputs of the output's shape and one-element scalars only")
    if not any(leaf.kind == "tile" for leaf in leaves):
        raise Unsupported("a pointwise graph with no input of the output's shape")
    return leaves


class _Slots:
    """Slots t0, t1, ... of the VECCALC buffer, handed out lowest first."""

    def __init__(self) -> None:
        self.free: list[int] = []
        self.count = 0

    def take(self) -> str:
        if self.free:
            return f"t{self.free.pop(0)}"
        self.count += 1
        return f"t{self.count - 1}"

    def give(self, ref: str) -> None:
        self.free = sorted(self.free + [int(ref[1:])])


def _last_uses(plan: Plan) -> dict[str, int]:
    """For each value name, the index of the last op reading it (aliases resolved to their source)."""
    alias: dict[str, str] = {}
    last: dict[str, int] = {}
    for i, op in enumerate(plan.ops):
        reads = [alias.get(str(a), str(a)) for a in [*op.args, *op.kwargs.values()] if isinstance(a, str)]
        for name in reads:
            last[name] = i
        if op.target in IDENTITY | CASTS and reads:
            alias[str(op.var)] = reads[0]
    return last


def build(plan: Plan) -> Chain:
    shape = tuple(val(plan.outputs[0]).shape)
    chain = Chain(_leaves(plan, shape), [val(o).dtype for o in plan.outputs], shape)
    for i, dtype in enumerate(chain.outputs):
        ctype(dtype, f"output {i}")
    slots, values, owners = _Slots(), {}, {}
    for i, leaf in enumerate(chain.leaves):
        ref = {"tile": f"x{i}", "gm_scalar": f"this->g{i}", "arg_scalar": f"this->a{i}"}[leaf.kind]
        if leaf.kind == "tile" and leaf.dtype != torch.float32:  # upcast once, compute in fp32
            slot = slots.take()
            chain.statements.append(f"AscendC::Cast({slot}, {ref}, AscendC::RoundMode::CAST_NONE, len);")
            ref = slot
            owners[slot] = str(plan.names[leaf.node])
        values[str(plan.names[leaf.node])] = Value("tile" if leaf.kind == "tile" else "scalar", ref)
    _ops(plan, chain, slots, values, owners)
    _stores(plan, chain, values)
    chain.slots = slots.count
    return chain


def _ops(plan: Plan, chain: Chain, slots: _Slots, values: dict[str, Value], owners: dict[str, str]) -> None:
    """The ops' statements; `owners` maps each slot in use to the value whose lifetime holds it."""
    last = _last_uses(plan)
    fp32_outputs = {o.name: j for j, o in enumerate(plan.outputs) if chain.outputs[j] == torch.float32}
    outputs = _output_values(plan)
    for i, op in enumerate(plan.ops):
        name = str(op.var)
        args = [None if a is None else operand(a, values) for a in op.args]
        kwargs = {k: (operand(v, values) if k in ("min", "max") and v is not None else v) for k, v in op.kwargs.items()}
        if op.target in IDENTITY or op.target in CASTS:
            values[name] = _cast(op, args[0], plan)
            ref = values[name].ref
            if ref in owners and (name in outputs or last.get(name, -1) > last.get(owners[ref], -1)):
                owners[ref] = name  # the alias outlives its source: the slot is held as long
        elif op.target in ("aten.full.default", "aten.scalar_tensor.default"):
            fill = op.args[1] if op.target == "aten.full.default" else op.args[0]
            if op.target == "aten.full.default" and op.args[0] != ():
                raise Unsupported("a full() tensor in the chain")
            values[name] = Value("scalar", lit(fill))
        elif all(a is None or a.kind == "scalar" for a in args):
            values[name] = Value("scalar", scalar_expr(op.target, args, kwargs))
        elif op.target not in WRITERS:
            raise Unsupported(f"{op.target} has no faithful AscendC vector form")
        else:
            held = op.node.name in fp32_outputs
            dst = f"y{fp32_outputs.pop(op.node.name)}" if held else slots.take()
            chain.statements += WRITERS[op.target](dst, args, kwargs)
            values[name] = Value("tile", dst)
            if not held:
                owners[dst] = name
        for ref, owner in list(owners.items()):  # slots whose value no later op or output reads
            if last.get(owner, -1) <= i and owner not in outputs:
                slots.give(ref)
                del owners[ref]


def _output_values(plan: Plan) -> set[str]:
    return {str(plan.names[o.name]) for o in plan.outputs}


def _cast(op, source: Value, plan: Plan) -> Value:
    """A value-preserving op: clone and friends, and casts the fp32 chain already is (a cast to
    half/bf16 only as the value stored, where the store rounds it)."""
    if op.target in IDENTITY:
        return source
    dtype = op.kwargs.get("dtype") if op.target == "aten._to_copy.default" else op.args[1]
    if dtype in (None, torch.float32):
        return source
    stored = all(u.op == "output" for u in op.node.users)
    if dtype in (torch.float16, torch.bfloat16) and stored:
        return source
    raise Unsupported(f"a cast to {dtype} inside the chain")


def _stores(plan: Plan, chain: Chain, values: dict[str, Value]) -> None:
    for j, out in enumerate(plan.outputs):
        value = values[str(plan.names[out.name])]
        if value.kind != "tile":
            raise Unsupported(f"output {j} is a scalar of the inputs, not a tensor computed per element")
        if value.ref == f"y{j}":
            continue
        if chain.outputs[j] == torch.float32:  # an aliased or repeated output: an exact copy
            chain.statements.append(f"AscendC::Muls(y{j}, {value.ref}, 1.0f, len);")
        else:
            chain.statements.append(f"AscendC::Cast(y{j}, {value.ref}, AscendC::RoundMode::CAST_RINT, len);")
