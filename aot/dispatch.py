"""`__aot_function__`: the numpy-world analogue of torch's `__torch_function__`.

Library functions that are not numpy functions (`aot.nn.functional.*`, `aot.fft.*`) decorate
themselves with `dispatchable`. When an argument's type defines `__aot_function__` (an fx Proxy
does), the call is handed to it instead of running, so tracing records one `call_function`
node for the whole library function rather than the numpy calls inside it.

It imports nothing of aot: aot.nn and aot.fft use it without importing aot.fx (which imports aot.nn).
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

__all__ = ["dispatchable", "find_handler"]

F = TypeVar("F", bound=Callable[..., Any])


# types that never handle calls, checked first: a missed getattr on a type costs ~0.5 us
_PLAIN = frozenset({type(None), bool, int, float, complex, str, bytes, np.ndarray})


def _handler_of(value: Any) -> Any | None:
    if getattr(type(value), "__aot_function__", None) is not None:
        return value
    if type(value) in (list, tuple):
        for item in value:
            if type(item) not in _PLAIN and getattr(type(item), "__aot_function__", None) is not None:
                return item
    return None


def find_handler(args: tuple, kwargs: dict) -> Any | None:
    """First argument (or list/tuple element, or keyword value) that overrides library calls."""
    for value in args:
        if type(value) not in _PLAIN:
            found = _handler_of(value)
            if found is not None:
                return found
    for value in kwargs.values():
        if type(value) not in _PLAIN:
            found = _handler_of(value)
            if found is not None:
                return found
    return None


def dispatchable(fn: F) -> F:
    """Let `__aot_function__` handlers intercept calls of `fn` (the handler sees the public wrapper)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        handler = find_handler(args, kwargs)
        if handler is not None:
            return type(handler).__aot_function__(handler, wrapper, args, kwargs)
        return fn(*args, **kwargs)

    wrapper.__aot_dispatchable__ = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]
