"""The ir as a picture: `to_dot(func_or_module)` gives an `ir.dot.Dot` (DOT text, SVG, PNG).

Nodes: one per function argument, one per op (its result names, op name, result types with dtype
and shape, and its attributes, shortened), the `return` included. Edges go from a value's producer
to each op reading it (labelled `#i` when the producer has several results).

An op with regions (a fused kernel: kernel.elementwise, kernel.reduce, kernel.fft, ...) is a node
for its results, drawn next to a `subgraph cluster_N` that holds exactly its body: a node per body
block argument (linked, dashed, from the kernel operand it reads) and the body's ops. The body's
`yield` is linked to the kernel's node. A leading block argument of a later region (the transform's
value in kernel.fft's epilogue) is linked from the yield of the region before it.

Value names are those `print_module` prints, so the picture and `aot show --stage ir` agree. Node
ids: `argI` for function arguments, `opK` for ops in walk order, `opK_rR_aI` for body arguments
(prefixed `fJ_` per function when a module has several).
"""
from __future__ import annotations

from .core import Block, Func, Module, Operation, Value
from .dot import Dot, Subgraph, hash_color
from .logger import get_logger
from .printer import Namer, print_attr

log = get_logger(__name__)

__all__ = ["func_to_dot", "module_to_dot", "to_dot"]

MAX_ATTR_CHARS = 48  # a dense constant can print thousands of characters
ARG_COLOR, RETURN_COLOR, KERNEL_COLOR, BODY_ARG_COLOR, CONST_COLOR = (
    "AliceBlue", "PowderBlue", "LemonChiffon1", "GhostWhite", "LightGrey")


def to_dot(obj: Func | Module, name: str | None = None) -> Dot:
    """The picture of an ir Func or Module."""
    if isinstance(obj, Module):
        return module_to_dot(obj, name)
    if isinstance(obj, Func):
        return func_to_dot(obj, name)
    raise TypeError(f"to_dot(obj): expected an ir Func or Module, got {type(obj).__name__}")


def func_to_dot(func: Func, name: str | None = None) -> Dot:
    if not isinstance(func, Func):
        raise TypeError(f"func_to_dot(func): expected an ir Func, got {type(func).__name__}")
    dot = _new_dot(name or func.name, f"func @{func.name}")
    _Drawer(dot, "", [0]).func(func, dot)
    return dot


def module_to_dot(module: Module, name: str | None = None) -> Dot:
    """A module of one function is drawn as that function; several get one cluster each."""
    if not isinstance(module, Module):
        raise TypeError(f"module_to_dot(module): expected an ir Module, got {type(module).__name__}")
    funcs = list(module.funcs.values())
    if len(funcs) == 1:
        return func_to_dot(funcs[0], name or module.name)
    dot = _new_dot(name or module.name, f"module @{module.name}")
    clusters = [0]  # kernel cluster numbers run across the functions
    for j, f in enumerate(funcs):
        box = dot.subgraph(f"cluster_func{j}", label=f"func @{f.name}", style="dashed")
        _Drawer(dot, f"f{j}_", clusters).func(f, box)
    return dot


def _new_dot(name: str, label: str) -> Dot:
    dot = Dot(name, rankdir="TB", label=label, labelloc="t")
    dot.set_node_defaults(shape="box", style="rounded,filled", fillcolor="#CAFFE3")
    return dot


