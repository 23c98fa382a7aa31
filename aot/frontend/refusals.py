"""numpy functions traced code refuses on purpose, each with its reason and the alternative.

lookup_translation raises UnsupportedError with the reason for these (instead of "no translation"),
and tools/numpy_coverage.py reports it. Two kinds: results whose shape depends on the data (traced
code has static or symbolic shapes; numpy's signatures have no jax-style `size=` to bound them),
and functions that mutate an argument (arrays are immutable in traced code).
"""
from __future__ import annotations

from typing import Any

import numpy as np

DATA_DEPENDENT = "its result's shape depends on the data, known only when the compiled code runs"
MUTATES = "it mutates an argument in place, and arrays are immutable in traced code"

_MASK_ALTERNATIVE = ("use np.where(cond, x, fill) to keep the shape, np.count_nonzero(cond) to count, or a "
                     "reduction of x[cond] (x[cond].sum(), .mean(), .max()), which compiles")
_SET_ALTERNATIVE = "compute it outside the compiled function, or use np.isin (whose result has x's shape)"

# numpy name -> (reason, alternative)
REFUSED: dict[str, tuple[str, str]] = {
    **dict.fromkeys(("nonzero", "argwhere", "flatnonzero", "extract", "compress"),
                    (DATA_DEPENDENT, _MASK_ALTERNATIVE)),
    "trim_zeros": (DATA_DEPENDENT, "slice with static bounds, or keep the zeros and mask them with np.where"),
    **dict.fromkeys(("unique", "unique_all", "unique_counts", "unique_inverse", "unique_values", "setdiff1d",
                     "intersect1d", "union1d", "setxor1d"), (DATA_DEPENDENT, _SET_ALTERNATIVE)),
    **dict.fromkeys(("copyto", "place", "put", "putmask", "fill_diagonal"),
                    (MUTATES, "build a new array: np.where(mask, values, x)")),
    "put_along_axis": (MUTATES, "build the result instead: np.where(mask, values, arr), or gather with "
                                "np.take_along_axis (e.g. values reordered by np.argsort(indices, axis))"),
}


def refusal(func: Any) -> str | None:
    """The message for a refused numpy function, or None."""
    name = getattr(func, "__name__", None)
    if name not in REFUSED or getattr(np, name, None) is not func:
        return None
    why, alternative = REFUSED[name]
    return f"np.{name} is not supported in traced code: {why}; {alternative}"
