"""Creation ops: tensors made from attributes (constant, full, iota) or from an operand's type
(full_like; zeros_like and ones_like are full_like, arange is iota * step + start)."""
from __future__ import annotations

import numpy as np

from ir import dtypes as D
from ir.dtypes import DType
from ir.opdef import REQUIRED, OpError

from ._define import check_dtype_attr, defop
from ._shapes import check_dim, check_shape
from ._transforms import full, zero_rules

# the transforms emit an op without operands as it is: no rule is ever asked for
NO_OPERANDS = {"no_operands": "no operands: every transform emits it unchanged (a constant of the graph)"}

_SCALARS = (bool, int, float, complex, np.generic)


def _check_value(op: str, value, dtype: DType) -> None:
    kind = np.asarray(value).dtype.kind
    if kind not in "biufc":
        raise OpError(f"{op}: value must be numeric, got {value!r}")
    if kind == "c" and not dtype.is_complex:
        raise OpError(f"{op}: complex value for dtype {dtype}")


# --- constant --------------------------------------------------------------------------------------
def _constant_dtype(dtypes: list[DType], *, value, dtype) -> DType:
    dtype = check_dtype_attr("constant", dtype)
    _check_value("constant", value, dtype)
    return dtype


def _constant_shape(shapes: list[tuple], *, value, dtype) -> tuple:
    return tuple(np.shape(value))


def _constant_reference(*, value, dtype):
    return np.array(value, dtype=dtype.numpy)


defop("constant", arity=0, dtype_rule=_constant_dtype, shape_rule=_constant_shape, ref=_constant_reference,
      attrs={"value": REQUIRED, "dtype": REQUIRED}, traits={"creation", "constant_like"},
      markers={"no_frontend_name": "made from arrays and Python scalars that traced code closes over",
               **NO_OPERANDS})


# --- full / full_like ------------------------------------------------------------------------------
def _full_dtype(dtypes: list[DType], *, shape, value, dtype) -> DType:
    dtype = check_dtype_attr("full", dtype)
    if hasattr(value, "free_symbols"):  # a size expression (e.g. a symbolic mean's count), known at run time
        if dtype.is_bool:
            raise OpError(f"full: a size value ({value}) cannot fill a bool tensor")
        return dtype
    if not isinstance(value, _SCALARS):
        raise OpError(f"full: value must be a scalar or a size expression, got {value!r}")
    _check_value("full", value, dtype)
    return dtype


def _full_shape(shapes: list[tuple], *, shape, value, dtype) -> tuple:
    return check_shape("full", shape)


def _full_reference(*, shape, value, dtype):
    return np.full(tuple(int(d) for d in shape), value, dtype=dtype.numpy)


def _full_like_dtype(dtypes: list[DType], *, value, dtype) -> DType:
    out = dtypes[0] if dtype is None else check_dtype_attr("full_like", dtype)
    if not isinstance(value, _SCALARS):
        raise OpError(f"full_like: value must be a scalar, got {value!r}")
    _check_value("full_like", value, out)
    return out


def _full_like_shape(shapes: list[tuple], **_) -> tuple:
    return tuple(shapes[0])


def _full_like_reference(x, *, value, dtype):
    return np.full_like(x, value, dtype=None if dtype is None else dtype.numpy)


def _full_like_batch(vals, dims, *, value, dtype):
    """The same array for every example: one example's shape, unbatched."""
    x, d = vals[0], dims[0]
    shape = tuple(x.meta.shape[:d]) + tuple(x.meta.shape[d + 1:])
    return full(x, shape, value, dtype or x.meta.dtype), None


defop("full", arity=0, dtype_rule=_full_dtype, shape_rule=_full_shape, ref=_full_reference,
      attrs={"shape": REQUIRED, "value": REQUIRED, "dtype": REQUIRED}, traits={"creation"},
      numpy_names=("full", "zeros", "ones", "empty"),  # traced code never reads uninitialised memory
      markers=NO_OPERANDS)
defop("full_like", arity=1, dtype_rule=_full_like_dtype, shape_rule=_full_like_shape,
      ref=_full_like_reference, attrs={"value": REQUIRED, "dtype": None}, traits={"creation"},
      numpy_names=("full_like", "zeros_like", "ones_like", "empty_like"), batch=_full_like_batch,
      **zero_rules(1))


# --- iota ------------------------------------------------------------------------------------------
def _iota_dtype(dtypes: list[DType], *, n, dtype) -> DType:
    dtype = check_dtype_attr("iota", dtype)
    if dtype.is_bool:
        raise OpError("iota: bool is not a counting dtype (numpy's arange refuses lengths over 2)")
    return dtype


def _iota_shape(shapes: list[tuple], *, n, dtype) -> tuple:
    return (check_dim("iota", n, "n"),)


def _iota_reference(*, n, dtype):
    return np.arange(int(n), dtype=dtype.numpy)


defop("iota", arity=0, dtype_rule=_iota_dtype, shape_rule=_iota_shape, ref=_iota_reference,
      attrs={"n": REQUIRED, "dtype": D.int64}, traits={"creation"},
      markers={"no_frontend_name": "np.arange decomposes into iota * step + start", **NO_OPERANDS})
