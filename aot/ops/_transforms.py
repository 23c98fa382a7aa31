"""The vocabulary of the transforms' rules (vjp, jvp, batch), which the rows hold as facets.

A rule receives traced arrays (aot.compiler.capture.TracedArray) of the capture the transform writes
into, so it is written in numpy, `g * np.cos(x)`, or with `emit` for a core op numpy does not spell.
The conventions (aot/func's interpreters call them):

  vjp(g, *operands, out, **attrs) -> one cotangent per operand (None: zero, or not differentiable).
      g is the output's cotangent (a tuple for a multi-result op). Cotangents follow torch's
      convention for complex values (the conjugate Wirtinger derivative of a real loss): a
      holomorphic f gives g * conj(f'(x)). The interpreter sums a cotangent over the operand's
      broadcast dims and casts it to the operand's dtype (the real part for a real operand).
  jvp(tangents, *operands, out, **attrs) -> the output's tangent (None: zero). tangents holds one
      per operand, None for zero; the interpreter broadcasts and casts the result to the output's.
  batch(values, dims, **attrs) -> (out, out_dim). dims holds each operand's batch dim (None: not
      batched; at least one is batched); a rule moves a batch dim only when the op needs it.

Rows with no derivative carry the marker "not_differentiable" with a reason instead of vjp/jvp.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ir.symbols import is_static


def tracer_for(*values):
    for v in values:
        if hasattr(v, "tracer") and hasattr(v, "meta"):
            return v.tracer
    raise TypeError("a rule needs at least one traced operand")


def emit(name: str, *operands: Any, **attrs: Any):
    """Core op `name` on traced operands (the capture of the first one that is traced)."""
    return tracer_for(*operands).emit(name, list(operands), attrs)


def full(like, shape: tuple, value, dtype):
    """A constant array (`like` names the capture)."""
    return like.tracer.emit("full", [], {"shape": tuple(shape), "value": value, "dtype": dtype})


def zeros_like(x, dtype=None):
    return full(x, x.meta.shape, 0, dtype or x.meta.dtype)


def conj(x):
    """conj for complex values; real ones (and Python numbers a rule's partial may be) as they are."""
    if not hasattr(x, "meta"):
        return np.conj(x)
    return emit("conj", x) if x.meta.dtype.is_complex else x


def is_inexact(x) -> bool:
    return x.meta.dtype.kind in "fc"


# --- shapes -----------------------------------------------------------------------------------
def reshape(x, shape):
    shape = tuple(shape)
    return x if tuple(x.meta.shape) == shape else emit("reshape", x, shape=shape)


def move_axis(x, src: int, dst: int):
    if src == dst:
        return x
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    return emit("transpose", x, perm=tuple(perm))


def to_front(x, d: int | None):
    """x with its batch dim first (an unbatched x as it is)."""
    return x if d is None else move_axis(x, d, 0)


def sum_to(x, shape: tuple):
    """x summed over the dims numpy broadcasting added to reach its shape from `shape`."""
    shape = tuple(shape)
    lead = x.ndim - len(shape)
    if lead:
        x = emit("sum", x, axes=tuple(range(lead)), keepdims=False)
    ones = tuple(i for i, d in enumerate(shape) if _is_one(d) and not _is_one(x.meta.shape[i]))
    return emit("sum", x, axes=ones, keepdims=True) if ones else x


def _is_one(d) -> bool:
    return is_static(d) and d == 1


def broadcast_to(x, shape: tuple):
    shape = tuple(shape)
    return x if tuple(x.meta.shape) == shape else emit("broadcast_to", x, shape=shape)


# --- rule factories for the families -----------------------------------------------------------
def unary_rules(deriv: Callable) -> dict:
    """vjp and jvp of a holomorphic (or real) elementwise f from f': deriv(x, out) -> f'(x)."""
    def vjp(g, x, *, out, **_):
        return (g * conj(deriv(x, out)),)

    def jvp(ts, x, *, out, **_):
        return ts[0] * deriv(x, out)

    return {"vjp": vjp, "jvp": jvp}


def binary_rules(dx: Callable | None, dy: Callable | None) -> dict:
    """vjp and jvp of an elementwise f(x, y) from its partials d(x, y, out) (None: no derivative)."""
    parts = (dx, dy)

    def vjp(g, x, y, *, out, **_):
        # an integer operand (x ** 2's exponent) takes no cotangent: its partial is not computed
        return tuple(None if d is None or not is_inexact(v) else g * conj(d(x, y, out))
                     for d, v in zip(parts, (x, y)))

    def jvp(ts, x, y, *, out, **_):
        return total(*(t * d(x, y, out) for t, d in zip(ts, parts) if t is not None and d is not None))

    return {"vjp": vjp, "jvp": jvp}


def total(*terms):
    """The sum of the terms that are not None (None when all are): a jvp's tangent from its parts."""
    terms = [t for t in terms if t is not None]
    if not terms:
        return None
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


def zero_rules(arity: int = 1) -> dict:
    """Piecewise-constant ops (floor, sign, argmax...): the derivative is zero where it exists (JAX's)."""
    return {"vjp": lambda g, *xs, out, **_: (None,) * len(xs), "jvp": lambda ts, *xs, out, **_: None}


def linear_jvp(name: str) -> Callable:
    """The jvp of an op linear in all its operands: the op itself applied to the tangents."""
    def jvp(ts, *xs, out, **attrs):
        if all(t is None for t in ts):
            return None
        return emit(name, *[zeros_like(x) if t is None else t for t, x in zip(ts, xs)], **attrs)

    return jvp


def not_differentiable(reason: str) -> dict:
    return {"not_differentiable": reason}


# --- batching ------------------------------------------------------------------------------------
def elementwise_batch(name: str) -> Callable:
    """Operands with the same batch dim and rank run as they are; otherwise batch dims move to the
    front and lower-rank batched operands gain unit dims, so numpy broadcasting lines them up."""
    def batch(vals, dims, **attrs):
        batched = [d for d in dims if d is not None]
        if len(batched) == len(dims) and len(set(batched)) == 1 and len({v.ndim for v in vals}) == 1:
            return emit(name, *vals, **attrs), batched[0]
        rank = max(v.ndim - (d is not None) for v, d in zip(vals, dims))
        moved = []
        for v, d in zip(vals, dims):
            if d is not None:
                v = to_front(v, d)
                missing = rank - (v.ndim - 1)
                if missing:
                    shape = v.meta.shape
                    v = reshape(v, (shape[0], *(1,) * missing, *shape[1:]))
            moved.append(v)
        return emit(name, *moved, **attrs), 0

    return batch


def shift_axes(axes, by: int = 1):
    """Axis attributes after `by` dims were put in front (negative axes count from the end: unmoved)."""
    if axes is None:
        return None
    if isinstance(axes, (tuple, list)):
        return type(axes)(shift_axes(a, by) for a in axes)
    return axes + by if axes >= 0 else axes


def axes_batch(name: str, *axis_attrs: str) -> Callable:
    """An op of one batched operand whose attributes `axis_attrs` name axes: batch dim in front,
    axes shifted past it."""
    def batch(vals, dims, **attrs):
        x = to_front(vals[0], dims[0])
        attrs = {k: shift_axes(v) if k in axis_attrs else v for k, v in attrs.items()}
        return emit(name, x, *vals[1:], **attrs), 0

    return batch


def reduction_batch(name: str) -> Callable:
    """A reduction over `axes` (or `axis`): the batch dim in front, the reduced axes past it."""
    return axes_batch(name, "axes", "axis")


def unreduce(g, axes, rank: int, keepdims: bool):
    """A reduction's result (or cotangent) with its reduced axes back as unit dims."""
    if keepdims:
        return g
    axes = sorted(a % rank for a in axes)
    shape = list(g.meta.shape)
    for a in axes:
        shape.insert(a, 1)
    return reshape(g, shape)


# --- gathers and scatters (layout.py, sorting.py, updates.py) ------------------------------------
def around(axis: int, d: int | None) -> int:
    """Where logical axis `axis` of an array batched at dim d sits (d None: unbatched)."""
    return axis if d is None or axis < d else axis + 1


def iota(like, n, dtype=None):
    """0, 1, ..., n-1 (int64 unless `dtype`); `like` names the capture."""
    from ir import dtypes as D

    return like.tracer.emit("iota", [], {"n": n, "dtype": dtype or D.int64})


def as_int64(idx):
    from ir import dtypes as D

    return idx if idx.meta.dtype == D.int64 else emit("cast", idx, dtype=D.int64)


def known_value(v):
    """v's value when a `constant` op made it (indices the traced code spells), else None."""
    node = getattr(v, "node", None)
    target = getattr(node, "target", None)
    if getattr(node, "op", None) != "call_function" or getattr(target, "name", None) != "constant":
        return None
    return np.asarray(node.kwargs["value"])


def size_value(like, n):
    """A size as an int64 operand: the int itself, or a 0-d array of a symbolic size."""
    from ir import dtypes as D

    return int(n) if is_static(n) else full(like, (), n, D.int64)


def wrap_index(idx, n):
    """int64 indices with the negative ones (counting from the end of an axis of n) made positive."""
    idx = as_int64(idx)
    return emit("where", emit("lt", idx, 0), emit("add", idx, size_value(idx, n)), idx)


def scatter_add_rows(g, idx, n):
    """The cotangent of a gather of rows: g (P, M, Q) was gathered from rows idx (ints broadcastable
    to (P, M, Q), negatives count from the end) of a (P, n, Q) array. Zeros of (P, n, Q) with each
    element of g added at its place, repeats adding up (one scatter-add over flat positions)."""
    p, m, q = g.meta.shape
    if _is_one(p) and _is_one(q):
        pos = as_int64(broadcast_to(idx, (p, m, q)))  # the scatter wraps negatives itself
    else:
        rows = emit("mul", reshape(iota(g, p), (p, 1, 1)), size_value(g, n))
        pos = emit("add", emit("mul", emit("add", rows, wrap_index(idx, n)), size_value(g, q)),
                   reshape(iota(g, q), (1, 1, q)))
        pos = broadcast_to(pos, (p, m, q))
    pos = reshape(pos, (p * m * q,))
    flat = emit("scatter", full(g, (p * n * q,), 0, g.meta.dtype), pos, reshape(g, (p * m * q,)),
                kind="sum", unique=False)
    return reshape(flat, (p, n, q))


def is_zero(x) -> bool:
    """Whether x is known to be zero while tracing: a `full` of 0 (the interpreters' cotangent for
    a result no cotangent reached), so a multi-result rule can skip terms that would divide 0 by 0."""
    node = getattr(x, "node", None)
    target = getattr(node, "target", None)
    return getattr(target, "name", None) == "full" and _equals_zero(node.kwargs.get("value"))


def _equals_zero(v) -> bool:
    try:
        return bool(v == 0)
    except (TypeError, ValueError):
        return False


# --- one-axis ops (fft, scan, sort, partition: aot/ops/fft.py, scan.py, sorting.py...) ------------
def axis_batch(name: str, attr: str = "axis") -> Callable:
    """An op of one batched operand along the one axis `attr`, whose result keeps the operand's rank:
    the batch dim stays where it is and the axis is renumbered around it (no transpose)."""
    def batch(vals, dims, **attrs):
        x, d = vals[0], dims[0]
        attrs = {**attrs, attr: around(attrs[attr] % (x.ndim - 1), d)}
        return emit(name, x, *vals[1:], **attrs), d

    return batch


def along(v, axis: int, rank: int):
    """A 1-D v shaped to broadcast along `axis` of rank-`rank` arrays."""
    return reshape(v, (1,) * axis + tuple(v.meta.shape) + (1,) * (rank - axis - 1))


def to_front_of(v, d: int | None, b):
    """v with its batch dim first; an unbatched v (d None) repeated along a new leading dim of b."""
    if d is not None:
        return move_axis(v, d, 0)
    shape = tuple(v.meta.shape)
    return broadcast_to(reshape(v, (1, *shape)), (b, *shape))
