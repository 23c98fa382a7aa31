"""Fusion planning: which elementwise ops are recomputed where they are read, and which share a loop nest.

Vocabulary of the fusion pass (see fuse.py for the rewrite itself):
- A *kernel op* is an elementwise op or a reduction of the function body. After fusion each one is
  computed inside the body of a kernel.elementwise or kernel.reduce.
- Kernel ops read their operands through *broadcast views* (broadcast_to, expand_dims of leading
  dims): numpy's right-aligned broadcasting to the kernel shape expresses those, so the kernel reads
  the view's operand instead (`source`). Other views (transpose, slice, ...) stay outside as
  operands: codegen reads them as strided views.
- A broadcast view is *absorbed* when only kernel ops read it (directly or through absorbed views),
  which includes a view nobody reads: fusion erases it with the kernel ops. The plan treats it as
  reading nothing, so it must not outlive an inlined producer it views.
- An elementwise op is *inlined* when it is never stored: each kernel that reads it recomputes it
  from its *cone* (its operands, through inlined producers). Otherwise it is *materialised*: the
  kernel of its group writes it and other kernels read it.
- A *group* is a set of elementwise ops of one shape that run in one loop nest. Groups grow by
  producer/consumer pairs as long as the graph of kernels and other ops stays acyclic.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

from ..core import Func, Operation, OpResult, Value
from ..opdef import OPDEFS, may_raise
from ..records import record
from ..reductions import REDUCTIONS
from ..symbols import dims_equal
from ..types import TensorType
from .constants import CONSTANT_OP


@record(frozen=True, slots=True)
class FusionOptions:
    """Recomputation limits, in units of one cheap scalar op (see recompute_cost).

    recompute_limit: a value read by several kernels (a reduction and an elementwise consumer, say)
        is recomputed in each when its cone costs at most this; softmax's `exp(x - m)` costs 9.
    broadcast_limit: a value read over a larger (broadcast) iteration space repeats its work for
        every broadcast element, so only very cheap cones are recomputed there.
    row_limit: the limit for a value whose every reader runs over the same rows (its reductions
        reduce only trailing dims of static rows of at most ROW_ELEMENTS): codegen runs those
        kernels as one row group (codegen/row_groups.py), so a stored value is written and read
        back while its rows are in cache, which costs less than computing it twice. A row
        softmax's exp(x - m) is then computed once: 1024x1024 float32 561 -> 378 us.
    """

    recompute_limit: int = 12
    broadcast_limit: int = 2
    row_limit: int = 4


# elements of a row that a row group keeps in cache (codegen/row_groups.py runs no longer rows)
ROW_ELEMENTS = 1 << 15


def recompute_cost(op: Operation) -> int:
    """Cost of recomputing one scalar `op`, relative to an add: its row's `cost` (1 for other ops)."""
    d = OPDEFS.get(op.name)
    return d.cost if d is not None else 1


def _always(op: Operation) -> bool:
    return True


def _leading_expand(op: Operation) -> bool:
    axes = sorted(op.attrs["axes"])
    return axes == list(range(len(axes)))


# view op -> whether this instance only adds leading dims or broadcasts (numpy right-aligned rules)
BROADCAST_VIEWS: dict[str, Callable[[Operation], bool]] = {
    "broadcast_to": _always,
    "expand_dims": _leading_expand,
}


# --- classification ---------------------------------------------------------------------------------

def is_elementwise(op: Operation) -> bool:
    d = OPDEFS.get(op.name)
    return (d is not None and d.has("elementwise") and not op.regions
            and all(isinstance(r.type, TensorType) for r in op.results))


def is_reduction(op: Operation) -> bool:
    d = OPDEFS.get(op.name)
    return (d is not None and d.has("reduction") and op.name in REDUCTIONS and len(op.operands) == 1
            and len(op.results) == 1 and isinstance(op.operands[0].type, TensorType))


def is_broadcast_view(op: Operation) -> bool:
    pred = BROADCAST_VIEWS.get(op.name)
    return pred is not None and len(op.operands) == 1 and pred(op)


def is_scalar_constant(op: Operation) -> bool:
    """A one-element constant: kernel bodies hold it as a scalar constant instead of reading it."""
    if op.name != CONSTANT_OP or len(op.results) != 1:
        return False
    t = op.result.type
    return isinstance(t, TensorType) and t.is_static and t.numel() == 1


