"""The callables dask tasks run: compiled regions (aot.compile'd GraphModules, which pickle with
their native code) wrapped for the steps of dask.array.reduction."""
from __future__ import annotations

import numpy as np

_NO_IDENTITY = ("max", "min")  # numpy refuses these on an empty array: an empty chunk has no partial


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

    def __init__(self, fn, token: str, op: str, axes: tuple):
        super().__init__(fn, token)
        self.op, self.axes = op, axes

    def __call__(self, *blocks):
        if self.op in _NO_IDENTITY and any(np.size(b) == 0 for b in blocks if isinstance(b, np.ndarray)):
            return self._empty(blocks)
        return self.fn(*blocks)

    def _empty(self, blocks):
        """No partial (zero entries along the reduced axes), as dask's own chunk_max gives."""
        from numpy import broadcast_shapes

        shape = list(broadcast_shapes(*[np.shape(b) for b in blocks]))
        for a in self.axes:
            shape[a] = 0
        return np.empty(shape, np.result_type(*[b.dtype for b in blocks]))


class Aggregate(Task):
    """dask's combine/aggregate call `(x, axis=, keepdims=)`: the compiled reduction, whose axes and
    keepdims were fixed when it was made."""

    def __call__(self, x, axis=None, keepdims=None):
        return self.fn(x)
