"""Proxies: stand-ins for numpy arrays that record every operation on them as graph nodes.

Operations are captured through Python's operator protocol, attribute access, numpy's
`__array_ufunc__`/`__array_function__` and aot's `__array_function__` analogue,
`__aot_function__` (see aot/dispatch.py).

Extension point for shape-aware tracing: a `Tracer` subclass overrides `create_proxy` (to put
metadata such as `node.meta["val"]` on the node) and `proxy(node)` (to return a `Proxy`
subclass). That subclass may define `shape`/`ndim`/`dtype` properties, `__len__`, `__bool__`,
`__index__` and `_make_attribute` and answer them from the metadata; nothing here needs to change.
"""
from __future__ import annotations

import bisect
import builtins
import dis
import inspect
import operator
import os
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .graph import Graph
from .node import Argument, Node, Target

__all__ = ["TraceError", "TracerBase", "GraphAppendingTracer", "Proxy", "Attribute"]

_FX_DIR = os.path.dirname(os.path.abspath(__file__))
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))
_NN_DIR = os.path.join(os.path.dirname(_FX_DIR), "nn")


class TraceError(ValueError):
    """Raised when traced code needs a concrete value of a Proxy (control flow, len, iteration)."""


def _is_internal(filename: str) -> bool:
    return filename.startswith((_FX_DIR, _NUMPY_DIR, _NN_DIR))


def user_frames() -> traceback.StackSummary:
    """The call stack without aot.fx/numpy internals, outermost first."""
    frames = [(f, lineno) for f, lineno in traceback.walk_stack(None)
              if not _is_internal(f.f_code.co_filename)]
    return traceback.StackSummary.extract(reversed(frames))


def user_location() -> str:
    """`File "...", line N, in fn` plus the source line of the innermost user frame."""
    frames = user_frames()
    if not frames:
        return ""
    return traceback.format_list([frames[-1]])[0].rstrip()


def _trace_error(what: str) -> TraceError:
    loc = user_location()
    return TraceError(what + (f"\n  at {loc.strip()}" if loc else ""))


_BASE_TYPES = (str, int, float, bool, complex, type(None), type(Ellipsis), np.generic, np.dtype, type)


class TracerBase:
    """Turns Python values into node arguments and records nodes into `self.graph`."""

    graph: Graph
    record_stack_traces: bool = False
    traced_func_name: str = "forward"

    def create_node(self, kind: str, target: Target, args: tuple, kwargs: dict, name: str | None = None,
                    type_expr: Any | None = None) -> Node:
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node: Node) -> Proxy:
        return Proxy(node, self)

    def create_proxy(self, kind: str, target: Target, args: tuple, kwargs: dict, name: str | None = None,
                     type_expr: Any | None = None,
                     proxy_factory_fn: Callable[[Node], Proxy] | None = None) -> Proxy:
        """Create a node from Python-level args (Proxies, constants) and wrap it in a Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        proxy = self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)
        if self.record_stack_traces and not node.stack_trace:
            node.stack_trace = "".join(traceback.format_list(user_frames()))
        return proxy

    def create_arg(self, a: Any) -> Argument:
        """Map a Python value to a node argument: Proxies to their nodes, containers recursively."""
        if isinstance(a, Proxy):
            if a.node.graph is not self.graph:
                raise RuntimeError(f"Proxy {a.node.name!r} belongs to another graph; values traced "
                                   "separately cannot be combined")
            return a.node
        if isinstance(a, Node) or isinstance(a, _BASE_TYPES):
            return a
        if isinstance(a, tuple):
            items = tuple(self.create_arg(x) for x in a)
            return type(a)(*items) if hasattr(a, "_fields") else items
        if isinstance(a, list):
            return [self.create_arg(x) for x in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                if isinstance(k, (Proxy, Node)):
                    raise TraceError(f"traced values cannot be dict keys (key {k!r})")
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, range):
            return range(a.start, a.stop, a.step)
        if isinstance(a, np.ndarray) or callable(a):
            return a  # the code generator binds it as a global
        raise NotImplementedError(f"argument of type: {type(a).__name__} cannot be recorded in an fx graph")

    def to_bool(self, obj: Proxy) -> bool:
        raise _trace_error("symbolically traced variables cannot be used as inputs to control flow "
                           f"(the truth value of {obj.node.name!r} was needed)")

    def iter(self, obj: Proxy) -> Iterator:
        raise _trace_error(f"Proxy object {obj.node.name!r} cannot be iterated. This can be attempted when "
                           "the Proxy is used in a loop or as a *args or **kwargs function argument")

    def keys(self, obj: Proxy) -> Any:
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """A tracer that appends to an existing graph (for building nodes with Proxies by hand)."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph


