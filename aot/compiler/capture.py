"""Capture: trace a numpy function with shape-aware arrays into an fx graph of core ops.

User code sees `TracedArray`s: they know their dtype and shape (so code may branch on `x.shape`,
`x.ndim`, `x.dtype`), and every numpy call, operator, method or index on them is translated by
aot.frontend into core ops recorded as fx `call_function` nodes whose target is the core op
(`aot.frontend.core.ops.<name>`). Each node's `meta["val"]` holds its (dtype, shape).
Data-dependent control flow raises GraphBreak naming the user's source line.
"""
from __future__ import annotations

import linecache
import os
import sys
import weakref
from typing import Any

import numpy as np

import ir
from ir import dtypes as D
from ir.records import field, record
from ir.symbols import deciding

from .. import frontend
from ..frontend.assignment import assigned, scattered
from ..frontend.core import ops as core_ops
from ..frontend.methods import ATTRIBUTES, BINARY_OPERATORS, COMPARISON_OPERATORS, METHODS, UNARY_OPERATORS
from ..frontend.numpy_ufunc_methods import UFUNC_METHODS, translate_ufunc_method
from ..frontend.selection import MaskedSelection, data_dependent
from ..fx import Graph, GraphModule
from . import aliasing, nested
from .aliasing import VIEW_FUNCTIONS, VIEW_METHODS
from .conversions import traced_conversions
from .creations import creating

_AOT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class GraphBreak(RuntimeError):
    """The function cannot be captured as one graph (data-dependent control flow, mutation, ...)."""


def user_frame_summary() -> str:
    """`file:line: source` of the innermost frame outside aot (the user's code)."""
    f = sys._getframe(1)
    while f is not None:
        fn = os.path.abspath(f.f_code.co_filename)
        if not fn.startswith(_AOT_DIR) and "numpy" not in fn.split(os.sep)[-3:-1]:
            line = linecache.getline(fn, f.f_lineno).strip()
            return f"{fn}:{f.f_lineno}: {line}"
        f = f.f_back
    return "<unknown>"


@record(frozen=True)
class ValMeta:
    """What a node's value is known to be while tracing: `meta["val"]`."""

    dtype: ir.DType
    shape: tuple

    @property
    def ir_type(self) -> ir.TensorType:
        return ir.TensorType(self.dtype, self.shape)


