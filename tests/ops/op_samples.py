"""One small sample application per op: operand shapes and attributes, shared by the ops tests.

`attr_variants` lists extra attribute sets to try (for ops whose result dtype is an attribute).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

import aot.ops  # noqa: F401  (registers the rows)
from ir import dtypes as D
from ir.opdef import OPDEFS

DTYPES = D.ALL_DTYPES


@dataclass
class Sample:
    shapes: list[tuple]
    attrs: dict[str, Any] = field(default_factory=dict)
    attr_variants: list[dict[str, Any]] = field(default_factory=lambda: [{}])

    def arrays(self, dtypes) -> list[np.ndarray]:
        return [np.ones(s, dt.numpy) for s, dt in zip(self.shapes, dtypes)]


DTYPE_VARIANTS = [{"dtype": d} for d in DTYPES]

SPECIAL: dict[str, Sample] = {
    "round": Sample([(2, 3)], {"decimals": 1}),
    "cast": Sample([(2, 3)], attr_variants=DTYPE_VARIANTS),
    "where": Sample([(2, 3), (2, 3), (3,)]),
    "clip": Sample([(2, 3), (1, 3), (3,)]),
    "argmax": Sample([(2, 3)], {"axis": 1}),
    "argmin": Sample([(2, 3)], {"axis": 0, "keepdims": True}),
    "broadcast_to": Sample([(3,)], {"shape": (2, 3)}),
    "reshape": Sample([(2, 3)], {"shape": (3, 2)}),
    "transpose": Sample([(2, 3)], {"perm": (1, 0)}),
    "expand_dims": Sample([(2, 3)], {"axes": (0, 3)}),
    "squeeze": Sample([(1, 3)], {"axes": (0,)}),
    "flip": Sample([(2, 3)], {"axes": (1,)}),
    "slice": Sample([(2, 5)], {"starts": (0, 4), "stops": (2, None), "steps": (1, -2)}),
    "concatenate": Sample([(2, 3), (1, 3)], {"axis": 0}),
    "stack": Sample([(2, 3), (2, 3)], {"axis": 1}),
    "pad": Sample([(2, 3)], {"pad_width": ((1, 0), (0, 2)), "value": 0}),
    "take": Sample([(2, 3), (4,)], {"axis": 1}),
    "sort": Sample([(2, 3)], {"axis": 1}),
    "argsort": Sample([(2, 3)], {"axis": 0}),
    "searchsorted": Sample([(3,), (2, 3)], attr_variants=[{}, {"side": "right"}]),
    "take_along_axis": Sample([(2, 3), (2, 1)], {"axis": 1}),
    "constant": Sample([], {"value": np.arange(6.0).reshape(2, 3)}, DTYPE_VARIANTS),
    "full": Sample([], {"shape": (2, 3), "value": 1}, DTYPE_VARIANTS),
    "full_like": Sample([(2, 3)], {"value": 1}, [{"dtype": None}, *DTYPE_VARIANTS]),
    "iota": Sample([], {"n": 5}, DTYPE_VARIANTS),
    "matmul": Sample([(2, 3), (3, 4)]),
    "fft": Sample([(4, 6)], {"axis": 1}, [{"inverse": False}, {"inverse": True, "n": 4, "norm": "ortho"}]),
    "rfft": Sample([(4, 6)], {"axis": 1}, [{}, {"n": 5, "norm": "forward"}]),
    "irfft": Sample([(4, 6)], {"axis": 0}, [{}, {"n": 7}]),
    # the everyday numpy rows (aot/ops/scatter.py, signal.py, arrays.py)
    "bincount": Sample([(6,), (6,)], {"length": 3}),
    "require": Sample([(2, 3), ()], {"status": "EMPTY_MAXIMUM"}),
    "scatter": Sample([(5,), (3,), (3,)], {}, [{}, {"kind": "sum"}, {"kind": "max", "unique": True}]),
    "correlate1d": Sample([(5,), (3,)], {"left": 1, "right": 1}),
    "diagonal": Sample([(3, 4)], {"offset": 1, "axis1": 0, "axis2": 1}),
    "scan": Sample([(2, 3)], {"kind": "sum", "axis": 1},
                   [{}, {"kind": "max"}, {"kind": "any", "axis": 0}, {"kind": "sub", "axis": 0}, {"kind": "div"}]),
    # numpy.linalg's factorisations (aot/ops/linalg_kernels.py): the sample arrays are ones, so the ops
    # that refuse singular matrices take 1 x 1 ones
    "det": Sample([(2, 3, 3)]),
    "slogdet": Sample([(2, 3, 3)]),
    "inv": Sample([(3, 1, 1)]),
    "solve": Sample([(2, 1, 1), (1, 3)]),
    "cholesky": Sample([(2, 1, 1)], attr_variants=[{"upper": False}, {"upper": True}]),
    "qr": Sample([(4, 3)], attr_variants=[{"mode": "reduced"}, {"mode": "complete"}]),
    "eigh": Sample([(2, 3, 3)], attr_variants=[{"uplo": "L"}, {"uplo": "U"}]),
    "eigvalsh": Sample([(3, 3)], attr_variants=[{"uplo": "L"}, {"uplo": "U"}]),
    "svd": Sample([(2, 4, 3)], attr_variants=[{"full_matrices": True}, {"full_matrices": False}]),
    "svdvals": Sample([(3, 4)]),
    # order statistics and partitions (aot/ops/selection_ops.py), one-pass histograms (histogram.py)
    "select_kth": Sample([(2, 5), (3,)], {"axis": 1}),
    "partition": Sample([(2, 5)], {"kth": (1, -1), "axis": 1}),
    "argpartition": Sample([(5, 2)], {"kth": (2,), "axis": 0}),
    "histogram_uniform": Sample([(6,), (4,), (), (), (), (), (), (), (), ()]),
    "histogram_edges": Sample([(6,), (4,), (6,)]),
    # values[mask] cut or padded to size= (aot/ops/compaction.py)
    "compact": Sample([(4, 2), (4,), ()], {"size": 3}, [{}, {"size": 6}, {"size": 0}]),
    "eig": Sample([(2, 3, 3)]),  # aot/ops/linalg_eig.py
    "eigvals": Sample([(3, 3)]),
}


def sample(name: str) -> Sample:
    if name in SPECIAL:
        return SPECIAL[name]
    d = OPDEFS[name]
    if d.has("reduction"):
        return Sample([(2, 3)], {"axes": (1,)}, [{}, {"axes": (0, 1), "keepdims": True}, {"axes": ()}])
    if d.arity == 1:
        return Sample([(2, 3)])
    if d.arity == 2:
        return Sample([(2, 3), (3,)])
    raise KeyError(f"no sample for op {name!r}")


def resolve_numpy(name: str):
    """np.fft.rfft for 'fft.rfft'."""
    obj = np
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj
