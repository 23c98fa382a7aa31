"""Interpreter, Transformer, replace_pattern and ShapeProp."""
from __future__ import annotations

import operator

import numpy as np
import pytest

import aot.nn as nn
import aot.nn.functional as F
from aot import fx
from aot.fx.passes.shape_prop import ShapeProp, TensorMetadata
from aot.fx.subgraph_rewriter import Match, replace_pattern

RNG = np.random.default_rng(4)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.bias = nn.Parameter(RNG.standard_normal(3))

    def forward(self, x, k=2.0):
        h = self.lin(x) + self.bias
        return np.tanh(h).sum(axis=-1) * k


@pytest.fixture
def gm():
    return fx.symbolic_trace(Model())


def test_run_matches_module(gm):
    x = RNG.standard_normal((5, 4))
    np.testing.assert_allclose(fx.Interpreter(gm).run(x), gm(x))
    np.testing.assert_allclose(fx.Interpreter(gm).run(x, 3.0), gm(x, 3.0))


def test_run_with_initial_env_skips_seeded_nodes(gm):
    x = RNG.standard_normal((5, 4))
    lin = gm.graph.find_nodes(op="call_module", target="lin")[0]
    seeded = np.zeros((5, 3))
    out = fx.Interpreter(gm).run(x, initial_env={lin: seeded})
    np.testing.assert_allclose(out, np.tanh(seeded + gm.bias).sum(axis=-1) * 2.0)


def test_enable_io_processing_flag():
    gm = fx.symbolic_trace(lambda d: d["a"] * 2, concrete_args={"d": {"a": fx.PH}})
    assert fx.Interpreter(gm).run({"a": 3}) == 6
    assert fx.Interpreter(gm).run(3, enable_io_processing=False) == [6]


def test_opcode_methods_are_dispatched_and_overridable(gm):
    seen = []

    class Spy(fx.Interpreter):
        def run_node(self, n):
            seen.append(n.op)
            return super().run_node(n)

        def call_method(self, target, args, kwargs):
            assert target == "sum"
            return super().call_method(target, args, kwargs) + 100

    x = RNG.standard_normal((2, 4))
    np.testing.assert_allclose(Spy(gm).run(x), gm(x) + 200)
    assert set(seen) == {"placeholder", "call_module", "get_attr", "call_function", "call_method", "output"}


def test_placeholder_default_and_missing_argument(gm):
    interp = fx.Interpreter(gm)
    with pytest.raises(RuntimeError, match="Expected positional argument for parameter x"):
        interp.run()


def test_fetch_attr_and_args_kwargs_helpers(gm):
    interp = fx.Interpreter(gm)
    assert interp.fetch_attr("lin.weight") is gm.lin.weight
    with pytest.raises(RuntimeError, match="nonexistent target"):
        interp.fetch_attr("lin.nope")
    x_node, k_node = gm.graph.find_nodes(op="placeholder")
    interp.env = {x_node: 1.0, k_node: 2.0}
    mul = gm.graph.find_nodes(op="call_function", target=operator.mul)[0]
    sum_node = mul.args[0]
    interp.env[sum_node] = 5.0
    assert interp.fetch_args_kwargs_from_env(mul) == ((5.0, 2.0), {})
    assert interp.map_nodes_to_values(({"k": k_node}, [x_node]), mul) == ({"k": 2.0}, [1.0])
    with pytest.raises(RuntimeError, match="nonexistent value"):
        interp.map_nodes_to_values((gm.graph.output_node(),), mul)


def test_boxed_run_clears_the_list(gm):
    x = RNG.standard_normal((2, 4))
    args = [x]
    out = fx.Interpreter(gm).boxed_run(args)
    assert args == [] and out.shape == (2,)


def test_garbage_collect_values_frees_dead_values(gm):
    sizes = []

    class Watch(fx.Interpreter):
        def run_node(self, n):
            sizes.append(len(self.env))
            return super().run_node(n)

    x = RNG.standard_normal((2, 4))
    Watch(gm, garbage_collect_values=True).run(x)
    kept = list(sizes)
    sizes.clear()
    Watch(gm, garbage_collect_values=False).run(x)
    assert max(kept) < max(sizes) and sizes[-1] == len(gm.graph.nodes) - 1


def test_errors_name_the_failing_node():
    gm = fx.symbolic_trace(lambda x: np.reshape(x, (7,)))
    with pytest.raises(ValueError) as info:
        fx.Interpreter(gm).run(np.zeros(3))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    if hasattr(info.value, "add_note"):
        assert "While executing %reshape" in notes


