"""The LOWERINGS table: op name -> fn(ctx, op, *llvals) -> llval, run on scalars or <VLEN x T> vectors.

Rules receive the operand values as computed (each in its operand's dtype) and convert them to
the dtype the op computes in (numpy casts mixed operands to the result type). Complex values are
(re, im) pairs; bools are i1. Rule modules (rules_arith.py, rules_math.py) register themselves
with `@rule("name", ...)`; rows that name a C math function (`libm="cbrt"`) share the rule
registered as LIBM_RULE. This module imports no rule module; lowering.py (the lookup) imports
them all.
"""

from __future__ import annotations

from collections.abc import Callable

from ir.dtypes import DType

LOWERINGS: dict[str, Callable] = {}


def rule(*names: str):
    def deco(fn):
        for n in names:
            LOWERINGS[n] = fn
        return fn

    return deco


# the rule of every row that names a C math function (OpDef.libm) and has no rule of its own
LIBM_RULE = "@libm"


def in_dtypes(op) -> list[DType]:
    return [v.type.dtype for v in op.operands]


def out_dtype(op) -> DType:
    return op.results[0].type.dtype
