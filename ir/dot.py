"""DOT text for Graphviz and its rendering: a small builder (`Dot`, `Subgraph`, `Record`) and `render`.

The graph pictures (`ir.picture` for the ir, `aot.fx.passes.graph_drawer` for fx graphs) build their
DOT here. `Dot` has the methods of pydot's `Dot` that the pictures need (`to_string`, `create`,
`create_svg`, `create_png`, `write`, `write_raw`, `write_svg`, `write_png`) without depending on pydot.

Escaping. Every id and attribute value is written as a quoted DOT string. Graphviz reads a label's
backslashes as escapes (`\\n`, `\\l`, `\\N`, ...), so `escape` doubles each backslash, escapes quotes
and turns newlines into `\\n`: the label shows exactly the given text. A `Record` label (shape
`record`) also escapes the characters that structure records (`{ } | < >`) inside its fields. Ids
are not labels: Graphviz reads them as written, and `quote_id` escapes only what DOT needs.

Rendering runs Graphviz's `dot` (found on PATH) in a subprocess with a timeout; without it
`GraphvizNotFound` says what to install.
"""
from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import time
from pathlib import Path

from .logger import get_logger

log = get_logger(__name__)

__all__ = ["Dot", "GraphvizNotFound", "Record", "RenderError", "Subgraph", "escape", "hash_color",
           "quote", "quote_id", "render"]

INSTALL_HINT = ("install Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz; "
                "conda: conda install graphviz) so that its `dot` program is on PATH")
DEFAULT_TIMEOUT_S = 60.0
_ATTR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_FORMAT = re.compile(r"[A-Za-z0-9_]+(:[A-Za-z0-9_]+)*\Z")  # dot -T values: svg, png, png:cairo, ...
_RECORD_SPECIALS = re.compile(r"([{}|<>])")
_ID_BACKSLASHES = re.compile(r'(\\+)(?=["\n]|\Z)')  # runs DOT's lexer would read as an escape
# fill colours for nodes without a colour of their own kind (torch.fx's graph_drawer palette)
HASH_COLORS = ("CadetBlue1", "Coral", "DarkOliveGreen1", "DarkSeaGreen1", "GhostWhite", "Khaki1",
               "LavenderBlush1", "LightSkyBlue", "MistyRose1", "MistyRose2", "PaleTurquoise2", "PeachPuff1",
               "Salmon", "Thistle1", "Thistle3", "Wheat1")


class GraphvizNotFound(RuntimeError):
    """The Graphviz program that renders DOT (`dot`) is not installed or not on PATH."""


class RenderError(RuntimeError):
    """Graphviz ran but failed (bad DOT, unknown format) or took longer than the timeout."""


# --- escaping ----------------------------------------------------------------------------------
def escape(text: str) -> str:
    """The inside of a quoted DOT string that Graphviz shows as `text` (newlines become line breaks)."""
    if not isinstance(text, str):
        raise TypeError(f"escape(text): expected a str, got {type(text).__name__}")
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\r\n", "\n").replace("\n", "\\n")


def quote(text: str) -> str:
    return f'"{escape(text)}"'


def quote_id(name: str) -> str:
    """A quoted DOT id (graph, subgraph or node name). Graphviz reads no escapes in ids but `\\"`, and
    keeps `\\\\` as two characters: backslashes stay as they are, except that a run of an odd number
    before a quote, a newline or the end gets one more (the closest text DOT can write there)."""
    if not isinstance(name, str):
        raise TypeError(f"DOT id: expected a str, got {type(name).__name__}")
    even = _ID_BACKSLASHES.sub(lambda m: m.group(1) + "\\" * (len(m.group(1)) % 2), name)
    return '"' + even.replace('"', '\\"') + '"'


def _record_escape(text: str) -> str:
    return _RECORD_SPECIALS.sub(r"\\\1", escape(text))


def hash_color(key: str) -> str:
    """A fill colour from HASH_COLORS chosen by `key` (stable across runs, unlike hash())."""
    return HASH_COLORS[int(hashlib.md5(key.encode()).hexdigest()[:8], 16) % len(HASH_COLORS)]


