"""The fusion pass: elementwise ops become loop nests (kernel.elementwise), reductions absorb their
elementwise producers (kernel.reduce).

After it runs, the function body holds only kernels, views (transpose, slice, ... and broadcast
views that something other than a kernel reads) and opaque ops (matmul, fft, concatenate, pad,
take, creation ops), so code generation sees no bare elementwise op or reduction.

1. Plan (fuse_plan.py): decide per elementwise op whether it is inlined (recomputed by every kernel
   that reads it) or materialised, then union producer/consumer pairs of one shape into groups while
   the kernel graph stays acyclic.
2. Build (fuse_build.py): one kernel.elementwise per group, whose results are the group's values read
   outside it, and one kernel.reduce per reduction; bodies hold scalar copies of the computed ops
   with the same dtype rules, and one-element constants inline.
3. Replace the results, erase the fused ops, the broadcast views the kernels absorbed (dead ones
   included: the plan counts them as reading nothing) and what became dead with them, and order the
   body topologically (kernels may read values defined after their first member).
"""
from __future__ import annotations

from ..core import Func, Operation
from ..logger import INFO, get_logger
from ..symbols import dim_str
from .base import Pass, register_pass
from .dce import is_removable
from .fuse_build import FusionError, build_elementwise, build_reduce, stable_topological_order
from .fuse_plan import FusionOptions, FusionPlan

log = get_logger("aot.fusion")

__all__ = ["Fuse", "FusionError", "FusionOptions", "fuse_func"]


def fuse_func(func: Func, options: FusionOptions | None = None) -> int:
    """Fuse the body of `func` in place; returns the number of kernels created."""
    plan = FusionPlan(func, options or FusionOptions())
    if not plan.kernel_ops:
        return 0
    was_dead = {op for op in plan.ops if not op.has_uses()}
    anchored: dict[Operation, list[Operation]] = {}  # original op -> kernels placed after it
    replacements = []
    for members in plan.groups():
        outputs = plan.outputs(members)
        if not outputs:
            continue  # every member is recomputed where it is read (or is dead)
        inside = set(members)
        kernel, names = build_elementwise(outputs, lambda op: op in inside or op in plan.inline)
        anchored.setdefault(members[-1], []).append(kernel)
        replacements.append((outputs, kernel))
        _log_kernel(func, kernel, names)
    for red in plan.reductions:
        kernel, names = build_reduce(red, plan.inline.__contains__)
        anchored.setdefault(red, []).append(kernel)
        replacements.append((red.results, kernel))
        _log_kernel(func, kernel, names)
    for values, kernel in replacements:
        for v, r in zip(values, kernel.results):
            v.replace_all_uses_with(r)
    _erase_fused(plan, was_dead)
    order = [k for op in plan.ops for k in ([op] if op.parent is func.body else []) + anchored.get(op, [])]
    _set_order(func, stable_topological_order(order))
    return len(replacements)


def _erase_fused(plan: FusionPlan, was_dead: set[Operation]) -> None:
    """Erase the fused ops and absorbed views, then the ops that only they read, users first.

    Ops that were dead before are otherwise kept: removing dead code is DCE's job."""
    for op in reversed(plan.ops):
        if op in plan.kernel_ops or op in plan.absorbed_views:
            if op.has_uses():
                users = sorted({u.name for r in op.results for u in r.users})
                what = "fused" if op in plan.kernel_ops else "absorbed into kernels"
                raise FusionError(f"{op.name} was {what} but is still read by {users}")
            op.erase()
        elif op not in was_dead and not op.has_uses() and is_removable(op):
            op.erase()


def _set_order(func: Func, order: list[Operation]) -> None:
    body = func.body
    for op in body.ops:
        op.parent = None
    body.ops = []
    for op in order:
        body.append(op)


def _log_kernel(func: Func, kernel: Operation, body_ops: list[str]) -> None:
    if not log.isEnabledFor(INFO):
        return
    a = kernel.attrs
    shape = "[" + ",".join(dim_str(d) for d in a["shape"]) + "]"
    what = f"{a['kind']} over {tuple(a['axes'])} of {shape}" if kernel.name == "kernel.reduce" else shape
    log.info("@%s: %s %s: %d input(s), %d output(s), body [%s]", func.name, kernel.name, what,
             len(kernel.operands), len(kernel.results), ", ".join(body_ops) or "identity")


@register_pass
class Fuse(Pass):
    """`fuse`: elementwise chains into kernel.elementwise, reductions into kernel.reduce."""

    name = "fuse"

    def __init__(self, options: FusionOptions | None = None):
        self.options = options or FusionOptions()

    def run_on_func(self, func: Func) -> bool:
        return fuse_func(func, self.options) > 0
