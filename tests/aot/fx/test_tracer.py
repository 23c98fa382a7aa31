"""Proxy capture (operators, methods, attributes, numpy protocols) and Tracer's overridable methods."""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np
import pytest

import aot.nn as nn
import aot.nn.functional as F
from aot import fx
from aot.dispatch import dispatchable
from aot.fx.proxy import GraphAppendingTracer, TraceError

RNG = np.random.default_rng(3)


@fx.wrap
def decorated_helper(x, k):
    return x * k - 1


def plain_helper(x):
    return x + 100


def call_targets(gm):
    return [n.target for n in gm.graph.nodes if n.op in ("call_function", "call_method")]


def check_eager(fn, *args):
    gm = fx.symbolic_trace(fn)
    compile(gm.code, "<gm>", "exec")
    got, want = gm(*args), fn(*args)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-13)
        assert np.asarray(g).dtype == np.asarray(w).dtype
    return gm


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv,
                                operator.floordiv, operator.mod, operator.pow, operator.lt, operator.le,
                                operator.gt, operator.ge, operator.eq, operator.ne])
def test_binary_operators_both_sides(op):
    def f(x, y):
        return op(x, y), op(x, 2.0), op(3.0, y)

    x, y = RNG.random((3, 4)) + 1, RNG.random((3, 4)) + 1
    gm = check_eager(f, x, y)
    # Python answers `3.0 < y` with y.__gt__(3.0)
    swapped = {operator.lt: operator.gt, operator.gt: operator.lt,
               operator.le: operator.ge, operator.ge: operator.le}
    assert call_targets(gm) == [op, op, swapped.get(op, op)]


def test_bitwise_unary_and_matmul():
    def f(a, b, m):
        return a & b, a | b, a ^ b, a << 1, 8 >> a, ~a, -m, +m, abs(m), m @ m, m.T @ m

    a, b = RNG.integers(0, 4, 5), RNG.integers(0, 4, 5)
    m = RNG.standard_normal((3, 3))
    gm = check_eager(f, a, b, m)
    assert builtins.abs in call_targets(gm) and operator.matmul in call_targets(gm)


def test_indexing_and_slicing():
    def f(x):
        return x[0], x[1:, None], x[..., ::-1], x[:, 1], x[x > 0.5], x[[0, 2]], x[1:3, 0:4:2]

    gm = check_eager(f, RNG.random((4, 5)))
    assert "x[1:, None]" in gm.code and "x[..., ::-1]" in gm.code and "x[1:3, 0:4:2]" in gm.code


def test_method_calls_and_attributes():
    def f(x):
        return (x.sum(axis=0), x.reshape(2, -1), x.T, x.mean(), x.astype(np.float32), x.shape[0] + x,
                x.ndim + x)

    gm = check_eager(f, RNG.random((4, 6)))
    assert "sum" in call_targets(gm) and "reshape" in call_targets(gm)
    assert "x.sum(axis=0)" in gm.code and "x.T" in gm.code and "x.astype(numpy.float32)" in gm.code


def test_numpy_ufuncs_and_functions_become_single_nodes():
    def f(a, b):
        return (np.sin(a), np.fft.fft(a), np.concatenate([a, b]), np.add.reduce(a), np.maximum(a, 0.5),
                np.where(a > b, a, b), np.matmul(a, b), np.einsum("i,i->", a, b))

    gm = check_eager(f, RNG.random(8), RNG.random(8))
    want = [np.sin, np.fft.fft, np.concatenate, np.add.reduce, np.maximum, operator.gt]
    assert call_targets(gm)[:6] == want
    assert "numpy.fft.fft(a)" in gm.code and "numpy.add.reduce(a)" in gm.code


def test_constant_array_on_the_left_uses_array_ufunc():
    c = np.arange(4.0)

    def f(x):
        return c + x, c @ x

    gm = check_eager(f, RNG.random(4))
    assert gm.graph.find_nodes(op="get_attr")[0].target == "_tensor_constant0"
    assert call_targets(gm) == [np.add, np.matmul]


def test_functional_calls_are_single_nodes():
    def f(x, w):
        return (F.relu(x), F.sigmoid(x), F.tanh(x), F.softmax(x, dim=-1), F.log_softmax(x, axis=0),
                F.gelu(x), F.linear(x, w), F.dropout(x, 0.5, training=False))

    gm = check_eager(f, RNG.standard_normal((3, 4)), RNG.standard_normal((2, 4)))
    want = [F.relu, F.sigmoid, F.tanh, F.softmax, F.log_softmax, F.gelu, F.linear, F.dropout]
    assert call_targets(gm) == want
    assert "aot.nn.functional.softmax(x, dim=-1)" in gm.code


