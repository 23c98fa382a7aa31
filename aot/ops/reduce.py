"""Reductions over normalised `axes` (the front end passes every axis for axis=None) with keepdims.

Each row's dtype rule, numpy reference and empty-axis rule come from its kind's record in
ir/reductions.py (numpy's: sum and prod accumulate bool and small ints in the platform int, max and
min keep the dtype, argmax and argmin give intp, any and all give bool).
"""
from __future__ import annotations

from ir.dtypes import DType
from ir.opdef import REQUIRED, OpError
from ir.reductions import REDUCTIONS, ReduceKind

from ._define import defop, defreduce
from ._shapes import check_axis


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


# the record (ir.reductions) gives the dtype rule, the reference and whether an empty axis is an error
for _name, _np_names, _traits in [("sum", ("sum",), {"linear"}), ("prod", ("prod",), ()),
                                  ("max", ("max", "amax"), ()), ("min", ("min", "amin"), ()),
                                  ("any", ("any",), ()), ("all", ("all",), ())]:
    _kind = REDUCTIONS[_name]
    defreduce(_name, _reference(_kind), dtype_rule=_dtype_rule(_kind), nonempty=not _kind.has_identity,
              numpy_names=_np_names, traits=_traits)


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
          traits={"reduction", "index_reduction"}, numpy_names=(_name,))