class TracedArray:
    """A numpy-array stand-in during capture: dtype + shape known, data unknown."""

    __slots__ = ("__weakref__", "_node", "_stale", "_tracer", "meta")
    __array_priority__ = 1000

    def __init__(self, node, meta: ValMeta, tracer: CaptureTracer):
        self._node = node
        self.meta = meta
        self._tracer = tracer
        self._stale = None
        tracer.track(self)

    @property
    def tracer(self) -> CaptureTracer:
        """The capture that records what is done with this array: its own, or the innermost nested
        capture (a function transform tracing its function, aot.func) that sees it from outside."""
        inner = nested.innermost()
        t = self._tracer
        return inner if inner is not None and inner is not t and t in inner.outer else t

    @property
    def __aot_emitter__(self) -> CaptureTracer:
        """What records a core op called on this array (aot.frontend.core.CoreOp): a graph of core
        ops (a GraphModule's forward) traces into one node per op."""
        return self.tracer

    @property
    def node(self):
        """The value's graph node (an in-place update of the array or of its base moves it on)."""
        if self._node is None:
            raise GraphBreak(self._stale)
        return self._node

    # --- what user code may inspect -----------------------------------------------------------
    @property
    def dtype(self) -> np.dtype:
        return self.meta.dtype.numpy

    @property
    def shape(self) -> tuple:
        dyn = self.tracer.dyn
        return self.meta.shape if dyn is None else tuple(dyn.symint(d) for d in self.meta.shape)

    def __aot_abstract__(self):
        """What the front end sees: ir dtype and dims as ints/sympy expressions (aot.frontend)."""
        from ..frontend import Abstract

        return Abstract(self.meta.dtype, self.meta.shape)

    @property
    def ndim(self) -> int:
        return len(self.meta.shape)

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n = n * d
        return n

    def __len__(self) -> int:
        if not self.meta.shape:
            raise TypeError("len() of unsized object")
        d = self.meta.shape[0]
        return d if isinstance(d, int) else self.tracer.dyn.specialize(d)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return f"TracedArray({self.node.name}: {self.meta.ir_type})"

    # --- data-dependent conversions break the graph -------------------------------------------
    def _break(self, what: str):
        raise GraphBreak(f"data-dependent {what} on a traced array at {user_frame_summary()}; "
                         "aot cannot capture control flow that depends on array values "
                         "(use np.where, or fullgraph=False to run such code eagerly)")

    def __bool__(self):
        self._break("control flow (bool())")

    def __int__(self):
        self._break("conversion int()")

    def __float__(self):
        self._break("conversion float()")

    def __complex__(self):
        self._break("conversion complex()")

    def __index__(self):
        self._break("use as an index")

    def __array__(self, dtype=None, copy=None):
        self._break("conversion to a numpy array")

    def item(self, *a):
        self._break("item()")

    def tolist(self):
        self._break("tolist()")

    def __setitem__(self, key, value):
        t = self.tracer
        if t.fold_setitem(self, key, value) or t.is_own_view(self, key, value):
            return  # folded at trace time, or `x[k] += v`'s final x[k] = (x[k], updated in place)
        frontend.setitem(t, self, key, *t.sizes_as_exprs((value,)))

    # --- numpy protocols -----------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__":  # reduce, accumulate, ...: numpy_ufunc_methods' table
            if method not in UFUNC_METHODS:
                raise GraphBreak(f"np.{ufunc.__name__}.{method} is not supported in compiled code "
                                 f"(at {user_frame_summary()})")
            return self.tracer.settle(translate_ufunc_method(self.tracer, ufunc, method,
                                                             *self.tracer.sizes_as_exprs(inputs), **kwargs), inputs)
        return self.tracer.settle(frontend.translate(self.tracer, ufunc, *self.tracer.sizes_as_exprs(inputs),
                                                     **kwargs), inputs)

    def __array_function__(self, func, types, args, kwargs):
        t = self.tracer
        kwargs = dict(zip(kwargs, t.sizes_as_exprs(tuple(kwargs.values())), strict=True))
        try:
            out = frontend.translate(t, func, *t.sizes_as_exprs(args), **kwargs)
        except frontend.UnsupportedError:
            # an argument the translation needs known (np.quantile's q) may be a constant the function
            # made with np.full & co (creations.py): retry with its value, as numpy's own call sees it
            known_args, known_kwargs = _known_constants(args), dict(zip(kwargs, _known_constants(kwargs.values())))
            if all(a is b for a, b in zip((*known_args, *known_kwargs.values()), (*args, *kwargs.values()))):
                raise
            args, kwargs = known_args, known_kwargs
            out = frontend.translate(t, func, *t.sizes_as_exprs(args), **kwargs)
        return t.settle(out, (*args, *kwargs.values()), view=func in VIEW_FUNCTIONS)

    def __aot_function__(self, func, args, kwargs):
        """aot.nn.functional / aot.fft calls (see aot.dispatch)."""
        t = self.tracer
        kwargs = dict(zip(kwargs, t.sizes_as_exprs(tuple(kwargs.values())), strict=True))
        return t.settle(_library_translation(func)(t, *t.sizes_as_exprs(args), **kwargs), (*args, *kwargs.values()))

    def __getitem__(self, index):
        out = self.tracer.settle(frontend.getitem(self.tracer, self, index), view=True)
        if isinstance(out, TracedArray) and out._node.meta["alias"].chain and _concrete(index):
            out._node.meta.setdefault("view_key", (self._node, index))  # writes through it: a where (assign)
        return out

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        t, view = self.tracer, name in VIEW_METHODS
        if name in METHODS:
            return lambda *a, **k: t.settle(frontend.translate_method(t, self, name, *a, **k), (self, *a), view)
        if name in ATTRIBUTES:
            return t.settle(frontend.translate_attribute(t, self, name), (self,), view)
        raise AttributeError(f"'ndarray' (traced) has no attribute {name!r}")


