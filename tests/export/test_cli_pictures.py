"""`aot show --format dot|svg|png [-o FILE]`: pictures of the captured graph and of the fused ir."""

from __future__ import annotations

import shutil

import pytest

from aot.cli import main
from tests.fx.dot_reading import node_names, parse, svg_texts

from . import funcs

FUNCS = f"{funcs.__file__}"
ARGS = ["--arg", "f64[N,3]", "--arg", "f64[N,3]"]
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot program")


def show(*extra):
    return main(["show", f"{FUNCS}:elementwise", *ARGS, *extra])


def test_graph_as_dot_on_stdout_names_every_node(capsys):
    assert show("--stage", "graph", "--format", "dot") == 0
    names = set(node_names(parse(capsys.readouterr().out)))
    assert {"x", "y", "sin", "exp", "output"} <= names


def test_ir_as_dot_file_draws_the_fused_kernel(tmp_path, capsys):
    out = tmp_path / "elementwise.dot"
    assert show("--stage", "ir", "--format", "dot", "-o", str(out)) == 0
    assert capsys.readouterr().out == ""  # everything went to the file
    g = parse(out.read_text())
    clusters = [s for s in g.get_subgraphs() if s.get_name().startswith('"cluster_')]
    assert len(clusters) == 1  # the whole chain is one kernel.elementwise
    assert any("kernel.elementwise" in (n.get("label") or "") for n in g.get_nodes())


def test_text_is_unchanged_and_can_go_to_a_file(tmp_path, capsys):
    assert show("--stage", "ir") == 0
    printed = capsys.readouterr().out
    assert printed.startswith("module @main") and "kernel.elementwise" in printed
    out = tmp_path / "ir.txt"
    assert show("--stage", "ir", "--format", "text", "-o", str(out)) == 0
    assert out.read_text() == printed


@needs_dot
@pytest.mark.parametrize("stage", ["graph", "ir"])
def test_svg_and_png_files(stage, tmp_path):
    svg, png = tmp_path / "p.svg", tmp_path / "p.png"
    assert show("--stage", stage, "--format", "svg", "-o", str(svg)) == 0
    assert show("--stage", stage, "--format", "png", "-o", str(png)) == 0
    assert png.read_bytes().startswith(b"\x89PNG")
    texts = svg_texts(svg.read_bytes())
    assert any("sin" in t for t in texts)


@needs_dot
def test_svg_on_stdout(capsys):
    assert show("--stage", "graph", "--format", "svg") == 0
    assert "<svg" in capsys.readouterr().out


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--stage", "llvm", "--format", "dot"], "--stage graph or --stage ir only"),
        (["--stage", "asm", "--format", "svg", "-o", "x.svg"], "--stage asm prints text"),
        (["--stage", "ir", "--format", "png"], "give -o FILE.png"),
    ],
)
def test_bad_combinations_are_refused(extra, message, capsys):
    assert show(*extra) == 2
    assert message in capsys.readouterr().err


def test_unknown_format_is_refused(capsys):
    with pytest.raises(SystemExit) as e:
        show("--format", "jpeg")
    assert e.value.code == 2 and "invalid choice: 'jpeg'" in capsys.readouterr().err


def test_missing_graphviz_names_what_to_install(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    assert show("--stage", "ir", "--format", "svg", "-o", str(tmp_path / "p.svg")) == 1
    err = capsys.readouterr().err
    assert "GraphvizNotFound" in err and "apt-get install graphviz" in err
    assert not (tmp_path / "p.svg").exists()
