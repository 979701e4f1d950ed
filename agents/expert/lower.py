"""Lowering a spec's Model to a core-ATen FX graph with torch.export.

The spec is the user's own code (trusted, like the harness's spec loader). Composite ops that
the generators handle better as primitives (softmax, log-softmax, layer norm, GELU, addmm, losses)
are decomposed further; dims are kept as indices, so generated code stays shape-generic."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch._decomp import core_aten_decompositions, get_decompositions
from torch.fx import Graph, Node

from harness.spec import apply_sizes, declared_sizes, load_module

aten = torch.ops.aten
EXTRA_DECOMPOSITIONS = [
    aten._softmax, aten._log_softmax, aten.native_layer_norm, aten.gelu, aten.addmm, aten.mse_loss,
    aten.smooth_l1_loss, aten.huber_loss, aten.binary_cross_entropy, aten.logsumexp, aten.var_mean,
    aten.hardsigmoid, aten.hardswish, aten.hardtanh, aten.elu, aten.leaky_relu, aten.softplus, aten.mish,
    aten.silu, aten.linalg_vector_norm, aten.norm, aten.cosine_similarity, aten.kl_div, aten.std, aten.var,
]
EXPORT_SIZE = 48  # size constants are shrunk for export: only the graph's structure matters


class Unsupported(Exception):
    """The expert cannot generate this op; the message names what it cannot handle."""


@dataclass
class Placeholder:
    name: str  # the graph's placeholder name
    kind: str  # "input" (a forward tensor), "scalar" (a Python number, as a 0-d tensor), "parameter", "buffer"
    fqn: str | None  # state-dict name for parameters and buffers
    shape: tuple[int, ...]
    dtype: torch.dtype


@dataclass
class Lowered:
    graph: Graph
    placeholders: list[Placeholder]
    outputs: list[Node]
    n_forward_args: int
    ops: set[str] = field(default_factory=set)

    def state(self) -> list[Placeholder]:
        return [p for p in self.placeholders if p.kind in ("parameter", "buffer")]


def _decompositions() -> dict:
    table = core_aten_decompositions()
    table.update(get_decompositions(EXTRA_DECOMPOSITIONS))
    return table


def lower(spec_path: str | Path) -> Lowered:
    module = load_module(spec_path)
    apply_sizes(module, {k: min(v, EXPORT_SIZE) for k, v in declared_sizes(module).items() if v >= 16})
    init = module.get_init_inputs() if hasattr(module, "get_init_inputs") else []
    torch.manual_seed(0)
    model = module.Model(*init).eval()
    # Python numbers become 0-d tensors, so they stay graph inputs instead of baked constants
    # (variants may pass other values); ModelNew wraps them the same way at run time.
    args = tuple(torch.tensor(a) if isinstance(a, (int, float)) and not isinstance(a, bool) else a
                 for a in module.get_inputs())
    scalars = {i for i, a in enumerate(module.get_inputs()) if isinstance(a, (int, float)) and not isinstance(a, bool)}
    try:
        with warnings.catch_warnings():  # torch.export's own deprecation chatter is not the user's concern
            warnings.simplefilter("ignore", FutureWarning)
            program = torch.export.export(model, args).run_decompositions(_decompositions())
    except Exception as exc:  # export's own limits (data-dependent control flow...) end the expert's part
        raise Unsupported(f"torch.export could not trace the reference: {type(exc).__name__}: "
                          f"{str(exc).splitlines()[0][:200]}") from None
    return _describe(program, len(args), scalars)


def _describe(program, n_args: int, scalars: set[int]) -> Lowered:
    signature = program.graph_signature
    params, buffers = signature.inputs_to_parameters, signature.inputs_to_buffers
    placeholders, outputs = [], []
    for node in program.graph.nodes:
        if node.op == "placeholder":
            val = node.meta.get("val")
            if not isinstance(val, torch.Tensor):
                raise Unsupported(f"non-tensor forward argument '{node.name}'")
            kind = "parameter" if node.name in params else "buffer" if node.name in buffers else "input"
            if kind == "input" and sum(p.kind in ("input", "scalar") for p in placeholders) in scalars:
                kind = "scalar"
            fqn = params.get(node.name) or buffers.get(node.name)
            placeholders.append(Placeholder(node.name, kind, fqn, tuple(val.shape), val.dtype))
        elif node.op == "output":
            outputs = [o for o in node.args[0]]
    if signature.inputs_to_lifted_tensor_constants:
        raise Unsupported("tensor constants created in forward")
    ops = {str(n.target) for n in program.graph.nodes if n.op == "call_function"}
    return Lowered(program.graph, placeholders, outputs, n_args, ops)


def val(node) -> torch.Tensor | None:
    """The fake tensor torch.export recorded for a node (shape, dtype), or None for literals."""
    return node.meta.get("val") if isinstance(node, Node) else None


def state_shapes(spec_path: str | Path, sizes: dict[str, int]) -> dict[str, tuple[int, ...]]:
    """Parameter and buffer shapes at the sizes the harness verifies with (the export ran smaller)."""
    module = load_module(spec_path)
    apply_sizes(module, sizes)
    init = module.get_init_inputs() if hasattr(module, "get_init_inputs") else []
    with torch.device("meta"):
        model = module.Model(*init)
    return {name: tuple(t.shape) for name, t in model.state_dict().items()}
