"""np.fft 1-D and n-D transforms as sequences of core fft/rfft/irfft ops."""
from __future__ import annotations

import numpy as np
import pytest

from aot.frontend import EagerEmitter, translate

from ._support import DTYPES, check, make

NORMS = [None, "backward", "ortho", "forward"]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_one_axis(dtype, norm):
    x = make(dtype, (3, 8))
    for f in (np.fft.fft, np.fft.ifft):
        check(f, x, norm=norm)
        check(f, x, n=5, axis=0, norm=norm)
        check(f, x, n=11, norm=norm)
    if dtype.startswith("complex"):
        with pytest.raises(TypeError, match="must be real"):
            translate(EagerEmitter(), np.fft.rfft, x)
    else:
        check(np.fft.rfft, x, norm=norm)
        check(np.fft.rfft, x, n=7, axis=-2, norm=norm)
    check(np.fft.irfft, x, norm=norm)
    check(np.fft.irfft, x, n=9, axis=0, norm=norm)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int32"])
def test_multi_axis(dtype):
    x = make(dtype, (2, 4, 6))
    for f in (np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn):
        check(f, x)
        check(f, x, axes=(0, 2), norm="ortho")
        check(f, x, s=(3, 5), axes=(1, 2))
    if dtype != "complex64":
        for f in (np.fft.rfft2, np.fft.rfftn):
            check(f, x)
            check(f, x, s=(3, 8), axes=(0, 1), norm="forward")
    for f in (np.fft.irfft2, np.fft.irfftn):
        check(f, x)
        check(f, x, s=(4, 10), axes=(2, 1))
        check(f, x, axes=(0, 1, 2))


def test_errors():
    x = make("float64", (4,))
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        translate(EagerEmitter(), np.fft.fft, x, n=0)
    with pytest.raises(ValueError, match="Invalid norm value"):
        translate(EagerEmitter(), np.fft.fft, x, norm="bad")
    with pytest.raises(np.exceptions.AxisError):
        translate(EagerEmitter(), np.fft.fft, x, axis=1)
    with pytest.raises(ValueError, match="Shape and axes have different lengths"):
        translate(EagerEmitter(), np.fft.fftn, x, s=(2, 2), axes=(0,))
