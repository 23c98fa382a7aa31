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
    broadcast_rule,
    check_dtype_attr,
    constant_value,
    defbinary,
    defop,
    defunary,
    fmt_dtypes,
    kind_rule,
    promote,
)
from ._shapes import is_int
from ._transforms import (
    binary_rules,
    conj,
    elementwise_batch,
    emit,
    not_differentiable,
    total,
    unary_rules,
    zero_rules,
    zeros_like,
)

ALL, NUM, REAL, INT_FLOAT = "bifc", "ifc", "bif", "if"
T, DIV = COST_TRANSCENDENTAL, COST_DIVISION  # recomputation costs (fusion), relative to an add
# "transcendental": an approximation of a real function, within a few ulps of numpy's (libm's); the
# other ops are exact and match numpy to the bit
MATH = {"transcendental"}
LN2, LN10 = math.log(2.0), math.log(10.0)
NOT_DIFF = not_differentiable("its result is boolean or integer: no derivative")
STEP = zero_rules()  # piecewise constant: a zero derivative where it exists (JAX's convention)


def _abs_vjp(g, x, *, out):
    """d|x|: sign(x) for reals; x/|x| for complex (torch's sgn), 0 at 0."""
    if not x.meta.dtype.is_complex:
        return (g * np.sign(x),)
    return (g * np.where(out == 0, 0, x / np.where(out == 0, 1, out)),)


def _abs_jvp(ts, x, *, out):
    if not x.meta.dtype.is_complex:
        return ts[0] * np.sign(x)
    return np.real(np.conj(x) * ts[0]) / np.where(out == 0, 1, out) * (out != 0)


def _sign_vjp(g, x, *, out):
    """sign is a step for reals (zero derivative); numpy's complex sign z/|z| moves with z's angle:
    i*sgn(z) * Im(conj(sgn z) g) / |z|, zero at 0."""
    if not x.meta.dtype.is_complex:
        return (None,)
    r = np.abs(x)
    return (1j * out * np.imag(np.conj(out) * g) / np.where(r == 0, 1, r),)


def _sign_jvp(ts, x, *, out):
    if not x.meta.dtype.is_complex:
        return None
    r = np.abs(x)
    return 1j * out * np.imag(np.conj(out) * ts[0]) / np.where(r == 0, 1, r)


def _conj_vjp(g, x, *, out):
    return (conj(g),)


def _conj_jvp(ts, x, *, out):
    return conj(ts[0])

# --- unary -----------------------------------------------------------------------------------------
defunary("neg", np.negative, accept=NUM, traits={"linear"},
         vjp=lambda g, x, *, out: (-g,), jvp=lambda ts, x, *, out: -ts[0])
defunary("abs", np.absolute, accept=ALL, result="real", numpy_names=("absolute", "abs"), vjp=_abs_vjp, jvp=_abs_jvp)
defunary("sign", np.sign, accept=NUM, vjp=_sign_vjp, jvp=_sign_jvp)
defunary("square", np.square, accept=NUM, **unary_rules(lambda x, out: 2 * x))
# integer reciprocal truncates, as numpy's
defunary("reciprocal", np.reciprocal, accept=NUM, cost=DIV, **unary_rules(lambda x, out: -out * out))
defunary("conj", np.conjugate, accept=NUM, numpy_names=("conjugate", "conj"), traits={"linear"},
         vjp=_conj_vjp, jvp=_conj_jvp)

# f'(x) of the functions below, from x and out = f(x)
_DERIVATIVES = {
    "exp": lambda x, out: out, "expm1": lambda x, out: out + 1, "log": lambda x, out: 1 / x,
    "log1p": lambda x, out: 1 / (1 + x), "sin": lambda x, out: np.cos(x), "cos": lambda x, out: -np.sin(x),
    "tan": lambda x, out: 1 + out * out, "tanh": lambda x, out: 1 - out * out,
    "arcsin": lambda x, out: 1 / np.sqrt(1 - x * x), "arccos": lambda x, out: -1 / np.sqrt(1 - x * x),
    "arctan": lambda x, out: 1 / (1 + x * x), "sinh": lambda x, out: np.cosh(x), "cosh": lambda x, out: np.sinh(x),
    "sqrt": lambda x, out: 0.5 / out, "arcsinh": lambda x, out: 1 / np.sqrt(x * x + 1),
    "arccosh": lambda x, out: 1 / (np.sqrt(x - 1) * np.sqrt(x + 1)), "arctanh": lambda x, out: 1 / (1 - x * x),
    "exp2": lambda x, out: out * LN2, "log2": lambda x, out: 1 / (x * LN2), "log10": lambda x, out: 1 / (x * LN10),
    "cbrt": lambda x, out: 1 / (3 * out * out), "rsqrt": lambda x, out: -0.5 * out * out * out,
    "sigmoid": lambda x, out: out * (1 - out), "erf": lambda x, out: (2 / math.sqrt(math.pi)) * np.exp(-x * x),
}

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
             cost=T if _libm else DIV, traits=MATH if _libm else (), **unary_rules(_DERIVATIVES[_name]))
