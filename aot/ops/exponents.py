"""Binary exponents of floats: np.ldexp (x * 2**n, exactly rounded) and `frexp_exponent`, the
exponent np.frexp returns (mantissa = ldexp(x, -exponent): the front end decomposes np.frexp into
these two). Lowered in codegen/llvm/rules_number.py (LLVM's ldexp intrinsic and bit arithmetic)."""
from __future__ import annotations

import numpy as np

from ir import dtypes as D
from ir.dtypes import DType
from ir.opdef import OpError

from ._define import broadcast_rule, defop, defunary, fmt_dtypes
from ._transforms import elementwise_batch, emit


def _ldexp_dtype(dtypes: list[DType], **_) -> DType:
    """numpy's loops (ef, fi, fl, di, dl): the mantissa's float dtype (ints: float64), any integer
    exponent; bool mantissas reach numpy's float16 loop, outside the dialect."""
    x, n = dtypes
    if x.kind not in "if" or n.kind not in "bi":
        raise OpError(f"ldexp: expected a float or integer mantissa and an integer exponent, got dtypes "
                      f"({fmt_dtypes(dtypes)})")
    return x if x.is_float else D.float64


def _ldexp_vjp(g, x, n, *, out):
    """d/dx x * 2**n = 2**n: the cotangent scaled exactly; the integer exponent has none."""
    return emit("ldexp", g, n), None


def _ldexp_jvp(ts, x, n, *, out):
    return None if ts[0] is None else emit("ldexp", ts[0], n)


defop("ldexp", arity=2, dtype_rule=_ldexp_dtype, shape_rule=broadcast_rule("ldexp"), ref=np.ldexp,
      traits={"elementwise", "binary"}, numpy_names=("ldexp",), vjp=_ldexp_vjp, jvp=_ldexp_jvp,
      batch=elementwise_batch("ldexp"))


def _frexp_exponent_reference(x):
    """The exponent of np.frexp(x) (int32; 0 for zeros, infinities and nans)."""
    x = np.asarray(x)
    if x.dtype.kind not in "iuf":
        raise TypeError(f"frexp_exponent: not defined for dtype {x.dtype}")
    return np.frexp(x.astype(x.dtype if x.dtype.kind == "f" else np.float64))[1]


def _frexp_exponent_dtype(dtypes: list[DType], **_) -> DType:
    if dtypes[0].kind not in "if":
        raise OpError(f"frexp_exponent: expected a float or integer operand, got dtype "
                      f"({fmt_dtypes(dtypes)})")
    return D.int32


defunary("frexp_exponent", _frexp_exponent_reference, accept="if", dtype_rule=_frexp_exponent_dtype,
         numpy_names=(), markers={"no_frontend_name": "np.frexp decomposes into frexp_exponent and ldexp",
                                  "not_differentiable": "an integer-valued function"})
