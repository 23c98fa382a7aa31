"""ir.picture / ir.dot: the ir after fusion as DOT that pydot parses, names every op (kernel bodies
included) as `print_module` does, draws each kernel as a cluster holding exactly its body, links
the dataflow as the text reads it, escapes odd text and renders through Graphviz."""
from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

import ir
from ir.core import Operation
from ir.dot import Dot, GraphvizNotFound, RenderError
from ir.passes import run_pipeline
from ir.picture import MAX_ATTR_CHARS, func_to_dot, module_to_dot, to_dot
from ir.printer import print_module
from ir.verifier import verify
from tests.fx.dot_reading import edges, node_names, nodes_by_name, parse, plain_text, svg_texts, svg_titles

pytest.importorskip("aot.ops")  # registers the dialect's numpy ops (sin, mul, sum, rfft, ...)

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot program")
OP_ID = re.compile(r"(f\d+_)?op(\d+)\Z")

UNFUSED = """module @t {
  func @f(%x: f64[3,4], %y: f64[3,4]) -> (f64[3], f64[3,4], f64[3,4], f64[3,4]) {
    %a = sin %x : f64[3,4]
    %b = mul %a, %y : f64[3,4]
    %s = "sum"(%b) {axes = [1]} : (f64[3,4]) -> f64[3]
    %e = exp %b : f64[3,4]
    %t = "transpose"(%e) {perm = [1, 0]} : (f64[3,4]) -> f64[4,3]
    %u = "transpose"(%t) {perm = [1, 0]} : (f64[4,3]) -> f64[3,4]
    %w = add %u, %x : f64[3,4]
    return %s, %e, %w, %b : f64[3], f64[3,4], f64[3,4], f64[3,4]
  }
}
"""

FFT_HEAD = ('%1 = "kernel.fft"(%x, %w) {kind = "rfft", axis = 0, n = none, norm = "backward", shape = [16], '
            'inputs = 2} : (f64[16], f64[16]) -> f64[9] {')
FFT = """module @main {
  func @main(%x: f64[16], %w: f64[16]) -> (f64[9]) {
    FFT_HEAD
    ^bb0(%2: f64, %3: f64):
      %4 = mul %2, %3 : f64
      yield %4 : f64
    } {
    ^bb0(%5: c128):
      %6 = "abs"(%5) : (c128) -> f64
      %7 = mul %6, %6 : f64
      yield %7 : f64
    }
    return %1 : f64[9]
  }
}
""".replace("FFT_HEAD", FFT_HEAD)


def fused() -> ir.Module:
    m = ir.parse_module(UNFUSED)
    run_pipeline(m, "fuse", verify_each=True)
    assert any(len(op.results) > 1 for op in kernels(m)), "the fixture should hold a kernel of two results"
    return m


def kernels(m):
    return [op for op in m.walk() if op.regions]


def op_nodes(g) -> list:
    """The op nodes in op order (their ids count ops in walk order)."""
    ops = [(n, OP_ID.match(k)) for k, n in nodes_by_name(g).items()]
    return [n for n, m in sorted((p for p in ops if p[1]), key=lambda p: int(p[1].group(2)))]


def first_line(node) -> str:
    return plain_text(node.get("label")).split("\n")[0]


def head(line: str) -> tuple[str, str]:
    """(result names, op name) of a label's first line `%a, %b = name` (or `yield`)."""
    lhs, _, name = line.rpartition(" = ")
    return lhs, name


def test_every_op_is_a_node_named_as_the_printer_names_it():
    m = fused()
    g = parse(to_dot(m).to_string())
    nodes = op_nodes(g)
    ops = list(m.walk())
    assert [head(first_line(n))[1] for n in nodes] == [op.name for op in ops]
    text = print_module(m)
    for n, op in zip(nodes, ops, strict=True):
        lhs, name = head(first_line(n))
        if lhs:  # `%3 = sin %1 : f64` or `%0 = "kernel.reduce"(...)`
            assert f"{lhs} = {name} " in text or f'{lhs} = "{name}"(' in text
        label = plain_text(n.get("label"))
        for r in op.results:
            assert str(r.type) in label  # dtype and shape, as f64[3,4]
    args = [plain_text(nodes_by_name(g)[f"arg{i}"].get("label")) for i in range(2)]
    assert args == ["%x\nf64[3,4]", "%y\nf64[3,4]"]


