"""Elementwise ops: one row each. Result dtypes follow numpy 2: promote the operands, then map kinds.

`accept` lists the kinds (b, i, f, c) of the promoted dtype for which numpy has a loop with a
supported result; `result` maps the promoted dtype to the result (see _define.RESULT_MAPS). Where
numpy's answer is a dtype outside the dialect (np.sin on bool gives float16, bool // bool gives
int8), the kind is simply not accepted.
"""
from __future__ import annotations

import math

import numpy as np

from ir.dtypes import DType
from ir.opdef import REQUIRED, OpError

from ._define import (
    broadcast_rule, check_dtype_attr, defbinary, defop, defunary, fmt_dtypes, kind_rule, promote,
)
from ._shapes import is_int

ALL, NUM, REAL, INT_FLOAT = "bifc", "ifc", "bif", "if"

# --- unary -----------------------------------------------------------------------------------------
defunary("neg", np.negative, accept=NUM, traits={"linear"})
defunary("abs", np.absolute, accept=ALL, result="real", numpy_names=("absolute", "abs"))
defunary("sign", np.sign, accept=NUM)
defunary("square", np.square, accept=NUM)
defunary("reciprocal", np.reciprocal, accept=NUM)  # integer reciprocal truncates, as numpy's
defunary("conj", np.conjugate, accept=NUM, numpy_names=("conjugate", "conj"), traits={"linear"})

for _name, _fn, _aliases in [
    ("exp", np.exp, ()), ("expm1", np.expm1, ()), ("log", np.log, ()), ("log1p", np.log1p, ()),
    ("sin", np.sin, ()), ("cos", np.cos, ()), ("tan", np.tan, ()), ("tanh", np.tanh, ()),
    ("arcsin", np.arcsin, ("asin",)), ("arccos", np.arccos, ("acos",)), ("arctan", np.arctan, ("atan",)),
    ("sinh", np.sinh, ()), ("cosh", np.cosh, ()), ("sqrt", np.sqrt, ()),
]:
    defunary(_name, _fn, accept=NUM, result="inexact", numpy_names=(_fn.__name__, *_aliases))


def _rsqrt_reference(x):
    """1 / sqrt(x) in the dtype of np.sqrt(x)."""
    return np.reciprocal(np.sqrt(x))


def _sigmoid_reference(x):
    """1 / (1 + exp(-x)) in the dtype of np.exp(x)."""
    x = np.asarray(x)
    if x.dtype == np.bool_:
        raise TypeError("sigmoid: numpy has no float loop for bool (np.exp gives float16)")
    with np.errstate(over="ignore", under="ignore"):
        return 1 / (1 + np.exp(np.negative(x)))


def _erf_reference(x):
    """The error function of real x (float64 for ints and bools, as scipy.special.erf)."""
    x = np.asarray(x)
    if x.dtype.kind not in "biuf":
        raise TypeError(f"erf: not defined for dtype {x.dtype}")
    out = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    return np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64)).astype(out)


defunary("rsqrt", _rsqrt_reference, accept=NUM, result="inexact", numpy_names=())
defunary("sigmoid", _sigmoid_reference, accept=NUM, result="inexact", numpy_names=())
defunary("erf", _erf_reference, accept=REAL, result="inexact", numpy_names=())

defunary("floor", np.floor, accept=REAL)
defunary("ceil", np.ceil, accept=REAL)


def _round_reference(x, *, decimals):
    return np.round(x, decimals)


_ROUND_KINDS = kind_rule("round", NUM)


def _round_dtype(dtypes: list[DType], *, decimals) -> DType:
    if not is_int(decimals):
        raise OpError(f"round: attribute 'decimals' must be an int, got {decimals!r}")
    return _ROUND_KINDS(dtypes)

defunary("round", _round_reference, accept=NUM, attrs={"decimals": 0}, dtype_rule=_round_dtype,
         numpy_names=("round", "around"))

