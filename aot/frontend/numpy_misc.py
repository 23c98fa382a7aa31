"""Small numpy functions that are not ufuncs: rounding and casts (the round and cast rows'), copies and
shape queries (DECOMPOSITIONS: no op at all)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .emitter import Emitter, abstract_of
from .numpy_ufuncs import emit
from .operands import cast, index_arg, no_out, normalize_axis, to_dtype, to_value
from .registry import translates
from .shapes import prod


@translates("round")  # np.round and np.around (np.rint is a ufunc: numpy_ufuncs)
def np_round(em: Emitter, a: Any, decimals: Any = 0, out: Any = None):
    no_out("np.round", out)
    x = to_value(em, a)
    decimals = index_arg(decimals, "decimals")
    dt = abstract_of(x).dtype
    if dt.is_bool:
        raise TypeError("np.round: not supported for bool arrays (numpy's loop gives float16)")
    if not dt.is_inexact and decimals >= 0:
        return x  # rounding an integer to >= 0 decimals changes nothing
    if not dt.is_inexact:  # numpy rounds integers to tens, hundreds, ... in float64, then casts back
        return cast(em, emit(em, "round", cast(em, x, to_dtype(np.float64)), decimals=decimals), dt)
    return emit(em, "round", x, decimals=decimals)


@translates("cast")
def np_astype(em: Emitter, x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None):
    return cast(em, to_value(em, x), to_dtype(dtype, "dtype"))


def np_copy(em: Emitter, a: Any, order: str = "K", subok: bool = False):
    return to_value(em, a)  # values are immutable in traced code: a copy is the value itself


def np_shape(em: Emitter, a: Any) -> tuple:
    return abstract_of(to_value(em, a)).shape


def np_ndim(em: Emitter, a: Any) -> int:
    return abstract_of(to_value(em, a)).ndim


def np_size(em: Emitter, a: Any, axis: Any = None):
    shape = abstract_of(to_value(em, a)).shape
    if axis is None:
        return prod(shape)
    return shape[normalize_axis(axis, len(shape))]


# numpy functions that are not one core op: a copy is the value itself, queries read the type
DECOMPOSITIONS = {np.copy: np_copy, np.shape: np_shape, np.ndim: np_ndim, np.size: np_size}
