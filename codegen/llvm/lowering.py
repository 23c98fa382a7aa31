"""The LOWERINGS table: op name -> fn(ctx, op, *llvals) -> llval, run on scalars or <VLEN x T> vectors.

Rules receive the operand values as computed (each in its operand's dtype) and convert them to
the dtype the op computes in (numpy casts mixed operands to the result type). Complex values are
(re, im) pairs; bools are i1. Rule modules register themselves with `@rule("name", ...)`.
"""

from __future__ import annotations

from collections.abc import Callable

from ir.dtypes import DType
from ir.opdef import OPDEFS, MissingRule

from .context import LowerCtx

LOWERINGS: dict[str, Callable] = {}


def rule(*names: str):
    def deco(fn):
        for n in names:
            LOWERINGS[n] = fn
        return fn

    return deco


def lower_op(ctx: LowerCtx, op, vals: list):
    """Lower one body op; raises MissingRule(stage="llvm") when no rule exists."""
    fn = LOWERINGS.get(op.name)
    if fn is None:
        d = OPDEFS.get(op.name)
        fn = d.llvm if d is not None and callable(d.llvm) else None
    if fn is None:
        raise MissingRule("llvm", op.name)
    return fn(ctx, op, *vals)


def in_dtypes(op) -> list[DType]:
    return [v.type.dtype for v in op.operands]


def out_dtype(op) -> DType:
    return op.results[0].type.dtype


# rule modules fill LOWERINGS on import
from . import rules_arith, rules_math  # noqa: E402,F401
