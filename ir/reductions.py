"""Reduction kinds: one record per kind, read by every stage that reduces.

The op rows (aot/ops/reduce.py) take their dtype rule, numpy reference and empty-axis rule from
here; kernel.reduce checks its `kind` against REDUCTIONS, the interpreter runs `reduce`, fusion
casts the body by `body_in_result_dtype`, and codegen starts accumulators at `identity`, keeps the
better element by `order`, vectorises and splits over threads by the flags. The LLVM combine code
stays in codegen (codegen/kernels/reduce.py COMBINE, keyed by kind; a test checks every kind has
one). Adding a kind is one record here, one row in aot/ops/reduce.py, one combine rule.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import dtypes as D
from .dtypes import DType
from .records import record

DEFAULT_INT = D.from_numpy(np.int_)  # numpy 2: int64 on every 64-bit platform
INDEX = D.from_numpy(np.intp)


def accumulate_dtype(dt: DType) -> DType:
    """numpy's add/multiply.reduce accumulator: bool and ints narrower than the default int widen."""
    return DEFAULT_INT if dt.is_bool or (dt.is_int and dt.bits < DEFAULT_INT.bits) else dt


def _same(dt: DType) -> DType:
    return dt


def _bool(dt: DType) -> DType:
    return D.bool_


def _index(dt: DType) -> DType:
    return INDEX


@record(frozen=True, slots=True)
class ReduceKind:
    name: str
    numpy: Callable  # numpy's function (np.sum, ..., np.argmax): the op row's reference
    result: Callable[[DType], DType]  # operand dtype -> result (= accumulator) dtype
    identity: str  # where the accumulator starts: "zero", "one", "lowest" or "highest" value
    ufunc: np.ufunc | None = None  # the combine as a ufunc (None: index kinds)
    order: str | None = None  # ">" / "<": the kind keeps the greater / smaller element
    has_identity: bool = True  # False: numpy raises for an empty reduced axis (max, min, arg*)
    body_in_result_dtype: bool = False  # the kernel body casts to the result dtype before combining
    splittable: bool = True  # partial results over chunks combine with the same kind (threads)
    vectorisable: bool = True  # lanes accumulate independently and combine at the end
    index: bool = False  # the result is the (flat) index of the kept element

    def reduce(self, x: np.ndarray, axes: tuple, keepdims: bool, dtype) -> np.ndarray:
        """numpy's result of reducing `x` over `axes` into `dtype` (kernel.reduce's meaning)."""
        if self.index:  # the flat C-order index within the reduced axes
            rest = [a for a in range(x.ndim) if a not in axes]
            moved = np.transpose(x, rest + list(axes))
            reduced = 1
            for a in axes:  # (not -1: a reshape cannot infer it when a kept dim is 0)
                reduced *= x.shape[a]
            out = self.numpy(moved.reshape(moved.shape[:len(rest)] + (reduced,)), axis=-1).astype(dtype)
            return np.expand_dims(out, tuple(axes)) if keepdims else out
        kw = {"dtype": dtype} if self.body_in_result_dtype else {}
        return np.asarray(self.ufunc.reduce(x, axis=axes, keepdims=keepdims, **kw)).astype(dtype, copy=False)


REDUCTIONS: dict[str, ReduceKind] = {k.name: k for k in (
    ReduceKind("sum", np.sum, accumulate_dtype, "zero", np.add, body_in_result_dtype=True),
    ReduceKind("prod", np.prod, accumulate_dtype, "one", np.multiply, body_in_result_dtype=True),
    ReduceKind("max", np.max, _same, "lowest", np.maximum, order=">", has_identity=False),
    ReduceKind("min", np.min, _same, "highest", np.minimum, order="<", has_identity=False),
    # any/all test the operand against zero in the body (a cast of complex to bool would drop imag)
    ReduceKind("any", np.any, _bool, "zero", np.logical_or),
    ReduceKind("all", np.all, _bool, "one", np.logical_and),
    # argmax/argmin keep the first best element's position: not split over threads, scalar loops
    ReduceKind("argmax", np.argmax, _index, "lowest", order=">", has_identity=False, splittable=False,
               vectorisable=False, index=True),
    ReduceKind("argmin", np.argmin, _index, "highest", order="<", has_identity=False, splittable=False,
               vectorisable=False, index=True),
)}
