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
from ir.opdef import COST_DIVISION, COST_TRANSCENDENTAL, REQUIRED, OpError

from ._define import (
    broadcast_rule, check_dtype_attr, constant_value, defbinary, defop, defunary, fmt_dtypes, kind_rule, promote,
)
from ._shapes import is_int

ALL, NUM, REAL, INT_FLOAT = "bifc", "ifc", "bif", "if"
T, DIV = COST_TRANSCENDENTAL, COST_DIVISION  # recomputation costs (fusion), relative to an add
# "transcendental": an approximation of a real function, within a few ulps of numpy's (libm's); the
# other ops are exact and match numpy to the bit
MATH = {"transcendental"}

# --- unary -----------------------------------------------------------------------------------------
defunary("neg", np.negative, accept=NUM, traits={"linear"})
defunary("abs", np.absolute, accept=ALL, result="real", numpy_names=("absolute", "abs"))
defunary("sign", np.sign, accept=NUM)
defunary("square", np.square, accept=NUM)
defunary("reciprocal", np.reciprocal, accept=NUM, cost=DIV)  # integer reciprocal truncates, as numpy's
defunary("conj", np.conjugate, accept=NUM, numpy_names=("conjugate", "conj"), traits={"linear"})

# (name, ufunc, C math function computing the real case, numpy aliases); sqrt is an LLVM intrinsic
for _name, _fn, _libm, _aliases in [
    ("exp", np.exp, "exp", ()), ("expm1", np.expm1, "expm1", ()), ("log", np.log, "log", ()),
    ("log1p", np.log1p, "log1p", ()), ("sin", np.sin, "sin", ()), ("cos", np.cos, "cos", ()),
    ("tan", np.tan, "tan", ()), ("tanh", np.tanh, "tanh", ()), ("arcsin", np.arcsin, "asin", ("asin",)),
    ("arccos", np.arccos, "acos", ("acos",)), ("arctan", np.arctan, "atan", ("atan",)),
    ("sinh", np.sinh, "sinh", ()), ("cosh", np.cosh, "cosh", ()), ("sqrt", np.sqrt, None, ()),
    ("arcsinh", np.arcsinh, "asinh", ("asinh",)), ("arccosh", np.arccosh, "acosh", ("acosh",)),
    ("arctanh", np.arctanh, "atanh", ("atanh",)), ("exp2", np.exp2, "exp2", ()),
    ("log2", np.log2, "log2", ()), ("log10", np.log10, "log10", ()),
]:
    defunary(_name, _fn, accept=NUM, result="inexact", numpy_names=(_fn.__name__, *_aliases), libm=_libm,
             cost=T if _libm else DIV, traits=MATH if _libm else ())
# numpy has no complex loop for these (np.cbrt(1j) is a TypeError)
defunary("cbrt", np.cbrt, accept=INT_FLOAT, result="inexact", libm="cbrt", cost=T, traits=MATH)
defunary("spacing", np.spacing, accept=INT_FLOAT, result="inexact", cost=T)


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


_NN = "numpy has none: reached through aot.nn.functional ({})"
defunary("rsqrt", _rsqrt_reference, accept=NUM, result="inexact", numpy_names=(), cost=DIV,
         markers={"no_frontend_name": "numpy has no rsqrt: a dialect op for ir programs and rewrites"})
defunary("sigmoid", _sigmoid_reference, accept=NUM, result="inexact", numpy_names=(), cost=T, traits=MATH,
         markers={"no_frontend_name": _NN.format("sigmoid")})
defunary("erf", _erf_reference, accept=REAL, result="inexact", numpy_names=(), libm="erf", cost=T,
         traits=MATH, markers={"no_frontend_name": _NN.format("gelu")})

defunary("floor", np.floor, accept=REAL)
defunary("ceil", np.ceil, accept=REAL)
defunary("trunc", np.trunc, accept=REAL)  # numpy 2 has bool and int loops (the identity)


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
defunary("signbit", np.signbit, accept=REAL, result="bool", traits={"predicate"})


def _real_reference(x):
    return np.real(x)


def _imag_reference(x):
    return np.imag(x)


defunary("real", _real_reference, accept=ALL, result="real", numpy_names=("real",),
         traits={"linear", "numpy_view"})  # numpy's x.real is a view (aot/compiler/aliasing.py)
defunary("imag", _imag_reference, accept=ALL, result="real", numpy_names=("imag",),
         traits={"linear", "numpy_view"})  # numpy's x.imag is a view (aot/compiler/aliasing.py)


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
defbinary("div", np.true_divide, accept=ALL, result="inexact", numpy_names=("true_divide", "divide"),
          cost=DIV)