def _concrete(x, depth: int = 0) -> bool:
    """No traced array or symbolic size in x (nested tuples, lists, slices)."""
    if isinstance(x, (TracedArray, MaskedSelection)) or (hasattr(x, "node") and not isinstance(x, np.ndarray)):
        return False
    if isinstance(x, (tuple, list)) and depth < 8:
        return all(_concrete(v, depth + 1) for v in x)
    if isinstance(x, slice):
        return _concrete((x.start, x.stop, x.step), depth + 1)
    return True


def _known_constants(values) -> tuple:
    """Each traced array whose value is a constant known while tracing (np.full & co, folded
    writes) as that numpy array; everything else as it is."""
    return tuple(_known(v) if isinstance(v, TracedArray) and v._node is not None else v for v in values)


def _known(ta: TracedArray):
    node, m = ta._node, ta.meta
    if not all(isinstance(d, int) for d in m.shape) or node.target not in (core_ops.full, core_ops.constant):
        return ta
    value = node.kwargs.get("value")
    if not isinstance(value, (bool, int, float, complex, np.ndarray, np.generic)):
        return ta  # a size expression: known at run time only
    return np.array(np.broadcast_to(np.asarray(value, m.dtype.numpy), m.shape))


def _arrays_in(args) -> list:
    """The traced arrays among call arguments (one level of lists and tuples)."""
    out = []
    for a in args:
        if isinstance(a, TracedArray):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(x for x in a if isinstance(x, TracedArray))
    return out


def _library_translation(func):
    from ..frontend import nn_functional

    mod, name = getattr(func, "__module__", "") or "", getattr(func, "__name__", "")
    if mod.startswith("aot.nn") and name in nn_functional.FUNCTIONS:
        return nn_functional.FUNCTIONS[name]
    if mod.startswith("aot.fft"):
        np_fn = getattr(np.fft, name, None)
        if np_fn is not None and frontend.is_supported(np_fn):
            return lambda em, *a, **k: frontend.translate(em, np_fn, *a, **_numpy_fft_kwargs(name, k))
    raise GraphBreak(f"{mod}.{name} cannot be compiled yet (at {user_frame_summary()})")


def _numpy_fft_kwargs(name: str, kwargs: dict) -> dict:
    """torch's `dim` is numpy's `axis` (1-D transforms) or `axes` (2-D and N-D ones)."""
    if "dim" not in kwargs:
        return kwargs
    kwargs = dict(kwargs)
    dim = kwargs.pop("dim")
    if dim is not None:
        kwargs["axes" if name.endswith(("2", "n")) else "axis"] = dim
    return kwargs


def _operator(name: str, reflected: bool = False):
    key = f"r{name}" if reflected else name

    def method(self, *args):
        out = frontend.translate_operator(self.tracer, key, self, *self.tracer.sizes_as_exprs(args))
        return out if key[0] == "i" and key[1:] in BINARY_OPERATORS else self.tracer.settle(out, (self, *args))

    method.__name__ = f"__{key}__"
    return method


for _n in BINARY_OPERATORS:  # the front end's one operator table
    setattr(TracedArray, f"__{_n}__", _operator(_n))
    setattr(TracedArray, f"__r{_n}__", _operator(_n, reflected=True))
    setattr(TracedArray, f"__i{_n}__", _operator(f"i{_n}"))  # in place, as numpy's out=x (assignment.py)
for _n in (*COMPARISON_OPERATORS, *UNARY_OPERATORS):
    setattr(TracedArray, f"__{_n}__", _operator(_n))
