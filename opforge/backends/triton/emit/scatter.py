"""The Triton emitter of the scatter family (families/scatter): index writes stored in place into
the forward arguments the reference updates (a KV-cache write).

One kernel per group of writes over the same rows: a program takes BLOCK_R rows and BLOCK_E elements
of each write's rest (the target's unindexed dims). Per row it loads the index tensors' and the
mask's inputs at run time, skips rows the mask drops, wraps negative indices as torch does and
drops out-of-range ones (torch raises; a kernel cannot, and must not write outside the target);
per row and rest element it loads the value, computes its chain and stores it at the target's
strides, so a target of any layout is written where it lies. A pure copy moves the values in
their own dtype (bit-exact); a chain runs in fp32."""
from __future__ import annotations

from dataclasses import replace

from opforge.codegen.candidate import Kernel, model_new
from opforge.backends.triton.emit.common import header
from opforge.backends.triton.emit.exprs import EXPR, lit
from opforge.codegen.exprs import Var
from opforge.codegen.families.scatter.plan import REST_RANK, ROW_RANK, Group, Plan, Side, Write
from opforge.codegen.lower import Lowered, val

# A KV-cache write moves one row of heads x head_size per token: 4 x 512 is a quarter of a
# [8 x 128] row block per program; one token row per program suits decode (one token).
SPACE = ({"BLOCK_R": 4, "BLOCK_E": 512, "num_warps": 4}, {"BLOCK_R": 1, "BLOCK_E": 1024, "num_warps": 4},
         {"BLOCK_R": 16, "BLOCK_E": 256, "num_warps": 8})
EXPORT_CHECKS = {"aten.sym_size.int", "aten._assert_scalar.default"}
MAX_GRID_1 = 65535  # CUDA's limit on a grid's second axis (the rest blocks)

HELPERS = '''

def _padded(values, rank, fill):
    """`values` padded on the left to `rank` entries (sizes with 1, strides with 0)."""
    values = list(values)
    return [fill] * (rank - len(values)) + values
'''


def generate(lowered: Lowered, title: str, shapes: dict) -> Kernel:
    plan = Plan(lowered)
    # the header names what is computed, not torch.export's checks of a data-dependent size
    shown = replace(lowered, ops={op for op in lowered.ops if op.startswith(("aten.", "prims."))} - EXPORT_CHECKS)
    names = [f"_{title}_scatter{g}_kernel" for g in range(len(plan.groups))]

    def render(config: dict) -> str:
        kernels = "".join(_kernel(name, group) for name, group in zip(names, plan.groups))
        launchers = "".join(_launcher(g, name, group, lowered, config) for g, (name, group)
                            in enumerate(zip(names, plan.groups)))
        args = ", ".join(p.name for p in lowered.placeholders)
        calls = "".join(f"    _launch{g}({args})\n" for g in range(len(plan.groups)))
        return (header(f"Index-write (scatter) kernel for {title}", "scatter", shown)
                + "import math\n" + HELPERS + kernels + launchers
                + f"\n\n# The arguments are updated in place; forward returns nothing.\ndef launch({args}):\n{calls}"
                + model_new(lowered, "launch", shapes))

    return Kernel("scatter", SPACE, render, kernels=len(plan.groups))


# ---- the kernel ------------------------------------------------------------------------------

def _params(group: Group) -> list[str]:
    """Pointers, then row sizes and strides, then per write its rest sizes, indexed dims (size and
    stride), rest strides and its values' strides (rows part, rest part)."""
    out = [f"t{j}_ptr" for j in range(len(group.writes))] + [f"r{i}_ptr" for i in range(len(group.rows.leaves))]
    out += [f"w{j}_v{i}_ptr" for j, w in enumerate(group.writes) for i in range(len(w.values.leaves))]
    out += ["n_rows"] + [f"DZ{d}" for d in range(1, ROW_RANK)]
    out += [f"rs{i}_{d}" for i in range(len(group.rows.leaves)) for d in range(ROW_RANK)]
    for j, w in enumerate(group.writes):
        out += [f"n_rest{j}"] + [f"w{j}_RZ{d}" for d in range(1, REST_RANK)]
        out += [x for a in range(len(w.dims)) for x in (f"w{j}_tz{a}", f"w{j}_ts{a}")]
        out += [f"w{j}_te{d}" for d in range(REST_RANK)]
        for i in range(len(w.values.leaves)):
            out += [f"w{j}_vr{i}_{d}" for d in range(ROW_RANK)] + [f"w{j}_ve{i}_{d}" for d in range(REST_RANK)]
    return out