class _Drawer:
    """Walks one function as the printer does (results named before the regions' arguments)."""

    def __init__(self, dot: Dot, prefix: str, clusters: list[int]):
        self.dot = dot  # every edge goes to the top level: an edge in a cluster would pull its ends in
        self.prefix = prefix
        self.clusters = clusters
        self.namer = Namer()
        self.sources: dict[int, tuple[str, str]] = {}  # id(Value) -> (node id, edge label)
        self.n_ops = 0

    def func(self, f: Func, graph: Dot | Subgraph) -> None:
        for i, a in enumerate(f.args):
            node = graph.add_node(f"{self.prefix}arg{i}", label=f"{self.namer.define(a)}\n{a.type}",
                                  fillcolor=ARG_COLOR)
            self.sources[id(a)] = (node, "")
        self.block(f.body, graph)
        log.debug("drew @%s: %d ops, %d kernel clusters so far", f.name, self.n_ops, self.clusters[0])

    def block(self, block: Block, graph: Dot | Subgraph) -> str | None:
        """Draw the block's ops into `graph`; returns the node of its terminator (None when empty)."""
        node = None
        for op in block.ops:
            node = self.op(op, graph)
        return node

    def op(self, op: Operation, graph: Dot | Subgraph) -> str:
        node = f"{self.prefix}op{self.n_ops}"
        self.n_ops += 1
        names = [self.namer.define(r) for r in op.results]
        if op.regions:
            self.kernel_body(op, node, names, graph)
        else:
            self.link_operands(op, node)
        graph.add_node(node, **self.op_attrs(op, names))
        several = len(op.results) > 1
        for r in op.results:
            self.sources[id(r)] = (node, f"#{r.index}" if several else "")
        return node

    def link_operands(self, op: Operation, node: str) -> None:
        for v in op.operands:
            src, label = self.source(v, op)
            self.dot.add_edge(src, node, **({"label": label} if label else {}))

    def source(self, v: Value, user: Operation) -> tuple[str, str]:
        try:
            return self.sources[id(v)]
        except KeyError:
            raise ValueError(f"{user.name}: operand {v!r} is used before it is defined (or defined outside "
                             f"this function)") from None

    def kernel_body(self, op: Operation, node: str, names: list[str], graph: Dot | Subgraph) -> None:
        k = self.clusters[0]
        self.clusters[0] += 1
        head = f"{', '.join(names)} = {op.name}" if names else op.name
        box = graph.subgraph(f"cluster_{k}", label=f"body of {head}", style="rounded", color="royalblue",
                             penwidth=2)
        prev_yield = None
        for r, (region, operands) in enumerate(zip(op.regions, _region_operands(op), strict=True)):
            for b, block in enumerate(region.blocks):
                lead = len(block.args) - len(operands)
                for i, a in enumerate(block.args):
                    arg = box.add_node(f"{node}_r{r}" + (f"b{b}" if b else "") + f"_a{i}",
                                       label=f"{self.namer.define(a)}\n{a.type}", fillcolor=BODY_ARG_COLOR)
                    self.sources[id(a)] = (arg, "")
                    if i >= lead:
                        self.link_body_arg(arg, *self.source(operands[i - lead], op))
                    elif prev_yield is not None:  # the value the op makes between its regions
                        self.link_body_arg(arg, prev_yield, str(op.attrs.get("kind", "")))
                prev_yield = self.block(block, box) or prev_yield
        if prev_yield is not None:
            self.dot.add_edge(prev_yield, node)

    def link_body_arg(self, arg: str, src: str, label: str) -> None:
        self.dot.add_edge(src, arg, style="dashed", **({"label": label} if label else {}))

    def op_attrs(self, op: Operation, names: list[str]) -> dict:
        lines = [f"{', '.join(names)} = {op.name}" if names else op.name]
        if op.results:
            lines.append(", ".join(str(r.type) for r in op.results))
        lines += [f"{k}={_short(print_attr(v))}" for k, v in op.attrs.items()]
        attrs = {"label": "\n".join(lines), "fillcolor": _color(op)}
        if op.loc:
            attrs["tooltip"] = op.loc
        return attrs


def _region_operands(op: Operation) -> list[list[Value]]:
    """The operands each region's block arguments read, right-aligned (leading arguments are made
    by the op itself)."""
    if op.name == "kernel.fft" and isinstance(op.attrs.get("inputs"), int):
        k = op.attrs["inputs"]
        return [op.operands[:k], op.operands[k:]]
    return [list(op.operands)] * len(op.regions)


def _color(op: Operation) -> str:
    if op.regions:
        return KERNEL_COLOR
    if op.name == "return":
        return RETURN_COLOR
    if op.name == "constant":
        return CONST_COLOR
    return hash_color(op.name)


def _short(text: str) -> str:
    return text if len(text) <= MAX_ATTR_CHARS else text[: MAX_ATTR_CHARS - 3] + "..."
