"""Constant folding: an op whose operands are all constants becomes a constant, computed by the
op's own numpy reference (so folding and the interpreter cannot disagree).

Left alone: results with symbolic shapes, results over MAX_FOLD_ELEMENTS, broadcasts that would grow
past MAX_EXPAND_ELEMENTS (see constants.py), ops whose reference raises (e.g. an integer power with a
negative exponent: that error belongs to run time), and results whose dtype or shape disagree with
the op's type (a bug in the op's row, logged as a warning)."""
from __future__ import annotations

import numpy as np

from ..core import Func, Operation
from ..logger import get_logger
from ..opdef import OPDEFS
from ..rewrite import Pattern, Rewriter, apply_patterns_greedily
from . import constants as C
from .base import Pass, register_pass

log = get_logger(__name__)


def _small_enough(op: Operation) -> bool:
    sizes = [C.numel(r.type) for r in op.results]
    if any(n is None or n > C.MAX_FOLD_ELEMENTS for n in sizes):
        return False
    largest_operand = max((C.numel(v.type) or 0 for v in op.operands), default=0)
    return max(sizes, default=0) <= max(largest_operand, C.MAX_EXPAND_ELEMENTS)


def fold_op(op: Operation) -> list[np.ndarray] | None:
    """The constant results of `op`, or None when it cannot (or should not) be folded."""
    d = OPDEFS.get(op.name)
    if (d is None or d.reference is None or op.regions or op.name == C.CONSTANT_OP or not op.results
            or d.has("terminator") or not _small_enough(op)):
        return None
    values = [C.constant_value(v) for v in op.operands]
    if any(v is None for v in values):
        return None
    try:
        with np.errstate(all="ignore"):
            out = d.reference(*values, **d.full_attrs(op.attrs))
    except Exception as e:  # noqa: BLE001  (any failure means: do not fold, let run time report it)
        log.debug("not folding %s: its reference raised %s", op.name, e)
        return None
    outs = [np.asarray(x) for x in (out if len(op.results) > 1 else (out,))]
    for r, x in zip(op.results, outs):
        if x.dtype != r.type.dtype.numpy or x.shape != tuple(r.type.shape):
            log.warning("not folding %s: its reference gave %s%s for result type %s", op.name, x.dtype,
                        list(x.shape), r.type)
            return None
    return outs


class FoldConstantOperands(Pattern):
    root = None

    def match_and_rewrite(self, op: Operation, rewriter: Rewriter) -> bool:
        outs = fold_op(op)
        if outs is None:
            return False
        news = [C.make_constant(rewriter, op, x, r.type) for x, r in zip(outs, op.results)]
        if any(n is None for n in news):
            for n in news:
                if n is not None:
                    rewriter.erase_op(n.op)
            return False
        rewriter.replace_op(op, news)
        return True


@register_pass
class ConstantFolding(Pass):
    name = "fold"

    def run_on_func(self, func: Func) -> bool:
        return apply_patterns_greedily(func, [FoldConstantOperands()])