def _tracer_of(values: tuple, default: TracerBase) -> TracerBase:
    """The tracer to record with; Proxies recorded into another graph cannot be combined."""
    for v in values:
        if isinstance(v, Proxy) and v.tracer is not default and v.tracer.graph is not default.graph:
            raise RuntimeError(f"found Proxies from two different graphs ({v.node.name!r} and another); "
                               "values traced separately cannot be combined")
    return default


class Proxy:
    """A traced value. Operations on it return new Proxies and add nodes to `tracer.graph`."""

    __hash__ = object.__hash__  # defining __eq__ below must not make proxies unhashable

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        self.tracer = GraphAppendingTracer(node.graph) if tracer is None else tracer
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Any:
        if k.startswith("__") and k.endswith("__"):
            # numpy probes __array_interface__ etc.; pretending they exist would break it
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {k!r}")
        return self._make_attribute(k)

    def _make_attribute(self, k: str) -> Proxy:
        return Attribute(self, k)

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

    def __iter__(self) -> Iterator:
        # `a, b = proxy` unpacks a known number of items; anything else needs a concrete length
        frame = inspect.currentframe()
        caller = frame.f_back if frame is not None else None
        if caller is not None:
            insts = list(dis.get_instructions(caller.f_code))
            idx = bisect.bisect_left([i.offset for i in insts], caller.f_lasti)
            if idx < len(insts) and insts[idx].opname == "UNPACK_SEQUENCE":
                return (self[i] for i in range(insts[idx].argval))
        return self.tracer.iter(self)

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def keys(self) -> Any:
        return self.tracer.keys(self)

    def __len__(self) -> int:
        raise _trace_error("'len' is not supported in symbolic tracing by default. If you want this call "
                           "to be recorded, please call aot.fx.wrap('len') at module scope")

    def __index__(self) -> int:
        raise _trace_error(f"a traced value ({self.node.name!r}) cannot be used as a Python int")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise _trace_error(f"a traced value ({self.node.name!r}) cannot be converted to a concrete numpy "
                           "array during symbolic tracing")

    def __setitem__(self, key: Any, value: Any) -> None:
        self.tracer.create_proxy("call_function", operator.setitem, (self, key, value), {})

    # --- numpy and aot function protocols ---------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Proxy:
        target = ufunc if method == "__call__" else getattr(ufunc, method)
        tracer = _tracer_of(inputs, self.tracer)
        return tracer.create_proxy("call_function", target, inputs, kwargs)

    def __array_function__(self, func: Callable, types: tuple, args: tuple, kwargs: dict) -> Proxy:
        return self.tracer.create_proxy("call_function", func, args, kwargs)

    def __aot_function__(self, func: Callable, args: tuple, kwargs: dict) -> Proxy:
        return self.tracer.create_proxy("call_function", func, args, kwargs)


class Attribute(Proxy):
    """`proxy.name`: becomes `call_method` when called, else a lazy `getattr` node."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:  # type: ignore[override]
        if self._node is None:
            args = (self.root, self.attr)
            self._node = self.tracer.create_proxy("call_function", builtins.getattr, args, {}).node
        return self._node

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)


def _binary(op: Callable) -> tuple[Callable, Callable]:
    def forward(self: Proxy, other: Any) -> Proxy:
        return _tracer_of((other,), self.tracer).create_proxy("call_function", op, (self, other), {})

    def reflected(self: Proxy, other: Any) -> Proxy:
        return _tracer_of((other,), self.tracer).create_proxy("call_function", op, (other, self), {})

    return forward, reflected


def _unary(op: Callable) -> Callable:
    def method(self: Proxy) -> Proxy:
        return self.tracer.create_proxy("call_function", op, (self,), {})

    return method


_REFLECTABLE = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "floordiv": operator.floordiv,
                "truediv": operator.truediv, "mod": operator.mod, "pow": operator.pow,
                "lshift": operator.lshift, "rshift": operator.rshift, "and": operator.and_,
                "or": operator.or_, "xor": operator.xor, "matmul": operator.matmul}
_COMPARISONS = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "gt": operator.gt,
                "le": operator.le, "ge": operator.ge}
_UNARY = {"neg": operator.neg, "pos": operator.pos, "invert": operator.invert, "abs": builtins.abs}

for _name, _op in _REFLECTABLE.items():
    _fwd, _refl = _binary(_op)
    setattr(Proxy, f"__{_name}__", _fwd)
    setattr(Proxy, f"__r{_name}__", _refl)
for _name, _op in _COMPARISONS.items():
    setattr(Proxy, f"__{_name}__", _binary(_op)[0])
for _name, _op in _UNARY.items():
    setattr(Proxy, f"__{_name}__", _unary(_op))
Proxy.__getitem__ = _binary(operator.getitem)[0]  # type: ignore[attr-defined]
