"""`ufunc.outer` for every binary ufunc (numpy_ufunc_methods' table; ufunc.at is assignment.py's).

outer(A, B) is the ufunc on A reshaped to A.shape + (1,) * B.ndim and B, broadcast against each
other: result[i..., j...] = ufunc(A[i...], B[j...]), with the ufunc's own keyword arguments and
dtypes (numpy converts both operands to arrays first, so Python scalars are not weak here)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .emitter import Emitter, abstract_of
from .numpy_shape import reshape
from .numpy_ufuncs import ufunc_translation
from .operands import to_value


def ufunc_outer(em: Emitter, ufunc: np.ufunc, A: Any, B: Any, /, **kwargs: Any):
    if ufunc.nin != 2:
        raise ValueError("outer product only supported for binary functions")
    if ufunc.signature is not None:
        raise TypeError("method outer is not allowed in ufunc with non-trivial signature")
    a, b = to_value(em, A), to_value(em, B)
    x = reshape(em, a, tuple(abstract_of(a).shape) + (1,) * abstract_of(b).ndim)
    return ufunc_translation(ufunc)(em, x, b, **kwargs)
