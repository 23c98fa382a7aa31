"""Property: every pass (and the default pipeline) keeps the interpreter's results on random functions.

Functions come from `tests/ir/strategies.py::random_functions()`. Before the passes run, each function
is enriched so that the passes have work to do: some arguments are frozen into constants (fold),
some are wrapped in identities such as `neg(neg(x))`, `x * 1` and `x + -0.0` (canonicalize), and
ops are duplicated (CSE); the leftovers exercise DCE. The module is verified after every pass.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aot.ops  # noqa: F401  (registers the core ops)
from ir import Builder, Operation
from ir.interp import run_func
from ir.passes import DEFAULT_PIPELINE, run_pipeline
from ir.verifier import verify
from tests.ir.strategies import random_functions

# rtol per dtype: folding evaluates references on different shapes, where numpy may pick other SIMD loops
RTOL = {"f": {4: 2e-6, 8: 1e-13}, "c": {8: 2e-6, 16: 1e-13}}


def assert_results_close(got, want, context: str) -> None:
    assert len(got) == len(want), context
    for i, (g, w) in enumerate(zip(got, want)):
        msg = f"{context}: result #{i}"
        assert g.dtype == w.dtype and g.shape == w.shape, f"{msg}: {g.dtype}{g.shape} != {w.dtype}{w.shape}"
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w, err_msg=msg)
        else:
            rtol = RTOL[w.dtype.kind][w.dtype.itemsize]
            np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, equal_nan=True, err_msg=msg)


def _constant(b: Builder, value, dtype):
    return b.constant(value=np.asarray(value, dtype=dtype.numpy), dtype=dtype)


def _identity_wrapped(b: Builder, x, how: int):
    """x through an identity the canonicalizer should remove (or, where none applies, x itself)."""
    dt = x.type.dtype
    if how == 0 and not dt.is_bool:
        return b.neg(b.neg(x))
    if how == 1 and not dt.is_complex:
        return b.mul(_constant(b, 1, dt), x)
    if how == 2:
        return b.add(x, _constant(b, -0.0 if dt.is_inexact else 0, dt))
    return b.reshape(x, shape=x.type.shape)


def enrich(m, inputs, data) -> None:
    """Give every pass something to do, keeping @f's meaning (the inputs stay valid)."""
    f = m.funcs["f"]
    b = Builder(f.body, 0)
    for arg, value in zip(f.args, inputs):
        users = [(op, i) for op, i in arg.uses]
        if not users:
            continue
        choice = data.draw(st.integers(0, 4), label=f"treat {arg.name_hint}")
        if choice == 0 and arg.type.is_static:
            new = _constant(b, value, arg.type.dtype)
        else:
            new = _identity_wrapped(b, arg, choice - 1)
        for op, i in users:
            op.set_operand(i, new)
    for op in list(f.body.ops[b.index:]):
        if op is not f.body.terminator and data.draw(st.booleans(), label=f"duplicate {op.name}"):
            twin = Operation(op.name, list(op.operands), op.result_types, dict(op.attrs), loc=op.loc)
            f.body.insert(f.body.ops.index(op) + 1, twin)
            ret = f.body.terminator
            for i, v in enumerate(ret.operands):
                if v in op.results:
                    ret.set_operand(i, twin.results[v.index])


PIPELINES = ["canonicalize", "fold", "cse", "dce", ",".join(DEFAULT_PIPELINE)]


@pytest.mark.parametrize("pipeline", PIPELINES)
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=random_functions(max_ops=8), data=st.data())
def test_passes_keep_interpreter_results(pipeline, case, data):
    m, inputs = case
    enrich(m, inputs, data)
    verify(m)
    f = m.funcs["f"]
    want = run_func(f, *inputs)
    for name in pipeline.split(","):
        run_pipeline(m, name, verify_each=True)
        assert_results_close(run_func(f, *inputs), want, f"after {name} (in {pipeline})")
