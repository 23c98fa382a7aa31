"""Translations behind aot.nn.functional (torch.nn.functional's names and keywords, numpy semantics).

Each takes the emitter first: `softmax(em, x, axis=-1)`. Integer and bool inputs compute in float64,
as np.exp would; float32 stays float32.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ir import dtypes as irdt

from .emitter import Emitter, abstract_of
from .numpy_linalg import matmul
from .numpy_reductions import reduce
from .numpy_shape import transpose
from .numpy_ufuncs import apply_ufunc, emit
from .operands import UnsupportedError, cast, normalize_axis, scalar_like, to_dtype, to_value


def _float(em: Emitter, x: Any, dtype: Any = None):
    v = to_value(em, x)
    if dtype is not None:
        return cast(em, v, to_dtype(dtype, "dtype"))
    dt = abstract_of(v).dtype
    return v if dt.is_inexact else cast(em, v, irdt.float64)


def _axis(em: Emitter, x: Any, axis: Any, dim: Any) -> int:
    if dim is not None:
        if axis is not None and axis != -1:
            raise TypeError("pass only one of `axis` and `dim`")
        axis = dim
    return normalize_axis(-1 if axis is None else axis, abstract_of(x).ndim, "dim")


def relu(em: Emitter, x: Any, inplace: bool = False):
    v = to_value(em, x)
    return emit(em, "maximum", v, scalar_like(em, 0, abstract_of(v).dtype))


def sigmoid(em: Emitter, x: Any):
    return emit(em, "sigmoid", _float(em, x))


def tanh(em: Emitter, x: Any):
    return emit(em, "tanh", _float(em, x))


def softmax(em: Emitter, x: Any, axis: Any = -1, *, dim: Any = None, dtype: Any = None):
    """exp(x - max) / sum(exp(x - max)) along `axis` (stable for large inputs)."""
    v = _float(em, x, dtype)
    ax = (_axis(em, v, axis, dim),)
    e = emit(em, "exp", emit(em, "sub", v, reduce(em, "max", v, ax, True)))
    return emit(em, "div", e, reduce(em, "sum", e, ax, True))


def log_softmax(em: Emitter, x: Any, axis: Any = -1, *, dim: Any = None, dtype: Any = None):
    """(x - max) - log(sum(exp(x - max))) along `axis`."""
    v = _float(em, x, dtype)
    ax = (_axis(em, v, axis, dim),)
    shifted = emit(em, "sub", v, reduce(em, "max", v, ax, True))
    lse = emit(em, "log", reduce(em, "sum", emit(em, "exp", shifted), ax, True))
    return emit(em, "sub", shifted, lse)


def gelu(em: Emitter, x: Any, approximate: str = "none"):
    """x * Phi(x): exact with erf, or torch's tanh approximation."""
    v = _float(em, x)
    dt = abstract_of(v).dtype

    def c(value: float):
        return scalar_like(em, value, dt)

    if approximate == "none":
        phi = emit(em, "add", c(1.0), emit(em, "erf", emit(em, "mul", v, c(1 / math.sqrt(2)))))
    elif approximate == "tanh":
        cube = emit(em, "mul", emit(em, "mul", v, v), v)
        inner = emit(em, "add", v, emit(em, "mul", c(0.044715), cube))
        inner = emit(em, "mul", c(math.sqrt(2 / math.pi)), inner)
        phi = emit(em, "add", c(1.0), emit(em, "tanh", inner))
    else:
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return emit(em, "mul", emit(em, "mul", v, c(0.5)), phi)


def linear(em: Emitter, x: Any, weight: Any, bias: Any = None):
    """x @ weight.T + bias, with torch's weight layout (out_features, in_features)."""
    w = to_value(em, weight)
    wt = transpose(em, w) if abstract_of(w).ndim == 2 else w
    y = matmul(em, x, wt)
    return y if bias is None else apply_ufunc(em, np.add, y, bias)


def dropout(em: Emitter, x: Any, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Identity in evaluation mode (training=False) or with p=0."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if training and p > 0:
        raise UnsupportedError("dropout in training mode needs random numbers, which traced code does not "
                               "support; call model.eval() or pass training=False")
    return to_value(em, x)


FUNCTIONS = {"relu": relu, "sigmoid": sigmoid, "tanh": tanh, "softmax": softmax, "log_softmax": log_softmax,
             "gelu": gelu, "linear": linear, "dropout": dropout}
