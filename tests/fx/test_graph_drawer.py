"""FxGraphDrawer: DOT pictures of fx graphs (symbolic_trace, make_fx, the aot.compile tracer) that
pydot parses, that name every node and edge, show dtypes/shapes, escape odd text and render."""
from __future__ import annotations

import operator
import shutil

import numpy as np
import pytest

import aot
from aot import nn
from aot.fx import Graph, GraphModule, symbolic_trace
from aot.fx.experimental.proxy_tensor import make_fx
from aot.fx.passes import FxGraphDrawer
from aot.fx.passes.shape_prop import ShapeProp
from ir.dot import GraphvizNotFound
from tests.fx.dot_reading import edges, node_names, nodes_by_name, parse, record_fields, svg_texts, svg_titles

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot program")


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3, dtype=np.float32)
        self.act = nn.ReLU()

    def forward(self, x):
        return np.sin(self.act(self.lin(x))).sum(axis=1)


def x32():
    return np.random.default_rng(0).random((2, 4)).astype(np.float32)


def fields(graph, name):
    return record_fields(nodes_by_name(graph)[name].get("label"))


def assert_draws_every_node(gm, dot):
    """Every fx node is a DOT node and every input -> user link an edge."""
    g = parse(dot.to_string())
    names = set(node_names(g))
    for n in gm.graph.nodes:
        assert n.name in names
        assert f"name=%{n.name}" in fields(g, n.name)
        assert f"op_code={n.op}" in fields(g, n.name)
    want = {(i.name, n.name) for n in gm.graph.nodes for i in n.all_input_nodes}
    assert want <= set(edges(g))
    return g


def test_nn_module_traced_by_symbolic_trace():
    gm = symbolic_trace(Small())
    g = assert_draws_every_node(gm, FxGraphDrawer(gm, "small").get_dot_graph())
    assert "aot.nn.layers.Linear" in fields(g, "lin")
    assert "target=numpy.sin" in fields(g, "sin")
    assert "kwargs={axis: 1}" in fields(g, "sum_1")  # constant arguments are shown, braces survive
    # the Linear's parameters are nodes feeding it
    assert {("lin.weight", "lin"), ("lin.bias", "lin")} <= set(edges(g))
    assert "float32[3, 4]" in fields(g, "lin.weight")
    colors = {k: n.get("fillcolor") for k, n in nodes_by_name(g).items()}
    want = ('"AliceBlue"', '"PowderBlue"', '"LemonChiffon1"')
    assert (colors["x"], colors["output"], colors["lin"]) == want
    assert all(n.get("shape") == '"record"' for n in nodes_by_name(g).values())


def test_shape_prop_adds_dtypes_and_shapes():
    gm = symbolic_trace(Small())
    before = parse(FxGraphDrawer(gm, "small").get_dot_graph().to_string())
    assert not any(f.startswith("dtype=") for n in gm.graph.nodes for f in fields(before, n.name))
    ShapeProp(gm).propagate(x32())
    g = parse(FxGraphDrawer(gm, "small").get_dot_graph().to_string())
    assert {"dtype=float32", "shape=(2, 4)", "stride=(4, 1)"} <= set(fields(g, "x"))
    assert {"dtype=float32", "shape=(2, 3)"} <= set(fields(g, "lin"))
    assert {"dtype=float32", "shape=(2,)"} <= set(fields(g, "sum_1"))


@pytest.mark.parametrize("mode", ["real", "fake"])
def test_make_fx_of_a_module_shows_meta_val(mode):
    gm = make_fx(Small(), tracing_mode=mode)(x32())
    g = assert_draws_every_node(gm, FxGraphDrawer(gm, "small").get_dot_graph())
    matmul = next(n for n in gm.graph.nodes if n.op == "call_function" and n.name.startswith("matmul"))
    want = {"target=aot.frontend.core.ops.matmul", "dtype=float32", "shape=(2, 3)"}
    assert want <= set(fields(g, matmul.name))
    consts = [n.name for n in gm.graph.nodes if n.op == "get_attr"]
    assert consts and all("op_code=get_attr" in fields(g, c) for c in consts)


def test_symbolic_shapes_are_drawn_with_their_symbols():
    gm = make_fx(lambda x: np.exp(x).sum(axis=0), tracing_mode="symbolic")(np.ones((5, 3)))
    g = parse(FxGraphDrawer(gm, "sym").get_dot_graph().to_string())
    assert "shape=(s0, s1)" in fields(g, "arg0") and "shape=(s1,)" in fields(g, "sum_1")


