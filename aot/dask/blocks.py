"""The callables dask tasks run: compiled regions (aot.compile'd GraphModules, which pickle with
their native code) wrapped for the steps of dask.array.reduction."""
from __future__ import annotations

import numpy as np

NO_IDENTITY = ("max", "min")  # numpy refuses these on an empty array: an empty chunk has no partial


def identity(x, axis=None, keepdims=None):
    """The reduction's chunk step: the partials are made by the blockwise task before it."""
    return x


class Task:
    """A compiled region as a dask task's function. `token`: the region's, stable for the plan, so
    that dask names equal graphs equally without hashing the function (and its native code)."""

    def __init__(self, fn, token: str):
        self.fn, self.token = fn, token

    def __dask_tokenize__(self):
        return (type(self).__name__, self.token)

    def __call__(self, *blocks):
        return self.fn(*blocks)


class Partial(Task):
    """A chunk's partial reduction (keepdims) through its fused region."""

    def __init__(self, fn, token: str, op: str, axes: tuple, dtype):
        super().__init__(fn, token)
        self.op, self.axes, self.dtype = op, axes, np.dtype(dtype)

    def __call__(self, *blocks):
        if self.op in NO_IDENTITY and any(np.size(b) == 0 for b in blocks if isinstance(b, np.ndarray)):
            return self._empty(blocks)
        return self.fn(*blocks)

    def _empty(self, blocks):
        """The partial of an empty chunk: the value that never wins (-inf for max: the whole array
        is known not to be empty along the axes, lower.py checks)."""
        shape = list(np.broadcast_shapes(*[np.shape(b) for b in blocks]))
        for a in self.axes:
            shape[a] = 1
        dtype = self.dtype
        if dtype.kind == "f":
            worst = -np.inf if self.op == "max" else np.inf
        elif dtype.kind == "b":
            worst = self.op == "min"
        else:
            info = np.iinfo(dtype)
            worst = info.min if self.op == "max" else info.max
        return np.full(shape, worst, dtype)


class Aggregate(Task):
    """dask's combine/aggregate call `(x, axis=, keepdims=)`: the compiled reduction, whose axes and
    keepdims were fixed when it was made."""

    def __call__(self, x, axis=None, keepdims=None):
        return self.fn(x)


class ArgPartial(Task):
    """A chunk's (max, argmax) or (min, argmin) along `axis`, the index counted from the array's
    start, as one array holding the two along that axis (in `dtype`: float64 holds float32 values
    and indices exactly below 2**53)."""

    def __init__(self, fn, token: str, axis: int, dtype):
        super().__init__(fn, token)
        self.axis, self.dtype = axis, np.dtype(dtype)

    def __call__(self, block, block_info=None):
        if block.shape[self.axis] == 0:  # no candidate (dask's own arg-reductions fail here)
            shape = list(block.shape)
            shape[self.axis] = 0
            return np.empty(shape, self.dtype)
        value, index = self.fn(block)
        offset = block_info[0]["array-location"][self.axis][0] if block_info else 0
        return np.concatenate([value.astype(self.dtype), (index + offset).astype(self.dtype)], axis=self.axis)


def arg_combine(op: str, axis: int, keepdims: bool, final: bool, ndim: int):
    """The numpy function (compiled by lower.py) that combines ArgPartial pairs (value, index)
    concatenated along `axis`: the pair of the first best value (the first of equal ones, or the
    first NaN, as numpy's argmax), as a pair again (`final=False`) or its int64 index."""
    pick = np.argmax if op == "max" else np.argmin

    def combine(x):
        even, odd = [slice(None)] * ndim, [slice(None)] * ndim
        even[axis], odd[axis] = slice(0, None, 2), slice(1, None, 2)
        values, indices = x[tuple(even)], x[tuple(odd)]
        best = pick(values, axis=axis, keepdims=True)
        index = np.take_along_axis(indices, best, axis=axis)
        if not final:
            return np.concatenate([np.take_along_axis(values, best, axis=axis), index], axis=axis)
        index = index.astype(np.int64)
        return index if keepdims else np.squeeze(index, axis=axis)

    return combine