class Record:
    """A label for record-shaped nodes: fields separated by `|`. Fields are str (shown as given) or
    nested Records; `flip=True` wraps the fields in `{}`, which stacks them vertically in a
    top-to-bottom graph (as torch.fx's drawer shows a node)."""

    def __init__(self, fields, flip: bool = True):
        fields = list(fields)
        for f in fields:
            if not isinstance(f, (str, Record)):
                raise TypeError(f"Record fields: expected str or Record, got {type(f).__name__}")
        self.fields = fields
        self.flip = flip

    def render(self) -> str:
        """The escaped label text (the inside of the quoted DOT string)."""
        inner = "|".join(f.render() if isinstance(f, Record) else _record_escape(f) for f in self.fields)
        return "{" + inner + "}" if self.flip else inner

    def text(self) -> str:
        """The fields as plain lines, for shapes that are not records."""
        return "\n".join(f.text() if isinstance(f, Record) else f for f in self.fields)

    def __repr__(self) -> str:
        return f"Record({self.fields!r})"


def _value(v) -> str:
    if isinstance(v, Record):
        return f'"{v.render()}"'
    if isinstance(v, bool):
        return '"true"' if v else '"false"'
    if isinstance(v, (int, float)):
        return quote(repr(v))
    if isinstance(v, str):
        return quote(v)
    raise TypeError(f"DOT attribute value: expected str, int, float, bool or Record, got {type(v).__name__}")


def _attr_list(attrs: dict) -> str:
    return ", ".join(f"{k}={_value(v)}" for k, v in attrs.items())


def _checked(attrs: dict, where: str) -> dict:
    for k, v in attrs.items():
        if not _ATTR_NAME.match(k):
            raise ValueError(f"{where}: attribute name {k!r} is not an identifier")
        _value(v)  # raises on a value DOT cannot hold
    return dict(attrs)


# --- graphs ------------------------------------------------------------------------------------
class _Graph:
    """Nodes, edges, subgraphs and attributes of a graph or subgraph."""

    def __init__(self, name: str, **attrs):
        if not isinstance(name, str) or not name:
            raise ValueError(f"graph name: expected a non-empty str, got {name!r}")
        self.name = name
        self.attrs = _checked(attrs, f"graph {name!r}")
        self.node_defaults: dict = {}
        self.edge_defaults: dict = {}
        self.nodes: dict[str, dict] = {}
        self.edges: list[tuple[str, str, dict]] = []
        self.subgraphs: list[Subgraph] = []

    def set(self, key: str, value) -> None:
        self.attrs.update(_checked({key: value}, f"graph {self.name!r}"))

    def set_node_defaults(self, **attrs) -> None:
        self.node_defaults.update(_checked(attrs, "node defaults"))

    def set_edge_defaults(self, **attrs) -> None:
        self.edge_defaults.update(_checked(attrs, "edge defaults"))

    def add_node(self, name: str, **attrs) -> str:
        """Add (or update the attributes of) node `name`; returns the name."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"node name: expected a non-empty str, got {name!r}")
        self.nodes.setdefault(name, {}).update(_checked(attrs, f"node {name!r}"))
        return name

    def add_edge(self, src: str, dst: str, **attrs) -> None:
        for end in (src, dst):
            if not isinstance(end, str) or not end:
                raise ValueError(f"edge end: expected a node name (non-empty str), got {end!r}")
        self.edges.append((src, dst, _checked(attrs, f"edge {src!r} -> {dst!r}")))

    def add_subgraph(self, sub: Subgraph) -> Subgraph:
        if not isinstance(sub, Subgraph):
            raise TypeError(f"add_subgraph: expected a Subgraph, got {type(sub).__name__}")
        self.subgraphs.append(sub)
        return sub

    def subgraph(self, name: str, **attrs) -> Subgraph:
        """A new subgraph inside this one (a name starting with `cluster` draws a box around it)."""
        return self.add_subgraph(Subgraph(name, **attrs))

    def all_node_names(self) -> list[str]:
        """This graph's nodes and those of its subgraphs, at any depth."""
        return list(self.nodes) + [n for s in self.subgraphs for n in s.all_node_names()]

    def _body(self, indent: str) -> list[str]:
        # nodes are declared in their own (sub)graph: a node's first mention decides its cluster
        out = [f"{indent}{k}={_value(v)};" for k, v in self.attrs.items()]
        if self.node_defaults:
            out.append(f"{indent}node [{_attr_list(self.node_defaults)}];")
        if self.edge_defaults:
            out.append(f"{indent}edge [{_attr_list(self.edge_defaults)}];")
        for name, attrs in self.nodes.items():
            out.append(f"{indent}{quote_id(name)}" + (f" [{_attr_list(attrs)}];" if attrs else ";"))
        for s in self.subgraphs:
            out.append(f"{indent}subgraph {quote_id(s.name)} {{")
            out.extend(s._body(indent + "  "))
            out.append(f"{indent}}}")
        for src, dst, attrs in self.edges:
            tail = f" [{_attr_list(attrs)}]" if attrs else ""
            out.append(f"{indent}{quote_id(src)} -> {quote_id(dst)}{tail};")
        return out


