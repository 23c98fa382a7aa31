"""Canonicalisation: algebraic identities as table rows keyed by op name, run to a fixpoint.

Every rewrite replaces a value by one of exactly the same type (dtype and shape), so `x + 0` where
the zero broadcasts `x` to a larger shape or promotes its dtype does not fire. Identities hold
bit-for-bit under IEEE semantics: `x + c` drops c only when c is -0.0 for floats (since
-0.0 + 0.0 = +0.0), `x - c` only when c is +0.0, `x * 1` and `x / 1` not for complex results
(complex products with 0-imaginary parts turn inf into nan), and `x * 0` only for ints and bools.
Commutative ops get their constant operand last, so the rows only look to the right.

Scalar powers 2, 0.5 and -1 of real arrays become numpy's fast paths (mul, sqrt, reciprocal). Structural rows: involutions (neg, logical_not, conj, invert), layout ops that are no-ops at their own
type, chains of reshape-like ops, double transposes, and casts through a wider dtype and back.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..core import Func, Operation, OpResult, Value
from ..dtypes import DType
from ..opdef import OPDEFS
from ..rewrite import Pattern, apply_patterns_greedily
from ..verifier import types_equal
from .base import Pass, register_pass
from .constants import constant_value, is_constant, make_constant

Pred = Callable[[np.ndarray, DType], bool]


def _signs(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if c.dtype.kind == "c":
        return np.signbit(c.real), np.signbit(c.imag)
    if c.dtype.kind == "f":
        return np.signbit(c), np.signbit(c)
    z = np.zeros(c.shape, bool)  # ints and bools are +0
    return z, z


def _is_neg_zero(c: np.ndarray, dt: DType) -> bool:
    re, im = _signs(c)
    return bool(np.all(c == 0)) and (not dt.is_inexact or bool(np.all(re) and np.all(im)))


def _is_pos_zero(c: np.ndarray, dt: DType) -> bool:
    re, im = _signs(c)
    return bool(np.all(c == 0)) and (not dt.is_inexact or not bool(np.any(re) or np.any(im)))


def _is_one(c: np.ndarray, dt: DType) -> bool:
    return not dt.is_complex and bool(np.all(c == 1))


def _is_true(c: np.ndarray, dt: DType) -> bool:
    return dt.is_bool and c.dtype == np.bool_ and bool(np.all(c))


def _is_false(c: np.ndarray, dt: DType) -> bool:
    return dt.is_bool and c.dtype == np.bool_ and not bool(np.any(c))


def _is_int_zero(c: np.ndarray, dt: DType) -> bool:
    return (dt.is_int or dt.is_bool) and bool(np.all(c == 0))


def _is_all_ones(c: np.ndarray, dt: DType) -> bool:
    """Every bit set in the result dtype: an int -1 (it sign-extends), or True for a bool result."""
    return (c.dtype.kind == "i" and bool(np.all(c == -1))) or _is_true(c, dt)


# op -> predicate on the right-hand constant c (given the result dtype) under which `x op c == x`
RIGHT_IDENTITY: dict[str, Pred] = {
    "add": _is_neg_zero,
    "sub": _is_pos_zero,
    "mul": _is_one,
    "div": _is_one,
    "pow": _is_one,
    "logical_and": _is_true,
    "logical_or": _is_false,
    "bitwise_and": _is_all_ones,
    "bitwise_or": _is_int_zero,
    "bitwise_xor": _is_int_zero,
    "left_shift": _is_int_zero,
    "right_shift": _is_int_zero,
}

# op -> predicate on the right-hand constant c under which `x op c == c` (broadcast to the result)
RIGHT_ABSORBING: dict[str, Pred] = {
    "mul": _is_int_zero,
    "logical_and": _is_false,
    "logical_or": _is_true,
    "bitwise_and": _is_int_zero,
    "bitwise_or": _is_all_ones,
}

# f(f(x)) == x for these, whenever the types line up
INVOLUTIONS = frozenset({"neg", "logical_not", "conj", "invert"})


def _same_type(op: Operation) -> bool:
    return types_equal(op.result.type, op.operands[0].type)


def _transpose_perm(op: Operation) -> tuple[int, ...]:
    rank = len(op.operands[0].type.shape)
    return tuple(p % rank for p in op.attrs["perm"])


# op -> condition under which an op whose result type equals its operand's type returns it unchanged
NOOP_IF_SAME_TYPE: dict[str, Callable[[Operation], bool]] = {
    "cast": lambda op: True,
    "reshape": lambda op: True,
    "broadcast_to": lambda op: True,
    "squeeze": lambda op: True,
    "expand_dims": lambda op: True,
    "real": lambda op: True,
    "conj": lambda op: not op.operands[0].type.dtype.is_complex,
    "transpose": lambda op: _transpose_perm(op) == tuple(range(len(op.result.type.shape))),
}

# f(f(x, a1), a2) == f(x, a2): the inner op is skipped
ABSORB_INNER = frozenset({"reshape", "broadcast_to"})

# ops that only regroup the elements in C order: any chain of them is a reshape, and the identity when
# it ends at the type it started from (squeeze(expand_dims(x)) == x)
RESHAPE_LIKE = frozenset({"reshape", "squeeze", "expand_dims"})


def _producer(v: Value, name: str) -> Operation | None:
    return v.op if isinstance(v, OpResult) and v.op.name == name else None


class SortCommutativeOperands(Pattern):
    """Constants go last: `c + x` becomes `x + c`, so identity rows need only look right."""

    def match_and_rewrite(self, op, rewriter):
        d = OPDEFS.get(op.name)
        if d is None or not d.has("commutative") or len(op.operands) != 2:
            return False
        a, b = op.operands
        if not is_constant(a) or is_constant(b):
            return False
        rewriter.set_operand(op, 0, b)
        rewriter.set_operand(op, 1, a)
        return True


class RightIdentity(Pattern):
    def match_and_rewrite(self, op, rewriter):
        pred = RIGHT_IDENTITY.get(op.name)
        if pred is None or len(op.operands) != 2 or len(op.results) != 1:
            return False
        x, c = op.operands
        value = constant_value(c)
        if value is None or not _same_type(op) or not pred(value, op.result.type.dtype):
            return False
        rewriter.replace_op(op, [x])
        return True


class ScalarPower(Pattern):
    """numpy's fast paths for a scalar exponent, to the bit, on real dtypes: x ** 2 == x * x (a
    correctly rounded pow gives the same), and for float arrays of rank >= 1 x ** 0.5 ==
    sqrt(x) (-0.0 stays -0.0, -inf gives nan) and x ** -1 == reciprocal(x). Not for rank 0
    (numpy scalars compute pow), nor complex (numpy special-cases zero bases). The rewritten
    forms also vectorise where a pow call costs ~5-10x."""

    root = "pow"

    def match_and_rewrite(self, op, rewriter):
        x, c = op.operands
        value = constant_value(c)
        t = op.result.type
        if value is None or value.size != 1 or t.dtype.is_complex or not _same_type(op):
            return False
        e = float(value.reshape(()))
        if e == 2:
            new = rewriter.create_before(op, "mul", [x, x], {})
        elif t.dtype.is_float and e in (0.5, -1) and len(t.shape) > 0:
            new = rewriter.create_before(op, "sqrt" if e == 0.5 else "reciprocal", [x], {})
        else:
            return False
        rewriter.replace_op(op, [new.result])
        return True


class RightAbsorbing(Pattern):
    def match_and_rewrite(self, op, rewriter):
        pred = RIGHT_ABSORBING.get(op.name)
        if pred is None or len(op.operands) != 2 or len(op.results) != 1:
            return False
        c, t = op.operands[1], op.result.type
        value = constant_value(c)
        if value is None or not pred(value, t.dtype):
            return False
        if c.type.dtype != t.dtype:  # e.g. int x * False: the same zeros, in the result dtype
            c = make_constant(rewriter, op, value.astype(t.dtype.numpy), c.type.with_dtype(t.dtype))
            if c is None:
                return False
        if not types_equal(c.type, t):  # broadcast rather than materialise a large constant
            c = rewriter.create_before(op, "broadcast_to", [c], {"shape": t.shape}).result
        rewriter.replace_op(op, [c])
        return True


class Involution(Pattern):
    def match_and_rewrite(self, op, rewriter):
        if op.name not in INVOLUTIONS or len(op.operands) != 1:
            return False
        inner = _producer(op.operands[0], op.name)
        if inner is None or not types_equal(inner.operands[0].type, op.result.type):
            return False
        rewriter.replace_op(op, [inner.operands[0]])
        return True


class NoOpIfSameType(Pattern):
    def match_and_rewrite(self, op, rewriter):
        cond = NOOP_IF_SAME_TYPE.get(op.name)
        if cond is None or len(op.operands) != 1 or not _same_type(op) or not cond(op):
            return False
        rewriter.replace_op(op, [op.operands[0]])
        return True


class AbsorbInner(Pattern):
    def match_and_rewrite(self, op, rewriter):
        if op.name not in ABSORB_INNER or len(op.operands) != 1:
            return False
        inner = _producer(op.operands[0], op.name)
        if inner is None:
            return False
        new = rewriter.create_before(op, op.name, [inner.operands[0]], op.attrs)
        if not types_equal(new.result.type, op.result.type):
            rewriter.erase_op(new)
            return False
        rewriter.replace_op(op, [new.result])
        return True


class ReshapeRoundTrip(Pattern):
    def match_and_rewrite(self, op, rewriter):
        if op.name not in RESHAPE_LIKE or len(op.operands) != 1:
            return False
        inner = op.operands[0].op if isinstance(op.operands[0], OpResult) else None
        if inner is None or inner.name not in RESHAPE_LIKE:
            return False
        x = inner.operands[0]
        if not types_equal(x.type, op.result.type):
            return False
        rewriter.replace_op(op, [x])
        return True


class CastRoundTrip(Pattern):
    """cast(cast(x, wide), type(x)) == x when `wide` holds every value of x's dtype exactly."""

    root = "cast"

    def match_and_rewrite(self, op, rewriter):
        inner = _producer(op.operands[0], "cast")
        if inner is None or not types_equal(inner.operands[0].type, op.result.type):
            return False
        if not np.can_cast(op.result.type.dtype.numpy, inner.result.type.dtype.numpy, "safe"):
            return False
        rewriter.replace_op(op, [inner.operands[0]])
        return True