def test_transformer_identity_copies_graph_and_meta(gm):
    for n in gm.graph.nodes:
        n.meta["origin"] = n.name
    new = fx.Transformer(gm).transform()
    assert isinstance(new, fx.GraphModule) and new.graph is not gm.graph
    assert [n.op for n in new.graph.nodes] == [n.op for n in gm.graph.nodes]
    assert [n.meta.get("origin") for n in new.graph.nodes if n.op not in ("placeholder", "output")] == \
        [n.name for n in gm.graph.nodes if n.op not in ("placeholder", "output")]
    x = RNG.standard_normal((3, 4))
    np.testing.assert_allclose(new(x), gm(x))
    np.testing.assert_allclose(new(x, 5.0), gm(x, 5.0))


def test_transformer_rewrites_calls():
    class ReluToSigmoid(fx.Transformer):
        def call_function(self, target, args, kwargs):
            return super().call_function(F.sigmoid if target is F.relu else target, args, kwargs)

    gm = fx.symbolic_trace(lambda x: F.relu(x) * 2)
    new = ReluToSigmoid(gm).transform()
    x = RNG.standard_normal(5)
    np.testing.assert_allclose(new(x), F.sigmoid(x) * 2)


def test_replace_pattern_matches_structure_not_names():
    def f(a, b, c):
        t = np.sin(a) + np.cos(b)  # match
        u = np.sin(c) + np.cos(c)  # match (one input bound twice)
        v = np.cos(a) + np.sin(b)  # different structure
        return t * u * v

    def pattern(x, y):
        return np.sin(x) + np.cos(y)

    def replacement(x, y):
        return np.sin(x) - np.cos(y)

    gm = fx.symbolic_trace(f)
    matches = replace_pattern(gm, pattern, replacement)
    assert len(matches) == 2 and all(isinstance(m, Match) for m in matches)
    assert all(m.anchor.target is operator.add for m in matches)
    assert {p.op for m in matches for p in m.nodes_map} == {"placeholder", "call_function"}
    a, b, c = RNG.random(4), RNG.random(4), RNG.random(4)
    want = (np.sin(a) - np.cos(b)) * (np.sin(c) - np.cos(c)) * (np.cos(a) + np.sin(b))
    np.testing.assert_allclose(gm(a, b, c), want)
    gm.graph.lint()


def test_replace_pattern_skips_matches_whose_internals_escape():
    def f(a):
        s = np.sin(a)
        return s + np.cos(a), s  # `s` is used outside the would-be match

    gm = fx.symbolic_trace(f)
    assert replace_pattern(gm, lambda x, y: np.sin(x) + np.cos(y), lambda x, y: x) == []


def test_replace_pattern_non_overlapping():
    def f(a):
        return np.exp(np.exp(np.exp(a)))

    gm = fx.symbolic_trace(f)
    matches = replace_pattern(gm, lambda x: np.exp(np.exp(x)), lambda x: np.sqrt(x))
    assert len(matches) == 1
    a = RNG.random(3)
    np.testing.assert_allclose(gm(a), np.exp(np.sqrt(a)))


def test_replace_pattern_with_method_and_kwargs():
    def f(a):
        return a.sum(axis=0) + a.sum(axis=1).sum()

    gm = fx.symbolic_trace(f)
    matches = fx.replace_pattern(gm, lambda x: x.sum(axis=0), lambda x: np.max(x, axis=0))
    assert len(matches) == 1  # axis=1 does not match axis=0
    a = RNG.random((3, 3))
    np.testing.assert_allclose(gm(a), a.max(axis=0) + a.sum(axis=1).sum())


def test_shape_prop_records_shape_dtype_and_nested_values():
    def f(x):
        y = x.astype(np.float32) * 2
        return np.split(y, 2), y.sum(), y.T

    gm = fx.symbolic_trace(f)
    x = RNG.standard_normal((4, 6))
    out = ShapeProp(gm).propagate(x)
    assert len(out) == 3
    metas = {n.name: n.meta.get("tensor_meta") for n in gm.graph.nodes}
    assert metas["astype"].dtype == np.float32 and metas["astype"].shape == (4, 6)
    assert metas["astype"].stride == (6, 1) and metas["astype"].memory_format == "C"
    assert [m.shape for m in metas["split"]] == [(2, 6), (2, 6)]
    assert metas["sum_1"].shape == () and metas["sum_1"].dtype == np.float32
    assert metas["getattr_1"].memory_format == "F" and metas["getattr_1"].stride == (1, 6)
    assert isinstance(metas["x"], TensorMetadata)
    assert gm.graph.find_nodes(op="call_method", target="sum")[0].meta["type"] is np.float32