def test_function_captured_by_the_aot_compile_tracer():
    graphs = []

    def keep(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    f = aot.compile(lambda x, y: (np.sin(x) * y, x.sum()), backend=keep)
    x = np.ones((2, 3))
    f(x, x)
    (gm,) = graphs
    g = assert_draws_every_node(gm, FxGraphDrawer(gm, "captured").get_dot_graph())
    assert {"target=aot.frontend.core.ops.sin", "dtype=float64", "shape=(2, 3)"} <= set(fields(g, "sin"))
    assert "shape=()" in fields(g, "sum_1")


def test_node_names_in_arguments_are_skipped_unless_asked_for():
    gm = symbolic_trace(lambda x: np.add(x, 2.5))
    default = fields(parse(FxGraphDrawer(gm, "f").get_dot_graph().to_string()), "add")
    assert "args=(2.5,)" in default  # the node argument %x is left out
    drawer = FxGraphDrawer(gm, "f", skip_node_names_in_args=False)
    full = fields(parse(drawer.get_dot_graph().to_string()), "add")
    assert "args=(\n%x,\n2.5,\n)" in full


def test_ignore_getattr_and_parameters():
    gm = make_fx(Small(), tracing_mode="fake")(x32())
    consts = {n.name for n in gm.graph.nodes if n.op == "get_attr"}
    names = set(node_names(parse(FxGraphDrawer(gm, "m", ignore_getattr=True).get_dot_graph().to_string())))
    assert consts and not consts & names
    gm = symbolic_trace(Small())
    names = set(node_names(parse(FxGraphDrawer(gm, "m", ignore_parameters_and_buffers=True)
                                 .get_dot_graph().to_string())))
    assert "lin" in names and "lin.weight" not in names


def test_plain_shape_labels_and_stack_traces():
    gm = symbolic_trace(lambda x: np.sin(x))
    sin = next(n for n in gm.graph.nodes if n.name == "sin")
    sin.stack_trace = 'Traceback:\n  File "/home/u/proj/model.py", line 7, in forward\n    y = np.sin(x)\n'
    dot = FxGraphDrawer(gm, "f", dot_graph_shape="box", parse_stack_trace=True).get_dot_graph()
    node = nodes_by_name(parse(dot.to_string()))["sin"]
    assert node.get("shape") == '"box"'
    label = node.get("label")
    assert "{" not in label and "name=%sin\\nop_code=call_function" in label  # fields become lines
    assert "file=proj/model.py:7 y = np.sin(x)" in label


def test_normalize_args_binds_keywords():
    def scale(x, factor=1.0):
        return x * factor

    g = Graph()
    x = g.placeholder("x")
    g.output(g.call_function(scale, (x, 3.0)))
    gm = GraphModule({}, g)
    label = fields(parse(FxGraphDrawer(gm, "f", normalize_args=True).get_dot_graph().to_string()), "scale")
    assert "kwargs={factor: 3.0}" in label


def test_graph_module_submodules_get_graphs_of_their_own():
    inner = symbolic_trace(lambda x: np.cos(x) + 1)
    root = nn.Module()
    root.inner = inner
    g = Graph()
    x = g.placeholder("x")
    g.output(g.call_module("inner", (x,)))
    drawer = FxGraphDrawer(GraphModule(root, g), "outer")
    assert set(drawer.get_all_dot_graphs()) == {"outer", "outer_inner"}
    sub = parse(drawer.get_submod_dot_graph("inner").to_string())
    assert "cos" in node_names(sub)
    assert drawer.get_dot_graph("inner") is drawer.get_submod_dot_graph("inner")
    assert drawer.get_dot_graph() is drawer.get_main_dot_graph()
    with pytest.raises(KeyError, match="nope"):
        drawer.get_submod_dot_graph("nope")


WEIRD = 'say "hi" \\ {a|b} <c>\nnext'


def weird_graph():
    g = Graph()
    x = g.placeholder("x")
    g.output(g.call_function(operator.getitem, (x,), {"note": WEIRD}))
    return GraphModule({}, g)


def test_escaping_survives_quotes_backslashes_and_record_characters():
    dot = FxGraphDrawer(weird_graph(), 'g "quoted" \\ name').get_dot_graph()
    g = parse(dot.to_string())
    assert g.get_name() == r'"g \"quoted\" \ name"'  # ids keep their backslashes (Graphviz reads no escapes)
    assert f"kwargs={{note: {WEIRD!r}}}" in fields(g, "getitem")


@needs_dot
def test_svg_and_png_rendering(tmp_path):
    dot = FxGraphDrawer(weird_graph(), 'g "quoted" \\ name').get_dot_graph()
    svg = dot.create_svg()
    assert 'g "quoted" \\ name' in svg_titles(svg)
    assert f"kwargs={{note: {WEIRD!r}}}" in svg_texts(svg)  # the label Graphviz drew is the text itself
    assert dot.create_png().startswith(b"\x89PNG")
    assert dot.write_png(tmp_path / "g.png").read_bytes().startswith(b"\x89PNG")
    assert b"<svg" in dot.write_svg(tmp_path / "g.svg").read_bytes()
    assert dot.write(tmp_path / "g.dot").read_text() == dot.to_string() == str(dot)


def test_missing_graphviz_raises_a_clear_error(monkeypatch, tmp_path):
    dot = FxGraphDrawer(symbolic_trace(lambda x: x + 1), "f").get_dot_graph()
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no dot
    with pytest.raises(GraphvizNotFound, match="Graphviz") as e:
        dot.create_svg()
    assert "apt-get install graphviz" in str(e.value) and "brew install graphviz" in str(e.value)
    assert isinstance(e.value, RuntimeError)
    assert dot.write_raw(tmp_path / "f.dot").read_text() == dot.to_string()  # DOT text needs no Graphviz


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="graph_module"):
        FxGraphDrawer(Graph(), "g")
    with pytest.raises(ValueError, match="name"):
        FxGraphDrawer(symbolic_trace(lambda x: x), "")
    with pytest.raises(ValueError, match="dot_graph_shape"):
        FxGraphDrawer(symbolic_trace(lambda x: x), "g", dot_graph_shape="")
