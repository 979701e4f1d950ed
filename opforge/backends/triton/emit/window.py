"""The Triton emitter of the window family: max and average pooling over 1, 2 or 3 spatial dims,
with the elementwise epilogue after the pool fused into the store.

torch lowers MaxPool1d/AvgPool1d to their 2-D ops on an unsqueezed input; the launcher replays those
views, so one kernel covers all three: it runs over the flattened output, each lane walking its window
(kernel size, stride, padding and dilation are the module's hyperparameters, baked in as constexprs;
shapes stay runtime values). Padding never reaches a max (masked loads) and average pooling divides
by exactly what torch divides by (count_include_pad, ceil_mode's clipped windows, divisor_override).
Math runs in fp32; NaN wins a max, as in torch."""
from __future__ import annotations

import math
import operator

from torch.fx import Node

from opforge.codegen.candidate import Kernel, model_new
from opforge.backends.triton.emit.common import header
from opforge.backends.triton.emit.exprs import EXPR, lit
from opforge.backends.triton.emit.rowwise import identifier
from opforge.codegen.exprs import Var
from opforge.codegen.families.window.plan import IDENTITY, SIZE_VIEWS, Pool, pool_of
from opforge.codegen.lower import Lowered, Unsupported, val

UNROLL = 64  # window elements up to which the loops unroll
# Best guess first: Triton's CPU interpreter pays per program and per tile op, not per lane, so the
# first is wide (a 4x4 max pool over 119k outputs: 21 s per call at 256 lanes, 2 s at 2048); still
# a sane GPU block for a memory-bound window (8 lanes per thread).
SPACE = ({"BLOCK": 2048, "num_warps": 8}, {"BLOCK": 1024, "num_warps": 8}, {"BLOCK": 256, "num_warps": 4},
         {"BLOCK": 512, "num_warps": 4}, {"BLOCK": 128, "num_warps": 2})


def _prologue(nodes: list[Node], kind: str) -> list[str]:
    """Statements turning the loaded `v` into the pooled value; lanes outside the input are reset to
    the pool's identity afterwards (a prologue may map the load's filler to anything: (-inf) ** 2)."""
    if not nodes:
        return []
    lines, value = [], Var("v")
    for node in nodes:
        args = [value if a is node.args[0] else a for a in node.args]
        name = Var(f"p_{node.name}")
        lines.append(f"{name} = {EXPR[str(node.target)](args, dict(node.kwargs))}  # {node.target}")
        value = name
    filler = 'float("-inf")' if kind == "max" else "0.0"
    return lines + [f"v = tl.where(inside, {value}, {filler})"]


class _Epilogue:
    """Statements after the pool: views are free (the store is flat) and elementwise ops take the
    pooled value and Python numbers only."""

    def __init__(self, pool: Node, after: list[Node]) -> None:
        self.values: dict[Node, object] = {pool: Var("pooled")}
        self.lines: list[str] = []
        self.fused: list[str] = []
        for node in after:
            target = str(node.target)
            if node.target is operator.getitem:
                if node.args[0] is not pool or node.args[1] != 0:
                    raise Unsupported("the indices of a max pool (return_indices=True)")
                self.values[node] = self.values[pool]
            elif target in SIZE_VIEWS or target in IDENTITY:
                self.values[node] = self._value(node.args[0])
            elif target in EXPR:
                args = [self._value(a) for a in node.args]
                kwargs = {k: self._value(v) for k, v in node.kwargs.items()}
                name = Var(f"v_{node.name}")
                self.lines.append(f"{name} = {EXPR[target](args, kwargs)}  # {target}")
                self.fused.append(target.replace("aten.", "").split(".")[0])
                self.values[node] = name
            else:
                raise Unsupported(f"{target} after the pool (only elementwise epilogues are fused)")

    def _value(self, a):
        if isinstance(a, Node):
            if a not in self.values:
                raise Unsupported(f"{a.name} in the epilogue is not computed from the pool")
            return self.values[a]
        if isinstance(a, (list, tuple)):
            raise Unsupported("a list argument in the epilogue")
        return a


