"""aot.compiler: torch.compiler's contract (compile, reset, backends, is_compiling, disable)."""
from __future__ import annotations

import functools

from .api import CompiledFunction, is_compiling
from .backends import list_backends, register_backend

_COMPILED: "weakref.WeakSet[CompiledFunction]"  # noqa: F821 - set below


def compile(model=None, *, fullgraph: bool = False, dynamic: bool | None = None, backend="llvm",
            mode: str | None = None, options: dict | None = None, disable: bool = False):
    """Compile a numpy function (or aot.nn.Module) to native code; usable as a decorator with or
    without arguments. Same keywords as torch.compile."""
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if not callable(model):
        raise TypeError(f"aot.compile expects a function or aot.nn.Module, got {type(model).__name__}")
    if disable:
        return model
    cf = CompiledFunction(model, backend=backend, dynamic=dynamic, fullgraph=fullgraph, options=options)
    _COMPILED.add(cf)
    return cf


def reset() -> None:
    """Forget every compiled entry of every compiled function (torch.compiler.reset)."""
    for cf in list(_COMPILED):
        cf.reset()


def disable(fn=None, recursive: bool = True):
    """Mark `fn` to run eagerly even when called from compiled code: it is traced through as plain
    Python only if it can be; otherwise the caller falls back to numpy."""
    if fn is None:
        return functools.partial(disable, recursive=recursive)
    fn.__aot_disable__ = True
    return fn


def explain(fn, *args, **kwargs):
    from .explain import explain as _explain

    return _explain(fn, *args, **kwargs)


import weakref  # noqa: E402

_COMPILED = weakref.WeakSet()

__all__ = ["compile", "reset", "list_backends", "register_backend", "is_compiling", "disable", "explain",
           "CompiledFunction"]
