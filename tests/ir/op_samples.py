"""Sample operands and attributes for registered ops, found from the registry alone.

Attribute candidates are keyed by attribute *name* (axes, axis, keepdims, dtype, ...), never by op
name, so a new op row is covered as soon as its attributes use a known name. `sample_instance` tries
operand types and attribute candidates in a fixed order and returns the first combination whose
types the op's rules infer (deterministic, for golden files); `tests/ir/strategies.py` draws from
the same candidates at random.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np

import ir
from ir import dtypes as D
from ir.opdef import REQUIRED, MissingRule, OpDef, OpError, infer_result_types
from ir.types import TensorType
from tests.ops.op_samples import SPECIAL as OPS_SAMPLES

SAMPLE_DTYPES = (D.float32, D.float64, D.int64, D.int32, D.complex64, D.complex128, D.bool_)
SAMPLE_SHAPES = ((2, 3), (4,), (2, 3, 4), (), (3, 3))  # square last: the linalg factorisations


def _subsets(rank: int) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = []
    for k in range(1, rank + 1):
        out += list(itertools.combinations(range(rank), k))
    return out + [()]


def attr_candidates(name: str, default: Any, types: list) -> list[Any]:
    """Values to try for attribute `name` given the operand types; [] when nothing is known."""
    t0 = types[0] if types and isinstance(types[0], TensorType) else None
    rank = t0.rank if t0 is not None else 0
    shape = t0.shape if t0 is not None else ()
    static = t0 is not None and t0.is_static
    numel = int(np.prod(shape)) if static else None
    table: dict[str, list[Any]] = {
        "axes": _subsets(rank) + [p for p in itertools.permutations(range(rank)) if rank > 1],
        "axis": [rank - 1, 0, -1] if rank else [0],
        "keepdims": [True, False],
        "dtype": [D.float64, D.float32, D.int32, D.complex64, D.bool_, D.int64, D.complex128],
        "decimals": [1, 0, 2],
        "n": [shape[-1] if shape else 4, None, 8],
        "norm": ["ortho", "backward", "forward"],
        "perm": [tuple(reversed(range(rank)))],
        "pad_width": [tuple((1, 0) for _ in range(rank))],
        "value": [np.arange(6, dtype=np.float32).reshape(2, 3) / 4, np.array([1 + 2j, -0.5j], np.complex64),
                  np.array([[True, False]]), np.arange(3, dtype=np.int64), 1.5, 2, 0.0],
        "starts": [(0,) * rank, (1,) * rank],
        "stops": [tuple(shape), (-1,) * rank],
        "steps": [(1,) * rank, (2,) * rank],
        "shape": ([(numel,), tuple(reversed(shape)), shape + (1,)] if static else [shape]),
        "newshape": ([(numel,), tuple(reversed(shape))] if static else [shape]),
        "kind": ["sum", "max", "sub"],  # scan kinds (ir/scans.py)
        "length": [3],  # bincount's output length
        "kth": [(1,), (0, -1)],  # partition's positions
        "size": [2],  # compact's result length
        "offset": [1, 0], "axis1": [0], "axis2": [1],  # diagonal
        "status": ["ALL_NAN_SLICE"],  # require's entry status (ir/status.py)
    }
    cands = list(table.get(name, []))
    if isinstance(default, bool):
        cands = [not default]
    if default is not REQUIRED and not any(_same(default, c) for c in cands):
        cands.append(default)
    return cands


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return False
    return type(a) is type(b) and a == b


def testable_ops() -> list[OpDef]:
    """The op rows of aot.ops that are built from operands and attributes alone (sorted by name).

    Ops that other tests register on the fly are left out, so that the result does not depend on
    which test modules ran before."""
    from aot.ops import ALL_OPS

    return [d for d in (ir.OPDEFS[n] for n in sorted(ALL_OPS))
            if d.infer is None and d.dtype_rule is not None and d.shape_rule is not None]


def operand_counts(d: OpDef) -> list[int]:
    return [d.arity] if d.arity is not None else [max(d.min_arity, 2), max(d.min_arity, 1)]


def attr_combinations(d: OpDef, types: list, limit: int = 64) -> Iterator[dict[str, Any]]:
    names = list(d.attrs)
    lists = [attr_candidates(k, d.attrs[k], types) for k in names]
    if any(not c for c in lists):
        return
    for combo in itertools.islice(itertools.product(*lists), limit):
        yield dict(zip(names, combo))


def infers(name: str, types: list, attrs: dict[str, Any]) -> list | None:
    try:
        return infer_result_types(name, types, attrs)
    except (OpError, MissingRule, TypeError, ValueError, ZeroDivisionError):
        return None


def sample_instance(d: OpDef) -> tuple[list, dict[str, Any]] | None:
    """The first (operand types, attrs) the op's rules accept, trying common types first, then (for
    operands of different shapes) the shapes of the op's tests/ops sample in one dtype."""
    for n in operand_counts(d):
        for shape in SAMPLE_SHAPES:
            for dt in SAMPLE_DTYPES:
                types = [TensorType(dt, shape)] * n
                for attrs in attr_combinations(d, types):
                    if infers(d.name, types, attrs) is not None:
                        return types, attrs
    special = OPS_SAMPLES.get(d.name)
    for dt in SAMPLE_DTYPES if special is not None else ():
        types = [TensorType(dt, tuple(s)) for s in special.shapes]
        if infers(d.name, types, dict(special.attrs)) is not None:
            return types, dict(special.attrs)
    return None


def all_ops_module() -> tuple[ir.Module, list[str]]:
    """One function per testable registered op, applied to sample operands; also the ops that no
    sample fits (the caller decides whether that is an error)."""
    m = ir.Module("all_ops")
    missing = []
    for d in testable_ops():
        inst = sample_instance(d)
        if inst is None:
            missing.append(d.name)
            continue
        types, attrs = inst
        f, b = ir.new_func(m, d.name.replace(".", "_"), types)
        op = b.create(d.name, list(f.args), attrs)
        b.ret(*op.results)
    return m, missing