KERNEL = '''

@triton.jit
def {name}(x_ptr, out_ptr, n_out, C, D, H, W, OD, OH, OW, sx_n, sx_c, sx_d, sx_h, sx_w,
{pad}KD: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr, SD: tl.constexpr, SH: tl.constexpr,
{pad}SW: tl.constexpr, PD: tl.constexpr, PH: tl.constexpr, PW: tl.constexpr, DD: tl.constexpr,
{pad}DH: tl.constexpr, DW: tl.constexpr, BLOCK: tl.constexpr):
    # One lane per output element, flat over [N, C, OD, OH, OW]; int64 so large tensors index safely.
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n_out
    ow = idx % OW
    oh = (idx // OW) % OH
    od = (idx // (OW * OH)) % OD
    c = (idx // (OW * OH * OD)) % C
    n = idx // (OW * OH * OD * C)
    base = x_ptr + n * sx_n + c * sx_c
    # The window's first element; padding is never loaded (masked lanes).
    d0 = od * SD - PD
    h0 = oh * SH - PH
    w0 = ow * SW - PW
{init}
    # Each dim's bounds and address at the loop that moves it (the interpreter pays per tile op, and
    # an unrolled loop repeats every op per tap); a dim without padding or ceil_mode stays inside.
    for kd in {loop}(KD):
        d = d0 + kd * DD
        in_d = {in_d}
        at_d = base + d * sx_d
        for kh in {loop}(KH):
            h = h0 + kh * DH
            in_h = {in_h}
            at_h = at_d + h * sx_h
            for kw in {loop}(KW):
                w = w0 + kw * DW
                inside = {inside}
                v = tl.load(at_h + w * sx_w, mask=inside, other={other}).to(tl.float32)
{prologue}{update}
{finish}
{epilogue}    tl.store(out_ptr + idx, {result}.to(out_ptr.dtype.element_ty), mask=mask)
'''
MAX_PARTS = dict(
    other='float("-inf")',
    init='    acc = tl.full([BLOCK], float("-inf"), dtype=tl.float32)',
    update="                acc = tl.maximum(acc, v, propagate_nan=tl.PropagateNan.ALL)  # NaN wins, as in torch",
    finish="    pooled = acc")
AVG_UPDATE = "                acc += v"


def _avg_finish(pool: Pool) -> str:
    if pool.divisor is not None:
        return f"    pooled = acc / {lit(float(pool.divisor))}  # divisor_override"
    if pool.count_include_pad:
        # torch: the window clipped to the padded input (ceil_mode windows may run past it), padding counted
        return ("    # divisor: the window clipped to the padded bounds, padding counted (count_include_pad=True)\n"
                "    count = ((tl.minimum(d0 + KD, D + PD) - d0) * (tl.minimum(h0 + KH, H + PH) - h0)\n"
                "             * (tl.minimum(w0 + KW, W + PW) - w0))\n"
                "    pooled = acc / count.to(tl.float32)")
    return ("    # divisor: the window's elements inside the input (count_include_pad=False)\n"
            "    count = ((tl.minimum(d0 + KD, D) - tl.maximum(d0, 0)) * (tl.minimum(h0 + KH, H) - tl.maximum(h0, 0))\n"
            "             * (tl.minimum(w0 + KW, W) - tl.maximum(w0, 0)))\n"
            "    pooled = acc / tl.maximum(count, 1).to(tl.float32)")


LAUNCHER = '''

def _pooled_size(size, k, s, p, dil, ceil_mode):
    """torch's output length for one spatial dim (pooling_output_shape)."""
    span = size + 2 * p - dil * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1  # the last window must start inside the input or its left padding
    return max(out, 0)


# {comment}
def {launcher}(inp):
    x = inp{before}
    if x.dim() != {rank} + 2:
        raise ValueError("expected [N, C, *spatial] with {rank} spatial dims, got " + str(tuple(x.shape)))
    N, C = x.shape[:2]
    spatial = (1,) * {missing} + tuple(x.shape[2:])
    strides = (0,) * {missing} + tuple(x.stride()[2:])
    D, H, W = spatial
    OD, OH, OW = (_pooled_size(size, k, s, p, dil, {ceil}) for size, k, s, p, dil in
                  zip(spatial, {kernel}, {stride}, {padding}, {dilation}))
    out = torch.empty((N, C) + (OD, OH, OW)[{missing}:], dtype={dtype}, device=x.device)
    n_out = out.numel()
    if n_out == 0:
        return out{after}
    grid = (triton.cdiv(n_out, {block}),)
    {kernel_name}[grid](x, out, n_out, C, D, H, W, OD, OH, OW, x.stride(0), x.stride(1), *strides,
{pad}KD={kernel[0]}, KH={kernel[1]}, KW={kernel[2]}, SD={stride[0]}, SH={stride[1]}, SW={stride[2]},
{pad}PD={padding[0]}, PH={padding[1]}, PW={padding[2]}, DD={dilation[0]}, DH={dilation[1]}, DW={dilation[2]},
{pad}BLOCK={block}, num_warps={warps})
    return out{after}
'''