def test_autowrap_math_and_autowrap_functions():
    def f(x):
        return math.sqrt(x) + plain_helper(x)

    graph = fx.Tracer(autowrap_functions=(plain_helper,)).trace(f)
    gm = fx.GraphModule(nn.Module(), graph)
    assert call_targets(gm) == [math.sqrt, plain_helper, operator.add]
    assert gm(4.0) == f(4.0)
    assert math.sqrt(4.0) == 2.0 and plain_helper(1) == 101  # patches were undone
    with pytest.raises(TraceError):  # without autowrapping, math.sqrt needs a concrete number
        fx.Tracer(autowrap_modules=()).trace(f)


def test_wrap_as_decorator_and_errors():
    gm = check_eager(lambda x: decorated_helper(x, 3), RNG.random(3))
    assert call_targets(gm) == [decorated_helper]
    with pytest.raises(NotImplementedError, match="top level"):
        fx.wrap("len")
    with pytest.raises(TypeError):
        fx.wrap(3)


def test_trace_errors_for_len_iteration_and_conversion():
    with pytest.raises(TraceError, match="'len' is not supported") as info:
        fx.Tracer().trace(lambda_len)
    assert "return len(x)" in str(info.value)
    with pytest.raises(TraceError, match="cannot be iterated"):
        fx.symbolic_trace(lambda x: [v for v in x])
    with pytest.raises(TraceError, match="concrete numpy array"):
        fx.symbolic_trace(lambda x: np.asarray(x))
    with pytest.raises(TraceError, match="Python int"):
        fx.symbolic_trace(lambda x: range(x))


def lambda_len(x):
    return len(x)


def test_tuple_unpacking_of_a_proxy():
    def f(x):
        a, b, c = x
        return a * b + c

    gm = check_eager(f, RNG.random((3, 2)))
    assert [n.target for n in gm.graph.nodes if n.target is operator.getitem].__len__() == 3


def test_keys_and_to_bool_hooks_are_overridable():
    class Permissive(fx.Tracer):
        def to_bool(self, obj):
            return True

    def f(x):
        return np.sin(x) if x.sum() > 0 else np.cos(x)

    graph = Permissive().trace(f)
    assert [n.target for n in graph.nodes if n.op == "call_function"][-1] is np.sin

    def g(d):
        return d.keys()

    keys_node = fx.Tracer().trace(g).find_nodes(op="call_method", target="keys")
    assert len(keys_node) == 1


def test_modules_parameters_buffers_and_default_leaves():
    class Inner(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.register_buffer("offset", np.ones(3))
            self.mask = np.array([1.0, 0.0, 1.0])  # plain array attribute

        def forward(self, x):
            return self.lin(x) + self.offset * self.mask

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()
            self.seq = nn.Sequential(nn.ReLU(), nn.Dropout(0.1))
            self.w = nn.Parameter(RNG.standard_normal(3))

        def forward(self, x):
            return self.seq(self.inner(x)) * self.w + self.w

    m = Outer().eval()
    gm = fx.symbolic_trace(m)
    assert [n.target for n in gm.graph.nodes if n.op == "call_module"] == ["inner.lin", "seq.0", "seq.1"]
    assert [n.target for n in gm.graph.nodes if n.op == "get_attr"] == ["inner.offset", "inner.mask", "w"]
    x = RNG.standard_normal((2, 3))
    np.testing.assert_allclose(gm(x), m(x))


def test_overridable_tracer_methods_are_called():
    calls = []

    class Spy(fx.Tracer):
        def create_arg(self, a):
            calls.append("create_arg")
            return super().create_arg(a)

        def create_node(self, *args, **kwargs):
            calls.append("create_node")
            return super().create_node(*args, **kwargs)

        def create_proxy(self, *args, **kwargs):
            calls.append("create_proxy")
            return super().create_proxy(*args, **kwargs)

        def proxy(self, node):
            calls.append("proxy")
            return super().proxy(node)

        def call_module(self, m, forward, args, kwargs):
            calls.append("call_module")
            return super().call_module(m, forward, args, kwargs)

        def getattr(self, attr, attr_val, cache):
            calls.append("getattr")
            return super().getattr(attr, attr_val, cache)

        def path_of_module(self, mod):
            calls.append("path_of_module")
            return super().path_of_module(mod)

        def is_leaf_module(self, m, name):
            calls.append("is_leaf_module")
            return super().is_leaf_module(m, name)

        def create_args_for_root(self, fn, is_module, concrete_args=None):
            calls.append("create_args_for_root")
            return super().create_args_for_root(fn, is_module, concrete_args)

        def get_fresh_qualname(self, prefix):
            calls.append("get_fresh_qualname")
            return super().get_fresh_qualname(prefix)

    const = np.ones(2)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)

        def forward(self, x):
            return self.lin(x) + const

    Spy().trace(M())
    for name in ["create_arg", "create_node", "create_proxy", "proxy", "call_module", "getattr",
                 "path_of_module", "is_leaf_module", "create_args_for_root", "get_fresh_qualname"]:
        assert name in calls, name


