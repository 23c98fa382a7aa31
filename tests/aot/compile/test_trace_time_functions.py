"""Functions of Python scalars and shapes (windows, index grids, geomspace/logspace of scalars):
numpy computes them while tracing, and the compiled code uses the result as a constant."""
from __future__ import annotations

import numpy as np
import pytest

import aot
from aot.frontend.numpy_api import MODULES

X = np.arange(12.0).reshape(3, 4)

CASES = {
    "bartlett": lambda x: x * np.bartlett(4),
    "blackman": lambda x: x * np.blackman(x.shape[1]),  # a static size
    "hamming": lambda x: x * np.hamming(4),
    "hanning": lambda x: x * np.hanning(4),
    "kaiser": lambda x: x * np.kaiser(4, 5.0),
    "indices": lambda x: x + np.indices(x.shape)[0],
    "diag_indices": lambda x: x[:3, :3][np.diag_indices(3)],
    "tril_indices": lambda x: x[np.tril_indices(3, 0, 4)],
    "triu_indices": lambda x: x[np.triu_indices(3, 1, 4)].sum(),
    "broadcast_shapes": lambda x: np.zeros(np.broadcast_shapes(x.shape, (1, 4))) + x,
    "geomspace": lambda x: x * np.geomspace(1.0, 1000.0, 4),
    "logspace": lambda x: x * np.logspace(0.0, 3.0, 4, base=2.0),
    "mask_indices": lambda x: x[:3, :3][np.mask_indices(3, np.triu, 1)],  # aot/frontend/numpy_assembly.py
}


def test_the_table_is_what_the_cases_cover():
    table = {f.__name__ for m in MODULES for f in getattr(m, "TRACE_TIME", ())}
    assert set(CASES) | {"fftfreq", "rfftfreq"} == table  # fftfreq: tests/aot/compile/test_fft_helpers.py


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_numpy(name):
    fn = CASES[name]
    got, want = aot.compile(fn, fullgraph=True)(X), fn(X)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)