defbinary("floordiv", np.floor_divide, accept=INT_FLOAT, cost=DIV)  # bool // bool gives int8 in numpy
defbinary("mod", np.remainder, accept=INT_FLOAT, numpy_names=("remainder", "mod"), cost=DIV)
# C's fmod: the remainder takes the dividend's sign; an integer x % 0 is 0, as numpy's
defbinary("fmod", np.fmod, accept=INT_FLOAT, cost=DIV)


def _pow_raises(op) -> bool:
    """An integer power raises for a negative exponent (numpy checks each element at run time)."""
    if not op.results[0].type.dtype.is_int:
        return False
    exponent = constant_value(op.operands[1])
    return exponent is None or bool((exponent < 0).any())


defbinary("pow", np.power, accept=NUM, numpy_names=("power", "pow"), raises=_pow_raises, cost=T,
          traits=MATH)
defbinary("maximum", np.maximum, accept=ALL, traits={"commutative"})
defbinary("minimum", np.minimum, accept=ALL, traits={"commutative"})
defbinary("arctan2", np.arctan2, accept=INT_FLOAT, result="inexact", numpy_names=("arctan2", "atan2"),
          libm="atan2", cost=T, traits=MATH)
# real floating binary functions (ints compute in float64; numpy has no bool or complex loop)
defbinary("hypot", np.hypot, accept=INT_FLOAT, result="inexact", libm="hypot", cost=T,
          traits={*MATH, "commutative"})
defbinary("logaddexp", np.logaddexp, accept=INT_FLOAT, result="inexact", cost=2 * T,
          traits={*MATH, "commutative"})
defbinary("logaddexp2", np.logaddexp2, accept=INT_FLOAT, result="inexact", cost=2 * T,
          traits={*MATH, "commutative"})
defbinary("copysign", np.copysign, accept=INT_FLOAT, result="inexact")
defbinary("nextafter", np.nextafter, accept=INT_FLOAT, result="inexact", libm="nextafter", cost=T)
defbinary("heaviside", np.heaviside, accept=INT_FLOAT, result="inexact")

for _name, _fn, _comm in [("eq", np.equal, True), ("ne", np.not_equal, True), ("lt", np.less, False),
                          ("le", np.less_equal, False), ("gt", np.greater, False),
                          ("ge", np.greater_equal, False)]:
    defbinary(_name, _fn, accept=ALL, result="bool",
              traits={"comparison", *({"commutative"} if _comm else ())})

for _name, _fn in [("logical_and", np.logical_and), ("logical_or", np.logical_or),
                   ("logical_xor", np.logical_xor)]:
    defbinary(_name, _fn, accept=ALL, result="bool", traits={"logical", "commutative"})

# --- bitwise: ints and bools (bool & bool is bool; ~bool is logical not) ----------------------------
BOOL_INT = "bi"
for _name, _fn in [("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                   ("bitwise_xor", np.bitwise_xor)]:
    defbinary(_name, _fn, accept=BOOL_INT, traits={"bitwise", "commutative"})
defunary("invert", np.invert, accept=BOOL_INT, traits={"bitwise"},
         numpy_names=("invert", "bitwise_not", "bitwise_invert"))
# numpy's shifts, not C's: a count outside [0, bits) gives 0 (right: the sign fill); bool << bool is
# int8 in numpy, so bools are not accepted
defbinary("left_shift", np.left_shift, accept="i", traits={"bitwise"},
          numpy_names=("left_shift", "bitwise_left_shift"))
defbinary("right_shift", np.right_shift, accept="i", traits={"bitwise"},
          numpy_names=("right_shift", "bitwise_right_shift"))


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
      ref=_complex_reference, traits={"elementwise", "binary", "linear"},
      markers={"no_frontend_name": "numpy has no ufunc building re + i*im: a dialect op for ir programs"})


# --- ternary ---------------------------------------------------------------------------------------
def _where_dtype(dtypes: list[DType], **_) -> DType:
    """The condition may have any dtype (numpy tests it against zero); a and b promote."""
    return promote(*dtypes[1:])


defop("where", arity=3, dtype_rule=_where_dtype, shape_rule=broadcast_rule("where"), ref=np.where,
      traits={"elementwise", "select"}, numpy_names=("where",))
defop("clip", arity=3, dtype_rule=kind_rule("clip", ALL), shape_rule=broadcast_rule("clip"), ref=np.clip,
      traits={"elementwise"}, numpy_names=("clip",))
