"""Building fused kernels: scalar bodies for kernel.elementwise / kernel.reduce from tensor-level ops."""
from __future__ import annotations

import heapq
from collections.abc import Callable

import numpy as np

from ..builder import Builder
from ..core import Block, Operation, OpResult, Region, Value
from ..opdef import lookup
from ..reductions import REDUCTIONS
from ..types import ScalarType
from ..verifier import describe_op
from .constants import CONSTANT_OP, VALUE_ATTR
from .dce import is_pure
from .fuse_plan import is_scalar_constant, reduce_axes, source

CAST_OP = "cast"


class FusionError(RuntimeError):
    """Fusion would change the meaning of an op (a rule disagreement or a broken invariant)."""


class BodyBuilder:
    """The scalar body of one kernel: ops in `computes` are recomputed, every other value is read
    through a block argument (one per distinct tensor, after stripping broadcast views)."""

    def __init__(self, computes: Callable[[Operation], bool]):
        self.computes = computes
        self.block = Block()
        self.builder = Builder(self.block)
        self.operands: list[Value] = []
        self.scalars: dict[Value, Value] = {}

    def scalar(self, value: Value) -> Value:
        """The scalar standing for tensor `value` in the body, emitting what it needs (iteratively:
        chains may be longer than Python's recursion limit)."""
        stack = [source(value)]
        while stack:
            v = stack[-1]
            if v in self.scalars:
                stack.pop()
                continue
            op = v.op if isinstance(v, OpResult) else None
            if op is not None and self.computes(op):
                pending = [s for s in map(source, op.operands) if s not in self.scalars]
                if pending:
                    stack.extend(reversed(pending))
                    continue
                self._emit(op)
            elif op is not None and is_scalar_constant(op):
                self._emit_constant(op)
            else:
                self._read(v)
            stack.pop()
        return self.scalars[source(value)]

    def _emit(self, op: Operation) -> None:
        operands = [self.scalars[source(v)] for v in op.operands]
        new = self.builder.create(op.name, operands, dict(op.attrs))
        new.loc = op.loc
        for r, s in zip(op.results, new.results):
            if s.type.dtype != r.type.dtype:
                raise FusionError(f"{describe_op(op)}: on scalars its dtype rule gives {s.type.dtype}, on tensors "
                                  f"{r.type.dtype}; fusing it would change its result")
            self.scalars[r] = s

    def _emit_constant(self, op: Operation) -> None:
        value = np.asarray(op.attrs[VALUE_ATTR]).reshape(())
        new = self.builder.create(CONSTANT_OP, [], {**op.attrs, VALUE_ATTR: value},
                                  result_types=[ScalarType(op.result.type.dtype)])
        self.scalars[op.result] = new.result

    def _read(self, v: Value) -> None:
        self.scalars[v] = self.block.add_arg(ScalarType(v.type.dtype))
        self.operands.append(v)

    def finish(self, *values: Value) -> Region:
        self.builder.yield_(*values)
        return Region([self.block])

    def op_names(self) -> list[str]:
        return [op.name for op in self.block.ops if op.name != "yield"]


def build_elementwise(outputs: list[Value], computes: Callable[[Operation], bool]) -> tuple[Operation, list[str]]:
    """kernel.elementwise computing `outputs` (tensors of one shape); returns it and its body's op names."""
    body = BodyBuilder(computes)
    ys = [body.scalar(o) for o in outputs]
    names = body.op_names()
    shape = tuple(outputs[0].type.shape)
    attrs = lookup("kernel.elementwise").full_attrs({"shape": shape})
    op = Operation("kernel.elementwise", body.operands, [o.type for o in outputs], attrs, [body.finish(*ys)],
                   loc=outputs[-1].op.loc)
    return op, names


def build_reduce(red: Operation, computes: Callable[[Operation], bool]) -> tuple[Operation, list[str]]:
    """kernel.reduce for reduction `red`, its operand's producers in the body."""
    (x,) = red.operands
    dtype = red.result.type.dtype
    body = BodyBuilder(computes)
    y = body.scalar(x)
    # numpy accumulates sums and products of bool and int32 in int64: the body casts before combining
    if REDUCTIONS[red.name].body_in_result_dtype and y.type.dtype != dtype:
        y = body.builder.op(CAST_OP, y, dtype=dtype)
    names = body.op_names()
    attrs = lookup("kernel.reduce").full_attrs({
        "shape": tuple(x.type.shape), "axes": reduce_axes(red), "kind": red.name,
        "keepdims": bool(red.attrs.get("keepdims", False)), "dtype": dtype,
    })
    op = Operation("kernel.reduce", body.operands, [red.result.type], attrs, [body.finish(y)], loc=red.loc)
    return op, names


def stable_topological_order(ops: list[Operation]) -> list[Operation]:
    """`ops` reordered so that every op follows the producers of the values it (or its body) reads,
    and ops with effects stay in their order; otherwise the given order is kept."""
    pos = {op: i for i, op in enumerate(ops)}
    users: dict[Operation, list[Operation]] = {op: [] for op in ops}
    indegree = dict.fromkeys(ops, 0)
    last_effect: Operation | None = None
    for op in ops:
        producers = {v.op for inner in op.walk() for v in inner.operands
                     if isinstance(v, OpResult) and v.op in pos and v.op is not op}
        if not is_pure(op):
            if last_effect is not None:
                producers.add(last_effect)
            last_effect = op
        for p in producers:
            users[p].append(op)
        indegree[op] = len(producers)
    ready = [pos[op] for op in ops if indegree[op] == 0]
    heapq.heapify(ready)
    out: list[Operation] = []
    while ready:
        op = ops[heapq.heappop(ready)]
        out.append(op)
        for u in users[op]:
            indegree[u] -= 1
            if indegree[u] == 0:
                heapq.heappush(ready, pos[u])
    if len(out) != len(ops):
        raise FusionError("the fused function has a dependency cycle between kernels")
    return out
