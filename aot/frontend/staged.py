"""StagedArray: an emitter value dressed as a numpy array, so that ordinary numpy code stages itself.

numpy hands calls on it to `__array_ufunc__` / `__array_function__` (NEP 13 / NEP 18); operators,
methods, attributes and indexing go to the same translations. With an IRBuilderEmitter this lowers a
plain numpy function straight to an ir function (`lower_numpy`); with an EagerEmitter it runs the
function through the core ops' references. The tracer's Proxy can reuse the same hooks.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ir.core import Func, Module
from ir.types import TensorType

from .emitter import Emitter, abstract_of, build_func
from .assignment import setitem
from .indexing import getitem
from .methods import (
    ATTRIBUTES,
    BINARY_OPERATORS,
    COMPARISON_OPERATORS,
    METHODS,
    UNARY_OPERATORS,
    translate_attribute,
    translate_method,
    translate_operator,
)
from .numpy_api import translate
from .numpy_ufunc_methods import translate_ufunc_method
from .operands import FrontendError


class StagedArray:
    __slots__ = ("value", "emitter")
    __array_priority__ = 1000  # numpy defers binary operators to us

    def __init__(self, value: Any, emitter: Emitter):
        self.value = value
        self.emitter = emitter

    # --- numpy's dispatch protocols ---------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method: str, *inputs: Any, **kwargs: Any):
        if method != "__call__":  # reduce, accumulate, ...: numpy_ufunc_methods' table
            return self._wrap(translate_ufunc_method(self.emitter, ufunc, method, *_unwrap(inputs),
                                                     **_unwrap(kwargs)))
        return self._wrap(translate(self.emitter, ufunc, *_unwrap(inputs), **_unwrap(kwargs)))

    def __array_function__(self, func, types, args, kwargs):
        return self._wrap(translate(self.emitter, func, *_unwrap(args), **_unwrap(kwargs)))

    def __array__(self, dtype=None, copy=None):
        raise FrontendError("a staged array has no concrete data while tracing; it cannot be converted with "
                            "np.asarray (keep using numpy functions on it)")

    # --- methods, attributes, indexing ------------------------------------------------------------
    def __getattr__(self, name: str):
        if name in METHODS:
            return lambda *args, **kwargs: self._wrap(
                translate_method(self.emitter, self.value, name, *_unwrap(args), **_unwrap(kwargs)))
        if name in ATTRIBUTES:
            return self._wrap(translate_attribute(self.emitter, self.value, name))
        raise AttributeError(f"staged array has no attribute {name!r}")

    def __getitem__(self, key: Any):
        return self._wrap(getitem(self.emitter, self.value, _unwrap(key)))

    def __setitem__(self, key: Any, value: Any):
        setitem(self.emitter, self.value, key, value)

    def __len__(self) -> int:
        shape = abstract_of(self.value).shape
        if not shape:
            raise TypeError("len() of unsized object")
        return shape[0]

    def __iter__(self):
        raise FrontendError("iterating over a staged array is not supported; index it or use numpy functions")

    def __bool__(self):
        raise FrontendError("the truth value of a staged array depends on data known only when the compiled "
                            "code runs; use np.where instead of `if`")

    def __repr__(self) -> str:
        a = abstract_of(self.value)
        return f"StagedArray({a.dtype}{list(a.shape)})"

    def _wrap(self, out: Any):
        if self.emitter.is_value(out):
            return StagedArray(out, self.emitter)
        if isinstance(out, tuple):
            return tuple(self._wrap(o) for o in out)
        return out


def _unwrap(x: Any):
    if isinstance(x, StagedArray):
        return x.value
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(e) for e in x)
    if isinstance(x, dict):
        return {k: _unwrap(v) for k, v in x.items()}
    return x


def _operator(name: str) -> Callable:
    def method(self: StagedArray, *others: Any):
        return self._wrap(translate_operator(self.emitter, name, self.value, *_unwrap(others)))

    method.__name__ = f"__{name}__"
    return method


for _name in BINARY_OPERATORS:
    setattr(StagedArray, f"__{_name}__", _operator(_name))
    setattr(StagedArray, f"__r{_name}__", _operator(f"r{_name}"))
for _name in (*COMPARISON_OPERATORS, *UNARY_OPERATORS):
    setattr(StagedArray, f"__{_name}__", _operator(_name))
StagedArray.__hash__ = None  # type: ignore[assignment]  (__eq__ is elementwise)


def lower_numpy(fn: Callable[..., Any], arg_types: Sequence[TensorType], name: str = "main",
                arg_names: Sequence[str] | None = None) -> tuple[Module, Func]:
    """Lower a plain numpy function to an ir function whose arguments have `arg_types`."""
    def body(em: Emitter, *values: Any):
        return _unwrap(fn(*(StagedArray(v, em) for v in values)))

    return build_func(body, arg_types, name, arg_names)
