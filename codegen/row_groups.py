"""Row groups: consecutive kernels that depend on each other only row by row run block of rows by
block of rows, so that each block stays in cache between them.

A row softmax or a layer norm is a reduction feeding elementwise ops feeding another reduction
over the same rows: after fusion, 3-5 kernels that each stream the whole input from memory. When
every kernel of a run of consecutive top-level ops iterates over the same leading dims (the
"rows": dims no kernel of the run reduces), and every value one of them produces and another
reads is indexed by those rows (not broadcast across them), row block [s, e) of the last kernel
needs only row block [s, e) of the others. The host then runs the run as one launch over the rows
(`Host.begin_group` / `end_group`): each thread takes a chunk of rows and, block by block, runs
every kernel of the run on the block's rows, in program order, while the block (BLOCK_ELEMENTS
elements per stream) is in L1/L2. Every output element is computed by the same kernel code as
before, from the same inputs, so results are bit for bit those of the kernels run one after the
other, for any thread count.

Kept out of groups: kernels that report errors through their argument block (the entry reads the
flag right after the launch), rows of more than ROW_LIMIT elements (no block would fit in cache,
and the kernels' own threading over a row's elements is lost), and dims that are not static.
"""

from __future__ import annotations

import math

from ir.opdef import OPDEFS
from ir.passes.fuse_plan import ROW_ELEMENTS
from ir.records import record
from ir.symbols import is_static

from .graph_ops import single_op_body
from .kernels.common import reports_errors

ROW_LIMIT = ROW_ELEMENTS  # elements per row of any kernel of a group (256 KB of float64); fusion
# stores row-local values on the same condition (ir/passes/fuse_plan.py FusionOptions.row_limit)
BLOCK_ELEMENTS = 1 << 10  # elements per stream a block of rows holds (4 KB of float32: with the
# group's other streams, in L1 between its kernels). Alternating fresh processes against 1 << 12: a
# float32 layer norm (4096, 1024) 10% faster, softmax 8% ((32768, 128): 21%), log_softmax and rows
# of 8192 equal to 4% faster; 1 << 14 had run them 10-25% slower than 1 << 12


@record(frozen=True)
class RowGroup:
    """Ops [start, stop) of the entry run as one launch over their `lead` leading dims (`shape`:
    the first op's iteration shape), `block_rows` rows at a time."""

    start: int
    stop: int
    shape: tuple
    lead: int
    block_rows: int


def plan(ops: list) -> list[RowGroup]:
    """The row groups of an entry's top-level ops (a group has at least two kernels, one of them a
    reduction)."""
    groups, i = [], 0
    while i < len(ops):
        g = _grow(ops, i)
        if g is None:
            i += 1
        else:
            groups.append(g)
            i = g.stop
    return groups


def _grow(ops: list, start: int) -> RowGroup | None:
    """The longest group starting at ops[start], or None."""
    first = _iteration(ops[start])
    if first is None:
        return None
    shape, lead = first
    produced: set[int] = set()
    shapes, reductions = [], 0
    for op in ops[start:]:
        it = _iteration(op)
        if it is None:
            break
        s, op_lead = it
        common = _row_local(op, produced, s, _common_lead(shape, s, min(lead, op_lead)))
        rows = [_row_elements(t, common) for t in (*shapes, s)] if common else [None]
        if None in rows or max(rows) > ROW_LIMIT:
            break
        lead = common
        shapes.append(s)
        reductions += op.name == "kernel.reduce"
        produced.update(id(r) for r in op.results)
    if len(shapes) < 2 or not reductions:
        return None
    widest = max(_row_elements(t, lead) for t in shapes)
    return RowGroup(start, start + len(shapes), tuple(shape), lead, max(1, BLOCK_ELEMENTS // max(widest, 1)))


def _iteration(op) -> tuple[tuple, int] | None:
    """(iteration shape, leading dims it does not reduce) of a kernel that may join a group."""
    if op.name == "kernel.elementwise":
        shape = tuple(op.attrs["shape"])
        lead, body = len(shape), op.regions[0].block
    elif op.name == "kernel.reduce":
        shape, body = tuple(op.attrs["shape"]), op.regions[0].block
        lead = min((a % len(shape) for a in op.attrs["axes"]), default=len(shape)) if shape else 0
    elif op.name in OPDEFS and OPDEFS[op.name].has("elementwise") and not op.regions:
        shape = tuple(op.results[0].type.shape)  # a lone elementwise op: its one-op kernel
        lead, body = len(shape), single_op_body(op)
    else:
        return None
    if lead == 0 or reports_errors(body):
        return None
    return shape, lead


def _common_lead(a: tuple, b: tuple, limit: int) -> int:
    n = 0
    while n < min(limit, len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _row_local(op, produced: set, shape: tuple, lead: int) -> int:
    """How many of the first `lead` dims every group-produced operand of `op` is indexed by as
    `op` is (the same dims, not broadcast): 0 when one is broadcast across the rows."""
    for v in op.operands:
        if id(v) not in produced:
            continue
        vs = tuple(v.type.shape)
        if len(vs) != len(shape):  # broadcast along leading dims: every row reads all of it
            return 0
        lead = min(lead, _common_lead(vs, shape, lead))
    return lead


def _row_elements(shape: tuple, lead: int) -> int | None:
    """Elements of one row (the dims after the first `lead`), or None when not static."""
    rest = shape[lead:]
    if not all(is_static(d) for d in rest):
        return None
    return math.prod(int(d) for d in rest)