for _name, _fn in [("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite),
                   ("logical_not", np.logical_not)]:
    defunary(_name, _fn, accept=ALL, result="bool", traits={"predicate"})


def _real_reference(x):
    return np.real(x)


def _imag_reference(x):
    return np.imag(x)


defunary("real", _real_reference, accept=ALL, result="real", numpy_names=("real",), traits={"linear"})
defunary("imag", _imag_reference, accept=ALL, result="real", numpy_names=("imag",), traits={"linear"})


def _cast_dtype(dtypes: list[DType], *, dtype) -> DType:
    return check_dtype_attr("cast", dtype)


def _cast_reference(x, *, dtype):
    """x.astype(dtype); complex to real keeps the real part (numpy's cast, without its warning)."""
    x = np.asarray(x)
    if x.dtype.kind == "c" and not dtype.is_complex:
        x = x.real
    return x.astype(dtype.numpy)


defunary("cast", _cast_reference, accept=ALL, attrs={"dtype": REQUIRED}, dtype_rule=_cast_dtype,
         numpy_names=("astype",))

# --- binary ----------------------------------------------------------------------------------------
defbinary("add", np.add, accept=ALL, traits={"commutative", "linear"})
defbinary("sub", np.subtract, accept=NUM, traits={"linear"})  # bool - bool: numpy refuses
defbinary("mul", np.multiply, accept=ALL, traits={"commutative"})
defbinary("div", np.true_divide, accept=ALL, result="inexact", numpy_names=("true_divide", "divide"))
defbinary("floordiv", np.floor_divide, accept=INT_FLOAT)  # bool // bool gives int8 in numpy
defbinary("mod", np.remainder, accept=INT_FLOAT, numpy_names=("remainder", "mod"))
defbinary("pow", np.power, accept=NUM, numpy_names=("power", "pow"))
defbinary("maximum", np.maximum, accept=ALL, traits={"commutative"})
defbinary("minimum", np.minimum, accept=ALL, traits={"commutative"})
defbinary("arctan2", np.arctan2, accept=INT_FLOAT, result="inexact", numpy_names=("arctan2", "atan2"))

for _name, _fn, _comm in [("eq", np.equal, True), ("ne", np.not_equal, True), ("lt", np.less, False),
                          ("le", np.less_equal, False), ("gt", np.greater, False),
                          ("ge", np.greater_equal, False)]:
    defbinary(_name, _fn, accept=ALL, result="bool",
              traits={"comparison", *({"commutative"} if _comm else ())})

for _name, _fn in [("logical_and", np.logical_and), ("logical_or", np.logical_or),
                   ("logical_xor", np.logical_xor)]:
    defbinary(_name, _fn, accept=ALL, result="bool", traits={"logical", "commutative"})


def _complex_reference(re, im):
    """re + i*im for real floating operands (no multiplication, so infinities stay exact)."""
    re, im = np.asarray(re), np.asarray(im)
    if re.dtype.kind != "f" or im.dtype.kind != "f":
        raise TypeError(f"complex: expected floating operands, got {re.dtype} and {im.dtype}")
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), np.result_type(re, im, np.complex64))
    out.real, out.imag = re, im
    return out


def _complex_dtype(dtypes: list[DType], **_) -> DType:
    """Both parts must be floating (the front end casts ints first); the precision is promoted."""
    if any(not d.is_float for d in dtypes):
        raise OpError(f"complex: expected floating operands, got dtypes ({fmt_dtypes(dtypes)})")
    return promote(*dtypes).complex_dtype


defop("complex", arity=2, dtype_rule=_complex_dtype, shape_rule=broadcast_rule("complex"),
      ref=_complex_reference, traits={"elementwise", "binary", "linear"})


# --- ternary ---------------------------------------------------------------------------------------
def _where_dtype(dtypes: list[DType], **_) -> DType:
    """The condition may have any dtype (numpy tests it against zero); a and b promote."""
    return promote(*dtypes[1:])


defop("where", arity=3, dtype_rule=_where_dtype, shape_rule=broadcast_rule("where"), ref=np.where,
      traits={"elementwise", "select"}, numpy_names=("where",))
defop("clip", arity=3, dtype_rule=kind_rule("clip", ALL), shape_rule=broadcast_rule("clip"), ref=np.clip,
      traits={"elementwise"}, numpy_names=("clip",))
