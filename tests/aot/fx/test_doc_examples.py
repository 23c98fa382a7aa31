"""The torch.fx documentation's examples, translated to numpy (one test each)."""
from __future__ import annotations

import operator

import numpy as np
import pytest

import aot.nn as nn
import aot.nn.functional as F
from aot import fx
from aot.fx.passes.shape_prop import ShapeProp

RNG = np.random.default_rng(0)


def my_custom_function(x, y):
    return x * x + y * y


fx.wrap("len")
fx.wrap("my_custom_function")


class MyModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.param = nn.Parameter(RNG.random((3, 4)))
        self.linear = nn.Linear(4, 5)

    def forward(self, x):
        return np.clip(self.linear(x + self.param), 0.0, 1.0)


def test_quick_start_module():
    m = MyModule()
    gm = fx.symbolic_trace(m)
    ops = [(n.op, n.target) for n in gm.graph.nodes]
    assert ops == [("placeholder", "x"), ("get_attr", "param"), ("call_function", operator.add),
                   ("call_module", "linear"), ("call_function", np.clip), ("output", "output")]
    assert "clip = numpy.clip(linear, 0.0, 1.0)" in gm.code
    assert "linear = self.linear(add)" in gm.code
    x = RNG.standard_normal((3, 4))
    np.testing.assert_allclose(gm(x), m(x), rtol=1e-15)


def test_add_to_mul_rewrite():
    class M(nn.Module):
        def forward(self, x, y):
            return np.add(x, y) + y

    m = M()
    graph = fx.Tracer().trace(m)
    for node in graph.nodes:
        if node.op == "call_function" and node.target is np.add:
            node.target = np.multiply
    graph.lint()
    gm = fx.GraphModule(m, graph)
    x, y = RNG.standard_normal(4), RNG.standard_normal(4)
    np.testing.assert_allclose(gm(x, y), x * y + y)
    assert "numpy.multiply(x, y)" in gm.code


def test_insert_relu_after_node():
    def f(x, y):
        return np.add(x, y) * 2

    gm = fx.symbolic_trace(f)
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is np.add:
            with gm.graph.inserting_after(node):
                new_node = gm.graph.call_function(F.relu, args=(node,))
            node.replace_all_uses_with(new_node, delete_user_cb=lambda user, new=new_node: user is not new)
    gm.graph.lint()
    gm.recompile()
    x, y = RNG.standard_normal(6), RNG.standard_normal(6)
    np.testing.assert_allclose(gm(x, y), np.maximum(x + y, 0) * 2)
    assert [n.name for n in gm.graph.nodes] == ["x", "y", "add", "relu", "mul", "output"]


def relu_decomposition(x):
    return (x > 0) * x


def test_decompose_relu_with_proxies():
    class M(nn.Module):
        def forward(self, x):
            return F.relu(x) + 1.0

    m = M()
    graph = fx.Tracer().trace(m)
    assert any(n.target is F.relu for n in graph.nodes)  # one call_function node for relu
    new_graph = fx.Graph()
    env = {}
    tracer = fx.proxy.GraphAppendingTracer(new_graph)
    for node in graph.nodes:
        if node.op == "call_function" and node.target is F.relu:
            proxy_args = [fx.Proxy(env[a.name], tracer) if isinstance(a, fx.Node) else a for a in node.args]
            env[node.name] = relu_decomposition(*proxy_args).node
        else:
            env[node.name] = new_graph.node_copy(node, lambda a: env[a.name])
    gm = fx.GraphModule(m, new_graph)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert targets == [operator.gt, operator.mul, operator.add]
    x = RNG.standard_normal((3, 5))
    np.testing.assert_allclose(gm(x), m(x))


def test_shape_propagation():
    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    gm = fx.symbolic_trace(m)
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    ShapeProp(gm).propagate(x)
    metas = {n.name: n.meta["tensor_meta"] for n in gm.graph.nodes if n.op != "output"}
    assert list(metas) == ["input_1", "_0", "_1", "_2"]  # `input` would shadow the builtin
    assert metas["input_1"].shape == (5, 4) and metas["input_1"].dtype == np.float32
    assert metas["_0"].shape == (5, 8) and metas["_0"].dtype == np.float64  # float64 weights promote
    assert metas["_2"].shape == (5, 2)


def fn_neg_tanh(x):
    return np.negative(np.tanh(x))


class NegTanhSwapInterpreter(fx.Interpreter):
    def call_function(self, target, args, kwargs):
        if target is np.tanh:
            return np.negative(*args, **kwargs)
        if target is np.negative:
            return np.tanh(*args, **kwargs)
        return super().call_function(target, args, kwargs)


class NegTanhSwapTransformer(fx.Transformer):
    def call_function(self, target, args, kwargs):
        swap = {np.tanh: np.negative, np.negative: np.tanh}
        return super().call_function(swap.get(target, target), args, kwargs)


def test_neg_tanh_swap_interpreter():
    gm = fx.symbolic_trace(fn_neg_tanh)
    calls = []

    class Logging(NegTanhSwapInterpreter):
        def call_function(self, target, args, kwargs):
            calls.append(target)
            return super().call_function(target, args, kwargs)

    x = RNG.standard_normal(7)
    np.testing.assert_allclose(Logging(gm).run(x), np.tanh(np.negative(x)))
    assert calls == [np.tanh, np.negative]  # the graph order; the interpreter swapped what ran


