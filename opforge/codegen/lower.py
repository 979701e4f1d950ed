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

from opforge.codegen.dtypes import cast
from opforge.codegen.exportsizes import export_sizes, splits
from opforge.codegen.rewrites import diagonal_products, size1_reductions
from opforge.harness.mode import mode_of, traced
from opforge.harness.spec import declared_sizes, load_module

aten = torch.ops.aten
EXTRA_DECOMPOSITIONS = [
    aten._softmax, aten._log_softmax, aten.native_layer_norm, aten.gelu, aten.addmm, aten.mse_loss,
    aten.smooth_l1_loss, aten.huber_loss, aten.binary_cross_entropy, aten.logsumexp, aten.var_mean,
    aten.hardsigmoid, aten.hardswish, aten.hardtanh, aten.elu, aten.leaky_relu, aten.softplus, aten.mish,
    aten.silu, aten.linalg_vector_norm, aten.norm, aten.cosine_similarity, aten.kl_div, aten.std, aten.var,
]
# Index maps the pointwise family reads whole (families/pointwise/indexmap.py): their stock
# decompositions bake the export's sizes into arange/index chains no kernel could keep generic.
KEPT_WHOLE = [
    aten.reflection_pad1d, aten.reflection_pad2d, aten.reflection_pad3d, aten.replication_pad1d,
    aten.replication_pad2d, aten.replication_pad3d, aten.roll, aten.upsample_nearest1d, aten.upsample_nearest3d,
    aten._upsample_nearest_exact1d, aten._upsample_nearest_exact2d, aten._upsample_nearest_exact3d,
    aten.upsample_linear1d,
]


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
    outputs: list[Node]  # what forward returns (a returned None is nothing to return)
    n_forward_args: int
    ops: set[str] = field(default_factory=set)
    # forward arguments the reference updates in place (a KV-cache write): the placeholder's name ->
    # the node holding its value after forward, which the candidate writes into the argument itself
    mutations: dict[str, Node] = field(default_factory=dict)
    # positions in what forward returns that are a mutated argument itself (`key_cache[...] = k;
    # return key_cache`): position -> the placeholder's name; `outputs` fills the other positions
    returned_args: dict[int, str] = field(default_factory=dict)

    def state(self) -> list[Placeholder]:
        return [p for p in self.placeholders if p.kind in ("parameter", "buffer")]

    def needed(self) -> set[Node]:
        """The nodes the outputs are computed from, directly or not (what a program must run)."""
        seen, todo = set(), [o for o in self.outputs if isinstance(o, Node)]
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo += node.all_input_nodes
        return seen


def _normalized(x, planes: list[int], eps):
    """(x - mean) / sqrt(var + eps) over `planes`, in two passes, as a stable variance needs."""
    centered = x - torch.mean(x, planes, keepdim=True)
    return centered * torch.rsqrt(torch.mean(centered * centered, planes, keepdim=True) + eps)


def _affine(out, weight, bias, shape: list[int]):
    """The norms' optional per-channel scale and shift, each viewed to `shape`."""
    if weight is not None:
        out = out * weight.view(shape)
    return out + bias.view(shape) if bias is not None else out


