"""Reading the graph pictures' DOT back in the tests: pydot parses it, these helpers undo the escaping.

Shared by tests/fx, tests/ir/test_picture.py and tests/export/test_cli_pictures.py.
"""
from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET

import pytest

_BREAKS = {"n": "\n", "l": "\n", "r": "\n"}


def parse(text: str):
    """The one graph in DOT `text`, parsed by pydot (the test fails when pydot cannot read it)."""
    pydot = pytest.importorskip("pydot")
    with warnings.catch_warnings():  # pydot's parser uses pyparsing names deprecated in pyparsing 3
        warnings.simplefilter("ignore", DeprecationWarning)
        graphs = pydot.graph_from_dot_data(text)
    assert graphs is not None and len(graphs) == 1, f"pydot could not parse the DOT:\n{text}"
    return graphs[0]


def unquote(raw: str | None) -> str:
    assert raw is not None and len(raw) >= 2 and raw[0] == raw[-1] == '"', f"not a quoted DOT string: {raw!r}"
    return raw[1:-1]


def plain_text(raw: str) -> str:
    """What Graphviz shows for a quoted plain label: `\\X` is X, `\\n` a line break."""
    return "".join(c for c, _ in _scan(unquote(raw)))


def record_fields(raw: str) -> list[str]:
    """The fields of a quoted record label: unescaped `{` `}` only structure it, `|` separates."""
    fields, cur = [], []
    for c, escaped in _scan(unquote(raw)):
        if not escaped and c == "|":
            fields.append("".join(cur))
            cur = []
        elif escaped or c not in "{}":
            cur.append(c)
    fields.append("".join(cur))
    return [f for f in fields if f]


def _scan(s: str):
    """(character, was escaped) pairs, with `\\n` `\\l` `\\r` turned into newlines."""
    i = 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            yield _BREAKS.get(s[i + 1], s[i + 1]), True
            i += 2
        else:
            yield s[i], False
            i += 1


def _declared(graph) -> list:
    """The nodes declared in `graph` itself (not pydot's `node`/`edge`/`graph` defaults statements)."""
    return [n for n in graph.get_nodes() if n.get_name() not in ("node", "edge", "graph")]


def node_names(graph) -> list[str]:
    """Every node declared in `graph` or its subgraphs."""
    names = [unquote(n.get_name()) for n in _declared(graph)]
    for sub in graph.get_subgraphs():
        names += node_names(sub)
    return names


def nodes_by_name(graph) -> dict:
    out = {unquote(n.get_name()): n for n in _declared(graph)}
    for sub in graph.get_subgraphs():
        out.update(nodes_by_name(sub))
    return out


def edges(graph) -> list[tuple[str, str]]:
    return [(unquote(e.get_source()), unquote(e.get_destination())) for e in graph.get_edges()]


def svg_texts(svg: bytes) -> list[str]:
    """The text lines of a rendered SVG (each label line and record field is one <text>)."""
    root = ET.fromstring(svg)
    return ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]


def svg_titles(svg: bytes) -> list[str]:
    root = ET.fromstring(svg)
    return ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}title")]
