"""Node: operands and users, list moves, rewiring helpers, formatting, purity, normalisation."""
from __future__ import annotations

import operator

import numpy as np
import pytest

import aot.nn as nn
import aot.nn.functional as F
from aot import fx
from aot.fx.immutable_collections import immutable_dict, immutable_list


def make():
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    a = g.call_function(operator.add, (x, y))
    m = g.call_function(operator.mul, (a, x))
    g.output(m)
    return g, x, y, a, m


def test_op_target_name_args_kwargs_users():
    g, x, y, a, m = make()
    assert (a.op, a.target, a.name, a.args, a.kwargs) == ("call_function", operator.add, "add", (x, y), {})
    assert list(x.users) == [a, m] and list(a.users) == [m]
    assert a.all_input_nodes == [x, y] and m.all_input_nodes == [a, x]


def test_assigning_args_and_kwargs_updates_users():
    g, x, y, a, m = make()
    m.args = (a, y)
    assert m not in x.users and m in y.users
    m.kwargs = {"extra": x}
    assert m in x.users and m.all_input_nodes == [a, y, x]
    m.kwargs = {}
    assert m not in x.users


def test_args_are_immutable_containers():
    g = fx.Graph()
    x = g.placeholder("x")
    n = g.call_function(np.concatenate, ([x, x],), {"axis": 0})
    assert isinstance(n.args[0], immutable_list)
    with pytest.raises(TypeError, match="immutable"):
        n.args[0].append(x)
    with pytest.raises(TypeError, match="immutable"):
        immutable_dict(a=1)["b"] = 2


def test_update_arg_insert_arg_update_kwarg():
    g, x, y, a, m = make()
    m.update_arg(1, y)
    assert m.args == (a, y) and m not in x.users
    m.insert_arg(0, x)
    assert m.args == (x, a, y) and m in x.users
    with pytest.raises(IndexError):
        m.insert_arg(9, x)
    m.update_kwarg("k", y)
    assert m.kwargs == {"k": y}


def test_append_prepend_move_nodes():
    g, x, y, a, m = make()
    y.append(x)  # move x after y
    assert [n.name for n in g.nodes] == ["y", "x", "add", "mul", "output"]
    a.prepend(x)
    assert x.prev is y and x.next is a
    with pytest.raises(ValueError):
        a.prepend(a)


def test_replace_all_uses_with_callback_and_meta():
    g, x, y, a, m = make()
    changed = x.replace_all_uses_with(y, delete_user_cb=lambda u: u is m)
    assert changed == [m] and m.args == (a, y) and a.args == (x, y)
    new = g.call_function(np.sin, (y,))
    a.meta["k"] = 1
    a.replace_all_uses_with(new, propagate_meta=True)
    assert new.meta == {"k": 1} and m.args[0] is new and not a.users
    with pytest.raises(ValueError, match="empty meta"):
        x.replace_all_uses_with(new, propagate_meta=True)


def test_replace_input_with():
    g, x, y, a, m = make()
    m.replace_input_with(x, y)
    assert m.args == (a, y)


def test_format_node():
    g, x, y, a, m = make()
    assert x.format_node() == "%x : [num_users=2] = placeholder[target=x]"
    assert a.format_node() == ("%add : [num_users=1] = call_function[target=operator.add]"
                               "(args = (%x, %y), kwargs = {})")
    assert g.output_node().format_node() == "return %mul"
    names = []
    assert x.format_node(placeholder_names=names) is None and names == ["x"]


def test_is_impure():
    g = fx.Graph()
    x = g.placeholder("x")
    pure = g.call_function(np.sin, (x,))
    setitem = g.call_function(operator.setitem, (x, 0, 1))
    fill = g.call_method("fill", (x, 0.0))
    out_kw = g.call_function(np.sin, (x,), {"out": x})
    assert x.is_impure() and not pure.is_impure()
    assert setitem.is_impure() and fill.is_impure() and out_kw.is_impure()

    @fx.has_side_effect
    def log_it(v):
        return v

    assert g.call_function(log_it, (x,)).is_impure()


def test_is_impure_for_modules():
    class Impure(nn.Module):
        _is_impure = True

        def forward(self, x):
            return x

    root = nn.Module()
    root.imp = Impure()
    root.lin = nn.Linear(2, 2)
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.call_module("imp", (x,))
    b = g.call_module("lin", (x,))
    g.output(x)
    fx.GraphModule(root, g)
    assert a.is_impure() and not b.is_impure()


def test_normalized_arguments():
    g = fx.Graph()
    x = g.placeholder("x")
    n = g.call_function(F.softmax, (x, 1))
    pair = n.normalized_arguments(None)
    assert pair.args == (x, 1, None) and pair.kwargs == {"axis": None}
    kw = n.normalized_arguments(None, normalize_to_only_use_kwargs=True)
    assert kw.args == () and kw.kwargs == {"input": x, "dim": 1, "dtype": None, "axis": None}
    assert g.call_method("sum", (x,)).normalized_arguments(None) is None
    root = nn.Module()
    root.lin = nn.Linear(2, 3)
    cm = g.call_module("lin", (), {"input": x})
    assert cm.normalized_arguments(root).args == (x,)


def test_stack_trace_and_meta():
    g, x, *_ = make()
    assert x.stack_trace is None
    x.stack_trace = "File foo"
    assert x.meta["stack_trace"] == "File foo"

    class T(fx.Tracer):
        record_stack_traces = True

    def f(v):
        return np.sin(v)

    graph = T().trace(f)
    sin = graph.find_nodes(op="call_function", target=np.sin)[0]
    assert "return np.sin(v)" in sin.stack_trace and "test_node.py" in sin.stack_trace


def test_node_rejects_bad_targets():
    g = fx.Graph()
    with pytest.raises(ValueError, match="not callable"):
        g.create_node("call_function", "sin")
    with pytest.raises(ValueError, match="must be a str"):
        g.create_node("call_method", np.sin)
    with pytest.raises(ValueError, match="op must be one of"):
        g.create_node("call_something", np.sin)