def source(v: Value) -> Value:
    """`v` without the broadcast views in front of it: what a kernel reads to get `v`."""
    while isinstance(v, OpResult) and is_broadcast_view(v.op):
        v = v.op.operands[0]
    return v


def same_shape(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(dims_equal(x, y) for x, y in zip(a, b))


def iteration_shape(op: Operation) -> tuple:
    """The loop nest a kernel op runs in: its result for elementwise ops, its operand for reductions."""
    return tuple(op.operands[0].type.shape) if is_reduction(op) else tuple(op.results[0].type.shape)


def _row_local(shape: tuple, readers: list[Operation]) -> bool:
    """Whether kernels of iteration shape `shape` reading a value all run over its rows: some
    reduce trailing dims, leaving at least one leading dim, and the rows are static and short
    enough for a row group (FusionOptions.row_limit)."""
    suffixes = [a for a in (reduce_axes(r) for r in readers if is_reduction(r)) if a]
    if not suffixes or not all(isinstance(d, int) for d in shape):
        return False
    first = min(a[0] for a in suffixes)
    rank = len(shape)
    if first == 0 or any(a != tuple(range(a[0], rank)) for a in suffixes):
        return False
    row = 1
    for d in shape[first:]:
        row *= d
    return row <= ROW_ELEMENTS


def reduce_axes(op: Operation) -> tuple[int, ...]:
    """Normalised reduced axes of a reduction (`axes`, or `axis` for argmax/argmin)."""
    axes = op.attrs["axes"] if "axes" in op.attrs else (op.attrs["axis"],)
    rank = len(op.operands[0].type.shape)
    return tuple(sorted({a % rank for a in axes})) if rank else ()


# --- the plan ---------------------------------------------------------------------------------------

class FusionPlan:
    """Inline decisions and groups for one function body (the IR is not changed)."""

    def __init__(self, func: Func, options: FusionOptions):
        self.options = options
        self.ops: list[Operation] = list(func.body.ops)
        self.index = {op: i for i, op in enumerate(self.ops)}
        self.kernel_ops = {op for op in self.ops if is_elementwise(op) or is_reduction(op)}
        self.reductions = [op for op in self.ops if is_reduction(op)]
        self.absorbed_views = {op for op in self.ops
                               if is_broadcast_view(op) and self._kernel_readers(op.result) is not None}
        self.inline: set[Operation] = set()
        self._cost: dict[Operation, int] = {}
        for op in self.ops:  # producers first: a cone's cost depends on its producers' decisions
            if is_elementwise(op) and self._can_inline(op):
                self.inline.add(op)
        self._sources: dict[Operation, frozenset[Operation]] = {}
        self._unions = _Units(self.ops, {op: self._deps(op) for op in self.ops})
        self._grow_groups()

    # --- inline decisions ----------------------------------------------------------------------
    def _producer(self, v: Value) -> Operation | None:
        """The op of this body that a kernel reading `v` depends on (None: a function argument)."""
        s = source(v)
        return s.op if isinstance(s, OpResult) and s.op in self.index else None

    def cone_cost(self, op: Operation) -> int:
        if op not in self._cost:
            cost = recompute_cost(op)
            for v in op.operands:
                p = self._producer(v)
                if p is not None and p in self.inline:
                    cost += self.cone_cost(p)
            self._cost[op] = cost
        return self._cost[op]

    def _may_raise(self, op: Operation) -> bool:
        """Whether computing `op` (with its inlined producers) can hit an error numpy raises for
        (an integer power's negative exponent, which elementwise kernels report)."""
        if may_raise(op):
            return True
        return any(p in self.inline and self._may_raise(p) for p in map(self._producer, op.operands) if p)

    def _kernel_readers(self, v: Value) -> list[Operation] | None:
        """Kernel ops reading `v` (through broadcast views); None if anything else reads it."""
        out: list[Operation] = []
        for user in v.users:
            if user in self.kernel_ops:
                out.append(user)
            elif user in self.index and is_broadcast_view(user):
                inner = self._kernel_readers(user.result)
                if inner is None:
                    return None
                out.extend(inner)
            else:
                return None
        return list({id(op): op for op in out}.values())

    def _can_inline(self, op: Operation) -> bool:
        if len(op.results) != 1:
            return False
        readers = self._kernel_readers(op.result)
        if readers is None or self._kept_for_error(op):
            return False  # returned, or read by an opaque op or a strided view: it must exist in memory
        if any(is_reduction(r) for r in readers) and self._may_raise(op):
            return False  # reduction bodies have no error path: compute it in an elementwise kernel
        cost = self.cone_cost(op)
        shape = op.result.type.shape
        wider = [r for r in readers if not same_shape(iteration_shape(r), shape)]
        if wider and cost > self.options.broadcast_limit:
            return False
        same = [r for r in readers if r not in wider]
        kernels = len(wider) + sum(1 for r in same if is_reduction(r)) + any(is_elementwise(r) for r in same)
        row_local = not wider and _row_local(shape, same)
        limit = self.options.row_limit if row_local else self.options.recompute_limit
        return kernels <= 1 or cost <= limit

    # --- dependencies between kernels ------------------------------------------------------------
    def mem_sources(self, v: Value) -> frozenset[Operation]:
        """Ops whose stored results a kernel reads to compute `v`."""
        p = self._producer(v)
        if p is None or is_scalar_constant(p):
            return frozenset()
        if p not in self.inline:
            return frozenset((p,))
        if p not in self._sources:
            self._sources[p] = frozenset().union(*(self.mem_sources(o) for o in p.operands))
        return self._sources[p]

    def _deps(self, op: Operation) -> Iterable[Operation]:
        if op in self.kernel_ops:
            return frozenset().union(*(self.mem_sources(v) for v in op.operands))
        used = [v for inner in op.walk() for v in inner.operands]
        return {v.op for v in used if isinstance(v, OpResult) and v.op in self.index and v.op is not op}

    # --- groups -----------------------------------------------------------------------------------
    def _grow_groups(self) -> None:
        for c in self.ops:
            if not is_elementwise(c):
                continue
            for v in c.operands:
                p = self._producer(v)
                if (p is not None and is_elementwise(p)
                        and same_shape(source(v).type.shape, c.results[0].type.shape)):
                    self._unions.merge_if_acyclic(p, c)

    def groups(self) -> list[list[Operation]]:
        """Member lists (program order) of every group of elementwise ops."""
        by_root: dict[Operation, list[Operation]] = {}
        for op in self.ops:
            if is_elementwise(op):
                by_root.setdefault(self._unions.find(op), []).append(op)
        return list(by_root.values())

    def outputs(self, members: list[Operation]) -> list[Value]:
        """The results of a group that something outside it reads from memory."""
        inside = set(members)
        return [r for op in members if op not in self.inline for r in op.results
                if self._read_outside(r, inside) or self._kept_for_error(op)]

    def _kept_for_error(self, op: Operation) -> bool:
        """A dead op that may raise is still computed (numpy raises even when the value is unused)."""
        return not op.has_uses() and may_raise(op)

    def _read_outside(self, v: Value, inside: set[Operation]) -> bool:
        for user in v.users:
            if user in inside:
                continue
            if user in self.index and is_broadcast_view(user):
                if self._read_outside(user.result, inside):
                    return True
                continue
            return True
        return False


class _Units:
    """Union-find over the ops of a body, merging two units only if no path leads from one to the
    other through a third: the merged unit must still have a place in a topological order."""

    def __init__(self, ops: list[Operation], deps: dict[Operation, Iterable[Operation]]):
        self.parent = {op: op for op in ops}
        self.members = {op: [op] for op in ops}
        self.succ: dict[Operation, set[Operation]] = {op: set() for op in ops}
        for op, ds in deps.items():
            for d in ds:
                self.succ[d].add(op)

    def find(self, op: Operation) -> Operation:
        root = op
        while self.parent[root] is not root:
            root = self.parent[root]
        while self.parent[op] is not root:  # path compression
            self.parent[op], op = root, self.parent[op]
        return root

    def _unit_succ(self, unit: Operation) -> set[Operation]:
        return {self.find(s) for m in self.members[unit] for s in self.succ[m]} - {unit}

    def _reaches_indirectly(self, src: Operation, dst: Operation) -> bool:
        stack = [u for u in self._unit_succ(src) if u is not dst]
        seen = set(stack)
        while stack:
            for nxt in self._unit_succ(stack.pop()):
                if nxt is dst:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return False

    def merge_if_acyclic(self, a: Operation, b: Operation) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra is rb:
            return True
        if self._reaches_indirectly(ra, rb) or self._reaches_indirectly(rb, ra):
            return False
        if len(self.members[ra]) < len(self.members[rb]):
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.members[ra] += self.members.pop(rb)
        return True
