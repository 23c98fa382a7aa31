"""numpy's own FFT tests (numpy/fft/tests/test_pocketfft.py) run against aot.fft by substitution.

Every `np.fft.<name>` the tests call is replaced by `aot.fft.<name>` for the duration of each
test, including the function objects that `@pytest.mark.parametrize` captured at import. Skipped:
the long-double parametrisations (outside the contract: the kernels are float32/float64). The
`out=` tests run too: aot.fft accepts `out` (complex transforms write it directly when its shape
and dtype are the result's, else the result is copied into it with numpy's checks).
"""
from __future__ import annotations

import numpy as np
import pytest

import aot.fft as afft

pocketfft_tests = pytest.importorskip("numpy.fft.tests.test_pocketfft")

NAMES = ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
         "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift")

# numpy's functions as captured by @pytest.mark.parametrize at import time -> ours
SUBSTITUTES = {getattr(np.fft, name): getattr(afft, name) for name in NAMES}

LONGDOUBLE = "long double is outside the contract: aot.fft computes in float32 or float64"


@pytest.fixture(autouse=True)
def _substitute(monkeypatch, request):
    if "longdouble" in request.node.name:
        pytest.skip(LONGDOUBLE)
    for name in NAMES:
        monkeypatch.setattr(np.fft, name, getattr(afft, name))
    callspec = getattr(request.node, "callspec", None)
    if callspec is not None:  # parametrised with numpy's function objects: swap before they resolve
        for key, value in list(callspec.params.items()):
            if callable(value) and value in SUBSTITUTES:
                callspec.params[key] = SUBSTITUTES[value]


def _import_tests():
    g = globals()
    for name in dir(pocketfft_tests):
        if name.startswith(("test_", "Test")):
            g[name] = getattr(pocketfft_tests, name)


_import_tests()