def _coords(flat: str, prefix: str, sizes: str, rank: int) -> list[str]:
    """`flat` decomposed into coordinates {prefix}0 .. {prefix}{rank-1} of sizes {sizes}1 ..."""
    lines = [f"q = {flat}"]
    for d in range(rank - 1, 0, -1):
        lines += [f"{prefix}{d} = q % {sizes}{d}", f"q = q // {sizes}{d}"]
    return lines + [f"{prefix}0 = q"]


def _dot(coords: str, strides: str, rank: int) -> str:
    return " + ".join(f"{coords}{d} * {strides}{d}" for d in range(rank))


def _kernel(name: str, group: Group) -> str:
    lines = ["rows = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)",
             "row_ok = rows < n_rows"]
    lines += _coords("rows", "r", "DZ", ROW_RANK)
    lines.append("# per row: the mask's and the index tensors' inputs, read at run time")
    for i, leaf in enumerate(group.rows.leaves):
        lines.append(f"{leaf.var} = tl.load(r{i}_ptr + {_dot('r', f'rs{i}_', ROW_RANK)}, mask=row_ok, other=0)"
                     f"{_upcast(leaf.dtype)}")
    lines += _ops(group.rows)
    lines.append(f"keep = row_ok & ({group.keep} != 0)" if group.keep else "keep = row_ok")
    lines.append("es = tl.program_id(1).to(tl.int64) * BLOCK_E + tl.arange(0, BLOCK_E)")
    for j, write in enumerate(group.writes):
        lines += _write(j, write)
    body = "\n".join("    " + line for line in lines)
    return (f"\n\n@triton.jit\ndef {name}({', '.join(_params(group))}, BLOCK_R: tl.constexpr, "
            f"BLOCK_E: tl.constexpr):\n{body}\n")


def _write(j: int, write: Write) -> list[str]:
    lines = [f"# write {j}: {write.node.name} into {write.target} (dims {list(write.dims)} indexed)"]
    ok = ["keep"]
    for a, index in enumerate(write.index):
        i = f"w{j}_i{a}"
        lines += [f"{i} = ({lit(index)}).to(tl.int64)",
                  f"{i} = tl.where({i} < 0, {i} + w{j}_tz{a}, {i})  # a negative index counts from the end"]
        ok.append(f"({i} >= 0) & ({i} < w{j}_tz{a})")
    lines.append(f"w{j}_ok = {' & '.join(ok)}")
    lines.append(f"w{j}_row = " + " + ".join(f"w{j}_i{a} * w{j}_ts{a}" for a in range(len(write.index))))
    lines += _coords("es", f"w{j}_e", f"w{j}_RZ", REST_RANK)
    lines.append(f"w{j}_col = {_dot(f'w{j}_e', f'w{j}_te', REST_RANK)}")
    lines.append(f"w{j}_mask = w{j}_ok[:, None] & (es < n_rest{j})[None, :]")
    upcast = bool(write.values.ops)
    for i, leaf in enumerate(write.values.leaves):
        offset = (f"({_dot('r', f'w{j}_vr{i}_', ROW_RANK)})[:, None] + "
                  f"({_dot(f'w{j}_e', f'w{j}_ve{i}_', REST_RANK)})[None, :]")
        lines.append(f"{leaf.var} = tl.load(w{j}_v{i}_ptr + {offset}, mask=w{j}_mask, other=0)"
                     f"{_upcast(leaf.dtype) if upcast else ''}")
    lines += _ops(write.values)
    value = lit(write.value)
    if not write.values.leaves:  # a constant fill: broadcast to the block
        value = f"(tl.zeros([BLOCK_R, BLOCK_E], tl.float32) + {value})"
    lines.append(f"tl.store(t{j}_ptr + w{j}_row[:, None] + w{j}_col[None, :], "
                 f"{value}.to(t{j}_ptr.dtype.element_ty), mask=w{j}_mask)")
    return lines


