"""`Tracer` and `symbolic_trace`: run a function or Module on Proxies and record a Graph."""
from __future__ import annotations

import builtins
import functools
import inspect
import math
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from ir.logger import get_logger

from ..nn.module import Module
from ..nn.parameter import Parameter
from . import _pytree
from ._codegen import PyTreeCodeGen
from .graph import Graph
from .graph_module import GraphModule
from .node import Argument, has_side_effect, map_aggregate
from .proxy import Proxy, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "PHBase"]

logger = get_logger(__name__)


class PHBase:
    """Marks a `concrete_args` leaf that stays an input (a placeholder) after tracing."""

    def __repr__(self) -> str:
        return "PH"


PH = PHBase()

# (id of a module's globals, name) -> those globals; filled by `wrap` at import time of user code
_wrapped_fns_to_patch: dict[tuple[int, str], dict[str, Any]] = {}


def wrap(fn_or_name: str | Callable) -> str | Callable:
    """Record calls of a module-level function (or builtin such as 'len') as one call_function node.

    Call it at module scope, with the function's name or as a decorator.
    """
    if callable(fn_or_name):
        name = getattr(fn_or_name, "__name__", None)
        if name is None or name == "<lambda>":
            raise ValueError("wrap() needs a named module-level function; lambdas cannot be wrapped")
    elif isinstance(fn_or_name, str):
        name = fn_or_name
    else:
        raise TypeError(f"wrap() expects a function or a function name, got {type(fn_or_name).__name__}")
    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    if caller is None or caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(caller.f_globals), name)] = caller.f_globals
    return fn_or_name


@has_side_effect
def _assert(condition: Any, message: str) -> None:
    """Checks a value that tracing specialised on (from `concrete_args`)."""
    if not condition:
        raise AssertionError(message)


@has_side_effect
def _assert_is_none(value: Any, message: str) -> None:
    if value is not None:
        raise AssertionError(message)


def _find_proxy(args: tuple, kwargs: dict) -> Proxy | None:
    found: list[Proxy] = []
    map_aggregate((args, kwargs), lambda x: found.append(x) if isinstance(x, Proxy) else None)
    return found[0] if found else None


