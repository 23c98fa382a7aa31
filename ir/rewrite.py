"""Pattern rewriting: Pattern, Rewriter and a greedy worklist driver that runs to a fixpoint.

A Pattern looks at one op (`root` restricts it to one op name, so the driver dispatches through a
table rather than trying every pattern) and edits the IR only through the Rewriter, which tells the
driver what changed: created ops, ops whose operands changed, and users of replaced values go back
on the worklist, so rewrites enabled by other rewrites are found without rescanning everything.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .builder import Builder
from .core import Func, Module, Operation, Value
from .logger import get_logger
from .opdef import OPDEFS
from .types import Type
from .verifier import enclosing_func, types_equal

log = get_logger(__name__)


class Pattern:
    """Subclass and implement `match_and_rewrite`; return True iff the IR was changed."""

    root: str | None = None  # op name this pattern applies to; None: every op

    @property
    def name(self) -> str:
        return type(self).__name__

    def match_and_rewrite(self, op: Operation, rewriter: Rewriter) -> bool:
        raise NotImplementedError


class Rewriter:
    """IR edits that keep use lists consistent and report touched ops to the driver."""

    def __init__(self, notify=None):
        self._notify = notify or (lambda op: None)

    def create_before(self, anchor: Operation, name: str, operands: list[Value],
                      attrs: dict[str, Any] | None = None,
                      result_types: list[Type] | None = None) -> Operation:
        """Create op `name` right before `anchor`; result types are inferred unless given."""
        b = Builder.before(anchor)
        b.loc = anchor.loc
        op = b.create(name, operands, attrs, result_types=result_types)
        self._notify(op)
        return op

    def insert_before(self, anchor: Operation, op: Operation) -> Operation:
        anchor.parent.insert_before(anchor, op)
        self._notify(op)
        return op

    def set_operand(self, op: Operation, i: int, value: Value) -> None:
        op.set_operand(i, value)
        self._notify(op)

    def replace_all_uses(self, old: Value, new: Value) -> None:
        for user in old.users:
            self._notify(user)
        old.replace_all_uses_with(new)

    def replace_op(self, op: Operation, values: list[Value]) -> None:
        """Redirect every use of `op`'s results to `values`, then erase `op`."""
        if len(values) != len(op.results):
            raise ValueError(f"replace_op: {op.name} has {len(op.results)} results, got {len(values)} values")
        for r, v in zip(op.results, values):
            if not types_equal(r.type, v.type):
                raise ValueError(f"replace_op: {op.name} result #{r.index} of type {r.type} replaced by a "
                                 f"value of type {v.type}")
            self.replace_all_uses(r, v)
        self.erase_op(op)

    def erase_op(self, op: Operation) -> None:
        operands = list(op.operands)
        op.erase()
        for v in operands:  # their producers may have become dead or foldable
            owner = getattr(v, "op", None)
            if owner is not None:
                self._notify(owner)


class RewriteLimitError(RuntimeError):
    pass


def apply_patterns_greedily(target: Module | Func, patterns: Iterable[Pattern],
                            max_rewrites: int = 100_000) -> bool:
    """Apply `patterns` to every op of `target` until none applies; True iff anything changed."""
    by_root: dict[str | None, list[Pattern]] = {}
    for p in patterns:
        by_root.setdefault(p.root, []).append(p)
    generic = by_root.get(None, [])
    funcs = list(target.funcs.values()) if isinstance(target, Module) else [target]

    worklist: list[Operation] = []
    queued: set[int] = set()

    def push(op: Operation) -> None:
        if id(op) not in queued:
            queued.add(id(op))
            worklist.append(op)

    for f in funcs:
        for op in reversed(list(f.walk())):  # a stack: pop visits ops top-down
            push(op)
    rewriter = Rewriter(push)
    rewrites = 0
    while worklist:
        op = worklist.pop()
        queued.discard(id(op))
        if enclosing_func(op) is None or op.name not in OPDEFS:
            continue  # erased meanwhile (or unknown: the verifier reports it)
        for p in by_root.get(op.name, []) + generic:
            if p.match_and_rewrite(op, rewriter):
                rewrites += 1
                log.debug("%s rewrote %s", p.name, op.name)
                if rewrites > max_rewrites:
                    raise RewriteLimitError(f"no fixpoint after {max_rewrites} rewrites (last: {p.name} on "
                                            f"{op.name}); two patterns probably undo each other")
                if enclosing_func(op) is not None:
                    push(op)  # it may match again in its new form
                break
    return rewrites > 0