def test_each_kernel_is_a_cluster_holding_exactly_its_body_ops():
    m = fused()
    g = parse(to_dot(m).to_string())
    clusters = sorted(g.get_subgraphs(), key=lambda s: int(s.get_name().strip('"').split("_")[1]))
    ks = kernels(m)
    assert len(clusters) == len(ks) >= 2
    top = {k for k in nodes_by_name(g) if k in {n.get_name().strip('"') for n in g.get_nodes()}}
    for cluster, k in zip(clusters, ks, strict=True):
        body = [op for r in k.regions for b in r.blocks for op in b.ops]
        inside = [n for n in cluster.get_nodes() if n.get_name() != "node"]
        ops_inside = [head(first_line(n))[1] for n in inside if OP_ID.match(n.get_name().strip('"'))]
        assert ops_inside == [op.name for op in body]
        n_args = sum(len(b.args) for r in k.regions for b in r.blocks)
        assert len(inside) - len(ops_inside) == n_args  # the rest are the body's block arguments
        assert k.name in plain_text(cluster.get("label"))
    kernel_ids = [k for k, n in nodes_by_name(g).items() if OP_ID.match(k) and "kernel." in first_line(n)]
    assert len(kernel_ids) == len(ks) and set(kernel_ids) <= top  # the kernel's own node is outside


def text_operands(m) -> list[tuple[str, list[str]]]:
    """(results or op name, operand names) of each op line of print_module, in order."""
    out = []
    for line in print_module(m).splitlines():
        line = line.strip()
        if not line or line.startswith(("module", "func", "}", "^bb")):
            continue
        lhs, eq, rhs = line.partition(" = ")
        if not eq:
            lhs, rhs = line.split()[0], line
        out.append((lhs, re.findall(r"%[\w.$]+", rhs.split(" : ")[0].split(" {")[0])))
    return out


def test_edges_follow_the_dataflow_of_the_text():
    m = fused()
    g = parse(to_dot(m).to_string())
    by_id = nodes_by_name(g)

    def value_name(src: str, label: str | None) -> str:
        lhs, _ = head(first_line(by_id[src]))
        names = (lhs or first_line(by_id[src])).split(", ")
        return names[int(label.strip('"#')) if label else 0]

    into: dict[str, list[str]] = {}
    for e in g.get_edges():
        src, dst = e.get_source().strip('"'), e.get_destination().strip('"')
        into.setdefault(dst, []).append((src, e.get("label")))
    nodes = [k for k in by_id if OP_ID.match(k)]
    nodes.sort(key=lambda k: int(OP_ID.match(k).group(2)))
    for node_id, (lhs, operands) in zip(nodes, text_operands(m), strict=True):
        if "kernel." in first_line(by_id[node_id]):  # operands feed the body's arguments
            args = [k for k in by_id if k.startswith(node_id + "_r")]
            args.sort(key=lambda k: int(k.rsplit("a")[1]))
            got = [value_name(*into[a][0]) for a in args]
            (yielded,) = into[node_id]
            assert first_line(by_id[yielded[0]]) == "yield"
        else:
            got = [value_name(*s) for s in into.get(node_id, [])]
        assert sorted(got) == sorted(operands), f"{lhs}: {got} != {operands}"  # pydot groups edges by ends


def test_fft_kernel_links_the_transform_between_its_regions():
    m = ir.parse_module(FFT)
    verify(m)
    g = parse(to_dot(m).to_string())
    (cluster,) = g.get_subgraphs()
    inside = [head(first_line(n))[1] for n in cluster.get_nodes() if OP_ID.match(n.get_name().strip('"'))]
    assert inside == ["mul", "yield", "abs", "mul", "yield"]  # prologue, then epilogue
    e = next(e for e in g.get_edges() if e.get_destination() == '"op0_r1_a0"')
    assert first_line(nodes_by_name(g)[e.get_source().strip('"')]) == "yield" and e.get("label") == '"rfft"'
    assert ("arg1", "op0_r0_a1") in edges(g)