class Subgraph(_Graph):
    """A subgraph; named `cluster...` it is drawn as a box (Graphviz's clusters)."""


class Dot(_Graph):
    """A directed graph (`digraph`) with pydot's output methods."""

    def to_string(self) -> str:
        return "\n".join([f"digraph {quote_id(self.name)} {{", *self._body("  "), "}"]) + "\n"

    def __str__(self) -> str:
        return self.to_string()

    def create(self, prog: str = "dot", format: str = "svg", timeout: float = DEFAULT_TIMEOUT_S) -> bytes:
        """The picture as bytes in `format` (svg, png, pdf, ... as `dot -T` takes)."""
        return render(self.to_string(), format=format, prog=prog, timeout=timeout)

    def create_svg(self, prog: str = "dot") -> bytes:
        return self.create(prog, "svg")

    def create_png(self, prog: str = "dot") -> bytes:
        return self.create(prog, "png")

    def write(self, path, prog: str = "dot", format: str = "raw") -> Path:
        """Write the DOT text (`format="raw"`) or the rendered picture to `path`; returns the path."""
        path = Path(path)
        data = self.to_string().encode() if format == "raw" else self.create(prog, format)
        path.write_bytes(data)
        log.debug("wrote %s (%d bytes, format %s)", path, len(data), format)
        return path

    def write_raw(self, path) -> Path:
        return self.write(path, format="raw")

    def write_svg(self, path, prog: str = "dot") -> Path:
        return self.write(path, prog, "svg")

    def write_png(self, path, prog: str = "dot") -> Path:
        return self.write(path, prog, "png")


# --- rendering ---------------------------------------------------------------------------------
def find_graphviz(prog: str = "dot") -> str:
    """The path of Graphviz's `prog`; GraphvizNotFound when it is not on PATH."""
    if not isinstance(prog, str) or not prog:
        raise ValueError(f"prog: expected the name of a Graphviz program such as 'dot', got {prog!r}")
    exe = shutil.which(prog)
    if exe is None:
        raise GraphvizNotFound(f"cannot render the graph picture: Graphviz's {prog!r} program is not on "
                               f"PATH; {INSTALL_HINT}")
    return exe


def render(source: str, format: str = "svg", prog: str = "dot", timeout: float = DEFAULT_TIMEOUT_S) -> bytes:
    """Run Graphviz on DOT `source`; returns the picture's bytes."""
    if not isinstance(source, str):
        raise TypeError(f"render(source): expected DOT text (str), got {type(source).__name__}")
    if not isinstance(format, str) or not _FORMAT.match(format):
        raise ValueError(f"format: expected a Graphviz output format such as 'svg' or 'png', got {format!r}")
    if not timeout or timeout <= 0:
        raise ValueError(f"timeout: expected a positive number of seconds, got {timeout!r}")
    exe = find_graphviz(prog)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([exe, f"-T{format}"], input=source.encode(), capture_output=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise RenderError(f"{prog} -T{format} did not finish within {timeout} s") from None
    err = proc.stderr.decode(errors="replace").strip()
    if proc.returncode != 0:
        raise RenderError(f"{prog} -T{format} failed (exit code {proc.returncode}): {err or 'no message'}")
    if err:  # warnings (a font not found, ...): the picture was made
        log.debug("%s -T%s: %s", prog, format, err)
    log.debug("%s -T%s: %d bytes of DOT -> %d bytes in %.0f ms", prog, format, len(source), len(proc.stdout),
              1e3 * (time.perf_counter() - t0))
    return proc.stdout