def _instance_norm(x, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    """InstanceNorm as a reduction over each (sample, channel) plane. torch's own decomposition folds
    batch and channels into one dim of a literal size, which no generated kernel could keep generic."""
    per_channel = [1, -1] + [1] * (x.dim() - 2)
    if use_input_stats:
        out = _normalized(x, list(range(2, x.dim())), eps)
    else:  # eval mode with tracked statistics
        out = (x - running_mean.view(per_channel)) * torch.rsqrt(running_var.view(per_channel) + eps)
    return _affine(out, weight, bias, per_channel)


def _group_norm(x, num_groups, weight, bias, eps, cudnn_enabled):
    """GroupNorm as a row reduction over each (sample, group): the channels split into groups, the
    statistics taken over a group's channels and positions, the affine map per channel; the view back
    merges the groups. torch's own goes through native_group_norm, which no generator reads."""
    grouped = x.unflatten(1, (num_groups, -1))
    out = _normalized(grouped, list(range(2, grouped.dim())), eps)
    return _affine(out, weight, bias, [num_groups, -1] + [1] * (x.dim() - 2)).flatten(1, 2)


def _batch_norm_eval(x, weight, bias, running_mean, running_var, momentum, eps):
    """BatchNorm in eval mode: a per-channel affine map of the running statistics (torch's own
    decomposition goes through the mutating training op, which export cannot keep functional)."""
    per_channel = [1, -1] + [1] * (x.dim() - 2)
    out = (x - running_mean.view(per_channel)) * torch.rsqrt(running_var.view(per_channel) + eps)
    return _affine(out, weight, bias, per_channel), x.new_zeros((0,)), x.new_zeros((0,))


def _batch_norm_batch_stats(x, weight, bias, training, momentum, eps):
    """BatchNorm on the batch's own statistics (training=True without running statistics): a
    reduction over every dim but the channels, in the two passes of _normalized."""
    per_channel = [1, -1] + [1] * (x.dim() - 2)
    out = _normalized(x, [0] + list(range(2, x.dim())), eps)
    return _affine(out, weight, bias, per_channel), x.new_zeros((0,)), x.new_zeros((0,))


def _split_with_sizes(x, sizes, dim=0):
    """torch.split/chunk as slices (the stock decomposition's as_strided has no size left to read)."""
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return [aten.slice.Tensor(x, dim, start, start + size) for start, size in zip(starts, sizes)]


def _split(x, split_size, dim=0):
    size = x.shape[dim]
    return _split_with_sizes(x, [min(split_size, size - s) for s in range(0, size, split_size)], dim)


def _glu(x, dim=-1):
    """GLU with the dim as the user wrote it (torch's own makes it non-negative, which would slice
    another dim of an input of another rank)."""
    half = x.shape[dim] // 2
    a, b = _split_with_sizes(x, [half, half], dim)
    return a * torch.sigmoid(b)


def _adaptive_max_pool_global(x, output_size):
    """adaptive_max_pool to size 1: a max over the spatial dims (other sizes stay unsupported)."""
    if any(size != 1 for size in output_size):
        raise NotImplementedError("adaptive max pooling to a size other than 1")
    planes = list(range(x.dim() - len(output_size), x.dim()))
    return torch.amax(x, planes, keepdim=True), x.new_zeros((0,), dtype=torch.int64)


def _kept(stock, op):
    """`op` with keepdim=True as the stock keepdim=False decomposition, viewed back: the stock one
    broadcasts with prims.broadcast_in_dim, an aliasing prim export cannot functionalize."""
    def decomposition(x, dim=None, *, correction=None, keepdim=False):
        if not keepdim or dim is None:
            return stock(x, dim, correction=correction, keepdim=keepdim)
        dims = sorted(d % x.dim() for d in ([dim] if isinstance(dim, int) else dim))
        out = op(x, dims, correction=correction, keepdim=False)
        return aten.view.default(out, [1 if i in dims else size for i, size in enumerate(x.shape)])
    return decomposition


def _decompositions() -> dict:
    table = core_aten_decompositions()
    table.update(get_decompositions(EXTRA_DECOMPOSITIONS))
    for op in (aten.var.correction, aten.std.correction):
        table[op] = _kept(table[op], op)
    for op, corrected in ((aten.var.dim, aten.var.correction), (aten.std.dim, aten.std.correction)):
        table[op] = lambda x, dim=None, unbiased=True, keepdim=False, _op=corrected: _op(
            x, dim, correction=1 if unbiased else 0, keepdim=keepdim)
    for packet in KEPT_WHOLE:
        for overload in {"default", "vec"} & set(packet.overloads()):
            table.pop(getattr(packet, overload), None)
    table[aten.instance_norm.default] = _instance_norm
    table[aten.group_norm.default] = _group_norm
    table[aten.split_with_sizes.default] = _split_with_sizes
    table[aten.split.Tensor] = _split
    table[aten.glu.default] = _glu
    table[aten.adaptive_max_pool2d.default] = _adaptive_max_pool_global
    table[aten.adaptive_max_pool3d.default] = _adaptive_max_pool_global
    table[aten._native_batch_norm_legit_no_training.default] = _batch_norm_eval
    table[aten._native_batch_norm_legit.no_stats] = _batch_norm_batch_stats
    return table


_TABLE: dict[tuple, dict] = {}


def _cia_registrations() -> tuple[str, ...]:
    return tuple(torch._C._dispatch_get_registrations_for_dispatch_key("CompositeImplicitAutograd"))


def _table() -> dict:
    """_decompositions() materialized as a plain dict, built again only when the dispatcher's
    CompositeImplicitAutograd registrations changed (torch's table materializes itself lazily, over
    every such op, on each copy, and run_decompositions copies what it is given)."""
    key = _cia_registrations()
    if key not in _TABLE:
        _TABLE.clear()
        _TABLE[key] = dict(_decompositions())
    return _TABLE[key]


def _cia_materialized_once() -> None:
    """torch.export makes every CompositeImplicitAutograd op of the C++ dispatcher a torch.ops
    attribute once per op namespace on every run_decompositions (`_materialize_cpp_cia_ops`, not
    cached upstream because custom ops can register more): a third of a lowering's time. Making
    the same attributes again changes nothing, so it runs again only when the dispatcher's list of
    CIA registrations differs from the last one it made them for."""
    from torch._export import utils

    original = getattr(utils, "_materialize_cpp_cia_ops", None)
    if original is None or getattr(original, "materialized_for", None) is not None:
        return

    def materialize() -> None:
        names = _cia_registrations()
        if names != materialize.materialized_for:
            original()
            materialize.materialized_for = names

    materialize.materialized_for = ()
    utils._materialize_cpp_cia_ops = materialize


_cia_materialized_once()


def lower(spec_path: str | Path, sizes: dict[str, int] | None = None, dtypes: tuple | None = None) -> Lowered:
    """The spec's graph, exported with its size constants shrunk (codegen/exportsizes.py); `sizes`
    (the harness's, by default the declared ones) are what the numbers computed from sizes are read
    at (sized_numbers), and where the export bakes a split of a dim (GroupNorm's groups), the graph is
    exported again at `sizes` on the meta device, so the split's factors are the harness's; `dtypes`
    (per forward argument, codegen/dtypes.py) traces the main inputs cast to another combination."""
    declared = declared_sizes(load_module(spec_path))
    shrunk = export_sizes(declared)
    target = {**declared, **(sizes or {})}
    program, lowered = _export(spec_path, shrunk, dtypes, target)
    if any(target.get(k, v) != v for k, v in shrunk.items()) and splits(program.graph):
        try:
            return _export(spec_path, target, dtypes, None, device="meta")[1]
        except (Unsupported, RuntimeError, NotImplementedError):
            pass  # a spec whose inputs or constants need data: the shrunk export's graph
    return lowered


def _export(spec_path, at: dict[str, int], dtypes, target: dict[str, int] | None, device: str = "cpu"):
    """(the decomposed program, its Lowered) of the spec exported at sizes `at`; `target`: the sizes
    whose numbers it takes (sized_numbers), None for none."""
    module = load_module(spec_path, at)
    with torch.device(device):
        init = module.get_init_inputs() if hasattr(module, "get_init_inputs") else []
        torch.manual_seed(0)
        model = traced(module.Model(*init), mode_of(getattr(module, "OPFORGE", None)))
        inputs = tuple(module.get_inputs())
    # Python numbers become 0-d tensors, so they stay graph inputs instead of baked constants
    # (variants may pass other values); ModelNew wraps them the same way at run time.
    args = tuple(torch.tensor(a, device=device) if isinstance(a, (int, float)) and not isinstance(a, bool) else a
                 for a in cast(inputs, dtypes))
    scalars = {i for i, a in enumerate(inputs) if isinstance(a, (int, float)) and not isinstance(a, bool)}
    try:
        with warnings.catch_warnings():  # torch.export's own deprecation chatter is not the user's concern
            warnings.simplefilter("ignore", FutureWarning)
            program = torch.export.export(model, args)
            if target is not None and any(target.get(k, v) != v for k, v in at.items()):
                sized_numbers(program, spec_path, target)
            program = program.run_decompositions(_table())
    except Exception as exc:  # export's own limits (data-dependent control flow...) end the expert's part
        raise Unsupported(f"torch.export could not trace the reference: {type(exc).__name__}: "
                          f"{str(exc).splitlines()[0][:200]}") from None
    for node in [n for n in program.graph.nodes if str(n.target) == "aten._assert_tensor_metadata.default"]:
        program.graph.erase_node(node)  # a dtype check the decomposition left behind: nothing to compute
    diagonal_products(program.graph)
    size1_reductions(program.graph)
    _inline_scalar_constants(program)
    return program, _describe(program, len(args), scalars)


def _inline_scalar_constants(program: torch.export.ExportedProgram) -> None:
    """0-d tensors the reference builds in forward (`torch.where(x > 0, x, torch.tensor(0.5))`, the
    `False` of `mask[:, -1] = False`) are lifted by torch.export into graph inputs of their own; each
    becomes the `aten.scalar_tensor` constant it is, which every generator reads as a number. Larger
    constants stay lifted (and _describe refuses them)."""
    graph, lifted = program.graph, program.graph_signature.inputs_to_lifted_tensor_constants
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    for node in placeholders:
        value = program.constants.get(lifted.get(node.name, ""))
        if not isinstance(value, torch.Tensor) or value.dim() != 0 or value.dtype.is_complex:
            continue
        with graph.inserting_after(placeholders[-1]):
            constant = graph.call_function(aten.scalar_tensor.default, (value.item(),), {"dtype": value.dtype})
        constant.meta["val"] = node.meta.get("val")
        node.replace_all_uses_with(constant)
        graph.erase_node(node)


def _sized_graph(spec_path: str | Path, sizes: dict[str, int]) -> Graph | None:
    """The graph torch.export traces at `sizes` on the meta device (nothing allocated, not
    decomposed: the decomposition is most of an export's time), or None where it cannot be traced."""
    module = load_module(spec_path, sizes)
    try:
        with torch.device("meta"):
            model = traced(module.Model(*(module.get_init_inputs() if hasattr(module, "get_init_inputs") else [])),
                             mode_of(getattr(module, "OPFORGE", None)))
            args = tuple(torch.tensor(a) if isinstance(a, (int, float)) and not isinstance(a, bool) else a
                         for a in module.get_inputs())
            return torch.export.export(model, args).graph
    except Exception:  # a spec whose inputs need data (randperm, .max()) keeps the export's numbers
        return None


def sized_numbers(program: torch.export.ExportedProgram, spec_path: str | Path, sizes: dict[str, int]) -> None:
    """Numbers the reference computed from its size constants (`self.scale = 1 / K ** 0.5`, `dim ** -0.5`)
    set to their value at `sizes`: the export ran at shrunk sizes, so it baked 1/sqrt(48) where the
    harness's model has 1/sqrt(64). The graph is exported again at `sizes`, on the meta device, and
    each float operand that differs between the two is taken from it, before the decomposition.
    Ints stay the export's: shapes, slice bounds and divisors like kl_div's batchmean `sum / 48`
    are sizes the generators recognise and read at run time."""
    other, graph = _sized_graph(spec_path, sizes), program.graph
    if other is None:
        return
    pairs = list(zip(graph.nodes, other.nodes))
    if len(graph.nodes) != len(other.nodes) or any(a.op != b.op or a.target != b.target for a, b in pairs):
        return  # another structure at other sizes: no node-for-node reading
    def number(a, b):
        return b if type(a) is float and type(b) is float and a != b else a

    for node, sized in pairs:
        node.args = tuple(number(a, b) for a, b in zip(node.args, sized.args))
        node.kwargs = {k: number(v, sized.kwargs.get(k, v)) for k, v in node.kwargs.items()}
    program.graph_module.recompile()  # the decomposition retraces the module's code, not its graph


def _describe(program, n_args: int, scalars: set[int]) -> Lowered:
    signature = program.graph_signature
    params, buffers = signature.inputs_to_parameters, signature.inputs_to_buffers
    placeholders, outputs = [], []
    mutated = {spec.arg.name: spec.target for spec in signature.output_specs
               if spec.kind == torch.export.graph_signature.OutputKind.USER_INPUT_MUTATION}
    mutations, returned_args = {}, {}
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
            mutations = {mutated[o.name]: o for o in node.args[0] if isinstance(o, Node) and o.name in mutated}
            outputs, returned_args = _returns(signature, node.args[0], mutated)
    left = [node for node in program.graph.nodes
            if node.op == "placeholder" and node.name in signature.inputs_to_lifted_tensor_constants]
    if left:
        shapes = ", ".join(f"{list(node.meta['val'].shape)} {node.meta['val'].dtype}" if "val" in node.meta
                           else node.name for node in left)
        raise Unsupported(f"tensor constants created in forward ({shapes}): build them in __init__ as buffers")
    ops = {str(n.target) for n in program.graph.nodes if n.op == "call_function"}
    return Lowered(program.graph, placeholders, outputs, n_args, ops, mutations, returned_args)


def _returns(signature, values, mutated: dict[str, str]) -> tuple[list, dict[int, str]]:
    """What forward returns: the computed values, and the positions among its returns that are a
    mutated argument itself (the user output is the very node that updates the argument: an alias,
    not a copy). The output node lists the argument updates first, then the user outputs."""
    outputs = [v for v in values if v is not None and not (isinstance(v, Node) and v.name in mutated)]
    user = [v for v, spec in zip(values, signature.output_specs)
            if spec.kind == torch.export.graph_signature.OutputKind.USER_OUTPUT and v is not None]
    returned = {i: mutated[v.name] for i, v in enumerate(user) if isinstance(v, Node) and v.name in mutated}
    return outputs, returned


def arg(node: Node, index: int, name: str, default=None):
    """A call's argument, positional or by keyword."""
    return node.args[index] if len(node.args) > index else node.kwargs.get(name, default)


def val(node) -> torch.Tensor | None:
    """The fake tensor torch.export recorded for a node (shape, dtype), or None for literals."""
    return node.meta.get("val") if isinstance(node, Node) else None


def state_shapes(spec_path: str | Path, sizes: dict[str, int]) -> dict[str, tuple[int, ...]]:
    """Parameter and buffer shapes at the sizes the harness verifies with (the export ran smaller)."""
    module = load_module(spec_path, sizes)
    init = module.get_init_inputs() if hasattr(module, "get_init_inputs") else []
    with torch.device("meta"):
        model = module.Model(*init)
    return {name: tuple(t.shape) for name, t in model.state_dict().items()}
