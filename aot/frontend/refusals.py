"""numpy functions traced code refuses on purpose, each with its reason and the alternative.

lookup_translation raises UnsupportedError with the reason for these (instead of "no translation"),
and tools/numpy_coverage.py reports it: results whose shape depends on the data (traced code has
static or symbolic shapes), and the bit packers, whose uint8 the dialect's dtypes lack. The
data-dependent ones but trim_zeros take jax's `size=` (numpy_sized.py), whose translations raise
this message when size= is missing.
"""
from __future__ import annotations

from typing import Any

import numpy as np

DATA_DEPENDENT = "its result's shape depends on the data, known only when the compiled code runs"
NO_UINT8 = ("its result (np.packbits) or input (np.unpackbits) is uint8, a dtype traced code does not have "
            "(bool, int32, int64, float32, float64, complex64, complex128)")

_SIZE = ("pass size=N (and fill_value=), as in jax.numpy, for N entries: numpy's result padded with "
         "fill_value, or its first N")
_MASK_ALTERNATIVE = (f"{_SIZE}; or use np.where(cond, x, fill) to keep the shape, np.count_nonzero(cond) to "
                     f"count, or a reduction of x[cond] (x[cond].sum(), .mean(), .max()), which compiles")
_SET_ALTERNATIVE = (f"{_SIZE}; or compute it outside the compiled function, or use np.isin (whose result has "
                    f"x's shape)")

# numpy name -> (reason, alternative)
REFUSED: dict[str, tuple[str, str]] = {
    **dict.fromkeys(("nonzero", "argwhere", "flatnonzero", "extract", "compress"),
                    (DATA_DEPENDENT, _MASK_ALTERNATIVE)),
    "trim_zeros": (DATA_DEPENDENT, "slice with static bounds, or keep the zeros and mask them with np.where"),
    **dict.fromkeys(("unique", "unique_all", "unique_counts", "unique_inverse", "unique_values", "setdiff1d",
                     "intersect1d", "union1d", "setxor1d"), (DATA_DEPENDENT, _SET_ALTERNATIVE)),
    "packbits": (NO_UINT8, "pack into a wider integer: (b.reshape(-1, 8) << np.arange(7, -1, -1)).sum(-1)"),
    "unpackbits": (NO_UINT8, "unpack an int32/int64 array: (x[..., None] >> np.arange(7, -1, -1)) & 1"),
}


def refusal(func: Any) -> str | None:
    """The message for a refused numpy function, or None."""
    name = getattr(func, "__name__", None)
    if name not in REFUSED or getattr(np, name, None) is not func:
        return None
    why, alternative = REFUSED[name]
    return f"np.{name} is not supported in traced code: {why}; {alternative}"
