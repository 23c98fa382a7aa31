"""The directions of a Jacobian, kept structured while vmap carries them.

jacrev and jacfwd map a pullback or pushforward over the unit arrays: example b of the batched
input is e_b, the b-th unit array of the example's shape. Until an op mixes examples, such a value
stays `scale * e_b` for an unbatched `scale` (a vjp's `g * f'(x)` is that), and a matmul against a
matrix is then a scaling of its rows or columns, `scale[:, None] * W`, where the dense form would be a
product with the identity (n^3 multiply-adds for an n-by-n Jacobian instead of n^2). Any other op
sees the dense batch (identity times scale) instead, emitted when first needed.
"""
from __future__ import annotations

from typing import Any

from ir.records import record

from ..ops._shapes import numel
from ..ops._transforms import emit, full, iota, reshape


@record
class OneHot:
    """A batch (batch dim 0) whose example b is scale * e_b; scale None: ones."""

    like: Any  # an array of the capture (names it for emission)
    shape: tuple  # one example's shape
    dtype: Any
    scale: Any = None
    dense: Any = None  # the materialised batch, once emitted

    @property
    def size(self):
        return numel(self.shape)

    def materialise(self):
        if self.dense is None:
            n = self.size
            i = iota(self.like, n)
            eye = emit("cast", emit("eq", reshape(i, (n, 1)), reshape(i, (1, n))), dtype=self.dtype)
            if self.scale is not None:
                eye = emit("mul", eye, reshape(self.scale, (1, n)))
            self.dense = reshape(eye, (n, *self.shape))
        return self.dense

    def scaled(self, scale, dtype) -> OneHot:
        return OneHot(self.like, self.shape, dtype, scale)


def rule(name: str, vals: list, dims: list, attrs: dict):
    """The value of op `name` when an operand is a OneHot and the result is one too (or a dense value
    computed without the identity); None: the op needs the dense batch."""
    hot = [i for i, v in enumerate(vals) if isinstance(v, OneHot)]
    if len(hot) != 1 or any(d is not None for j, d in enumerate(dims) if j != hot[0]):
        return None
    k = hot[0]
    h = vals[k]
    if name in ("reshape", "expand_dims", "squeeze"):  # the elements keep their C order
        shape = tuple(attrs["shape"]) if name == "reshape" else _example_shape(name, h.shape, attrs)
        scale = None if h.scale is None else reshape(h.scale, shape)
        return OneHot(h.like, shape, h.dtype, scale), 0
    if name == "neg":
        return h.scaled(-_ones(h) if h.scale is None else emit("neg", h.scale), h.dtype), 0
    if name == "cast" and attrs["dtype"].kind in "fc":
        return h.scaled(None if h.scale is None else emit("cast", h.scale, dtype=attrs["dtype"]), attrs["dtype"]), 0
    if name == "mul":
        return _mul(h, vals[1 - k])
    if name == "matmul":
        return _matmul(h, k, vals[1 - k])
    return None


def _example_shape(name: str, shape: tuple, attrs: dict) -> tuple:
    axes = tuple(attrs["axes"])
    if name == "squeeze":
        return tuple(d for i, d in enumerate(shape) if i not in axes)
    out, rest = [], iter(shape)
    for i in range(len(shape) + len(axes)):
        out.append(1 if i in axes else next(rest))
    return tuple(out)


def _ones(h: OneHot):
    return full(h.like, h.shape, 1, h.dtype)


def _mul(h: OneHot, other):
    """scale * e_b times an unbatched array that broadcasts into the example's shape: still one-hot."""
    shape = tuple(other.meta.shape)
    if len(shape) > len(h.shape) or any(not (s == 1 or s == d) for s, d in zip(shape[::-1], h.shape[::-1])):
        return None
    scale = other if h.scale is None else emit("mul", h.scale, other)
    if tuple(scale.meta.shape) != h.shape:
        scale = emit("broadcast_to", scale, shape=h.shape)
    return h.scaled(scale, scale.meta.dtype), 0


def _matmul(h: OneHot, k: int, m):
    """(scale_b e_b) @ M is row b of M scaled; M @ (scale_b e_b) is column b of M scaled."""
    if len(h.shape) != 1 or m.ndim != 2:
        return None
    s = _ones(h) if h.scale is None else h.scale
    if k == 0:  # e_b @ M: the batch over M's rows
        return emit("mul", reshape(s, (h.shape[0], 1)), m), 0
    return emit("mul", m, reshape(s, (1, h.shape[0]))), 1  # M @ e_b: the batch over M's columns
