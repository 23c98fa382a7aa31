"""Dead code elimination: erase pure ops whose results nobody reads, transitively."""
from __future__ import annotations

from ..core import Block, Func, Operation
from ..opdef import OPDEFS, may_raise
from .base import Pass, register_pass

EFFECT_TRAITS = frozenset({"side_effects", "impure"})


def has_effects(op: Operation) -> bool:
    """Marked with an effect trait, or holding an op that is; unknown ops are assumed to have effects."""
    d = OPDEFS.get(op.name)
    if d is None:
        return True
    if d.has("pure"):
        return False
    if d.traits & EFFECT_TRAITS:
        return True
    return any(has_effects(inner) for region in op.regions for b in region.blocks for inner in b.ops)


def is_pure(op: Operation) -> bool:
    """Mergeable with an equal op: no effects and not a terminator."""
    d = OPDEFS.get(op.name)
    return d is not None and not d.has("terminator") and not has_effects(op)


def is_removable(op: Operation) -> bool:
    """Erasable when unused: pure, and raising no error numpy would raise (a dead np.take of an
    out-of-bounds index still raises IndexError)."""
    return is_pure(op) and not any(may_raise(inner) for inner in op.walk())  # a kernel's body too


def eliminate_dead_ops(block: Block) -> int:
    """Erase dead pure ops of `block` and of nested regions; returns how many were erased."""
    erased = 0
    for op in reversed(list(block.ops)):  # users come after producers: one backward sweep suffices
        if not op.has_uses() and is_removable(op):
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
