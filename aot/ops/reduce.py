"""Reductions over normalised `axes` (the front end passes every axis for axis=None) with keepdims.

Result dtypes are numpy's: sum and prod accumulate bool and small ints in the platform int (int64
here), max and min keep the dtype, argmax and argmin give int64 (intp), any and all give bool.
"""
from __future__ import annotations

import numpy as np

from ir import dtypes as D
from ir.dtypes import DType
from ir.opdef import REQUIRED, OpError

from ._define import defop, defreduce
from ._shapes import check_axis


_DEFAULT_INT = D.from_numpy(np.int_)  # numpy 2: int64 on every 64-bit platform


def _accumulate_dtype(dtypes: list[DType], **_) -> DType:
    """numpy's sum/prod default: bool and ints narrower than the default int accumulate in it."""
    (dt,) = dtypes
    return _DEFAULT_INT if dt.kind == "b" or (dt.is_int and dt.bits < _DEFAULT_INT.bits) else dt


def _same_dtype(dtypes: list[DType], **_) -> DType:
    return dtypes[0]


def _bool_dtype(dtypes: list[DType], **_) -> DType:
    return D.bool_


def _sum_reference(x, *, axes, keepdims):
    return np.sum(x, axis=tuple(axes), keepdims=keepdims)


def _prod_reference(x, *, axes, keepdims):
    return np.prod(x, axis=tuple(axes), keepdims=keepdims)


def _max_reference(x, *, axes, keepdims):
    return np.max(x, axis=tuple(axes), keepdims=keepdims)


def _min_reference(x, *, axes, keepdims):
    return np.min(x, axis=tuple(axes), keepdims=keepdims)


def _any_reference(x, *, axes, keepdims):
    return np.any(x, axis=tuple(axes), keepdims=keepdims)


def _all_reference(x, *, axes, keepdims):
    return np.all(x, axis=tuple(axes), keepdims=keepdims)


defreduce("sum", _sum_reference, dtype_rule=_accumulate_dtype, numpy_names=("sum",), traits={"linear"})
defreduce("prod", _prod_reference, dtype_rule=_accumulate_dtype, numpy_names=("prod",))
defreduce("max", _max_reference, dtype_rule=_same_dtype, nonempty=True, numpy_names=("max", "amax"))
defreduce("min", _min_reference, dtype_rule=_same_dtype, nonempty=True, numpy_names=("min", "amin"))
defreduce("any", _any_reference, dtype_rule=_bool_dtype, numpy_names=("any",))
defreduce("all", _all_reference, dtype_rule=_bool_dtype, numpy_names=("all",))


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


_INDEX = D.from_numpy(np.intp)


def _index_dtype(dtypes: list[DType], **_) -> DType:
    return _INDEX


def _argmax_reference(x, *, axis, keepdims):
    return np.argmax(x, axis=axis, keepdims=keepdims)


def _argmin_reference(x, *, axis, keepdims):
    return np.argmin(x, axis=axis, keepdims=keepdims)


for _name, _ref in [("argmax", _argmax_reference), ("argmin", _argmin_reference)]:
    defop(_name, arity=1, dtype_rule=_index_dtype, shape_rule=_arg_shape_rule(_name), ref=_ref,
          attrs={"axis": REQUIRED, "keepdims": False}, traits={"reduction", "index_reduction"},
          numpy_names=(_name,))
