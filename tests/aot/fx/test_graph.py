"""Graph: building, editing while iterating, insertion points, DCE, copying, lint, printing, codegen."""
from __future__ import annotations

import copy
import operator

import numpy as np
import pytest

import aot.nn as nn
from aot import fx

RNG = np.random.default_rng(1)


def small_graph():
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y", default_value=2.0)
    add = g.call_function(operator.add, (x, y))
    s = g.call_method("sum", (add,), {"axis": 0})
    g.output(s)
    return g, x, y, add, s


def run(g, *args, root=None):
    return fx.GraphModule(root or nn.Module(), g)(*args)


def test_build_and_run_with_placeholder_default():
    g, *_ = small_graph()
    x = RNG.standard_normal((3, 2))
    np.testing.assert_allclose(run(g, x), (x + 2.0).sum(axis=0))
    np.testing.assert_allclose(run(g, x, x), (2 * x).sum(axis=0))
    assert "def forward(self, x, y=2.0):" in fx.GraphModule(nn.Module(), g).code


def test_create_node_and_names_are_unique_and_readable():
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.create_node("call_function", np.sin, (x,))
    b = g.create_node("call_function", np.sin, (a,))
    c = g.create_node("call_function", np.sum, (b,))
    d = g.create_node("call_function", operator.add, (c, 1), name="my.weird name")
    lam = g.call_function(lambda v: v, (d,))
    assert [a.name, b.name, c.name, d.name] == ["sin", "sin_1", "sum_1", "my_weird_name"]
    assert lam.name.isidentifier()
    with pytest.raises(TypeError, match="tuple"):
        g.create_node("call_function", np.sin, [x])


def test_linked_list_next_prev_and_len():
    g, x, y, add, s = small_graph()
    assert x.next is y and add.prev is y and s.next is g.output_node()
    assert len(g.nodes) == 5
    assert [n.name for n in reversed(g.nodes)] == ["output", "sum_1", "add", "y", "x"]


def test_edit_while_iterating_erase_and_insert():
    g, x, y, add, s = small_graph()
    seen = []
    for n in g.nodes:
        seen.append(n.name)
        if n is add:
            with g.inserting_after(n):
                neg = g.call_function(operator.neg, (n,))
            s.replace_input_with(add, neg)
    assert seen == ["x", "y", "add", "neg", "sum_1", "output"]
    for n in g.nodes:  # erase the current node during iteration
        if n.op == "call_function" and n.target is operator.neg:
            s.replace_input_with(n, add)
            g.erase_node(n)
    assert [n.name for n in g.nodes] == ["x", "y", "add", "sum_1", "output"]
    g.lint()


def test_inserting_before_after_restore_insertion_point():
    g, x, y, add, s = small_graph()
    with g.inserting_before(add):
        pre = g.call_function(np.sin, (x,))
        with g.inserting_after(s):
            post = g.call_function(np.cos, (s,))
        mid = g.call_function(np.exp, (x,))  # back to "before add"
    assert [n.name for n in g.nodes] == ["x", "y", "sin", "exp", "add", "sum_1", "cos", "output"]
    with g.inserting_before(None):  # graph start
        first = g.placeholder("z")
    assert g._root.next is first
    with g.inserting_after(None):  # graph end
        last = g.call_function(np.abs, (x,))
    assert g.find_nodes(op="output")[0].next is last and last.next is g._root
    with pytest.raises(RuntimeError, match="no output node"):
        _ = g.output_node()
    assert pre.next is mid and post.prev is s


def test_erase_node_refuses_nodes_with_users():
    g, x, y, add, s = small_graph()
    with pytest.raises(RuntimeError, match="still had 1 users"):
        g.erase_node(add)
    other = fx.Graph()
    with pytest.raises(ValueError, match="does not belong"):
        other.erase_node(add)


def test_erase_node_updates_users_of_inputs():
    g, x, y, add, s = small_graph()
    dead = g.call_function(np.sin, (x,))
    assert dead in x.users
    g.erase_node(dead)
    assert dead not in x.users and len(g.nodes) == 5


def test_eliminate_dead_code_keeps_impure_nodes():
    g = fx.Graph()
    x = g.placeholder("x")
    g.call_function(np.sin, (x,))  # dead
    g.call_function(operator.setitem, (x, 0, 1.0))  # impure, unused
    g.call_function(np.add, (x, 1.0), {"out": x})  # writes into x
    g.output(x)
    assert g.eliminate_dead_code()
    assert [n.name for n in g.nodes] == ["x", "setitem", "add", "output"]
    assert not g.eliminate_dead_code()
    assert g.eliminate_dead_code(is_impure_node=lambda n: n.op in ("placeholder", "output"))
    assert [n.name for n in g.nodes] == ["x", "output"]


