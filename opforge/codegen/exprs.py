"""What every family fuses, independent of the backend: the elementwise core-ATen ops (each emitter
has a formatter for every one: emit/triton/exprs.py, emit/cuda/exprs.py), the shape-only ops, and
`Var`, a rendered value's name as opposed to a Python literal."""
from __future__ import annotations

ELEMENTWISE = frozenset({
    'aten.add.Tensor', 'aten.add.Scalar', 'prims.add.default', 'aten.sub.Tensor', 'aten.sub.Scalar',
    'prims.sub.default', 'aten.rsub.Scalar', 'aten.rsub.Tensor', 'aten.mul.Tensor', 'aten.mul.Scalar',
    'prims.mul.default', 'aten.div.Tensor', 'aten.div.Scalar', 'aten.div.Tensor_mode', 'prims.div.default',
    'aten.neg.default', 'aten.abs.default', 'aten.exp.default', 'aten.exp2.default', 'aten.log.default',
    'aten.log2.default', 'aten.log1p.default', 'aten.expm1.default', 'aten.sqrt.default',
    'aten.rsqrt.default', 'aten.sigmoid.default', 'aten.erf.default', 'aten.tanh.default', 'aten.sin.default',
    'aten.cos.default', 'aten.floor.default', 'aten.ceil.default', 'aten.reciprocal.default',
    'aten.relu.default', 'aten.sign.default', 'aten.pow.Tensor_Scalar', 'aten.pow.Tensor_Tensor',
    'aten.pow.Scalar', 'aten.clamp.default', 'aten.clamp.Tensor', 'aten.clamp_min.default',
    'aten.clamp_max.default', 'aten.maximum.default', 'aten.minimum.default', 'aten.where.self',
    'aten.where.ScalarSelf', 'aten.where.ScalarOther', 'aten.where.Scalar', 'prims.where.default',
    'aten.gt.Tensor', 'aten.gt.Scalar', 'aten.lt.Tensor', 'aten.lt.Scalar', 'aten.ge.Tensor',
    'aten.ge.Scalar', 'aten.le.Tensor', 'aten.le.Scalar', 'aten.eq.Tensor', 'aten.eq.Scalar',
    'aten.ne.Tensor', 'aten.ne.Scalar', 'aten.logical_and.default', 'aten.logical_or.default',
    'aten.logical_not.default', 'aten.bitwise_and.Tensor', 'aten.bitwise_or.Tensor',
    'aten.bitwise_not.default', 'aten._to_copy.default', 'prims.convert_element_type.default',
    'aten.clone.default', 'aten.alias.default', 'aten.detach.default', 'aten.lift_fresh_copy.default',
    'aten.scalar_tensor.default', 'aten.isnan.default', 'aten.isinf.default', 'aten.full.default',
    'aten.trunc.default', 'aten.round.default', 'aten.round.decimals', 'aten.sinh.default',
    'aten.cosh.default', 'aten.tan.default', 'aten.asinh.default', 'aten.acosh.default', 'aten.atanh.default',
    'aten.log10.default', 'aten.hypot.default',
})

# Shape-only ops: the value is unchanged, only how it is indexed. Generators decide what they accept.
VIEWS = {
    "aten.view.default", "aten._unsafe_view.default", "aten.reshape.default", "aten.expand.default",
    "aten.unsqueeze.default", "aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze.default",
    "aten.permute.default", "aten.t.default", "aten.transpose.int", "prims.broadcast_in_dim.default",
    "aten.contiguous.default", "aten.slice.Tensor",
}


class Var(str):
    """A rendered value's name (Triton or C++), as opposed to a Python string literal."""
