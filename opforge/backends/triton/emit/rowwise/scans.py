"""The row kernels' scans along the row, each run per column block and carried across blocks in a
[ROWS, 1] state, with the @triton.jit combine functions they call (emitted once, as accs.HELPERS).

cumsum, cumprod: tl.cumsum / tl.cumprod in float64 (int64 for integers), as CPU torch accumulates.
cummax, cummin: (value, index) pairs; the later of equal values wins and a NaN wins over any number
(then the later NaN), as torch.cummax.
logcumsumexp: (running max m, sum s of exp(x - m)) pairs, combined as m = max(m1, m2),
s = s1 exp(m1 - m) + s2 exp(m2 - m); the value is m + log(s). Never inf - inf: an operand whose max
is the combined one is scaled by exp(0).
Pairs scan a block in log2(BLOCK) doubling steps (Hillis-Steele: each lane combines with the lane 2^s
before it, read with tl.gather), not tl.associative_scan: the interpreter runs a custom-combine scan
one element at a time in Python (11 minutes for the two coverage specs), the doubling steps as whole
numpy tiles."""
from __future__ import annotations

import torch

from opforge.backends.triton.emit.exprs import TL_DTYPES, lit
from opforge.backends.triton.emit.rowwise.accs import last_lane
from opforge.codegen.lower import Unsupported

_EXTREME_COMBINE = '''@triton.jit
def _{kind}_combine(a, a_idx, b, b_idx):
    # b follows a: b wins when it is NaN, or when a is not NaN and b {cmp} a (equal values: the later)
    take = (b != b) | ((a == a) & (b {cmp} a))
    return tl.where(take, b, a), tl.where(take, b_idx, a_idx)
'''
HELPERS = {
    "cummax": _EXTREME_COMBINE.format(kind="cummax", cmp=">="),
    "cummin": _EXTREME_COMBINE.format(kind="cummin", cmp="<="),
    "logcumsumexp": '''@triton.jit
def _logcumsumexp_combine(m1, s1, m2, s2):
    # (max, sum of exp(x - max)) of two runs; an operand at the combined max is scaled by exp(0)
    m = tl.maximum(m1, m2, propagate_nan=tl.PropagateNan.ALL)
    s = s1 * tl.exp(tl.where(m1 == m, 0.0, m1 - m)) + s2 * tl.exp(tl.where(m2 == m, 0.0, m2 - m))
    return m, s
''',
}
BLOCK_SCAN = '''@triton.jit
def _{kind}_block(a, b, lane, BLOCK: tl.constexpr):
    # inclusive scan of (a, b) pairs along a [ROWS, BLOCK] tile's row: lane j combines with lane j - 2^s
    for s in tl.static_range(16):
        if (1 << s) < BLOCK:
            src = tl.maximum(lane - (1 << s), 0)
            pa, pb = _{kind}_combine(tl.gather(a, src, 1), tl.gather(b, src, 1), a, b)
            a = tl.where(lane >= (1 << s), pa, a)
            b = tl.where(lane >= (1 << s), pb, b)
    return a, b
'''
HELPERS = {kind: text + "\n\n" + BLOCK_SCAN.format(kind=kind) for kind, text in HELPERS.items()}
LAST = 1, ", keep_dims=True"
LANE = "(cols + rows * 0).to(tl.int32)"  # each element's lane in its block, as a [ROWS, BLOCK] tile  # last_lane's axis and keep_dims for a [ROWS, BLOCK] tile


def scan_lines(kind: str, name: str, source, dtype, wide: bool = True) -> tuple[list[str], list[str], object]:
    """(kernel-level set-up lines, column-loop lines, the value: a name, or (values, indices)).
    `wide`: float cumsum/cumprod carried in float64 (CPU torch scans fp32 in double); False for a
    target without fp64 (Atlas A2/A3): fp32, the cumsum's carry compensated (_compensated_cumsum)."""
    if kind == "cumsum" and not wide and dtype.is_floating_point:
        return _compensated_cumsum(name, source)
    if kind in ("cumsum", "cumprod"):
        return _cumulative(kind, name, source, dtype, wide)
    if kind in ("cummax", "cummin"):
        return _extreme(kind, name, source, dtype)
    return _logcumsumexp(name, source, dtype)


