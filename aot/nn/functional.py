"""torch.nn.functional's activation/linear/dropout functions on numpy arrays.

Each function is `dispatchable`: under `aot.fx` tracing a call becomes one `call_function`
node targeting the function itself, as `torch.nn.functional` calls do in torch.fx.
Result dtypes follow numpy's promotion (float32 in, float32 out).
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..dispatch import dispatchable

__all__ = ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "gelu", "dropout", "linear"]

_erf_object = np.frompyfunc(math.erf, 1, 1)


def _float(x: Any) -> np.ndarray:
    x = np.asarray(x)
    return x if x.dtype.kind in "fc" else x.astype(np.float64)


@dispatchable
def relu(input: Any, inplace: bool = False) -> np.ndarray:
    if inplace:
        return np.maximum(input, 0, out=input)
    return np.maximum(input, 0)


@dispatchable
def sigmoid(input: Any) -> np.ndarray:
    x = _float(input)
    e = np.exp(-np.abs(x))  # never overflows, keeps relative accuracy for large |x|
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


@dispatchable
def tanh(input: Any) -> np.ndarray:
    return np.tanh(input)


def _softmax_axis(x: np.ndarray, dim: int | None, axis: int | None, fn: str) -> int:
    if dim is not None and axis is not None and dim != axis:
        raise TypeError(f"{fn}() got both dim={dim} and axis={axis}; pass one of them")
    chosen = dim if dim is not None else axis
    if chosen is None:
        chosen = 0 if x.ndim in (0, 1, 3) else 1
        warnings.warn(f"Implicit dimension choice for {fn} has been deprecated. "
                      "Change the call to include dim=X as an argument.", stacklevel=3)
    return chosen


@dispatchable
def softmax(input: Any, dim: int | None = None, dtype: Any = None, *, axis: int | None = None) -> np.ndarray:
    x = _float(input) if dtype is None else np.asarray(input, dtype=dtype)
    ax = _softmax_axis(x, dim, axis, "softmax")
    e = np.exp(x - np.max(x, axis=ax, keepdims=True))
    return e / np.sum(e, axis=ax, keepdims=True)


@dispatchable
def log_softmax(input: Any, dim: int | None = None, dtype: Any = None, *,
                axis: int | None = None) -> np.ndarray:
    x = _float(input) if dtype is None else np.asarray(input, dtype=dtype)
    ax = _softmax_axis(x, dim, axis, "log_softmax")
    shifted = x - np.max(x, axis=ax, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=ax, keepdims=True))


@dispatchable
def gelu(input: Any, approximate: str = "none") -> np.ndarray:
    x = _float(input)
    if approximate == "tanh":
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)
        return 0.5 * x * (1 + np.tanh(inner))
    if approximate != "none":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    # numpy has no erf; math.erf per element is exact to double precision (slow, but a reference)
    erf = _erf_object(x / math.sqrt(2)).astype(x.dtype)
    return 0.5 * x * (1 + erf)


@dispatchable
def dropout(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> np.ndarray:
    """Zero each element with probability `p` (numpy's global RNG) and scale the rest by 1/(1-p)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    x = np.asarray(input)
    if not training or p == 0.0:
        return x
    keep = np.random.random_sample(x.shape) >= p
    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    out = np.multiply(x, keep * scale, out=x if inplace else None, casting="same_kind")
    return out.astype(x.dtype, copy=False)


@dispatchable
def linear(input: Any, weight: Any, bias: Any = None) -> np.ndarray:
    """`input @ weight.T + bias`, with weight shaped (out_features, in_features) as in torch."""
    out = np.matmul(input, np.swapaxes(weight, -1, -2)) if np.ndim(weight) == 2 else np.matmul(input, weight)
    return out if bias is None else out + bias
