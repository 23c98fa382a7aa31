"""Scan (accumulate) kinds: how the `scan` row (aot/ops/scan.py) combines along its axis.

numpy's accumulate is a sequential fold, out[0] = x[0] and out[i] = op(out[i-1], x[i]). A scan
`kind` names op in one of two ways, never both for one op:

- a reduction record of ir/reductions.py (sum, prod, max, min, any, all): the record's ufunc is
  the numpy meaning, and codegen takes the combine from the record's rule (codegen/kernels/
  reduce.py COMBINE), so reductions and scans cannot disagree;
- a binary elementwise row (sub, div, pow, hypot, bitwise_xor, ...) whose loop keeps the dtype:
  the combine is that row applied to (acc, x), a kernel body (`combine_body`) lowered like any
  fused elementwise body.

Where the combine is exactly associative on a dtype (`exactly_associative`), codegen may scan long
axes in blocks on threads: the result is the same, bit for bit, as the sequential fold. Float sums
and products are not: they stay sequential, in numpy's order.
"""
from __future__ import annotations

from .core import Block, Operation
from .dtypes import DType
from .opdef import OPDEFS, OpError
from .reductions import REDUCTIONS, ReduceKind
from .types import ScalarType

# elementwise rows exactly associative on every dtype they accept (and, or, xor of bits)
_ASSOCIATIVE_ROWS = frozenset({"bitwise_and", "bitwise_or", "bitwise_xor", "logical_xor"})


def record(kind: str) -> ReduceKind | None:
    """The reduction record a scan kind names (None: an elementwise row's name)."""
    r = REDUCTIONS.get(kind)
    return r if r is not None and r.ufunc is not None and not r.index else None


_ROWS_CACHE: dict[int, dict[str, str]] = {}


def record_rows() -> dict[str, str]:
    """Elementwise row -> the record whose combine it is (add -> sum, maximum -> max, ...): a scan
    spells those by the record. (Cached per registry size: rows are only ever added.)"""
    cached = _ROWS_CACHE.get(len(OPDEFS))
    if cached is not None:
        return cached
    out = {}
    for name, r in REDUCTIONS.items():
        if record(name) is None:
            continue
        for op, d in list(OPDEFS.items()):
            if d.has("elementwise") and d.arity == 2 and r.ufunc.__name__ in d.numpy_names:
                out[op] = name
    _ROWS_CACHE[len(OPDEFS)] = out
    return out


def check_kind(op: str, kind, dt: DType) -> None:
    """OpError unless `kind` scans operands of dtype `dt` into `dt`."""
    r = record(kind) if isinstance(kind, str) else None
    if r is not None:
        if kind in ("any", "all") and not dt.is_bool:
            raise OpError(f"{op}: kind {kind!r} scans bool operands, got {dt}")
        if kind in ("sum", "prod") and dt.is_bool:
            raise OpError(f"{op}: kind {kind!r} is not defined for bool (numpy's bool add/multiply are "
                          f"logical: kinds 'any'/'all')")
        return
    d = OPDEFS.get(kind) if isinstance(kind, str) else None
    if d is None or not d.has("elementwise") or d.arity != 2:
        raise OpError(f"{op}: kind must be a reduction record ({', '.join(_record_names())}) or a binary "
                      f"elementwise op, got {kind!r}")
    if kind in record_rows():
        raise OpError(f"{op}: kind {kind!r} is spelled by its reduction record {record_rows()[kind]!r}")
    try:
        out = d.dtype_rule([dt, dt])
    except OpError as e:
        raise OpError(f"{op}: kind {kind!r}: {e}") from None
    if out != dt:
        raise OpError(f"{op}: kind {kind!r} maps ({dt}, {dt}) to {out}; a scan keeps its dtype")


def _record_names() -> list[str]:
    return [k for k in REDUCTIONS if record(k) is not None]


def combine_body(kind: str, dt: DType) -> Block:
    """The combine step of an elementwise kind as a kernel body: (acc, x) -> kind(acc, x)."""
    block = Block([ScalarType(dt), ScalarType(dt)])
    op = Operation(kind, list(block.args), [ScalarType(dt)], {})
    block.append(op)
    block.append(Operation("yield", list(op.results), []))
    return block


def exactly_associative(kind: str, dt: DType) -> bool:
    """Whether any grouping of the fold gives the sequential result bit for bit: integer sums and
    products (modular), max/min (the earliest of the best elements, the first nan), any/all and
    the bitwise rows. Float sums and products round differently when regrouped."""
    if record(kind) is not None:
        return not (kind in ("sum", "prod") and dt.is_inexact)
    return kind in _ASSOCIATIVE_ROWS
