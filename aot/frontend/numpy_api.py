"""TRANSLATIONS: numpy callable -> translation `(emitter, *args, **kwargs)` emitting core ops.

`translate(emitter, func, *args, **kwargs)` is what a tracer calls from `__array_function__` and
`__array_ufunc__`; it raises UnsupportedError naming the function for anything not in the table.
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from . import numpy_creation, numpy_fft, numpy_linalg, numpy_misc, numpy_reductions, numpy_shape, numpy_ufuncs
from .emitter import Emitter
from .operands import UnsupportedError

Translation = Callable[..., Any]

TRANSLATIONS: dict[Any, Translation] = {u: numpy_ufuncs.ufunc_translation(u) for u in numpy_ufuncs.ALL_UFUNCS}
_MODULES = (numpy_ufuncs, numpy_reductions, numpy_shape, numpy_creation, numpy_linalg, numpy_fft, numpy_misc)
for _module in _MODULES:
    TRANSLATIONS.update(_module.FUNCTIONS)


def qualified_name(func: Any) -> str:
    """np.sin, np.fft.rfft, ...: how the user spells `func`."""
    mod = getattr(func, "__module__", None) or "numpy"
    name = getattr(func, "__name__", repr(func))
    private = mod == "numpy" or mod.startswith(("numpy._core", "numpy.lib"))
    return f"{'np' if private else mod.replace('numpy', 'np', 1)}.{name}"


def lookup_translation(func: Any) -> Translation:
    try:
        return TRANSLATIONS[func]
    except (KeyError, TypeError):
        raise UnsupportedError(f"{qualified_name(func)} is not supported in traced code (aot has no "
                               f"translation for it)") from None


def translate(em: Emitter, func: Any, *args: Any, **kwargs: Any):
    """Apply numpy function or ufunc `func` to abstract values by emitting core ops."""
    fn = lookup_translation(func)
    try:
        _signature(fn).bind(em, *args, **kwargs)
    except TypeError as e:  # name numpy's function, not the translation, in argument errors
        raise TypeError(f"{qualified_name(func)}(): {e}") from None
    return fn(em, *args, **kwargs)


@functools.cache
def _signature(fn: Translation) -> inspect.Signature:
    return inspect.signature(fn)


def is_supported(func: Any) -> bool:
    try:
        return func in TRANSLATIONS
    except TypeError:
        return False
