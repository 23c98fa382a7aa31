"""TRANSLATIONS: numpy callable -> translation `(emitter, *args, **kwargs)` emitting core ops.

It is derived, not listed: the ufuncs come from the rows' numpy names (numpy_ufuncs.UFUNC_CORE, plus
its decomposed ufuncs), the functions that are one core op from the translations registered against
their rows (registry.translates, resolved through each row's `numpy_names`), and the rest from each
module's hand-written DECOMPOSITIONS table (np.mean, np.hstack, np.einsum, ...).

`translate(emitter, func, *args, **kwargs)` is what a tracer calls from `__array_function__` and
`__array_ufunc__`; it raises UnsupportedError naming the function for anything not in the table.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any

from . import numpy_creation, numpy_fft, numpy_linalg, numpy_misc, numpy_reductions, numpy_shape, numpy_ufuncs
from . import assignment, numpy_conversions, numpy_scans
from . import numpy_quantiles, numpy_sorting
from . import numpy_linalg_eig, numpy_linalg_kernels
from . import numpy_arrays, numpy_nan, numpy_numeric, numpy_pieces, numpy_signal, numpy_stats  # everyday numpy
from . import numpy_sized  # size=/fill_value= for data-dependent shapes
from . import numpy_apply, numpy_assembly, numpy_polynomials, numpy_special  # misc numpy (issue 13)
from . import numpy_histogram  # np.histogram's one-pass counts
from .emitter import Emitter
from .operands import UnsupportedError
from .refusals import refusal
from .registry import Translation, row_functions


def _merged(*tables: dict[Any, Translation]) -> dict[Any, Translation]:
    out: dict[Any, Translation] = {}
    for table in tables:
        for func, fn in table.items():
            if func in out:
                raise ValueError(f"{qualified_name(func)} is translated twice ({out[func].__qualname__} and "
                                 f"{fn.__qualname__}): a row-named callable is not also a decomposition")
            out[func] = fn
    return out


def qualified_name(func: Any) -> str:
    """np.sin, np.fft.rfft, ...: how the user spells `func`."""
    mod = getattr(func, "__module__", None) or "numpy"
    name = getattr(func, "__name__", repr(func))
    private = mod == "numpy" or mod.startswith(("numpy._core", "numpy.lib"))
    return f"{'np' if private else mod.replace('numpy', 'np', 1)}.{name}"


def lookup_translation(func: Any) -> Translation:
    func = getattr(func, "__aot_original__", func)  # the tracer's stand-in for np.zeros & co
    try:
        return TRANSLATIONS[func]
    except (KeyError, TypeError):
        raise UnsupportedError(refusal(func) or f"{qualified_name(func)} is not supported in traced code (aot "
                               f"has no translation for it)") from None


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


# the modules holding function translations; each has a DECOMPOSITIONS table
MODULES = (numpy_ufuncs, numpy_reductions, numpy_shape, numpy_creation, numpy_linalg, numpy_fft, numpy_misc,
           numpy_scans, numpy_sorting, numpy_quantiles, numpy_linalg_kernels)
MODULES += (numpy_nan, numpy_stats, numpy_arrays, numpy_signal, numpy_pieces, numpy_numeric)  # everyday numpy
MODULES += (numpy_conversions,)  # np.asarray & co: reached through the tracer's substitutions
MODULES += (numpy_linalg_eig,)  # np.linalg.eig, eigvals, np.roots
MODULES += (numpy_sized,)  # np.nonzero, np.unique & co with size=: reached through substitutions
MODULES += (assignment,)  # np.put, np.place, np.copyto, ...: in-place updates
MODULES += (numpy_special, numpy_assembly, numpy_polynomials, numpy_apply)  # misc numpy (issue 13)
MODULES += (numpy_histogram,)  # np.histogram's one-pass counts
UFUNCS: dict[Any, Translation] = {u: numpy_ufuncs.ufunc_translation(u) for u in numpy_ufuncs.ALL_UFUNCS}
ROW_FUNCTIONS: dict[Any, Translation] = row_functions()  # numpy callables that are one core op's
DECOMPOSITIONS: dict[Any, Translation] = _merged(*(m.DECOMPOSITIONS for m in MODULES))
TRANSLATIONS: dict[Any, Translation] = _merged(UFUNCS, ROW_FUNCTIONS, DECOMPOSITIONS)


def is_supported(func: Any) -> bool:
    try:
        return func in TRANSLATIONS
    except TypeError:
        return False
