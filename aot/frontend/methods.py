"""Python operators and ndarray methods/attributes on abstract values, as numpy defines them."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import assignment as assign
from . import numpy_arrays as arrays
from . import numpy_linalg as la
from . import numpy_misc as misc
from . import numpy_reductions as red
from . import numpy_scans as scans
from . import numpy_shape as shp
from . import numpy_sized as sized
from . import numpy_sorting as sorting
from .emitter import Emitter, abstract_of
from .assignment import in_place, setitem
from .indexing import getitem
from .numpy_ufuncs import apply_ufunc, emit, np_clip
from .operands import FrontendError, UnsupportedError, cast, full_like, to_dtype, to_value
from .shapes import prod

# --- operators ------------------------------------------------------------------------------------
# The one table of Python operators on arrays (dunder names without underscores): StagedArray and
# the tracer's TracedArray define their methods from it.

# binary operators with a reflected form (__radd__) -> the ufunc numpy calls (matmul: np.matmul)
BINARY_OPERATORS: dict[str, np.ufunc] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
    "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "matmul": np.matmul,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, "lshift": np.left_shift,
    "rshift": np.right_shift, "divmod": np.divmod,
}
# comparisons: Python reflects them by swapping the comparison, so they have no __r*__ form
COMPARISON_OPERATORS: dict[str, np.ufunc] = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal,
}
UNARY_OPERATORS: dict[str, np.ufunc] = {
    "neg": np.negative, "pos": np.positive, "abs": np.absolute, "invert": np.invert,
}
_BINARY = {**BINARY_OPERATORS, **COMPARISON_OPERATORS}
_REFLECTED = {f"r{k}" for k in BINARY_OPERATORS}


def translate_operator(em: Emitter, name: str, *args: Any):
    """`name` is the operator's dunder name with or without underscores: "__add__", "radd", "neg".

    Reflected forms ("__radd__") receive (self, other) like Python calls them and compute other + self.
    """
    op = name.strip("_")
    if op.startswith("i") and op[1:] in BINARY_OPERATORS and len(args) == 2:  # x += y: numpy's out=x
        return in_place(em, op[1:], args[0], translate_operator(em, op[1:], *args))
    if op in _REFLECTED:
        if len(args) != 2:
            raise TypeError(f"operator {name} takes 2 operands, got {len(args)}")
        args, op = (args[1], args[0]), op[1:]
    if op == "matmul":
        return la.np_matmul(em, *args)
    if op == "getitem":
        return getitem(em, *args)
    if op == "setitem":
        return setitem(em, *args)
    if op == "pow" and len(args) == 2 and name.strip("_") == "pow":
        fast = _fast_power(em, *args)
        if fast is not None:
            return apply_ufunc(em, fast, args[0])
    if op in _BINARY and len(args) == 2:
        return apply_ufunc(em, _BINARY[op], *args)
    if op in UNARY_OPERATORS and len(args) == 1:
        return apply_ufunc(em, UNARY_OPERATORS[op], *args)
    if op == "pow" and len(args) == 3:
        raise UnsupportedError("pow() with a modulus is not supported for arrays")
    raise UnsupportedError(f"operator {name} is not supported in traced code")


# ndarray.__pow__'s fast paths for a scalar exponent (numpy's fast_scalar_power); for complex arrays
# they differ from np.power at special values (np.square(1e300+1e300j) is -inf+infj, the power nan+infj).
# Real results are the same bits either way (ir's canonicalize rewrites those powers itself).
# Measured on numpy 2.4: Python ints 2, -1, 1 and the float 0.5 take them (2.0 and np.int64(2) do not).
_FAST_POWERS = {(int, 2): np.square, (float, 0.5): np.sqrt, (int, -1): np.reciprocal, (int, 1): np.positive}


def _fast_power(em: Emitter, base: Any, exponent: Any):
    if not (em.is_value(base) and abstract_of(base).dtype.is_complex and abstract_of(base).ndim >= 1):
        return None  # numpy scalars (rank 0 here) compute the power
    return _FAST_POWERS.get((type(exponent), exponent)) if type(exponent) in (int, float) else None


# --- attributes -----------------------------------------------------------------------------------

def _mT(em: Emitter, x: Any):
    return shp.np_matrix_transpose(em, x)


ATTRIBUTES: dict[str, Callable[[Emitter, Any], Any]] = {
    "T": lambda em, x: shp.transpose(em, x),
    "mT": _mT,
    "real": lambda em, x: apply_real(em, x),
    "imag": lambda em, x: apply_imag(em, x),
    "shape": lambda em, x: abstract_of(x).shape,
    "ndim": lambda em, x: abstract_of(x).ndim,
    "size": lambda em, x: prod(abstract_of(x).shape),
    "dtype": lambda em, x: abstract_of(x).dtype.numpy,
    "itemsize": lambda em, x: abstract_of(x).dtype.itemsize,
    "nbytes": lambda em, x: prod(abstract_of(x).shape) * abstract_of(x).dtype.itemsize,
}


def apply_real(em: Emitter, x: Any):
    return emit(em, "real", x) if abstract_of(x).dtype.is_complex else x


def apply_imag(em: Emitter, x: Any):
    return emit(em, "imag", x) if abstract_of(x).dtype.is_complex else full_like(em, x, 0)


def translate_attribute(em: Emitter, value: Any, name: str):
    try:
        return ATTRIBUTES[name](em, value)
    except KeyError:
        raise UnsupportedError(f"ndarray attribute {name!r} is not supported in traced code") from None


# --- methods --------------------------------------------------------------------------------------

def _shape_varargs(args: tuple) -> Any:
    return args[0] if len(args) == 1 else args


def _reshape(em, x, *shape, order="C", copy=None):
    if not shape:
        raise TypeError("reshape() missing the shape argument")
    return shp.np_reshape(em, x, _shape_varargs(shape), order)


def _transpose(em, x, *axes):
    if not axes or (len(axes) == 1 and axes[0] is None):
        return shp.transpose(em, x)
    return shp.transpose(em, x, _shape_varargs(axes))


def _astype(em, x, dtype, order="K", casting="unsafe", subok=True, copy=True):
    if casting != "unsafe":
        raise UnsupportedError("astype: only casting='unsafe' (the default) is supported in traced code")
    return cast(em, x, to_dtype(dtype, "dtype"))


def _flatten(em, x, order="C"):
    return shp.np_ravel(em, x, order)


def _copy(em, x, order="C"):
    return assign.fresh(em, x)


def _clip(em, x, min=None, max=None, out=None, **kwargs):
    return np_clip(em, x, min, max, out, **kwargs)


def _conj(em, x):
    return apply_ufunc(em, np.conjugate, x)


def _data_dependent(name: str) -> Callable:
    def method(em, x, *args, **kwargs):
        raise FrontendError(f"ndarray.{name}() needs concrete data and cannot be used on a traced array "
                            f"(its value is only known when the compiled code runs)")
    return method


def _mutating(name: str) -> Callable:
    def method(em, x, *args, **kwargs):
        raise FrontendError(f"ndarray.{name}() changes the array's size or memory in place, which traced "
                            f"code cannot do; build a new array instead (np.resize returns one)")
    return method


METHODS: dict[str, Callable[..., Any]] = {
    "cumsum": scans.np_cumsum, "cumprod": scans.np_cumprod,
    "repeat": arrays.np_repeat, "diagonal": arrays.np_diagonal, "trace": arrays.np_trace,
    "sum": red.np_sum, "prod": red.np_prod, "max": red.np_max, "min": red.np_min, "mean": red.np_mean,
    "var": red.np_var, "std": red.np_std, "any": red.np_any, "all": red.np_all, "argmax": red.np_argmax,
    "argmin": red.np_argmin,
    "reshape": _reshape, "transpose": _transpose, "astype": _astype, "squeeze": shp.np_squeeze,
    "flatten": _flatten, "ravel": _flatten, "clip": _clip, "conj": _conj, "conjugate": _conj,
    "swapaxes": shp.np_swapaxes, "dot": la.np_dot, "round": misc.np_round, "copy": _copy,
    "take": shp.np_take, "__getitem__": getitem, "__setitem__": setitem,
    "item": _data_dependent("item"), "tolist": _data_dependent("tolist"),
    **sized.METHODS,  # nonzero and compress: with size= (numpy_sized.py)
    "__bool__": _data_dependent("__bool__"), "__int__": _data_dependent("__int__"),
    "__float__": _data_dependent("__float__"), "__index__": _data_dependent("__index__"),
    "fill": assign.method_fill, "sort": assign.method_sort, "resize": _mutating("resize"),
    "itemset": _mutating("itemset"), "put": assign.method_put,
    "argsort": sorting.np_argsort, "argpartition": sorting.np_argpartition, "searchsorted": sorting.np_searchsorted,
    "partition": assign.method_partition,
}


def translate_method(em: Emitter, value: Any, name: str, *args: Any, **kwargs: Any):
    """`value.name(*args, **kwargs)`; attribute names (T, shape, ...) work too when given no arguments."""
    x = to_value(em, value)
    if name in METHODS:
        return METHODS[name](em, x, *args, **kwargs)
    if name in ATTRIBUTES and not args and not kwargs:
        return ATTRIBUTES[name](em, x)
    raise UnsupportedError(f"ndarray.{name} is not supported in traced code")