def _create_wrapped_func(orig_fn: Callable) -> Callable:
    @functools.wraps(orig_fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        proxy = _find_proxy(args, kwargs)
        if proxy is None:
            return orig_fn(*args, **kwargs)
        out = proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
        out.node.meta["is_wrapped"] = True
        return out

    return wrapped


class _Patcher:
    """Temporary monkey-patches that are all undone, in reverse order, on exit."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], None]] = []
        self._patched: set[tuple[int, str]] = set()

    def patch(self, namespace: dict[str, Any], name: str, new_value: Any) -> None:
        key = (id(namespace), name)
        if key in self._patched:
            return
        self._patched.add(key)
        if name in namespace:
            orig = namespace[name]
            self._undo.append(lambda: namespace.__setitem__(name, orig))
        else:
            self._undo.append(lambda: namespace.pop(name, None))
        namespace[name] = new_value

    def patch_method(self, cls: type, name: str, new_fn: Callable) -> None:
        orig = cls.__dict__[name]
        self._undo.append(lambda: setattr(cls, name, orig))
        setattr(cls, name, new_fn)

    def __enter__(self) -> _Patcher:
        return self

    def __exit__(self, *exc: Any) -> None:
        while self._undo:
            self._undo.pop()()


def _autowrap_check(patcher: _Patcher, namespace: dict[str, Any], function_ids: set[int]) -> None:
    for name, value in list(namespace.items()):
        if not name.startswith("_") and callable(value) and id(value) in function_ids:
            patcher.patch(namespace, name, _create_wrapped_func(value))


def _patch_wrapped_functions(patcher: _Patcher) -> None:
    for (_, name), namespace in _wrapped_fns_to_patch.items():
        orig = namespace[name] if name in namespace else getattr(builtins, name, None)
        if orig is None:
            raise NameError(f"aot.fx.wrap({name!r}): no function of that name in its module or builtins")
        patcher.patch(namespace, name, _create_wrapped_func(orig))


class Tracer(TracerBase):
    """Records a Module's `forward` (or a function) into a Graph; override methods to customise."""

    proxy_buffer_attributes: bool = True

    def __init__(self, autowrap_modules: tuple[ModuleType, ...] = (math,),
                 autowrap_functions: tuple[Callable, ...] = (), param_shapes_constant: bool = False) -> None:
        super().__init__()
        self._autowrap_modules = tuple(autowrap_modules)
        self._autowrap_function_ids = {id(v) for m in self._autowrap_modules for k, v in m.__dict__.items()
                                       if not k.startswith("_") and callable(v)}
        self._autowrap_function_ids |= {id(f) for f in autowrap_functions}
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths: dict[int, str] | None = None
        self.root: Module = Module()
        self.tensor_attrs: dict[int, tuple[np.ndarray, str]] = {}

    # --- argument conversion ------------------------------------------------------------
    def create_arg(self, a: Any) -> Argument:
        """Parameters become get_attr nodes; other arrays become attributes of the root (constants)."""
        if isinstance(a, Parameter):
            for name, p in self.root.named_parameters():
                if p is a:  # through create_proxy, so subclasses see (and annotate) every node
                    return self.create_proxy("get_attr", name, (), {}).node
            raise NameError("a Parameter that is not a member of the traced module was used")
        if isinstance(a, np.ndarray):
            entry = self.tensor_attrs.get(id(a))
            if entry is None:
                qualname = self.get_fresh_qualname("_tensor_constant")
                setattr(self.root, qualname, a)
                entry = self.tensor_attrs[id(a)] = (a, qualname)
            return self.create_proxy("get_attr", entry[1], (), {}).node
        return super().create_arg(a)

    def get_fresh_qualname(self, prefix: str) -> str:
        i = 0
        while hasattr(self.root, f"{prefix}{i}"):
            i += 1
        return f"{prefix}{i}"

    # --- modules ------------------------------------------------------------------------
    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        """aot.nn's own modules (except Sequential) are recorded as call_module, not traced through."""
        from ..nn.layers import Sequential  # aot.nn.layers imports aot.fx (via functional): import late

        return type(m).__module__.startswith("aot.nn") and not isinstance(m, Sequential)

    def path_of_module(self, mod: Module) -> str:
        if self.submodule_paths is not None:
            path = self.submodule_paths.get(id(mod))
            if path is not None:
                return path
        for name, m in self.root.named_modules():
            if m is mod:
                return name
        raise NameError(f"module {type(mod).__name__} is not installed as a submodule of the traced root")

    def call_module(self, m: Module, forward: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        name = self.path_of_module(m)
        if not self.is_leaf_module(m, name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", name, args, kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict[str, Any]) -> Any:
        """Value of `module.attr` during tracing: parameters (and buffers) become get_attr Proxies."""
        if isinstance(attr_val, Parameter):
            candidates = self.root.named_parameters()
        elif self.proxy_buffer_attributes and isinstance(attr_val, np.ndarray):
            candidates = self.root.named_buffers()
        else:
            return attr_val
        for name, value in candidates:
            if value is attr_val:
                if name not in parameter_proxy_cache:
                    parameter_proxy_cache[name] = self.create_proxy("get_attr", name, (), {})
                return parameter_proxy_cache[name]
        return attr_val

    # --- inputs -------------------------------------------------------------------------
    def create_args_for_root(self, root_fn: Callable, is_module: bool,
                             concrete_args: dict[str, Any] | tuple | None = None) -> tuple[Callable, list]:
        """Placeholders for `root_fn`'s parameters; returns the function to call and its arguments."""
        fn_for_analysis = inspect.unwrap(root_fn)
        params = list(inspect.signature(fn_for_analysis).parameters.values())[1 if is_module else 0:]
        for p in params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise NotImplementedError(f"tracing a signature with *args/**kwargs ({p}) is not supported; "
                                          "give the inputs names")
        names = [p.name for p in params]
        if isinstance(concrete_args, tuple):
            if len(concrete_args) != len(names):
                raise ValueError(f"concrete_args has {len(concrete_args)} values but "
                                 f"{fn_for_analysis.__name__} "
                                 f"takes {len(names)} arguments")
            concrete_args = dict(zip(names, concrete_args, strict=True))
        concrete_args = dict(concrete_args or {})
        unknown = set(concrete_args) - set(names)
        if unknown:
            raise TypeError(f"concrete_args names {sorted(unknown)} are not arguments of "
                            f"{fn_for_analysis.__name__}")
        annotations = getattr(fn_for_analysis, "__annotations__", {})
        values = [self._placeholder_for(p, concrete_args, annotations) for p in params]
        flat, in_spec = _pytree.tree_flatten(tuple(values))
        prefix = [self.root] if is_module else []
        if all(c.is_leaf() for c in in_spec.children_specs):
            return root_fn, prefix + values
        codegen = PyTreeCodeGen(names, in_spec)
        self.graph.set_codegen(codegen)

        def flatten_fn(*flat_args: Any) -> list:
            tree_args = _pytree.tree_unflatten(list(flat_args[len(prefix):]), in_spec)
            out, codegen.out_spec = _pytree.tree_flatten(root_fn(*flat_args[:len(prefix)], *tree_args))
            return out

        return flatten_fn, prefix + flat

    def _placeholder_for(self, param: inspect.Parameter, concrete_args: dict[str, Any],
                         annotations: dict[str, Any]) -> Any:
        name = param.name
        default = () if param.default is inspect.Parameter.empty else (param.default,)
        if name not in concrete_args:
            ann = annotations.get(name)
            return self.create_proxy("placeholder", name, default, {},
                                     type_expr=ann if isinstance(ann, type) else None)
        count = 0
        specialized = "has been specialized to have value"

        def replace_ph(x: Any) -> Any:
            nonlocal count
            count += 1
            out = self.create_proxy("placeholder", f"{name}_{count}", default, {})
            if isinstance(x, PHBase):
                return out
            if type(x) in (bool, int, float, str, complex):
                self.create_proxy("call_function", _assert,
                                  (out == x, f"{name} {specialized} {x!r} but got another value"), {})
            elif x is None:
                self.create_proxy("call_function", _assert_is_none,
                                  (out, f"{name} {specialized} None but got another value"), {})
            else:
                warnings.warn(f"Was not able to add assertion to guarantee correct input {name} to "
                              "specialized function. It is up to the user to make sure that your inputs "
                              "match the inputs "
                              f"you specialized the function with.", stacklevel=4)
            return x

        return _pytree.tree_map(replace_ph, concrete_args[name])

    # --- driver -------------------------------------------------------------------------
    def trace(self, root: Module | Callable[..., Any],
              concrete_args: dict[str, Any] | tuple | None = None) -> Graph:
        """Run `root` (a Module's forward, or a function) on Proxies and return the recorded Graph."""
        is_module = isinstance(root, Module)
        if is_module:
            self.root = root
            fn = getattr(type(root), self.traced_func_name)
            self.submodule_paths = {id(m): name for name, m in root.named_modules()}
        else:
            self.root = Module()
            fn = root
        self.graph = Graph(tracer_cls=type(self))
        self.tensor_attrs = {}
        _collect_array_attrs(self.root, "", self.tensor_attrs)
        fn_globals = getattr(inspect.unwrap(fn), "__globals__", {})
        traced_fn, args = self.create_args_for_root(fn, is_module, concrete_args)
        cache: dict[str, Any] = {}
        orig_getattr, orig_call = Module.__getattr__, Module.__call__

        def module_getattr_wrapper(mod: Module, attr: str) -> Any:
            return self.getattr(attr, orig_getattr(mod, attr), cache)

        def module_call_wrapper(mod: Module, *args: Any, **kwargs: Any) -> Any:
            def forward(*args: Any, **kwargs: Any) -> Any:
                return orig_call(mod, *args, **kwargs)

            mod_globals = getattr(getattr(mod, "forward", mod), "__globals__", {})
            _autowrap_check(patcher, mod_globals, self._autowrap_function_ids)
            return self.call_module(mod, forward, args, kwargs)

        try:
            with _Patcher() as patcher:
                patcher.patch_method(Module, "__getattr__", module_getattr_wrapper)
                patcher.patch_method(Module, "__call__", module_call_wrapper)
                _patch_wrapped_functions(patcher)
                _autowrap_check(patcher, fn_globals, self._autowrap_function_ids)
                for module in self._autowrap_modules:
                    _autowrap_check(patcher, module.__dict__, self._autowrap_function_ids)
                result = traced_fn(*args)
                ret_ann = getattr(fn, "__annotations__", {}).get("return")
                self.create_node("output", "output", (self.create_arg(result),), {},
                                 type_expr=ret_ann if isinstance(ret_ann, type) else None)
        finally:
            self.submodule_paths = None
        logger.debug("traced %s into %d nodes", getattr(fn, "__qualname__", fn), len(self.graph.nodes))
        return self.graph


def _collect_array_attrs(m: Module, prefix: str, out: dict[int, tuple[np.ndarray, str]]) -> None:
    """Plain ndarray attributes of the module tree, so constants used in forward map to get_attr."""
    for k, v in m.__dict__.items():
        if isinstance(v, np.ndarray) and not isinstance(v, Parameter):
            out[id(v)] = (v, prefix + k)
    for k, v in m._buffers.items():
        if v is not None:
            out[id(v)] = (v, prefix + k)
    for k, sub in m.named_children():
        _collect_array_attrs(sub, f"{prefix}{k}.", out)


def symbolic_trace(root: Module | Callable[..., Any],
                   concrete_args: dict[str, Any] | None = None) -> GraphModule:
    """Trace `root` with a default `Tracer` and wrap the graph in a GraphModule."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else getattr(root, "__name__", type(root).__name__)
    return GraphModule(tracer.root, graph, name)