def _cumulative(kind, name, source, dtype, wide=True):
    acc = ("tl.float64" if wide else "tl.float32") if dtype.is_floating_point else "tl.int64"
    one = kind == "cumprod"
    setup = [f"carry_{name} = tl.full([ROWS, 1], {1 if one else 0}, dtype={acc})"]
    body = [f"# {kind} in {acc[3:]}, carried across column blocks (CPU torch scans fp32 in double)",
            f"u_{name} = tl.where(mask, {lit(source)}, {1 if one else 0}).to({acc})"]
    if one:  # the block's product is its scan's last lane (masked lanes hold 1)
        body += [f"scan_{name} = tl.cumprod(u_{name}, axis=1)",
                 f"{name} = scan_{name} * carry_{name}",
                 f"carry_{name} *= {last_lane(f'scan_{name}', *LAST)}"]
    else:
        body += [f"{name} = tl.cumsum(u_{name}, axis=1) + carry_{name}",
                 f"carry_{name} += tl.sum(u_{name}, axis=1, keep_dims=True)"]
    return setup, body, name


def _compensated_cumsum(name, source):
    """A float cumsum without fp64: each block scanned in fp32, the carry across blocks kept as a
    two-sum pair (carry + low: Knuth's TwoSum, exact in fp32 arithmetic), so the error does not grow
    with the number of blocks (a plain fp32 carry over 20,000 columns is 4.6e-3 off on small elements)."""
    setup = [f"carry_{name} = tl.zeros([ROWS, 1], dtype=tl.float32)",
             f"low_{name} = tl.zeros([ROWS, 1], dtype=tl.float32)"]
    body = ["# cumsum in fp32 (no fp64 here), the carry across column blocks compensated (two-sum)",
            f"u_{name} = tl.where(mask, {lit(source)}, 0).to(tl.float32)",
            f"{name} = (tl.cumsum(u_{name}, axis=1) + low_{name}) + carry_{name}",
            f"block_{name} = tl.sum(u_{name}, axis=1, keep_dims=True)",
            f"sum_{name} = carry_{name} + block_{name}",
            f"part_{name} = sum_{name} - carry_{name}",
            f"low_{name} += (carry_{name} - (sum_{name} - part_{name})) + (block_{name} - part_{name})",
            f"carry_{name} = sum_{name}"]
    return setup, body, name


def _value_type(dtype: torch.dtype) -> str:
    """The scanned values' type: fp32 for float32 and the half types (upcast on load), else the dtype's."""
    if dtype == torch.bool or dtype not in TL_DTYPES:
        raise Unsupported(f"a scan of {dtype} values")
    return "tl.float32" if dtype.is_floating_point and dtype.itemsize <= 4 else TL_DTYPES[dtype]


def _extreme(kind, name, source, dtype):
    """Masked lanes follow every valid one, so they never reach a stored value: no identity needed.
    The carry starts below (cummin: above) every value, so the first column always wins it."""
    value_type = _value_type(dtype)
    if dtype.is_floating_point:
        far = 'float("-inf")' if kind == "cummax" else 'float("inf")'
    else:
        far = str(torch.iinfo(dtype).min if kind == "cummax" else torch.iinfo(dtype).max)
    setup = [f"carry_{name} = tl.full([ROWS, 1], {far}, dtype={value_type})",
             f"carry_{name}_idx = tl.zeros([ROWS, 1], dtype=tl.int64)"]
    body = [f"# {kind}: (value, index) pairs scanned along the block, then combined with the carry",
            f"scan_{name}, scan_{name}_idx = _{kind}_block({lit(source)}.to({value_type}), "
            f"(c + rows * 0).to(tl.int64), {LANE}, BLOCK)",
            f"{name}, {name}_idx = _{kind}_combine(carry_{name}, carry_{name}_idx, scan_{name}, scan_{name}_idx)",
            f"carry_{name} = {last_lane(name, *LAST)}",
            f"carry_{name}_idx = {last_lane(f'{name}_idx', *LAST)}"]
    return setup, body, (name, f"{name}_idx")


def _logcumsumexp(name, source, dtype):
    t = _value_type(dtype)
    if not dtype.is_floating_point:
        raise Unsupported(f"logcumsumexp of {dtype} values")
    setup = [f'carry_{name}_m = tl.full([ROWS, 1], float("-inf"), dtype={t})',
             f"carry_{name}_s = tl.zeros([ROWS, 1], dtype={t})"]
    body = ["# logcumsumexp: (running max, sum of exp(x - max)) pairs, combined with the carry",
            f"m_{name}, s_{name} = _logcumsumexp_block({lit(source)}.to({t}), "
            f"tl.full([ROWS, BLOCK], 1.0, dtype={t}), {LANE}, BLOCK)",
            f"m_{name}, s_{name} = _logcumsumexp_combine(carry_{name}_m, carry_{name}_s, m_{name}, s_{name})",
            f"{name} = m_{name} + tl.log(s_{name})",
            f"carry_{name}_m = {last_lane(f'm_{name}', *LAST)}",
            f"carry_{name}_s = {last_lane(f's_{name}', *LAST)}"]
    return setup, body, name
