"""np.histogram: the bins of every sample and their counts in one pass (the histogram_uniform and
histogram_edges rows, aot/ops/histogram.py), no array of bin indices in between.

The edges and numpy's checks are numpy_stats's (a static `range` computed by numpy at trace time;
one taken from the data's min and max at run time, a non-finite one failing as numpy's
ValueError). For equal-width bins the operands carry the dtypes numpy's arithmetic takes at each
step (NEP 50: a Python scalar bound is weak, a numpy one is not): the comparisons with the range
in result_type(a, first), the subtraction in result_type(edges, first), the division in
result_type(that, last - first). Complex weights take numpy_stats's bincount path (a sum each for
the real and imaginary parts).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import numpy_reductions as red
from . import numpy_stats as stats
from .emitter import Emitter, abstract_of
from .numpy_ufuncs import apply_ufunc, emit
from .operands import cast, result_dtype, to_value


def _uniform_counts(em: Emitter, x: Any, e: stats._Edges, w: Any):
    """Counts over equal-width bins, each step in numpy's dtype (see the module docstring)."""
    kd = result_dtype(em, x, e.first)
    sd = result_dtype(em, e.edges, e.first)
    first_s = to_value(em, e.first, sd)
    fd = result_dtype(em, first_s, e.denom)
    lin = e.lin  # the edges' np.linspace, for the kernel to recompute single edges
    operands = [x, e.edges, to_value(em, e.first, kd), to_value(em, e.last, kd), first_s, to_value(em, e.denom, fd),
                lin.start, lin.step, lin.delta, lin.stop]
    return emit(em, "histogram_uniform", *operands, *([w] if w is not None else []))


def _edge_counts(em: Emitter, x: Any, edges: Any, w: Any):
    """Counts over explicit edges, compared in the samples' and edges' common dtype."""
    cd = result_dtype(em, edges, x)
    return emit(em, "histogram_edges", x, cast(em, edges, cd), *([w] if w is not None else []))


def np_histogram(em: Emitter, a: Any, bins: Any = 10, range: Any = None, density: Any = None,
                 weights: Any = None):
    x, w = stats._ravel_data(em, "np.histogram", a, weights)
    edges, uniform = stats._bins_of(em, "np.histogram", x, bins, range)
    nb = abstract_of(edges).shape[0] - 1
    if w is not None and abstract_of(w).dtype.is_complex:  # two real sums per bin
        idx = stats._uniform_bins(em, x, uniform) if uniform is not None else stats._edge_bins(em, x, edges)[0]
        n = stats._weighted_counts(em, idx, w, nb)
    elif uniform is not None:
        n = _uniform_counts(em, x, uniform, w)
    else:
        n = _edge_counts(em, x, edges, w)
    if density:
        db = cast(em, apply_ufunc(em, np.subtract, stats._part(em, edges, 1, nb + 1), stats._part(em, edges, 0, nb)),
                  stats.F64)
        n = apply_ufunc(em, np.true_divide, apply_ufunc(em, np.true_divide, n, db), red.np_sum(em, n))
    return n, edges


DECOMPOSITIONS = {np.histogram: np_histogram}