TracedArray.__hash__ = object.__hash__


class CaptureTracer:
    """The frontend Emitter that records core ops into an fx Graph."""

    outer: tuple = ()  # the captures this one is nested in (aot.func's), innermost first

    def __init__(self, dyn=None):
        self.dyn = dyn  # DynamicShapes when some dims are symbolic, else None
        self.graph = Graph()
        self.lifted: list = []  # arrays captured from closures/modules, fed by reference each call
        self._lifted_ids: dict[int, TracedArray] = {}
        self._lifted_nodes: list = []
        self._live: dict = {}  # base node -> the live TracedArrays that are it or numpy views of it

    # in-place updates (aliasing.py) ------------------------------------------------------------
    def track(self, ta: TracedArray) -> None:
        # by id: TracedArray's == is numpy's elementwise one, which sets and WeakSets would call
        self._live.setdefault(ta._node.meta["alias"].base, {})[id(ta)] = weakref.ref(ta)

    def _untrack(self, ta: TracedArray) -> None:
        self._live.get(ta._node.meta["alias"].base, {}).pop(id(ta), None)

    def live_on(self, base) -> list:
        """The live arrays that are `base` or numpy views of it."""
        refs = self._live.get(base, {})
        out = [r() for r in refs.values()]
        return [t for t in out if t is not None and t._node is not None and t._node.meta["alias"].base is base]

    def _rebind(self, ta: TracedArray, node) -> None:
        self._untrack(ta)
        ta._node = node
        self.track(ta)

    def assign(self, target: TracedArray, new) -> None:
        """numpy's in-place update of `target` to the value `new`: `target`, its base and every live
        view of the base move on to the new value (aliasing.py)."""
        if not isinstance(target, TracedArray):  # numpy's own reads of it (a.sum()) would not see the update
            raise GraphBreak(f"an in-place update of a numpy array captured from outside the function (a global "
                             f"or closure) at {user_frame_summary()}; pass it as an argument instead")
        a = target.node.meta["alias"]
        if a.unknown:
            raise GraphBreak(f"an in-place update of an array whose memory numpy may or may not share with "
                             f"another (a reshape of a strided view with symbolic dims) at {user_frame_summary()}; "
                             f"copy it first (x = x.copy())")
        live = [w for w in self.live_on(a.base) if w is not target]
        new = self._own(self.as_value(new))
        if a.chain:
            if a.read_only:
                raise ValueError("assignment destination is read-only")
            if not a.positional:
                raise frontend.UnsupportedError("writing through x.real or x.imag is not supported in traced "
                                                "code; assign the whole array, e.g. x[...] = v + 1j * x.imag")
            if not live:  # nothing else shows the base: this array is all there is of it
                self._rebind(target, new._node)
                return
            new = self._through(a, new)
        for w in live + [target]:
            aw = w._node.meta["alias"]
            if aw.unknown:
                self._poison(w)
            else:
                self._rebind(w, self._replay(aw.chain, new._node) if aw.chain else new._node)

    def is_own_view(self, ta: TracedArray, key, value) -> bool:
        """Whether value is ta[key] itself (the same view of the same base): assigning it changes nothing."""
        if not isinstance(value, TracedArray) or value._node is None or not _concrete(key):
            return False
        va, a = value._node.meta["alias"], ta._node.meta["alias"]
        if va.base is not a.base or len(va.chain) <= len(a.chain):
            return False
        probe = frontend.getitem(self, ta, key)
        pa = probe._node.meta["alias"] if isinstance(probe, TracedArray) else None
        return pa is not None and len(pa.chain) == len(va.chain) and all(
            p.target is v.target and p.kwargs == v.kwargs and p.args[1:] == v.args[1:]
            for p, v in zip(pa.chain, va.chain))

    def fold_setitem(self, ta: TracedArray, key, value) -> bool:
        """`ta[key] = value` at trace time, when ta is a new constant array (np.zeros & co, or one
        folded before) no op has read and no view shows, and key and value are constants."""
        node = ta._node
        if node.target not in (core_ops.full, core_ops.constant) or node.users or node.meta["alias"].chain:
            return False
        if any(w is not ta for w in self.live_on(node)) or not _concrete((key, value)):
            return False
        arr = node.meta.get("folded")
        if arr is None:
            arr = _known(ta)
            if arr is ta:
                return False  # symbolic dims, or a size expression known only at run time
            const = self.graph.call_function(core_ops.constant, (), {"value": arr, "dtype": ta.meta.dtype})
            const.meta["val"] = ta.meta
            const.meta["alias"] = aliasing.base_alias(const, ta.meta.shape)
            const.meta["folded"] = arr
            self._rebind(ta, const)
        arr[key] = value  # numpy's own assignment, casts and errors
        return True

    def _own(self, v: TracedArray) -> TracedArray:
        """v as a base no other array shares (a new node equal to it when it is not one)."""
        a = v._node.meta["alias"]
        shared = any(w is not v for w in self.live_on(a.base))
        if a.chain or shared or v._node.op == "placeholder":
            return self.emit("cast", [v], {"dtype": v.meta.dtype})
        return v

    def _through(self, a: aliasing.Alias, new: TracedArray) -> TracedArray:
        """The base after writing `new` through the view `a`: the view's chain applied to an iota of
        the base says which base element each view element is."""
        meta = a.base.meta["val"]
        key = a.chain[-1].meta.get("view_key")
        if key is not None and key[0] is a.base:  # base[key]: numpy's own assignment into the base
            return self._own(assigned(self, TracedArray(a.base, meta, self), key[1], new))
        n = 1
        for d in meta.shape:
            n = n * d
        iota = self.emit("iota", [], {"n": n, "dtype": D.int64})
        iota = self.emit("reshape", [iota], {"shape": tuple(meta.shape)})
        pos = TracedArray(self._replay(a.chain, iota._node), ValMeta(D.int64, new.meta.shape), self)
        base = TracedArray(a.base, meta, self)
        return self._own(scattered(self, base, pos, new, unique=True))

    def _replay(self, chain: tuple, node):
        """The view `chain` (nodes of view ops) re-applied from `node`."""
        start, old = node, chain[0].args[0] if chain else None
        for v in chain:
            prev = node
            node = self.graph.call_function(v.target, (prev, *v.args[1:]), dict(v.kwargs))
            node.meta["val"] = v.meta["val"]
            key = v.meta.get("view_key")
            if key is not None and key[0] is old:
                node.meta["view_key"] = (start, key[1])
            node.meta["alias"] = aliasing.derive(node, v.target.name, v.kwargs, prev.meta["alias"],
                                                 prev.meta["val"].shape, v.meta["val"].shape)
        return node

    def _poison(self, w: TracedArray) -> None:
        self._untrack(w)
        w._node = None
        w._stale = ("an array used after an in-place update of an array it may share memory with (numpy's "
                    "reshape of a strided view with symbolic dims may copy or not); copy it first (y = y.copy())")

    def settle(self, result, args=(), view: bool = False):
        """A translation's results as numpy returns them: views when numpy's function returns views,
        else new arrays, which no update of the arguments reaches (and which reach no argument)."""
        if view or not isinstance(result, (TracedArray, tuple, list)):
            return result
        if isinstance(result, (tuple, list)):
            return type(result)(self.settle(r, args) for r in result) if type(result) in (tuple, list) else result
        node = result._node
        if node.op == "placeholder" or any(node is a._node for a in _arrays_in(args)):
            return self.emit("cast", [result], {"dtype": result.meta.dtype})  # a new array equal to it
        if node.meta["alias"].chain:
            self._untrack(result)
            node.meta["alias"] = aliasing.base_alias(node, result.meta.shape)
            self.track(result)
        return result

    # Emitter protocol -----------------------------------------------------------------------
    def is_value(self, x) -> bool:
        # arrays captured from outside are values too: they become lifted graph inputs
        return isinstance(x, (TracedArray, np.ndarray))

    def emit(self, op: str, operands: list, attrs: dict):
        vals = [self.as_value(v) for v in operands]
        attrs = {k: self._attr_arg(v) for k, v in attrs.items()}
        types = [v.meta.ir_type for v in vals]
        if self.dyn is not None:
            types = [ir.TensorType(t.dtype, self.dyn.canonical(t.shape)) for t in types]
        try:
            result_types = ir.opdef.infer_result_types(op, types, dict(attrs))
        except ir.OpError as e:  # name the user's line: the op alone does not say where
            raise ValueError(f"{e} (at {user_frame_summary()})") from e
        if self.dyn is not None:
            result_types = [ir.TensorType(t.dtype, self.dyn.canonical(t.shape)) for t in result_types]
        args = tuple(v.node for v in vals)
        kwargs = attrs
        node = self.graph.call_function(getattr(core_ops, op), args, kwargs)
        if len(result_types) == 1 and vals:
            node.meta["alias"] = aliasing.derive(node, op, attrs, vals[0].node.meta["alias"], vals[0].meta.shape,
                                                 result_types[0].shape)
        else:
            node.meta["alias"] = aliasing.base_alias(node, result_types[0].shape if result_types else ())
        outs = [TracedArray(node, ValMeta(t.dtype, t.shape), self) for t in result_types]
        if len(outs) == 1:
            node.meta["val"] = outs[0].meta
            return outs[0]
        node.meta["val"] = tuple(o.meta for o in outs)
        return tuple(self._getitem_node(node, i, o.meta) for i, o in enumerate(outs))

    def _getitem_node(self, node, i, meta):
        import operator

        n = self.graph.call_function(operator.getitem, (node, i))
        n.meta["val"] = meta
        n.meta["alias"] = aliasing.base_alias(n, meta.shape)
        return TracedArray(n, meta, self)

    def sizes_as_exprs(self, args: tuple) -> tuple:
        """Operands as the front end takes them: a SymInt (`x * x.shape[0]`) becomes its sympy
        expression, which the front end treats as a weak Python int known at run time."""
        if self.dyn is None:
            return args
        return tuple(self._size_expr(a) if not isinstance(a, (TracedArray, MaskedSelection)) and hasattr(a, "node")
                     else a
                     for a in args)

    def _size_expr(self, a):
        """The sympy expression of a SymInt/SymFloat, its Python type visible to the front end
        (ir.symbols.size_is_int): a float that sympy simplified to an integer (2*n/2) keeps a
        float factor."""
        kind = type(a).__name__
        if kind == "SymBool":
            return bool(a)  # guarded to its value, as `if n > 3:` is
        expr = self.dyn.expr_of(a)
        if isinstance(expr, int) or not hasattr(expr, "is_integer"):
            return expr
        from ir.symbols import int_emittable, size_is_int, sympy

        if size_is_int(expr) and not int_emittable(expr):  # e.g. 2**n: specialised (guarded) instead
            return int(a) if kind == "SymInt" else float(a)
        if kind == "SymFloat" and size_is_int(expr):
            return sympy().Float(1.0) * expr
        return expr

    def _attr_arg(self, v):
        """Attributes are plain data: SymInts from user code become their sympy expressions."""
        if isinstance(v, (tuple, list)):
            return type(v)(self._attr_arg(x) for x in v)
        if self.dyn is not None and hasattr(v, "node"):
            return self.dyn.expr_of(v)
        return v

    def as_value(self, v) -> TracedArray:
        """A traced value for an operand: traced arrays as they are; arrays captured from outside
        (parameters, globals) become lifted graph inputs; scalars become constants."""
        if isinstance(v, TracedArray):
            if v._tracer is not self and v._tracer not in self.outer:
                raise TypeError(f"an array traced by another capture (kept in a global or a closure from an earlier "
                                f"trace) is used at {user_frame_summary()}; pass it as an argument instead")
            return v
        if isinstance(v, np.ndarray):
            return self.lift(v)
        if isinstance(v, (bool, int, float, complex, np.generic)):
            arr = np.asarray(v)
            return self.emit("constant", [], {"value": arr.item(), "dtype": D.from_numpy(arr.dtype)})
        raise TypeError(f"cannot use {type(v).__name__} as an array operand in compiled code")

    def lift(self, arr: np.ndarray, fetch=None) -> TracedArray:
        key = id(arr)
        if key not in self._lifted_ids:
            node = self.graph.placeholder(f"lifted_{len(self.lifted)}")
            meta = ValMeta(D.from_numpy(arr.dtype), tuple(int(d) for d in arr.shape))
            node.meta["val"] = meta
            node.meta["alias"] = aliasing.base_alias(node, meta.shape)
            self.lifted.append(fetch or (lambda a=arr: a))
            self._lifted_nodes.append(node)
            self._lifted_ids[key] = TracedArray(node, meta, self)
        return self._lifted_ids[key]

    def placeholder(self, name: str, meta: ValMeta) -> TracedArray:
        node = self.graph.placeholder(name)
        node.meta["val"] = meta
        node.meta["alias"] = aliasing.base_alias(node, meta.shape)
        return TracedArray(node, meta, self)


