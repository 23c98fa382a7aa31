"""Dead code elimination: erase pure ops whose results nobody reads, transitively."""
from __future__ import annotations

from ..core import Block, Func, Operation
from ..opdef import OPDEFS
from . import Pass, register_pass

EFFECT_TRAITS = frozenset({"side_effects", "impure"})


def is_pure(op: Operation) -> bool:
    """Ops are pure unless marked with an effect trait; terminators and unknown ops are kept."""
    d = OPDEFS.get(op.name)
    if d is None or d.has("terminator"):
        return False
    if d.has("pure"):
        return True
    return not (d.traits & EFFECT_TRAITS) and all(
        is_pure(inner) for region in op.regions for b in region.blocks for inner in b.ops
        if not OPDEFS.get(inner.name) or not OPDEFS[inner.name].has("terminator"))


def eliminate_dead_ops(block: Block) -> int:
    """Erase dead pure ops of `block` and of nested regions; returns how many were erased."""
    erased = 0
    for op in reversed(list(block.ops)):  # users come after producers: one backward sweep suffices
        if not op.has_uses() and is_pure(op):
            op.erase()
            erased += 1
            continue
        for region in op.regions:
            for b in region.blocks:
                erased += eliminate_dead_ops(b)
    return erased


@register_pass
class DeadCodeElimination(Pass):
    name = "dce"

    def run_on_func(self, func: Func) -> bool:
        return eliminate_dead_ops(func.body) > 0
