"""Reading and making `constant` ops: the one place passes learn how constants are spelled.

`constant {value, dtype}` holds any array-like `value`; its meaning is its reference, so reading goes
through the registry rather than guessing how the value converts. In kernel bodies a constant is a
scalar (ScalarType), which its rules, seeing no operand, cannot infer: it is created with that type."""
from __future__ import annotations

import numpy as np

from ..core import Operation, OpResult, Value
from ..opdef import lookup
from ..rewrite import Rewriter
from ..types import ScalarType, TensorType, Type
from ..verifier import types_equal

CONSTANT_OP = "constant"
VALUE_ATTR = "value"
DTYPE_ATTR = "dtype"
# no constant larger than this is ever materialised
MAX_FOLD_ELEMENTS = 1 << 12
# a folded result larger than every operand (a broadcast) stays an op above this size: a splat is
# cheaper to compute than to load, and fusion can inline a one-element constant but not a dense one
MAX_EXPAND_ELEMENTS = 16


def constant_value(v: Value) -> np.ndarray | None:
    """The array held by `v` when it is the result of a `constant` op, else None."""
    if isinstance(v, OpResult) and v.op.name == CONSTANT_OP:
        d = lookup(CONSTANT_OP)
        return np.asarray(d.reference(**d.full_attrs(v.op.attrs)))
    return None


def is_constant(v: Value) -> bool:
    return isinstance(v, OpResult) and v.op.name == CONSTANT_OP


def numel(t: Type) -> int | None:
    """Elements of a value of type `t`; None when symbolic."""
    if isinstance(t, ScalarType):
        return 1
    if isinstance(t, TensorType) and t.is_static:
        return int(t.numel())
    return None


def make_constant(rewriter: Rewriter, anchor: Operation, value: np.ndarray, t: Type) -> Value | None:
    """A new constant of exactly type `t` holding `value` (broadcast to it), before `anchor`.

    Returns None (creating nothing) when the value cannot have that type or is too large."""
    n = numel(t)
    if n is None or n > MAX_FOLD_ELEMENTS or value.dtype != t.dtype.numpy:
        return None
    try:
        array = np.array(np.broadcast_to(value, t.shape))  # a copy: never a view of another constant
    except ValueError:
        return None
    result_types = [t] if isinstance(t, ScalarType) else None
    op = rewriter.create_before(anchor, CONSTANT_OP, [], {VALUE_ATTR: array, DTYPE_ATTR: t.dtype},
                                result_types=result_types)
    if not types_equal(op.result.type, t):  # the registry disagrees: leave the IR as it was
        rewriter.erase_op(op)
        return None
    return op.result
