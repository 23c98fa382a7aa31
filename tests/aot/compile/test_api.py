"""aot.compile's contract: decorator forms, backends, caching and guards, graph breaks, modules, pytrees."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import aot
from aot.compiler.capture import GraphBreak

BACKENDS = ["eager", "llvm"]


def chain(x, y):
    return np.sin(x) * np.exp(-y) + x * y / (1 + y * y)


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def test_decorator_forms(backend):
    @aot.compile
    def f(x):
        return x * 2

    @aot.compile(backend=backend)
    def g(x):
        return x + 1

    x = np.arange(5.0)
    np.testing.assert_array_equal(f(x), x * 2)
    np.testing.assert_array_equal(g(x), x + 1)
    assert aot.compiler.compile is aot.compile or callable(aot.compiler.compile)


def test_chain_matches_numpy(backend):
    f = aot.compile(chain, backend=backend)
    rng = np.random.default_rng(0)
    for dt, tol in ((np.float64, 1e-13), (np.float32, 2e-6)):
        x, y = rng.uniform(-3, 3, (2, 1000)).astype(dt)
        got = f(x, y)
        assert got.dtype == chain(x, y).dtype
        np.testing.assert_allclose(got, chain(x, y), rtol=tol, atol=tol)


def test_cache_hits_and_recompiles(backend):
    f = aot.compile(chain, backend=backend, dynamic=False)
    a = np.ones((4, 8))
    f(a, a)
    f(a + 1, a)
    info = f.cache_info()
    assert info["compiles"] == 1 and info["hits"] == 1
    f(np.ones((5, 8)), np.ones((5, 8)))
    info = f.cache_info()
    assert info["compiles"] == 2 and info["guard_failures"] == 1
    assert any("shape == (5, 8)" in g for g in info["entries"][1]["guards"])


def test_dtype_change_recompiles_and_is_correct(backend):
    f = aot.compile(lambda x: x * 3 + 1, backend=backend)
    for dt in (np.float64, np.float32, np.int32, np.int64, np.complex128):
        x = np.arange(6).astype(dt)
        got = f(x)
        want = x * 3 + 1
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want)
    assert f.cache_info()["compiles"] == 5


def test_python_scalars_are_guarded(backend):
    f = aot.compile(lambda x, k: x * k, backend=backend)
    x = np.arange(4.0)
    np.testing.assert_array_equal(f(x, 2.0), x * 2.0)
    np.testing.assert_array_equal(f(x, 3.0), x * 3.0)
    assert f.cache_info()["compiles"] == 2


def test_branch_on_shape_is_allowed(backend):
    def f(x):
        if x.shape[0] > 3:
            return x.sum(axis=0)
        return x * 2

    cf = aot.compile(f, backend=backend)
    a, b = np.ones((5, 2)), np.ones((2, 2))
    np.testing.assert_array_equal(cf(a), f(a))
    np.testing.assert_array_equal(cf(b), f(b))


def data_dependent(x):
    if x.sum() > 0:
        return x
    return -x


def test_data_dependent_control_flow_fullgraph_raises(backend):
    f = aot.compile(data_dependent, backend=backend, fullgraph=True)
    with pytest.raises(GraphBreak, match="test_api.py:[0-9]+: +if x.sum"):
        f(np.ones(3))


def test_data_dependent_control_flow_falls_back_with_one_warning(backend):
    f = aot.compile(data_dependent, backend=backend)
    x = np.arange(3.0) - 5
    with pytest.warns(RuntimeWarning, match="eagerly"):
        np.testing.assert_array_equal(f(x), data_dependent(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(f(-x), data_dependent(-x))


def test_pytree_inputs_and_outputs(backend):
    def f(d, pair, scale=2.0):
        a, b = pair
        return {"sum": d["x"] + a, "prod": (d["x"] * b * scale, None), "k": 7}

    cf = aot.compile(f, backend=backend)
    x, a, b = np.arange(3.0), np.ones(3), np.full(3, 2.0)
    got = cf({"x": x}, (a, b))
    want = f({"x": x}, (a, b))
    np.testing.assert_array_equal(got["sum"], want["sum"])
    np.testing.assert_array_equal(got["prod"][0], want["prod"][0])
    assert got["prod"][1] is None and got["k"] == 7


def test_module_parameters_are_inputs(backend):
    lin = aot.nn.Linear(4, 3)
    cf = aot.compile(lin, backend=backend)
    x = np.random.default_rng(1).standard_normal((5, 4))
    np.testing.assert_allclose(cf(x), lin(x), rtol=1e-12)
    lin.weight[...] = 0.5  # in-place update: seen without recompiling
    np.testing.assert_allclose(cf(x), lin(x), rtol=1e-12)
    assert cf.cache_info()["compiles"] == 1


def test_cache_size_limit_falls_back_once(backend):
    f = aot.compile(lambda x: x + 1, backend=backend, dynamic=False, options={"cache_size_limit": 2})
    with pytest.warns(RuntimeWarning, match="cache size limit"):
        for n in range(1, 6):
            np.testing.assert_array_equal(f(np.ones(n + 1)), np.ones(n + 1) + 1)
    assert f.cache_info()["compiles"] == 2


def test_custom_backend_receives_graph_and_example_inputs():
    seen = {}

    def my_backend(gm, example_inputs):
        seen["gm"], seen["inputs"] = gm, example_inputs
        return gm.forward

    f = aot.compile(chain, backend=my_backend)
    x = np.ones(3)
    np.testing.assert_allclose(f(x, x), chain(x, x))
    assert len(seen["inputs"]) == 2 and seen["inputs"][0] is x
    assert any(n.op == "call_function" for n in seen["gm"].graph.nodes)


def test_register_and_list_backends():
    @aot.compiler.register_backend(name="test_identity_backend")
    def _b(gm, example_inputs):
        return gm.forward

    assert {"eager", "llvm", "test_identity_backend"} <= set(aot.compiler.list_backends())
    f = aot.compile(lambda x: x - 1, backend="test_identity_backend")
    np.testing.assert_array_equal(f(np.ones(2)), np.zeros(2))
    with pytest.raises(ValueError, match="unknown backend"):
        aot.compile(lambda x: x, backend="nope")


def test_is_compiling_and_reset(backend):
    seen = []

    def f(x):
        seen.append(aot.compiler.is_compiling())
        return x + 1

    cf = aot.compile(f, backend=backend)
    cf(np.ones(2))
    assert seen == [True] and not aot.compiler.is_compiling()
    aot.compiler.reset()
    cf(np.ones(2))
    assert cf.cache_info()["compiles"] == 1 and seen == [True, True]


def test_bad_input_raises_clear_errors(backend):
    f = aot.compile(lambda x, y: x + y, backend=backend)
    with pytest.raises(ValueError, match="broadcast"):
        f(np.ones(3), np.ones(4))
    with pytest.raises(TypeError):
        f(np.ones(3), "a string")
    with pytest.raises(TypeError, match="not supported"):
        f(np.ones(3, dtype=np.float16), np.ones(3))


SCALE = 3


def test_global_scalar_change_is_seen_after_warm_calls(backend):
    global SCALE
    f = aot.compile(lambda x: x * SCALE, backend=backend)
    x = np.arange(3.0)
    try:
        for _ in range(3):  # warm: later calls take the fast path
            np.testing.assert_array_equal(f(x), x * 3)
        SCALE = 5
        np.testing.assert_array_equal(f(x), x * 5)
        assert f.cache_info()["compiles"] == 2
        assert any("global SCALE == 5" in g for g in f.cache_info()["entries"][1]["guards"])
    finally:
        SCALE = 3


def test_hot_path_counts_hits_per_entry_and_follows_the_last_entry():
    """__call__ tries the entry the last fast call hit first; cache_info still counts each hit
    against its own entry."""
    f = aot.compile(lambda x: x * 2.0, dynamic=False)  # two static entries
    a, b = np.ones(4), np.ones(5)
    for _ in range(3):
        f(a)
    for _ in range(4):
        f(b)
    f(a)
    info = f.cache_info()
    assert info["compiles"] == 2 and info["hits"] == 6
    assert [e["hits"] for e in info["entries"]] == [3, 3]
    np.testing.assert_array_equal(f(b), b * 2.0)
    f.reset()
    assert f.cache_info()["hits"] == 0
    np.testing.assert_array_equal(f(a), a * 2.0)


def test_dynamic_fast_path_checks_sizes_and_leaves_the_rest_to_the_native_call():
    f = aot.compile(lambda x, y: x * y + 1.0, dynamic=True)
    x = np.arange(6.0)
    for _ in range(3):
        f(x, x)
    fast = f._fast
    assert fast is not None
    assert fast(x[::2], x[1::2]) is None  # the entry reads x and y as C-contiguous
    np.testing.assert_array_equal(f(x[::2], x[1::2]), x[::2] * x[1::2] + 1.0)  # an entry for any layout
    f(x[::2], x[1::2])
    fast = f._entries[-1].fast
    np.testing.assert_array_equal(fast(x[::2], x[1::2]), x[::2] * x[1::2] + 1.0)
    np.testing.assert_array_equal(fast(x[::-1], x), x[::-1] * x + 1.0)
    for args in ((x, x[:5]), (x, x.astype(np.float32)), (x, x.reshape(2, 3)), (x, list(x)), (x,), (x[:1], x[:1])):
        assert fast(*args) is None, args  # then the general path: guards, recompiles, numpy's errors
    with pytest.raises(ValueError):
        f(x, x[:5])
