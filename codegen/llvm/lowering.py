"""Lowering one body op: the rule of LOWERINGS (rule_table.py) for its name.

The rule modules are imported here (and only here), so that the table is full whenever
`lower_op` can be called; they import rule_table, never this module.
"""

from __future__ import annotations

from collections.abc import Callable

from ir.opdef import OPDEFS, MissingRule

from . import rules_arith, rules_math  # noqa: F401  (fill LOWERINGS)
from . import rules_number  # noqa: F401  (gcd, lcm, ldexp, frexp's exponent)
from .context import LowerCtx
from .rule_table import LIBM_RULE, LOWERINGS, in_dtypes, out_dtype, rule  # noqa: F401  (re-exported)


def rule_for(name: str) -> Callable | None:
    """The scalar/vector rule lowering op `name`: its own, else the libm rule if its row names one."""
    fn = LOWERINGS.get(name)
    if fn is None:
        d = OPDEFS.get(name)
        if d is not None and d.libm is not None:
            fn = LOWERINGS[LIBM_RULE]
    return fn


def lower_op(ctx: LowerCtx, op, vals: list):
    """Lower one body op; raises MissingRule(stage="llvm") when no rule exists."""
    fn = rule_for(op.name)
    if fn is None:
        raise MissingRule("llvm", op.name)
    return fn(ctx, op, *vals)
