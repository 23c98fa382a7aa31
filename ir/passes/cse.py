"""Common-subexpression elimination over pure ops, with scoped tables.

Two ops are equal when they have the same name, operands (by identity), attributes, result types
and, for region-carrying ops, structurally equal bodies. A value defined in a block is visible to
the blocks of nested non-isolated regions, so those inherit the enclosing table; kernel bodies are
isolated and start a fresh one.
"""
from __future__ import annotations

import struct
from collections import ChainMap
from typing import Any

import numpy as np

from ..core import Block, Func, Operation, Value
from ..opdef import OPDEFS
from ..verifier import ISOLATED_TRAITS
from .base import Pass, register_pass
from .dce import is_pure


class _Unhashable(Exception):
    pass


def attr_key(v: Any) -> Any:
    """A hashable key that is equal only for attributes that mean the same thing.

    Floats are keyed by their bits (so 0.0 and -0.0 differ, and NaN equals itself) and every scalar
    by its type (so 1, 1.0 and True differ); arrays by dtype, shape and bytes."""
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return (type(v).__name__, v)
    if isinstance(v, float):
        return ("float", struct.pack("<d", v))
    if isinstance(v, complex):
        return ("complex", struct.pack("<dd", v.real, v.imag))
    if isinstance(v, (np.ndarray, np.generic)):
        a = np.asarray(v)
        return ("ndarray", a.dtype.str, a.shape, a.tobytes())
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, tuple(attr_key(e) for e in v))
    if isinstance(v, dict):
        return ("dict", tuple(sorted((k, attr_key(e)) for k, e in v.items())))
    try:
        hash(v)
    except TypeError:
        raise _Unhashable from None
    return (type(v).__name__, v)  # DType, sympy expressions: frozen and hashable


def _region_key(op: Operation) -> tuple:
    """Structural form of `op`'s regions: inner values are numbered by position, outer ones by id."""
    local: dict[int, tuple] = {}

    def ref(v: Value) -> Any:
        return local.get(id(v), ("outer", id(v)))

    out = []
    for ri, region in enumerate(op.regions):
        for bi, block in enumerate(region.blocks):
            for ai, a in enumerate(block.args):
                local[id(a)] = ("arg", ri, bi, ai)
            out.append(tuple(str(a.type) for a in block.args))
            for oi, inner in enumerate(block.ops):
                out.append(_op_key(inner, ref))
                for r in inner.results:
                    local[id(r)] = ("res", ri, bi, oi, r.index)
    return tuple(out)


def _op_key(op: Operation, ref) -> tuple:
    attrs = tuple(sorted((k, attr_key(v)) for k, v in op.attrs.items()))
    regions = _region_key(op) if op.regions else ()
    results = tuple(str(r.type) for r in op.results)
    return (op.name, tuple(ref(v) for v in op.operands), attrs, results, regions)


def _cse_block(block: Block, table: ChainMap) -> int:
    merged = 0
    for op in list(block.ops):
        isolated = bool(OPDEFS.get(op.name) and OPDEFS[op.name].traits & ISOLATED_TRAITS)
        for region in op.regions:
            for b in region.blocks:
                merged += _cse_block(b, ChainMap() if isolated else table.new_child())
        if not is_pure(op) or not op.results:
            continue
        try:
            key = _op_key(op, id)
        except _Unhashable:
            continue
        prior = table.get(key)
        if prior is None:
            table[key] = op
            continue
        for r, p in zip(op.results, prior.results):
            r.replace_all_uses_with(p)
        op.erase()
        merged += 1
    return merged


@register_pass
class CommonSubexpressionElimination(Pass):
    name = "cse"

    def run_on_func(self, func: Func) -> bool:
        return _cse_block(func.body, ChainMap()) > 0