def test_neg_tanh_swap_transformer():
    gm = fx.symbolic_trace(fn_neg_tanh)
    transformed = NegTanhSwapTransformer(gm).transform()
    targets = [n.target for n in transformed.graph.nodes if n.op == "call_function"]
    assert targets == [np.negative, np.tanh]
    x = RNG.standard_normal(7)
    np.testing.assert_allclose(transformed(x), np.tanh(-x))
    assert gm.graph is not transformed.graph and [n.target for n in gm.graph.nodes][1] is np.tanh


def test_interpreter_swap_is_observable_on_non_odd_functions():
    def f(x):
        return np.negative(np.exp(x))

    class Swap(fx.Transformer):
        def call_function(self, target, args, kwargs):
            target = {np.exp: np.negative, np.negative: np.exp}.get(target, target)
            return super().call_function(target, args, kwargs)

    x = RNG.standard_normal(5)
    np.testing.assert_allclose(Swap(fx.symbolic_trace(f)).transform()(x), np.exp(-x))


class CatSum(nn.Module):
    def forward(self, x, w1, w2):
        m1 = np.concatenate([w1, w2]).sum()
        m2 = np.concatenate([w1, w2]).sum()
        return x + np.max(m1) + np.max(m2)


def test_replace_pattern_cat_to_stack():
    def pattern(w1, w2):
        return np.concatenate([w1, w2]).sum()

    def replacement(w1, w2):
        return np.stack([w1, w2])

    gm = fx.symbolic_trace(CatSum())
    matches = fx.replace_pattern(gm, pattern, replacement)
    assert len(matches) == 2
    assert all(isinstance(m, fx.subgraph_rewriter.Match) for m in matches)
    targets = [n.target for n in gm.graph.nodes if n.op in ("call_function", "call_method")]
    assert targets.count(np.stack) == 2 and np.concatenate not in targets and "sum" not in targets
    x, w1, w2 = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal(3)
    expected = x + 2 * np.max(np.stack([w1, w2]))
    np.testing.assert_allclose(gm(x, w1, w2), expected)


def test_wrap_len_and_custom_function():
    def f(x, y):
        return my_custom_function(x, y) + len(x)

    gm = fx.symbolic_trace(f)
    calls = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert calls == [my_custom_function, len, operator.add]
    assert "len(x)" in gm.code
    x, y = RNG.standard_normal(4), RNG.standard_normal(4)
    np.testing.assert_allclose(gm(x, y), x * x + y * y + 4)
    assert "len" not in globals()  # the patch (a temporary module global) was removed after tracing
    assert len(x) == 4


def test_control_flow_trace_error():
    def func_to_trace(x):
        if x.sum() > 0:
            return F.relu(x)
        return np.negative(x)

    with pytest.raises(fx.proxy.TraceError, match="control flow") as info:
        fx.symbolic_trace(func_to_trace)
    assert "if x.sum() > 0:" in str(info.value)  # names the user's source line


def test_concrete_args_flag():
    def f(a, b):
        if b:
            return a
        return a * 2

    gm = fx.symbolic_trace(f, concrete_args={"b": False})
    assert gm(3, False) == 6
    x = RNG.standard_normal(3)
    np.testing.assert_allclose(gm(x, False), 2 * x)
    with pytest.raises(AssertionError, match="specialized"):
        gm(x, True)


def test_concrete_args_ph_dict():
    def f(x):
        out = 0
        for v in x.values():
            out += v
        return out

    gm = fx.symbolic_trace(f, concrete_args={"x": {"a": fx.PH, "b": fx.PH, "c": fx.PH}})
    assert gm({"a": 1, "b": 2, "c": 4}) == 7
    arrays = {k: RNG.standard_normal(3) for k in "abc"}
    np.testing.assert_allclose(gm(arrays), arrays["a"] + arrays["b"] + arrays["c"])
    assert "def forward(self, x):" in gm.code and "tree_flatten_spec" in gm.code


class MySpecialSubmodule(nn.Module):
    def forward(self, x):
        return np.negative(x) + 1


class WithSpecial(nn.Module):
    def __init__(self):
        super().__init__()
        self.special = MySpecialSubmodule()
        self.linear = nn.Linear(3, 3)

    def forward(self, x):
        return self.special(self.linear(x))


def test_leaf_modules():
    class MyCustomTracer(fx.Tracer):
        def is_leaf_module(self, m, module_qualified_name):
            return isinstance(m, MySpecialSubmodule) or super().is_leaf_module(m, module_qualified_name)

    m = WithSpecial()
    default = fx.symbolic_trace(m)
    assert [n.op for n in default.graph.nodes].count("call_module") == 1  # only Linear is a leaf
    graph = MyCustomTracer().trace(m)
    assert [n.target for n in graph.nodes if n.op == "call_module"] == ["linear", "special"]
    gm = fx.GraphModule(m, graph)
    x = RNG.standard_normal((2, 3))
    np.testing.assert_allclose(gm(x), m(x))


def test_dropout_training_flag():
    class DropoutRepro(nn.Module):
        def forward(self, x):
            return F.dropout(x, p=0.5, training=self.training)

    traced = fx.symbolic_trace(DropoutRepro())
    assert "training=True" in traced.code  # the flag was baked in at trace time
    traced.eval()
    x = np.ones((50, 40))
    assert not np.array_equal(traced(x), x)  # still drops: torch.fx's documented pitfall

    class DropoutModule(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(p=0.5)

        def forward(self, x):
            return self.drop(x)

    traced_module = fx.symbolic_trace(DropoutModule())
    traced_module.eval()
    np.testing.assert_array_equal(traced_module(x), x)  # the leaf module reads self.training
    traced_module.train()
    assert not np.array_equal(traced_module(x), x)
