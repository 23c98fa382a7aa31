"""The front end's function table, keyed by op row.

A numpy callable that is one core op is named by that op's row (`numpy_names` in aot/ops/), and its
translation registers itself against the op name, so the row stays the one place naming it:

    @translates("sum")                  # np.sum: every name OPDEFS["sum"].numpy_names lists
    def np_sum(em, a, axis=None, ...): ...

    @translates("fft", "fft.ifft")      # one of the row's names, where its names translate differently
    def np_ifft(em, a, n=None, ...): ...

`row_functions()` resolves the registered names to numpy's callables (dotted names below numpy,
aliases such as np.amax for the max row). What is not one core op (np.mean, np.hstack, np.einsum)
is a decomposition: each numpy_* module lists those by hand in its `DECOMPOSITIONS` table. ufuncs
have their own table, built from the same rows (numpy_ufuncs.UFUNC_CORE).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import aot.ops  # noqa: F401  (registers the rows the translations name)
from ir.opdef import OPDEFS

Translation = Callable[..., Any]

# op -> numpy name of its row (dotted below numpy: "fft.rfft") -> translation
ROW_TRANSLATIONS: dict[str, dict[str, Translation]] = {}


def resolve_numpy(name: str) -> Any:
    """np.fft.rfft for "fft.rfft"; None when this numpy has no such name."""
    obj: Any = np
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def translates(op: str, *numpy_names: str) -> Callable[[Translation], Translation]:
    """Register the decorated translation for `numpy_names` of `op`'s row (default: all of them).

    Each name must be one the row lists, and each is translated once."""
    row = OPDEFS.get(op)
    if row is None:
        raise KeyError(f"translates({op!r}): there is no op row {op!r} (aot/ops/)")
    names = tuple(numpy_names) or row.numpy_names
    unknown = [n for n in names if n not in row.numpy_names]
    if not names or unknown:
        raise ValueError(f"translates({op!r}): the row names {list(row.numpy_names)}, not "
                         f"{unknown or 'none'}; add the numpy name to the row's numpy_names")

    def register(fn: Translation) -> Translation:
        table = ROW_TRANSLATIONS.get(op, {})
        for n in names:
            if n in table:
                raise ValueError(f"np.{n} (op {op!r}) is translated twice: by {table[n].__qualname__} and "
                                 f"{fn.__qualname__}")
        ROW_TRANSLATIONS.setdefault(op, {}).update(dict.fromkeys(names, fn))
        return fn

    return register


def row_functions() -> dict[Any, Translation]:
    """numpy callable -> translation, for each registered row name this numpy has.

    Aliases that are one object (np.concat is np.concatenate) map to one translation."""
    out: dict[Any, Translation] = {}
    for op, by_name in ROW_TRANSLATIONS.items():
        for name, fn in by_name.items():
            func = resolve_numpy(name)
            if func is None:
                continue
            if out.get(func, fn) is not fn:
                raise ValueError(f"np.{name} (op {op!r}) has two translations: {out[func].__qualname__} and "
                                 f"{fn.__qualname__}")
            out[func] = fn
    return out


def row_of(func: Any) -> tuple[str, str] | None:
    """(op, numpy name) of a registered numpy callable, or None."""
    for op, by_name in ROW_TRANSLATIONS.items():
        for name in by_name:
            if resolve_numpy(name) is func:
                return op, name
    return None