@record
class Capture:
    gm: GraphModule
    input_index: list[int]  # flat leaf index of each graph input (arrays)
    lifted: list  # fetchers of lifted arrays, graph inputs after the leaves
    out_spec: Any
    out_template: list
    leaf_kinds: list  # per leaf: "array" or ("const", value)
    dynamic_dims: dict  # leaf index -> set of symbolic dims
    dyn: Any = None  # DynamicShapes (the ShapeEnv) when some dims are symbolic
    # arguments the function updated in place: ("input", leaf index, graph output k), whose new values
    # the caller copies back (numpy changes the caller's arrays)
    mutations: list = field(default_factory=list)


def capture(fn, args, kwargs, leaves, spec, *, module=None, dynamic=False, names=None) -> Capture:
    """Trace `fn` on traced stand-ins for the array leaves of its arguments.

    dynamic: False (all dims static), True (all dims symbolic) or a set of (leaf index, dim) pairs
    to make symbolic (automatic dynamic after a guard failure). `names` are readable sources of
    the leaves, used in guards."""
    from ..fx._pytree import tree_flatten, tree_unflatten
    from .guards import leaf_sources

    names = names or leaf_sources(fn, args, kwargs)
    dyn = None
    if dynamic:
        from .dynamic import DynamicShapes

        dyn = DynamicShapes()
    tracer = CaptureTracer(dyn)
    traced_leaves, input_index, kinds = [], [], []
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, np.ndarray):
            dtype = _dtype_of_input(leaf, i, names[i] if i < len(names) else f"#{i}")
            if dyn is not None:
                wanted = True if dynamic is True else {d for j, d in dynamic if j == i}
                shape = dyn.input_dims(i, names[i], leaf.shape, wanted)
            else:
                shape = tuple(int(d) for d in leaf.shape)
            traced_leaves.append(tracer.placeholder(f"arg{i}", ValMeta(dtype, shape)))
            input_index.append(i)
            kinds.append("array")
        else:
            traced_leaves.append(leaf)
            kinds.append(("const", leaf))
    if module is not None:
        _lift_module_state(tracer, module)
    targs = tree_unflatten(traced_leaves, spec)
    targs, tkwargs = targs if kwargs else (targs, {})
    with deciding(dyn), traced_conversions(TracedArray), creating(tracer):
        result = fn(*targs, **tkwargs)
        out_leaves, out_spec = tree_flatten(result)
        graph_outs, template = _outputs(tracer, out_leaves)
        mutations = updated_arrays(tracer, traced_leaves)
        for kind, i, ta in mutations:
            graph_outs.append(ta.node)
    _order_placeholders(tracer)
    if dyn is not None:  # after `s1 == s0` was guarded, inputs are typed with s0 alone
        for node in tracer.graph.nodes:
            if node.op == "placeholder":
                m = node.meta["val"]
                node.meta["val"] = ValMeta(m.dtype, dyn.canonical(m.shape))
    tracer.graph.output(tuple(graph_outs))
    gm = GraphModule({}, tracer.graph)
    gm.meta["dynamic"] = dyn
    n_out = len(graph_outs) - len(mutations)
    return Capture(gm, input_index, tracer.lifted, out_spec, template, kinds,
                   dyn.symbolic if dyn is not None else {}, dyn,
                   [(kind, i, n_out + k) for k, (kind, i, _) in enumerate(mutations)])