def _bounds(pool: Pool) -> dict[str, str]:
    """The mask after each loop level: a dim's bounds only where a window can leave the input (padding,
    or ceil_mode's last window); a valid output's unpadded window lies inside, and a masked lane's
    index stays in range per dim (its load is masked by `mask` anyway)."""
    masks, prev = {}, "mask"
    for key, var, size, pad in (("in_d", "d", "D", 0), ("in_h", "h", "H", 1), ("inside", "w", "W", 2)):
        clipped = pool.padding[pad] > 0 or pool.ceil_mode
        masks[key] = f"{prev} & ({var} >= 0) & ({var} < {size})" if clipped else prev
        prev = key
    return masks


def _views(nodes: list[Node]) -> str:
    code = ""
    for node in nodes:
        target = str(node.target)
        if target in IDENTITY:
            continue
        dims = node.args[1]
        code += f".{SIZE_VIEWS[target]}({tuple(dims)!r})" if isinstance(dims, (list, tuple)) else \
            f".{SIZE_VIEWS[target]}({dims})"
    return code


def generate(lowered: Lowered, title: str, shapes: dict) -> Kernel:
    """A pooling kernel for a graph with one max/avg pool; Unsupported names what is not."""
    x, before, prologue, pool_node, after, pool = pool_of(lowered)
    epilogue = _Epilogue(pool_node, after)
    output = lowered.outputs[0]
    if output not in epilogue.values:
        raise Unsupported("the output is not computed from the pool")
    tail = [n for n in after if str(n.target) in SIZE_VIEWS]
    name = f"_{title}_pool_kernel"
    missing = 3 - pool.rank
    placeholders = [p.name for p in lowered.placeholders]
    if placeholders != [x.name]:
        raise Unsupported("a pooling graph with more than one input")
    launcher = f"{identifier(title)}_pool"  # a def: valid for a digit-led title (41_Max_Pooling_1D)

    def render(config: dict) -> str:
        parts = dict(MAX_PARTS) if pool.kind == "max" else dict(
            other="0.0", init="    acc = tl.zeros([BLOCK], dtype=tl.float32)", update=AVG_UPDATE,
            finish=_avg_finish(pool))
        body = [f"# Epilogue on the pooled value, before the one store; fuses: {', '.join(epilogue.fused)}."]
        body = body + epilogue.lines if epilogue.lines else []
        # Small windows unroll (static_range); a large one stays a loop so compile time stays flat.
        loop = "tl.static_range" if math.prod(pool.kernel) <= UNROLL else "range"
        kernel = KERNEL.format(name=name, pad=" " * (len(name) + 5), loop=loop,
                               prologue="".join(" " * 16 + line + "\n" for line in _prologue(prologue, pool.kind)),
                               epilogue="".join("    " + s + "\n" for s in body),
                               result=str(epilogue.values[output]), **parts, **_bounds(pool))
        described = (f"{pool.kind} pool over {pool.rank} spatial dims: kernel {pool.kernel[missing:]}, stride "
                     f"{pool.stride[missing:]}, padding {pool.padding[missing:]}"
                     + (f", dilation {pool.dilation[missing:]}" if pool.kind == "max" else "")
                     + f".\n# BLOCK={config['BLOCK']}, num_warps={config['num_warps']}: one tuning configuration.")
        dtype = val(output).dtype
        launch = LAUNCHER.format(
            comment=described, launcher=launcher, before=_views(before), rank=pool.rank,
            missing=missing, ceil=pool.ceil_mode, kernel=pool.kernel, stride=pool.stride, padding=pool.padding,
            dilation=pool.dilation, dtype=dtype, after=_views(tail), block=config["BLOCK"],
            kernel_name=name, pad=" " * 8, warps=config["num_warps"])
        return (header(f"Pooling kernel for {title}", "window", lowered) + kernel
                + launch + model_new(lowered, launcher, shapes))

    return Kernel("window", SPACE, render)

