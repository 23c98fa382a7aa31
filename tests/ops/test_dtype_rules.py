"""Every op's dtype rule against numpy, over all operand dtype combinations of the dialect.

The expectation is computed by running numpy (the numpy function itself where one exists, and the
row's reference): where numpy refuses or answers with a dtype outside the dialect (float16, int8,
uint), the rule must raise OpError naming the op.
"""
from __future__ import annotations

import itertools
import re
import warnings

import numpy as np
import pytest

from aot.ops import ALL_OPS
from ir import dtypes as D
from ir.opdef import OPDEFS, OpError
from .op_samples import DTYPES, resolve_numpy, sample


def _run(fn, *args, **kwargs):
    """The result's numpy dtype, or None when numpy refuses."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            out = fn(*args, **kwargs)
            if isinstance(out, tuple):  # a multi-result op
                return tuple(np.asarray(o).dtype for o in out)
            return np.asarray(out).dtype
        except (TypeError, ValueError, IndexError, np.exceptions.DTypePromotionError):
            return None


def _dialect_dtype(npdt):
    if isinstance(npdt, tuple):  # a multi-result op: one dtype per result
        parts = tuple(_dialect_dtype(d) for d in npdt)
        return None if None in parts else parts
    try:
        return None if npdt is None else D.from_numpy(npdt)
    except D.UnsupportedDTypeError:
        return None


def _numpy_function(name: str):
    """The numpy callable to check against directly: attribute-free elementwise ops and matmul."""
    d = OPDEFS[name]
    if d.numpy_names and not d.attrs and (d.has("elementwise") or name == "matmul"):
        return resolve_numpy(d.numpy_names[0])
    return None


def _dtype_combos(n: int):
    """Every combination for up to 3 operands; for more (a kernel's operands), the first two over
    every dtype with the others float64, then each other operand varied alone."""
    if n <= 3:
        return list(itertools.product(DTYPES, repeat=n))
    rest = (D.float64,) * (n - 2)
    combos = [pair + rest for pair in itertools.product(DTYPES, repeat=2)]
    for k in range(2, n):
        combos += [(D.float64,) * k + (d,) + (D.float64,) * (n - k - 1) for d in DTYPES]
    return combos


@pytest.mark.parametrize("name", ALL_OPS)
def test_dtype_rule_matches_numpy(name):
    d, s, np_fn = OPDEFS[name], sample(name), _numpy_function(name)
    checked = 0
    for dts in _dtype_combos(len(s.shapes)):
        arrays = s.arrays(dts)
        for variant in s.attr_variants:
            attrs = d.full_attrs({**s.attrs, **variant})
            ref_dt = _run(d.reference, *arrays, **attrs)
            if np_fn is not None:
                assert _run(np_fn, *arrays) == ref_dt, f"{name}{tuple(map(str, dts))}: reference disagrees"
            expected = _dialect_dtype(ref_dt)
            where = f"{name}({', '.join(map(str, dts))}) {variant}"
            if expected is None:
                with pytest.raises(OpError, match=rf"^{re.escape(name)}\b"):
                    d.dtype_rule(list(dts), **attrs)
            else:
                assert d.dtype_rule(list(dts), **attrs) == expected, where
                checked += 1
    assert checked, f"{name}: no dtype combination is valid"


def test_mixed_operands_promote_as_numpy():
    add = OPDEFS["add"].dtype_rule
    assert add([D.int32, D.float32]) == D.float64
    assert add([D.bool_, D.int32]) == D.int32
    assert add([D.float32, D.complex64]) == D.complex64
    assert OPDEFS["div"].dtype_rule([D.int32, D.int32]) == D.float64


def test_refusals_name_op_and_dtypes():
    with pytest.raises(OpError, match=r"sin: .*\(bool\)"):
        OPDEFS["sin"].dtype_rule([D.bool_])
    with pytest.raises(OpError, match=r"floordiv: .*c64, f32"):
        OPDEFS["floordiv"].dtype_rule([D.complex64, D.float32])
    with pytest.raises(OpError, match="cast: .*dtype"):
        OPDEFS["cast"].dtype_rule([D.float32], dtype="float64")
