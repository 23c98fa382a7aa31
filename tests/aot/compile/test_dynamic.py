"""Dynamic shapes in aot.compile: automatic dynamic, dynamic=True/False, guards, recompiles."""
from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aot


def chain(x, y):
    return np.sin(x) * np.exp(-y) + x * y / (1 + y * y)


def test_stream_of_lengths_costs_two_compiles():
    f = aot.compile(chain)
    rng = np.random.default_rng(0)
    for n in range(1000, 1100):
        x, y = rng.random(n), rng.random(n)
        np.testing.assert_allclose(f(x, y), chain(x, y), rtol=1e-13)
    info = f.cache_info()
    assert info["compiles"] == 2, info
    assert info["guard_failures"] == 1 and info["hits"] == 98


def test_dynamic_true_is_symbolic_from_the_start():
    f = aot.compile(chain, dynamic=True)
    for n in (2, 3, 17, 1000):
        x = np.linspace(0, 1, n)
        np.testing.assert_allclose(f(x, x), chain(x, x), rtol=1e-13)
    assert f.cache_info()["compiles"] == 1
    guards = f.cache_info()["entries"][0]["guards"]
    assert "2 <= L['x'].size()[0]" in guards and "L['y'].size()[0] == L['x'].size()[0]" in guards


def test_sizes_zero_and_one_specialise():
    f = aot.compile(lambda x: x * 2.0, dynamic=True)
    for n in (5, 1, 0, 9):
        np.testing.assert_array_equal(f(np.ones(n)), np.full(n, 2.0))
    assert f.cache_info()["compiles"] == 3  # symbolic (>= 2), 1, 0


def test_broadcasting_against_a_size_one_dim_is_specialised():
    f = aot.compile(lambda x, y: x + y, dynamic=True)
    a = np.ones((4, 3))
    np.testing.assert_array_equal(f(a, np.ones((1, 3))), a + 1)
    np.testing.assert_array_equal(f(a, np.ones((4, 3))), a + 1)
    assert f.cache_info()["compiles"] == 2


def test_duck_sizing_shares_symbols_and_guards_equality():
    f = aot.compile(lambda x, y: x[:, None] * y[None, :], dynamic=True)
    x, y = np.arange(3.0), np.arange(3.0) + 1
    np.testing.assert_array_equal(f(x, y), x[:, None] * y[None, :])
    y5 = np.arange(5.0)
    np.testing.assert_array_equal(f(x, y5), x[:, None] * y5[None, :])  # guard y == x fails: recompile
    assert f.cache_info()["compiles"] == 2


def test_dynamic_false_compiles_per_shape_then_falls_back_once():
    f = aot.compile(lambda x: x + 1, dynamic=False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in range(2, 14):
            np.testing.assert_array_equal(f(np.zeros(n)), np.ones(n))
    assert f.cache_info()["compiles"] == 8
    assert len([x for x in w if "cache size limit" in str(x.message)]) == 1
    assert f.cache_info()["eager_reason"].startswith("cache size limit")


def test_rank_and_dtype_changes_recompile_and_stay_correct():
    f = aot.compile(lambda x: (x * x).sum(axis=-1))
    for a in (np.ones((3, 4)), np.ones((3, 4), np.float32), np.ones(5), np.arange(6).reshape(2, 3),
              np.ones((2, 2, 2))):
        got = f(a)
        want = (a * a).sum(axis=-1)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want)


def test_recompiles_log_names_the_failing_guard(caplog):
    f = aot.compile(lambda x: x - 1, dynamic=False)
    f(np.ones(20))
    logger = logging.getLogger("aot.recompiles")
    old = logger.level
    logger.setLevel(logging.INFO)
    try:
        with caplog.at_level(logging.INFO, logger="aot.recompiles"):
            f(np.ones(21))
    finally:
        logger.setLevel(old)
    assert "L['x'].shape == (20,)" in caplog.text and "got float64[21]" in caplog.text


def test_guard_on_branch_recompiles_on_the_other_side():
    def f(x):
        if x.shape[0] > 10:
            return x.sum()
        return x.max()

    cf = aot.compile(f, dynamic=True)
    for n in (20, 30, 5, 6, 40):
        x = np.arange(float(n))
        assert cf(x) == f(x)
    assert cf.cache_info()["compiles"] == 2
    texts = [g for e in cf.cache_info()["entries"] for g in e["guards"]]
    assert any("11 <=" in g or "10 <" in g for g in texts), texts


def test_symbolic_mean_var_slices_and_reshape_serve_many_sizes():
    def f(x):
        d = x[1:] - x[:-1]
        return d.mean(), x.var(ddof=1), x.reshape(-1, 2).sum(axis=1)

    cf = aot.compile(f, dynamic=True)
    for n in (4, 10, 64):
        x = np.random.default_rng(n).random(n)
        for got, want in zip(cf(x), f(x)):
            np.testing.assert_allclose(got, want, rtol=1e-12)
    assert cf.cache_info()["compiles"] == 1


def _branchy(x, y):
    if x.shape[0] > y.shape[0]:
        return x[: y.shape[0]] + y
    if x.shape[0] == y.shape[0]:
        return x * y
    return np.concatenate([x, y]).sum(keepdims=True)


_compiled_branchy = aot.compile(_branchy, options={"cache_size_limit": 64})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), min_size=1, max_size=6))
def test_guards_never_admit_stale_code(shapes):
    for n, m in shapes:
        x, y = np.arange(float(n)), np.arange(float(m)) + 0.5
        np.testing.assert_array_equal(_compiled_branchy(x, y), _branchy(x, y))