def updated_arrays(tracer: CaptureTracer, traced_leaves: list) -> list:
    """("input", flat leaf index, array) of each argument the function updated in place (captured
    arrays it may not update: CaptureTracer.assign)."""
    return [("input", i, leaf) for i, leaf in enumerate(traced_leaves)
            if isinstance(leaf, TracedArray) and leaf.node.op != "placeholder"]


def _outputs(tracer, out_leaves):
    graph_outs, template = [], []
    for leaf in out_leaves:
        if isinstance(leaf, TracedArray):  # inputs returned as they are come back as fresh copies
            template.append(("graph", len(graph_outs)))
            graph_outs.append(leaf.node)
        elif isinstance(leaf, np.ndarray):
            template.append(("graph", len(graph_outs)))
            graph_outs.append(tracer.lift(leaf).node)
        elif isinstance(leaf, MaskedSelection):  # its length is only known at run time
            raise GraphBreak(f"{data_dependent('returning x[mask]')} (at {user_frame_summary()})")
        elif tracer.dyn is not None and hasattr(leaf, "node"):  # a SymInt result: specialise it
            template.append(("const", tracer.dyn.specialize(tracer.dyn.expr_of(leaf))))
        else:
            template.append(("const", leaf))
    return graph_outs, template


def _order_placeholders(tracer: CaptureTracer) -> None:
    """Move lifted placeholders (created when first used) after the argument placeholders."""
    g = tracer.graph
    args = [n for n in g.nodes if n.op == "placeholder" and n not in tracer._lifted_nodes]
    if not args:
        return
    anchor = args[-1]
    for node in tracer._lifted_nodes:
        if anchor.next is not node:
            anchor.append(node)
        anchor = node


def _lift_module_state(tracer: CaptureTracer, module) -> None:
    """Parameters and buffers are graph inputs fetched from the module at each call, so updating
    them (in place or by re-assignment) is seen without recompiling."""
    for name, p in list(module.named_parameters()) + list(_named_buffers(module)):
        tracer.lift(p, fetch=_attr_fetcher(module, name))


def _named_buffers(module):
    fn = getattr(module, "named_buffers", None)
    return fn() if fn is not None else []


def _attr_fetcher(module, dotted: str):
    """Fetch module.a.b.weight at call time, walking the modules' own dicts: Module.__getattr__
    costs microseconds per level, and a submodule or parameter replaced since tracing is seen."""
    *path, leaf = dotted.split(".")

    def fetch():
        owner = module
        for p in path:
            owner = owner.__dict__["_modules"][p]
        d = owner.__dict__
        value = d["_parameters"].get(leaf)
        if value is None:
            value = d["_buffers"].get(leaf)
        return value if value is not None else getattr(owner, leaf)

    return fetch


def _dtype_of_input(arr: np.ndarray, i: int, name: str) -> ir.DType:
    try:
        return D.from_numpy(arr.dtype)
    except TypeError as e:
        raise TypeError(f"argument {name}: {e}") from None