def _ops(side: Side) -> list[str]:
    return [f"{op.var} = {_expr(op)}" for op in side.ops]


def _expr(op) -> str:
    mode = op.kwargs.get("rounding_mode")
    floating = val(op.node).dtype.is_floating_point
    if op.target == "aten.div.Tensor_mode" and mode is not None:
        return _rounded_div(op.args, mode, floating)
    if op.target in ("aten.remainder.Scalar", "aten.remainder.Tensor") and not floating:
        # integer % is C's (the dividend's sign) on a GPU and under the interpreter: Python's is
        # the divisor's, one divisor away where the signs differ
        a, b = op.args
        r = f"({lit(a)} % {lit(b)})"
        differ = f"(({r} < 0) != ({lit(b)} < 0))" if isinstance(b, Var) else f"({r} {'<' if b > 0 else '>'} 0)"
        return f"tl.where({differ} & ({r} != 0), {r} + {lit(b)}, {r})"
    return EXPR[op.target](op.args, op.kwargs)


def _rounded_div(args: list, mode: str, floating: bool) -> str:
    """torch's div with rounding_mode. Integers go through |a| // |b|, where truncation and floor
    agree (Triton's // truncates on a GPU and under the interpreter alike), then the sign."""
    a, b = args
    if floating:
        q = f"({lit(a)} / {lit(b)})"
        return f"tl.floor({q})" if mode == "floor" else f"tl.where({q} >= 0, tl.floor({q}), tl.ceil({q}))"
    if isinstance(b, Var):
        magnitude, negative = f"tl.abs({b})", f"(({lit(a)} < 0) != ({b} < 0))"
    else:
        magnitude, negative = lit(abs(b)), f"({lit(a)} < 0)" if b > 0 else f"({lit(a)} > 0)"
    q = f"(tl.abs({lit(a)}) // {magnitude})"
    trunc = f"tl.where({negative}, -{q}, {q})"
    if mode == "trunc":
        return trunc
    return f"tl.where({negative} & ({trunc} * {lit(b)} != {lit(a)}), {trunc} - 1, {trunc})"


def _upcast(dtype) -> str:
    return ".to(tl.float32)" if dtype.is_floating_point and dtype.itemsize < 4 else ""


# ---- the launcher ----------------------------------------------------------------------------

def _launcher(g: int, name: str, group: Group, lowered: Lowered, config: dict) -> str:
    block_r, block_e, warps = config["BLOCK_R"], config["BLOCK_E"], config["num_warps"]
    lines = [f"r{i} = {leaf.code}" for i, leaf in enumerate(group.rows.leaves)]
    lines += _rows_shape(group)
    lines += [f"if len(rows) > {ROW_RANK}:",
              f"    raise ValueError(f\"index rows of {{len(rows)}} dims; this kernel decomposes up to {ROW_RANK}\")"]
    lines += [f"r{i} = r{i}.expand(rows)" for i in range(len(group.rows.leaves))]
    args = [f"w{j}_t" for j in range(len(group.writes))] + [f"r{i}" for i in range(len(group.rows.leaves))]
    args += [f"w{j}_v{i}" for j, w in enumerate(group.writes) for i in range(len(w.values.leaves))]
    args += ["n_rows", f"*_padded(rows, {ROW_RANK}, 1)[1:]"]
    args += [f"*_padded(r{i}.stride(), {ROW_RANK}, 0)" for i in range(len(group.rows.leaves))]
    for j, write in enumerate(group.writes):
        lines += _write_views(j, write, group)
        args += [f"n_rest{j}", f"*_padded(w{j}_rest, {REST_RANK}, 1)[1:]"]
        args += [x for d in write.dims for x in (f"w{j}_t.shape[{d}]", f"w{j}_t.stride({d})")]
        args.append(f"*_padded([w{j}_t.stride(d) for d in {write.rest!r}], {REST_RANK}, 0)")
        for i in range(len(write.values.leaves)):
            args += [f"*_padded(w{j}_v{i}.stride()[:len(rows)], {ROW_RANK}, 0)",
                     f"*_padded(w{j}_v{i}.stride()[len(rows):], {REST_RANK}, 0)"]
    rests = ", ".join(f"n_rest{j}" for j in range(len(group.writes)))
    lines += ["n_rows = math.prod(rows)", f"n_rest = max([{rests}])",
              "if n_rows == 0 or n_rest == 0:",
              "    return",
              f"grid = (triton.cdiv(n_rows, {block_r}), triton.cdiv(n_rest, {block_e}))",
              f"if grid[1] > {MAX_GRID_1}:",
              f"    raise ValueError(f\"{{n_rest}} elements per row are more than this kernel's grid covers\")",
              f"{name}[grid]({', '.join(args)}, BLOCK_R={block_r}, BLOCK_E={block_e}, num_warps={warps})"]
    body = "\n".join("    " + line for line in lines)
    return (f"\n\n# BLOCK_R={block_r}, BLOCK_E={block_e}, num_warps={warps}: one of the expert's tuning "
            f"configurations (recorded with the version).\ndef _launch{g}({', '.join(p.name for p in lowered.placeholders)}):\n{body}\n")