def test_find_nodes():
    g, x, y, add, s = small_graph()
    assert g.find_nodes(op="placeholder") == [x, y]
    assert g.find_nodes(op="call_function", target=operator.add) == [add]
    assert g.find_nodes(op="call_method", target="sum", sort=False) == [s]
    assert g.find_nodes(op="call_function", target=np.sin) == []


def test_graph_copy_and_node_copy():
    g, x, y, add, s = small_graph()
    add.meta["tag"] = 1
    g2 = fx.Graph()
    val_map = {}
    out = g2.graph_copy(g, val_map)
    assert out is val_map[s] and val_map[add].meta == {"tag": 1}
    assert val_map[add].args == (val_map[x], val_map[y])
    g2.output(out)
    g3 = fx.Graph()
    p = g3.placeholder("p")
    copied = g3.node_copy(add, lambda n: p)
    assert copied.args == (p, p) and copied.target is operator.add
    xv = RNG.standard_normal(3)
    np.testing.assert_allclose(run(g2, xv), run(g, xv))
    out_val, out_node = fx.Graph().graph_copy(g, {}, return_output_node=True)
    assert out_node is g.output_node()


def test_deepcopy_graph_is_independent():
    g, *_ = small_graph()
    g2 = copy.deepcopy(g)
    assert [n.name for n in g2.nodes] == [n.name for n in g.nodes]
    next(iter(g2.nodes)).name = "changed"
    assert next(iter(g.nodes)).name == "x"


def test_lint_detects_problems():
    g, x, y, add, s = small_graph()
    g.lint()
    add.prepend(s)  # sum before its input
    with pytest.raises(RuntimeError, match="before it is defined"):
        g.lint()
    g, x, y, add, s = small_graph()
    other = fx.Graph().placeholder("o")
    with pytest.raises(ValueError, match="another graph"):
        add.append(other)
    g, x, y, add, s = small_graph()
    s.name = "add"
    with pytest.raises(RuntimeError, match="duplicate node name"):
        g.lint()


def test_lint_checks_targets_on_owning_module():
    root = nn.Module()
    root.w = nn.Parameter(np.ones(3))
    g = fx.Graph()
    x = g.placeholder("x")
    w = g.get_attr("w")
    g.output(g.call_function(operator.mul, (x, w)))
    gm = fx.GraphModule(root, g)
    gm.graph.lint()
    with pytest.warns(UserWarning, match="does not exist"), gm.graph.inserting_before(w):
        gm.graph.get_attr("missing")
    with pytest.raises(RuntimeError, match="does not exist on the owning module"):
        gm.graph.lint()


def test_print_tabular(capsys):
    g, *_ = small_graph()
    g.print_tabular()
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert "call_method" in out and "operator.add" in out and "{axis: 0}" in out


def test_str_lists_every_node():
    g, *_ = small_graph()
    text = str(g)
    assert text.startswith("graph():")
    assert "%add : [num_users=1] = call_function[target=operator.add](args = (%x, %y), kwargs = {})" in text
    assert "return %sum_1" in text


def test_python_code_and_on_generate_code():
    g, *_ = small_graph()
    code = g.python_code("self")
    assert "def forward(self, x, y=2.0):" in code.src and code.globals["numpy"] is np
    compile(code.src, "<test>", "exec")

    def make_transformer(previous):
        def transformer(body):
            body = previous(body) if previous else body
            return ["# generated with a marker", *body]
        return transformer

    with g.on_generate_code(make_transformer):
        assert "# generated with a marker" in g.python_code("self").src
    assert "# generated with a marker" not in g.python_code("self").src


def test_process_inputs_outputs_default_and_pytree():
    g, *_ = small_graph()
    assert g.process_inputs(1, 2) == (1, 2) and g.process_outputs(3) == 3

    def f(d):
        return {"s": d["a"] + d["b"]}

    gm = fx.symbolic_trace(f, concrete_args={"d": {"a": fx.PH, "b": fx.PH}})
    assert gm.graph.process_inputs({"b": 2, "a": 1}) == (1, 2)
    assert gm.graph.process_outputs([5]) == {"s": 5}
    assert gm({"a": 1.5, "b": 2}) == {"s": 3.5}
    assert fx.Interpreter(gm).run({"a": 1, "b": 2}) == {"s": 3}


def test_map_arg_from_graph_and_node_modules():
    g, x, y, add, s = small_graph()
    assert fx.graph.map_arg is fx.node.map_arg
    mapped = fx.graph.map_arg(([x, 1], {"k": y}, slice(x, None)), lambda n: n.name)
    assert mapped == (["x", 1], {"k": "y"}, slice("x", None, None))