class DoubleTranspose(Pattern):
    """transpose(transpose(x, p1), p2) == transpose(x, p1[p2]); dropped when that is the identity."""

    root = "transpose"

    def match_and_rewrite(self, op, rewriter):
        inner = _producer(op.operands[0], "transpose")
        if inner is None:
            return False
        p1, p2 = _transpose_perm(inner), _transpose_perm(op)
        perm = tuple(p1[j] for j in p2)
        x = inner.operands[0]
        if perm == tuple(range(len(perm))):
            rewriter.replace_op(op, [x])
            return True
        new = rewriter.create_before(op, "transpose", [x], {**op.attrs, "perm": perm})
        rewriter.replace_op(op, [new.result])
        return True


def canonicalization_patterns() -> list[Pattern]:
    """Patterns keyed by their table's op names, so the driver dispatches by name."""
    patterns: list[Pattern] = [SortCommutativeOperands(), DoubleTranspose(), CastRoundTrip(), ScalarPower()]
    for cls, names in ((RightIdentity, RIGHT_IDENTITY), (RightAbsorbing, RIGHT_ABSORBING),
                       (Involution, INVOLUTIONS), (NoOpIfSameType, NOOP_IF_SAME_TYPE),
                       (AbsorbInner, ABSORB_INNER), (ReshapeRoundTrip, RESHAPE_LIKE)):
        for name in names:
            p = cls()
            p.root = name
            patterns.append(p)
    return patterns


@register_pass
class Canonicalize(Pass):
    name = "canonicalize"

    def run_on_func(self, func: Func) -> bool:
        return apply_patterns_greedily(func, canonicalization_patterns())