# numpy has no complex loop for these (np.cbrt(1j) is a TypeError)
defunary("cbrt", np.cbrt, accept=INT_FLOAT, result="inexact", libm="cbrt", cost=T, traits=MATH,
         **unary_rules(_DERIVATIVES["cbrt"]))
defunary("spacing", np.spacing, accept=INT_FLOAT, result="inexact", cost=T, **STEP)


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
         **unary_rules(_DERIVATIVES["rsqrt"]), markers={"no_frontend_name": "numpy has no rsqrt: a dialect op for ir programs and rewrites"})
defunary("sigmoid", _sigmoid_reference, accept=NUM, result="inexact", numpy_names=(), cost=T, traits=MATH,
         **unary_rules(_DERIVATIVES["sigmoid"]), markers={"no_frontend_name": _NN.format("sigmoid")})
defunary("erf", _erf_reference, accept=REAL, result="inexact", numpy_names=(), libm="erf", cost=T,
         traits=MATH, **unary_rules(_DERIVATIVES["erf"]), markers={"no_frontend_name": _NN.format("gelu")})

defunary("floor", np.floor, accept=REAL, **STEP)
defunary("ceil", np.ceil, accept=REAL, **STEP)
defunary("trunc", np.trunc, accept=REAL, **STEP)  # numpy 2 has bool and int loops (the identity)


def _round_reference(x, *, decimals):
    return np.round(x, decimals)


_ROUND_KINDS = kind_rule("round", NUM)


def _round_dtype(dtypes: list[DType], *, decimals) -> DType:
    if not is_int(decimals):
        raise OpError(f"round: attribute 'decimals' must be an int, got {decimals!r}")
    return _ROUND_KINDS(dtypes)

defunary("round", _round_reference, accept=NUM, attrs={"decimals": 0}, dtype_rule=_round_dtype,
         numpy_names=("round", "around"), **STEP)

