"""make_fx in its three tracing modes."""
from __future__ import annotations

import numpy as np
import pytest

import aot
from aot.fx.experimental.proxy_tensor import make_fx, sym_size
from ir.symbols import is_static

rng = np.random.default_rng(0)


def f(x, y, k=2.0):
    d = x[1:] - x[:-1]
    return {"a": np.sin(x) * k + y, "b": x.reshape(-1, 2).mean(axis=1), "c": (d.mean(), x.var())}


def _check(gm, *args):
    got, want = gm(*args), f(*args)
    np.testing.assert_allclose(got["a"], want["a"], rtol=1e-13)
    np.testing.assert_allclose(got["b"], want["b"], rtol=1e-13)
    for g, w in zip(got["c"], want["c"]):
        np.testing.assert_allclose(g, w, rtol=1e-12)


@pytest.mark.parametrize("mode", ["real", "fake", "symbolic"])
def test_graph_of_core_ops_runs_like_the_function(mode):
    x, y = rng.random(6), rng.random(6)
    gm = make_fx(f, tracing_mode=mode)(x, y)
    targets = {getattr(n.target, "name", None) for n in gm.graph.nodes if n.op == "call_function"}
    assert {"sin", "mul", "add", "reshape", "sum", "sub", "slice"} <= targets
    assert [n.name for n in gm.graph.nodes if n.op == "placeholder"] == ["arg0", "arg1"]
    _check(gm, x, y)


def test_real_mode_keeps_real_values():
    x, y = rng.random(6), rng.random(6)
    gm = make_fx(f, tracing_mode="real")(x, y)
    sin = next(n for n in gm.graph.nodes if getattr(n.target, "name", None) == "sin")
    np.testing.assert_array_equal(sin.meta["val"], np.sin(x))


def test_fake_mode_keeps_shapes_and_dtypes():
    x, y = rng.random(6).astype(np.float32), rng.random(6).astype(np.float32)
    gm = make_fx(f, tracing_mode="fake")(x, y)
    out = gm.graph.output_node().args[0]
    assert out["b"].meta["val"].shape == (3,) and out["b"].meta["val"].dtype.name == "f32"


def test_symbolic_graph_runs_at_new_sizes():
    gm = make_fx(f, tracing_mode="symbolic")(rng.random(6), rng.random(6))
    x_meta = gm.graph.find_nodes(op="placeholder")[0].meta["val"]
    assert not is_static(x_meta.shape[0])
    assert any(n.target is sym_size for n in gm.graph.nodes)
    assert gm.meta["shape_env"] is not None
    for n in (4, 10, 100):
        _check(gm, rng.random(n), rng.random(n))


def test_symbolic_mode_records_guards_on_branches():
    def g(x):
        return x * 2 if x.shape[0] > 3 else x

    gm = make_fx(g, tracing_mode="symbolic")(np.ones(8))
    env = gm.meta["shape_env"]
    assert any("3 <" in str(gm_guard.expr) or "4 <=" in str(gm_guard.expr) or ">" in str(gm_guard.expr)
               for gm_guard in env.guards)


def test_captured_arrays_become_constants():
    w = rng.random(3)
    gm = make_fx(lambda x: x * w)(rng.random(3))
    assert any(n.op == "get_attr" for n in gm.graph.nodes)
    x = rng.random(3)
    np.testing.assert_array_equal(gm(x), x * w)


def test_bad_mode():
    with pytest.raises(ValueError, match="tracing_mode"):
        make_fx(f, tracing_mode="meta")
    assert aot.make_fx is make_fx
