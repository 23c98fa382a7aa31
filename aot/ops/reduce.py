"""Reductions over normalised `axes` (the front end passes every axis for axis=None) with keepdims.

Each row's dtype rule, numpy reference and empty-axis rule come from its kind's record in
ir/reductions.py (numpy's: sum and prod accumulate bool and small ints in the platform int, max and
min keep the dtype, argmax and argmin give intp, any and all give bool).
"""
from __future__ import annotations

import numpy as np

from ir.dtypes import DType
from ir.opdef import REQUIRED, OpError
from ir.reductions import REDUCTIONS, ReduceKind

from ._define import defop, defreduce
from ._shapes import check_axis
from ._transforms import broadcast_to, emit, linear_jvp, not_differentiable, reduction_batch, unreduce


def _dtype_rule(kind: ReduceKind):
    def rule(dtypes: list[DType], **_) -> DType:
        (dt,) = dtypes
        return kind.result(dt)

    rule.__name__ = rule.__qualname__ = f"_{kind.name}_dtype"
    return rule


def _reference(kind: ReduceKind):
    def ref(x, *, axes, keepdims):
        return kind.numpy(x, axis=tuple(axes), keepdims=keepdims)

    ref.__name__ = ref.__qualname__ = f"_{kind.name}_reference"
    ref.__doc__ = f"numpy.{kind.numpy.__name__} over `axes`"
    return ref


# --- the transforms' rules --------------------------------------------------------------------------
def _sum_vjp(g, x, *, out, axes, keepdims):
    return (broadcast_to(unreduce(g, axes, x.ndim, keepdims), x.meta.shape),)


def _others_product(x, axes):
    """For each element, the product of the other elements of its reduced group (exact where x has
    zeros, unlike out / x): exclusive products from both ends of the group, flattened to one axis."""
    rank, axes = x.ndim, sorted(a % x.ndim for a in axes)
    keep = [a for a in range(rank) if a not in axes]
    moved = emit("transpose", x, perm=tuple(keep + axes)) if keep + axes != list(range(rank)) else x
    kept_shape = tuple(x.meta.shape[a] for a in keep)
    n = 1
    for a in axes:
        n = n * x.meta.shape[a]
    flat = emit("reshape", moved, shape=(*kept_shape, n))
    ones = np.ones_like(flat[..., :1])
    before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    after = np.flip(np.cumprod(np.concatenate([ones, np.flip(flat, -1)[..., :-1]], axis=-1), axis=-1), -1)
    others = emit("reshape", before * after, shape=tuple(moved.meta.shape))
    inverse = [0] * rank
    for i, a in enumerate(keep + axes):
        inverse[a] = i
    return emit("transpose", others, perm=tuple(inverse)) if keep + axes != list(range(rank)) else others


def _prod_vjp(g, x, *, out, axes, keepdims):
    others = _others_product(x, axes)
    return (unreduce(g, axes, x.ndim, keepdims) * np.conj(others),)


def _prod_jvp(ts, x, *, out, axes, keepdims):
    return emit("sum", ts[0] * _others_product(x, axes), axes=axes, keepdims=keepdims)


def _chosen(x, out, axes, keepdims):
    """Where x attains its max/min, each of k ties weighted 1/k (JAX's convention: ties share it)."""
    hit = x == unreduce(out, axes, x.ndim, keepdims)
    hit = emit("cast", hit, dtype=x.meta.dtype)
    return hit / emit("sum", hit, axes=axes, keepdims=True)


def _chooser_vjp(g, x, *, out, axes, keepdims):
    return (unreduce(g, axes, x.ndim, keepdims) * _chosen(x, out, axes, keepdims),)


def _chooser_jvp(ts, x, *, out, axes, keepdims):
    return emit("sum", ts[0] * _chosen(x, out, axes, keepdims), axes=axes, keepdims=keepdims)


_RULES = {
    "sum": {"vjp": _sum_vjp, "jvp": linear_jvp("sum")},
    "prod": {"vjp": _prod_vjp, "jvp": _prod_jvp},
    "max": {"vjp": _chooser_vjp, "jvp": _chooser_jvp},
    "min": {"vjp": _chooser_vjp, "jvp": _chooser_jvp},
    "any": {"markers": not_differentiable("a boolean result")},
    "all": {"markers": not_differentiable("a boolean result")},
}

# the record (ir.reductions) gives the dtype rule, the reference and whether an empty axis is an error
for _name, _np_names, _traits in [("sum", ("sum",), {"linear"}), ("prod", ("prod",), ()),
                                  ("max", ("max", "amax"), ()), ("min", ("min", "amin"), ()),
                                  ("any", ("any",), ()), ("all", ("all",), ())]:
    _kind = REDUCTIONS[_name]
    defreduce(_name, _reference(_kind), dtype_rule=_dtype_rule(_kind), nonempty=not _kind.has_identity,
              numpy_names=_np_names, traits=_traits, **_RULES[_name])


# --- argmax / argmin: one axis ---------------------------------------------------------------------
def _arg_shape_rule(op: str):
    def rule(shapes: list[tuple], *, axis: int, keepdims: bool) -> tuple:
        shape = tuple(shapes[0])
        axis = check_axis(op, axis, len(shape))
        if shape[axis] == 0:
            raise OpError(f"{op}: attempt to reduce an empty axis {axis} of shape {shape}")
        return shape[:axis] + ((1,) if keepdims else ()) + shape[axis + 1:]

    rule.__name__ = rule.__qualname__ = f"_{op}_shape"
    return rule


def _arg_reference(kind: ReduceKind):
    def ref(x, *, axis, keepdims):
        return kind.numpy(x, axis=axis, keepdims=keepdims)

    ref.__name__ = ref.__qualname__ = f"_{kind.name}_reference"
    ref.__doc__ = f"numpy.{kind.numpy.__name__} along `axis`"
    return ref


for _name in ("argmax", "argmin"):
    _kind = REDUCTIONS[_name]
    defop(_name, arity=1, dtype_rule=_dtype_rule(_kind), shape_rule=_arg_shape_rule(_name),
          ref=_arg_reference(_kind), attrs={"axis": REQUIRED, "keepdims": False},
          traits={"reduction", "index_reduction"}, numpy_names=(_name,), batch=reduction_batch(_name),
          markers=not_differentiable("an integer result (indices): its derivative is zero"))