for _name, _fn in [("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite),
                   ("logical_not", np.logical_not)]:
    defunary(_name, _fn, accept=ALL, result="bool", traits={"predicate"}, markers=NOT_DIFF)
defunary("signbit", np.signbit, accept=REAL, result="bool", traits={"predicate"}, markers=NOT_DIFF)


def _real_reference(x):
    return np.real(x)


def _imag_reference(x):
    return np.imag(x)


def _imag_vjp(g, x, *, out):
    """Im z = (z - conj z) / 2i: a real loss's gradient through it is i*g (torch's convention)."""
    return (emit("complex", zeros_like(g), g) if x.meta.dtype.is_complex else None,)


# numpy's x.real and x.imag are views (aot/compiler/aliasing.py)
defunary("real", _real_reference, accept=ALL, result="real", numpy_names=("real",),
         traits={"linear", "numpy_view"}, vjp=lambda g, x, *, out: (g,), jvp=lambda ts, x, *, out: np.real(ts[0]))
defunary("imag", _imag_reference, accept=ALL, result="real", numpy_names=("imag",),
         traits={"linear", "numpy_view"}, vjp=_imag_vjp, jvp=lambda ts, x, *, out: np.imag(ts[0]))


def _cast_dtype(dtypes: list[DType], *, dtype) -> DType:
    return check_dtype_attr("cast", dtype)


def _cast_reference(x, *, dtype):
    """x.astype(dtype); complex to real keeps the real part (numpy's cast, without its warning)."""
    x = np.asarray(x)
    if x.dtype.kind == "c" and not dtype.is_complex:
        x = x.real
    return x.astype(dtype.numpy)


# the interpreters cast cotangents and tangents to their value's dtype (complex to real: the real part)
defunary("cast", _cast_reference, accept=ALL, attrs={"dtype": REQUIRED}, dtype_rule=_cast_dtype,
         numpy_names=("astype",), vjp=lambda g, x, *, out, dtype: (g,), jvp=lambda ts, x, *, out, dtype: ts[0])

# --- binary ----------------------------------------------------------------------------------------
def _sum_jvp(sign: int):
    def jvp(ts, x, y, *, out):
        a, b = ts
        return total(a, b if sign > 0 or b is None else -b)

    return jvp


def _ties(x, y):
    """d max(x, y)/dx: 1 where x wins, 1/2 on a tie (JAX's convention: ties share the derivative)."""
    return (x > y) + 0.5 * (x == y)


def _pow_dy(x, y, out):
    """d x**y / dy = x**y log x, taken as 0 where x == 0 (JAX's)."""
    return np.where(x == 0, 0, out * np.log(np.where(x == 0, 1, x)))


defbinary("add", np.add, accept=ALL, traits={"commutative", "linear"},
          vjp=lambda g, x, y, *, out: (g, g), jvp=_sum_jvp(1))
defbinary("sub", np.subtract, accept=NUM, traits={"linear"},  # bool - bool: numpy refuses
          vjp=lambda g, x, y, *, out: (g, -g), jvp=_sum_jvp(-1))
defbinary("mul", np.multiply, accept=ALL, traits={"commutative"},
          **binary_rules(lambda x, y, out: y, lambda x, y, out: x))
defbinary("div", np.true_divide, accept=ALL, result="inexact", numpy_names=("true_divide", "divide"),
          cost=DIV, **binary_rules(lambda x, y, out: 1 / y, lambda x, y, out: -out / y))
defbinary("floordiv", np.floor_divide, accept=INT_FLOAT, cost=DIV, **zero_rules(2))  # bool // bool is int8
defbinary("mod", np.remainder, accept=INT_FLOAT, numpy_names=("remainder", "mod"), cost=DIV,
          **binary_rules(lambda x, y, out: 1, lambda x, y, out: -np.floor_divide(x, y)))
# C's fmod: the remainder takes the dividend's sign; an integer x % 0 is 0, as numpy's
defbinary("fmod", np.fmod, accept=INT_FLOAT, cost=DIV,
          **binary_rules(lambda x, y, out: 1, lambda x, y, out: -np.trunc(x / y)))


def _pow_raises(op) -> bool:
    """An integer power raises for a negative exponent (numpy checks each element at run time)."""
    if not op.results[0].type.dtype.is_int:
        return False
    exponent = constant_value(op.operands[1])
    return exponent is None or bool((exponent < 0).any())


defbinary("pow", np.power, accept=NUM, numpy_names=("power", "pow"), raises=_pow_raises, cost=T,
          traits=MATH, **binary_rules(lambda x, y, out: y * np.power(x, y - 1), _pow_dy))
defbinary("maximum", np.maximum, accept=ALL, traits={"commutative"},
          **binary_rules(lambda x, y, out: _ties(x, y), lambda x, y, out: _ties(y, x)))
defbinary("minimum", np.minimum, accept=ALL, traits={"commutative"},
          **binary_rules(lambda x, y, out: _ties(y, x), lambda x, y, out: _ties(x, y)))
defbinary("arctan2", np.arctan2, accept=INT_FLOAT, result="inexact", numpy_names=("arctan2", "atan2"),
          libm="atan2", cost=T, traits=MATH,
          **binary_rules(lambda y, x, out: x / (x * x + y * y), lambda y, x, out: -y / (x * x + y * y)))
# real floating binary functions (ints compute in float64; numpy has no bool or complex loop)
defbinary("hypot", np.hypot, accept=INT_FLOAT, result="inexact", libm="hypot", cost=T,
          traits={*MATH, "commutative"}, **binary_rules(lambda x, y, out: x / out, lambda x, y, out: y / out))
defbinary("logaddexp", np.logaddexp, accept=INT_FLOAT, result="inexact", cost=2 * T,
          traits={*MATH, "commutative"},
          **binary_rules(lambda x, y, out: np.exp(x - out), lambda x, y, out: np.exp(y - out)))
defbinary("logaddexp2", np.logaddexp2, accept=INT_FLOAT, result="inexact", cost=2 * T,
          traits={*MATH, "commutative"},
          **binary_rules(lambda x, y, out: np.exp2(x - out), lambda x, y, out: np.exp2(y - out)))
defbinary("copysign", np.copysign, accept=INT_FLOAT, result="inexact",
          **binary_rules(lambda x, y, out: np.where(np.signbit(x) == np.signbit(y), 1.0, -1.0), None))
# nextafter(x, y) is x moved by one ulp: x's derivative, as JAX's
defbinary("nextafter", np.nextafter, accept=INT_FLOAT, result="inexact", libm="nextafter", cost=T,
          **binary_rules(lambda x, y, out: 1, None))
defbinary("heaviside", np.heaviside, accept=INT_FLOAT, result="inexact", **zero_rules(2))

for _name, _fn, _comm in [("eq", np.equal, True), ("ne", np.not_equal, True), ("lt", np.less, False),
                          ("le", np.less_equal, False), ("gt", np.greater, False),
                          ("ge", np.greater_equal, False)]:
    defbinary(_name, _fn, accept=ALL, result="bool",
              traits={"comparison", *({"commutative"} if _comm else ())}, markers=NOT_DIFF)

for _name, _fn in [("logical_and", np.logical_and), ("logical_or", np.logical_or),
                   ("logical_xor", np.logical_xor)]:
    defbinary(_name, _fn, accept=ALL, result="bool", traits={"logical", "commutative"}, markers=NOT_DIFF)

# --- bitwise: ints and bools (bool & bool is bool; ~bool is logical not) ----------------------------
BOOL_INT = "bi"
for _name, _fn in [("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                   ("bitwise_xor", np.bitwise_xor)]:
    defbinary(_name, _fn, accept=BOOL_INT, traits={"bitwise", "commutative"}, markers=NOT_DIFF)
defunary("invert", np.invert, accept=BOOL_INT, traits={"bitwise"},
         numpy_names=("invert", "bitwise_not", "bitwise_invert"), markers=NOT_DIFF)
# numpy's shifts, not C's: a count outside [0, bits) gives 0 (right: the sign fill); bool << bool is
# int8 in numpy, so bools are not accepted
defbinary("left_shift", np.left_shift, accept="i", traits={"bitwise"},
          numpy_names=("left_shift", "bitwise_left_shift"), markers=NOT_DIFF)
defbinary("right_shift", np.right_shift, accept="i", traits={"bitwise"},
          numpy_names=("right_shift", "bitwise_right_shift"), markers=NOT_DIFF)


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


def _complex_jvp(ts, re, im, *, out):
    a, b = (t if t is not None else zeros_like(x) for t, x in zip(ts, (re, im)))
    return emit("complex", a, b)


defop("complex", arity=2, dtype_rule=_complex_dtype, shape_rule=broadcast_rule("complex"),
      ref=_complex_reference, traits={"elementwise", "binary", "linear"},
      vjp=lambda g, re, im, *, out: (np.real(g), np.imag(g)), jvp=_complex_jvp,
      batch=elementwise_batch("complex"), markers={"no_frontend_name": "numpy has no ufunc building re + i*im: a dialect op for ir programs"})


# --- ternary ---------------------------------------------------------------------------------------
def _where_dtype(dtypes: list[DType], **_) -> DType:
    """The condition may have any dtype (numpy tests it against zero); a and b promote."""
    return promote(*dtypes[1:])


def _where_vjp(g, c, a, b, *, out):
    return None, np.where(c, g, 0), np.where(c, 0, g)


def _where_jvp(ts, c, a, b, *, out):
    ta, tb = ts[1:]
    if ta is None and tb is None:
        return None
    return np.where(c, 0 if ta is None else ta, 0 if tb is None else tb)


def _clip_partials(x, lo, hi):
    """clip = minimum(maximum(x, lo), hi), as numpy computes it: the partials of that composition
    (ties share the derivative, as maximum's and minimum's)."""
    m = np.maximum(x, lo)
    dm, dhi = _ties(hi, m), _ties(m, hi)
    return dm * _ties(x, lo), dm * _ties(lo, x), dhi


def _clip_vjp(g, x, lo, hi, *, out):
    return tuple(g * p for p in _clip_partials(x, lo, hi))


def _clip_jvp(ts, x, lo, hi, *, out):
    return total(*(t * p for t, p in zip(ts, _clip_partials(x, lo, hi)) if t is not None))


defop("where", arity=3, dtype_rule=_where_dtype, shape_rule=broadcast_rule("where"), ref=np.where,
      traits={"elementwise", "select"}, numpy_names=("where",), vjp=_where_vjp, jvp=_where_jvp,
      batch=elementwise_batch("where"))
defop("clip", arity=3, dtype_rule=kind_rule("clip", ALL), shape_rule=broadcast_rule("clip"), ref=np.clip,
      traits={"elementwise"}, numpy_names=("clip",), vjp=_clip_vjp, jvp=_clip_jvp, batch=elementwise_batch("clip"))