def _rows_shape(group: Group) -> list[str]:
    """`rows`: the mask's shape (the leading dims of what it compacts), else the index tensors'
    broadcast shape."""
    if group.mask is None:
        return ["rows = tuple(torch.broadcast_shapes(" + "".join(f"r{i}.shape, " for i in range(len(group.rows.leaves)))
                + "))"]
    k = group.rows_rank
    compacted = [f"r{i}" for i, leaf in enumerate(group.rows.leaves) if leaf.compacted]
    first = compacted[0] if compacted else _first_compacted_value(group)
    lines = [f"rows = tuple({first}.shape[:{k}])"]
    for x in compacted:
        lines += [f"if tuple({x}.shape[:{k}]) != rows:",
                  f"    raise IndexError(f\"the mask's shape {{rows}} does not match {{tuple({x}.shape)}}\")"]
    return lines


def _first_compacted_value(group: Group) -> str:
    for write in group.writes:
        for leaf in write.values.leaves:
            if leaf.compacted:
                return f"({leaf.code})"
    raise AssertionError("a masked group compacts something")


def _write_views(j: int, write: Write, group: Group) -> list[str]:
    """The target, its rest sizes, and each value viewed [rows..., rest...] (views only)."""
    k = group.rows_rank if group.mask is not None else None
    lines = [f"w{j}_t = {write.target}", f"w{j}_rest = [w{j}_t.shape[d] for d in {write.rest!r}]",
             f"n_rest{j} = math.prod(w{j}_rest)"]
    for i, leaf in enumerate(write.values.leaves):
        v = f"w{j}_v{i}"
        lines.append(f"{v} = {leaf.code}")
        if write.along is not None:  # a scatter reads src where the index has elements
            lines += [f"{v} = {v}[(None,) * (len(rows) - {v}.dim())]",
                      f"{v} = {v}[tuple(slice(0, size) for size in rows)].expand(rows)"]
        elif k is None:  # values shaped as torch's indexing result: the rows where the indexed dims stand
            first = write.dims[0] if write.adjacent else 0
            lines += [f"shape = list(w{j}_t.shape[:{first}]) + list(rows) + list(w{j}_t.shape[{write.dims[-1] + 1}:])"
                      if write.adjacent else f"shape = list(rows) + w{j}_rest",
                      f"order = list(range({first}, {first} + len(rows))) + list(range({first})) + "
                      f"list(range({first} + len(rows), len(shape)))",
                      f"{v} = {v}.expand(shape).permute(order)"]
        elif leaf.compacted:
            lines += [f"if tuple({v}.shape[:{k}]) != rows:",
                      f"    raise IndexError(f\"the mask's shape {{rows}} does not match {{tuple({v}.shape)}}\")",
                      f"{v} = {v}[(slice(None),) * {k} + (None,) * (len(w{j}_rest) + {k} - {v}.dim())]"
                      f".expand(*rows, *w{j}_rest)"]
        else:  # the same value for every kept row
            lines.append(f"{v} = {v}[(None,) * ({k} + len(w{j}_rest) - {v}.dim())].expand(*rows, *w{j}_rest)")
    return lines