def test_module_of_several_functions_gets_a_cluster_per_function():
    m = fused()
    other = ir.parse_module(UNFUSED.replace("@f(", "@g("))
    run_pipeline(other, "fuse")
    g_func = other.funcs["g"]
    g_func.parent = None
    m.add_func(g_func)
    g = parse(module_to_dot(m).to_string())
    funcs = [s for s in g.get_subgraphs() if s.get_name().startswith('"cluster_func')]
    assert len(funcs) == 2
    names = node_names(g)
    assert "f0_arg0" in names and "f1_arg0" in names
    kernel_clusters = [s.get_name() for f in funcs for s in f.get_subgraphs()]
    assert len(set(kernel_clusters)) == len(kernel_clusters) == 2 * len(kernels(fused()))
    assert len([n for n in names if OP_ID.match(n)]) == len(list(m.walk()))


def test_func_to_dot_matches_module_to_dot_for_one_function():
    m = fused()
    assert func_to_dot(m.funcs["f"], "t").to_string() == module_to_dot(m).to_string()


WEIRD = 'say "hi" \\ {a|b} <c>\nnext'


def weird_module() -> ir.Module:
    """A fused function with a quote and a backslash in its name and an op with an odd string attribute."""
    m = fused()
    f = m.funcs.pop("f")
    f.name = 'we"ird\\fn'
    m.add_func(f)
    first = f.body.ops[0].results[0]
    f.body.insert(1, Operation("custom.note", [first], [first.type], {"text": WEIRD}))
    return m


def test_escaping_survives_quotes_backslashes_and_newlines():
    g = parse(to_dot(weird_module()).to_string())
    note = next(n for n in op_nodes(g) if "custom.note" in first_line(n))
    lines = plain_text(note.get("label")).split("\n")
    assert 'text="say \\"hi\\" \\\\ {a|b} <c>\\nnext"' in lines  # the attribute as print_attr writes it
    assert plain_text(g.get("label")) == 'func @we"ird\\fn'


def test_long_attributes_are_shortened():
    m = ir.parse_module(FFT)
    next(m.walk()).attrs["norm"] = "b" * 200
    label = plain_text(op_nodes(parse(to_dot(m).to_string()))[0].get("label"))
    line = next(s for s in label.split("\n") if s.startswith("norm="))
    assert line.endswith("...") and len(line) <= len("norm=") + MAX_ATTR_CHARS


@needs_dot
def test_svg_and_png_rendering(tmp_path):
    dot = to_dot(weird_module())
    svg = dot.create_svg()
    texts = svg_texts(svg)
    assert 'text="say \\"hi\\" \\\\ {a|b} <c>\\nnext"' in texts and 'func @we"ird\\fn' in texts
    assert "cluster_0" in svg_titles(svg)
    assert dot.create_png().startswith(b"\x89PNG")
    assert dot.write_png(tmp_path / "m.png").read_bytes().startswith(b"\x89PNG")
    assert b"<svg" in dot.write_svg(tmp_path / "m.svg").read_bytes()
    assert dot.write_raw(tmp_path / "m.dot").read_text() == dot.to_string()


@needs_dot
def test_graphviz_failures_raise_render_error():
    with pytest.raises(RenderError, match="nope"):
        Dot("g").create(format="nope")


def test_missing_graphviz_raises_a_clear_error(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    with pytest.raises(GraphvizNotFound) as e:
        to_dot(fused()).create_png()
    msg = str(e.value)
    assert "Graphviz" in msg and "'dot'" in msg and "PATH" in msg
    assert "apt-get install graphviz" in msg and "brew install graphviz" in msg and "conda" in msg


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="Func or Module"):
        to_dot(np.zeros(3))
    with pytest.raises(ValueError, match="format"):
        Dot("g").create(format="svg; rm -rf /")
    with pytest.raises(ValueError, match="attribute name"):
        Dot("g").add_node("a", **{"bad name": "x"})
    with pytest.raises(TypeError, match="attribute value"):
        Dot("g").add_node("a", label=object())