def test_iter_hook_can_allow_iteration():
    class Unrolling(fx.Tracer):
        def iter(self, obj):
            return iter([obj[0], obj[1]])

    graph = Unrolling().trace(lambda x: sum(v for v in x))
    assert len(graph.find_nodes(op="call_function", target=operator.getitem)) == 2


def test_graph_appending_tracer_builds_nodes():
    g = fx.Graph()
    x = fx.Proxy(g.placeholder("x"))  # no tracer given: a GraphAppendingTracer is made
    assert isinstance(x.tracer, GraphAppendingTracer)
    y = np.exp(x) * 2 + x.sum()
    g.output(y.node)
    gm = fx.GraphModule(nn.Module(), g)
    v = RNG.random(3)
    np.testing.assert_allclose(gm(v), np.exp(v) * 2 + v.sum())


def test_proxies_from_two_tracers_do_not_mix():
    a = fx.Proxy(fx.Graph().placeholder("a"))
    b = fx.Proxy(fx.Graph().placeholder("b"))
    with pytest.raises(RuntimeError, match="two different graphs"):
        a + b
    with pytest.raises(RuntimeError, match="another graph"):
        np.concatenate([a, b])
    g = fx.Graph()  # Proxies made without a tracer on the same graph do mix
    c, d = fx.Proxy(g.placeholder("c")), fx.Proxy(g.placeholder("d"))
    assert (c + d).node.args == (c.node, d.node)


def test_concrete_args_none_and_tuple_form():
    def f(x, bias):
        return x if bias is None else x + bias

    gm = fx.symbolic_trace(f, concrete_args={"bias": None})
    assert gm(3, None) == 3
    with pytest.raises(AssertionError):
        gm(3, 1)
    gm2 = fx.Tracer().trace(f, concrete_args=(fx.PH, None))
    assert [n.name for n in gm2.nodes if n.op == "placeholder"] == ["x_1", "bias_1"]
    with pytest.raises(TypeError, match="not arguments"):
        fx.symbolic_trace(f, concrete_args={"nope": 1})


def test_concrete_args_pytree_list_input_and_tuple_output():
    def f(xs):
        return xs[0] + xs[1], xs[0] - xs[1]

    gm = fx.symbolic_trace(f, concrete_args={"xs": [fx.PH, fx.PH]})
    a, b = RNG.random(3), RNG.random(3)
    out = gm([a, b])
    assert isinstance(out, tuple)
    np.testing.assert_allclose(out[0], a + b)
    np.testing.assert_allclose(out[1], a - b)


def test_default_values_become_placeholder_defaults():
    def f(x, scale=2.0):
        return x * scale

    gm = fx.symbolic_trace(f)
    assert "def forward(self, x, scale=2.0):" in gm.code
    assert gm(3.0) == 6.0 and gm(3.0, 3.0) == 9.0


@dispatchable
def library_rfft(x, n=None, dim=-1):
    """Stands in for an `aot.fft` function: numpy inside, one node when traced."""
    return np.fft.rfft(x, n, axis=dim)


def test_dispatchable_library_functions_are_single_nodes():
    gm = check_eager(lambda x: library_rfft(x * 2, dim=0), RNG.random((4, 3)))
    assert call_targets(gm) == [operator.mul, library_rfft]
    assert "library_rfft = library_rfft_1(mul, dim=0)" in gm.code  # the global may not shadow the node
