"""Which traced arrays are numpy views of which, so that an in-place update (x[key] = v, x += y,
np.put, x.sort(), ...) reaches every array numpy would change, and no other.

The graph itself is functional; aliasing lives only at trace time. Each node's alias record
(`node.meta["alias"]`) names its base node and the chain of view ops from the base to it. A view op
is a row with the `view` trait (slice, reshape, transpose, squeeze, expand_dims, flip, broadcast_to,
diagonal, require) or `numpy_view` (real, imag); `read_only` ones (broadcast_to, diagonal) are views
numpy refuses to write through. Whether numpy's reshape of a view is a view or a copy depends on
the view's strides: the record follows numpy's strides (in elements of the base, C order) so that
`reshape` decides as numpy's own no-copy test does; where strides are unknown (symbolic dims past a
transpose or a step) the record is `unknown`, and an array so derived cannot be used after its base
is updated (a clear error, never a silently stale or updated value).

Which numpy functions and methods return views is `VIEW_FUNCTIONS`/`VIEW_METHODS`; every other
call's results are new arrays (the capture tracer re-roots them, capture.py `settle`).
"""
from __future__ import annotations

import numpy as np

from ir.opdef import OPDEFS
from ir.records import record


@record(frozen=True)
class Alias:
    base: object  # the fx node whose memory this array is (itself for a base)
    chain: tuple = ()  # view nodes from the base to this node
    strides: tuple | None = None  # numpy's strides in elements of the base (None: unknown)
    read_only: bool = False
    positional: bool = True  # every element is one element of the base (not real/imag)
    unknown: bool = False  # numpy may or may not copy (see the module docstring)


def base_alias(node, shape: tuple) -> Alias:
    return Alias(node, (), _c_strides(shape))


def _c_strides(shape: tuple) -> tuple | None:
    if not all(isinstance(d, int) for d in shape):
        return None
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return tuple(reversed(out))


def is_view_op(name: str) -> bool:
    d = OPDEFS.get(name)
    return d is not None and (d.has("view") or d.has("numpy_view"))


def derive(node, name: str, attrs: dict, operand: Alias | None, operand_shape: tuple, shape: tuple) -> Alias:
    """The alias record of `node` = op `name`(operand 0, ...) of result `shape`."""
    if operand is None or not is_view_op(name):
        return base_alias(node, shape)
    a, d = operand, OPDEFS[name]
    strides = _strides(name, attrs, a.strides, tuple(operand_shape), tuple(shape))
    if name == "reshape" and strides is None and a.strides is not None:
        return base_alias(node, shape)  # numpy copies: not a view
    unknown = a.unknown or (name == "reshape" and a.strides is None and not _regroups_only(a))
    return Alias(a.base, a.chain + (node,), strides, a.read_only or d.has("read_only"),
                 a.positional and not d.has("numpy_view"), unknown)


def _regroups_only(a: Alias) -> bool:
    """A chain of regroupings of the contiguous base: numpy's reshape of it is always a view."""
    return all(n.target.name in ("reshape", "squeeze", "expand_dims", "require") for n in a.chain)


def _strides(name: str, attrs: dict, s: tuple | None, src: tuple, shape: tuple) -> tuple | None:
    """numpy's strides of the view (None: unknown)."""
    if s is None:
        return None
    if name == "slice":
        steps = attrs["steps"]
        return tuple(v * st for v, st in zip(s, steps)) if all(isinstance(x, int) for x in steps) else None
    if name == "transpose":
        return tuple(s[p % len(s)] for p in attrs["perm"])
    if name == "flip":
        axes = {a % len(s) for a in attrs["axes"]}
        return tuple(-v if k in axes else v for k, v in enumerate(s))
    if name == "squeeze":
        axes = {a % len(s) for a in attrs["axes"]}
        return tuple(v for k, v in enumerate(s) if k not in axes)
    if name == "expand_dims":
        axes, it = {a % len(shape) for a in attrs["axes"]}, iter(s)
        return tuple(0 if k in axes else next(it) for k in range(len(shape)))
    if name == "broadcast_to":
        lead = len(shape) - len(s)
        return (0,) * lead + tuple(0 if m == 1 and n != 1 else v for v, m, n in zip(s, src, shape[lead:]))
    if name == "diagonal":
        a1, a2 = attrs["axis1"] % len(s), attrs["axis2"] % len(s)
        return tuple(v for k, v in enumerate(s) if k not in (a1, a2)) + (s[a1] + s[a2],)
    if name == "reshape":
        return reshape_strides(src, s, shape)
    return s  # require, real, imag: the same elements


def reshape_strides(old_shape: tuple, old_strides: tuple, new_shape: tuple) -> tuple | None:
    """numpy's no-copy reshape test (C order): the view's strides, or None when numpy must copy."""
    if not all(isinstance(d, int) for d in (*old_shape, *new_shape)):
        return None
    if 0 in old_shape:
        return _c_strides(new_shape)
    old = [(d, s) for d, s in zip(old_shape, old_strides) if d != 1]
    od, os_ = [d for d, _ in old], [s for _, s in old]
    nd = list(new_shape)
    out = [0] * len(nd)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(nd) and oi < len(od):
        np_, op = nd[ni], od[oi]
        while np_ != op:
            if np_ < op:
                np_ *= nd[nj]
                nj += 1
            else:
                op *= od[oj]
                oj += 1
        if any(os_[k] != od[k + 1] * os_[k + 1] for k in range(oi, oj - 1)):
            return None
        out[nj - 1] = os_[oj - 1]
        for k in range(nj - 1, ni, -1):
            out[k - 1] = out[k] * nd[k]
        ni, nj, oi, oj = nj, nj + 1, oj, oj + 1
    last = out[ni - 1] if ni >= 1 else 1
    for k in range(ni, len(nd)):
        out[k] = last
    return tuple(out)


# numpy functions and ndarray methods/attributes whose results are views of their first argument
VIEW_FUNCTIONS = frozenset(f for f in (
    np.reshape, np.ravel, np.transpose, np.swapaxes, np.moveaxis, np.rollaxis, np.squeeze, np.expand_dims,
    np.broadcast_to, np.broadcast_arrays, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.flip, np.fliplr,
    np.flipud, np.rot90, np.diagonal, np.real, np.imag, np.split, np.array_split, np.hsplit, np.vsplit,
    np.dsplit, np.asarray, np.asanyarray, np.ascontiguousarray, getattr(np, "matrix_transpose", None),
    getattr(np, "permute_dims", None), getattr(np, "unstack", None),
) if f is not None)
VIEW_METHODS = frozenset({"reshape", "ravel", "transpose", "swapaxes", "squeeze", "diagonal", "view",
                          "__getitem__", "T", "mT", "real", "imag"})
