"""exp of float32 vectors inline on AVX-512 (codegen/llvm/expf.py): within 1 ulp of the exact
value everywhere (0.87 ulp measured over all 2^32 inputs), special values as C's expf."""
from __future__ import annotations

import numpy as np
import pytest

import aot
import codegen
from codegen.options import CodegenOptions
from codegen.targets import host_target

HOST = host_target()
inline = pytest.mark.skipif(not (HOST.triple.startswith("x86_64") and HOST.has_feature("avx512f")
                                 and HOST.has_feature("fma")), reason="the inline expf needs AVX-512F and FMA")


def _exp(x):
    return np.exp(x)


def _ulp_errors(got: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|got - e^x| in float32 ulps of e^x (e^x in float64: within 1e-16 of exact), for finite
    results below float32's overflow."""
    with np.errstate(over="ignore", invalid="ignore"):
        exact = np.exp(x.astype(np.float64))
        finite = exact < float(np.finfo(np.float32).max)
        ulp = np.ldexp(1.0, np.maximum(np.frexp(exact)[1] - 24, -149))
        return np.where(finite, np.abs(got.astype(np.float64) - exact) / ulp, 0.0)


@inline
def test_the_inline_path_is_taken():
    text = str(codegen.lower_module(aot.export(_exp, (np.ones(64, np.float32),)).ir_module(), HOST,
                                    CodegenOptions()))
    assert "scalef" in text and "_ZGVeN16v_expf" not in text  # (scalar paths still call libm's expf)


def test_within_one_ulp_over_the_whole_range():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.integers(0, 2**32, size=1 << 22, dtype=np.uint64).astype(np.uint32).view(np.float32),
                        np.linspace(-104, 89, 1 << 22, dtype=np.float32),
                        rng.uniform(-1, 1, 1 << 20).astype(np.float32)])
    x = x[~np.isnan(x)]
    with np.errstate(over="ignore", under="ignore"):
        got = aot.compile(_exp)(x)
    err = _ulp_errors(got, x)
    assert err.max() <= 1.0, (err.max(), x[err.argmax()])


def test_special_values():
    f32 = np.float32
    x = np.array([0.0, -0.0, 1.0, np.inf, -np.inf, np.nan, 88.72283, 88.72284, 1000, -90.0, -103.97207,
                  -103.9721, -104.0, -1e30, 3.4028235e38, 1e38, 2e38], f32)
    with np.errstate(over="ignore", under="ignore"):
        got = aot.compile(_exp)(np.tile(x, 3))[: len(x)]  # vector lanes and the masked tail
    assert got[0] == 1 and got[1] == 1 and got[2] == f32(np.e)
    assert got[3] == np.inf and got[4] == 0 and np.isnan(got[5])
    assert np.isfinite(got[6]) and got[7] == np.inf and got[8] == np.inf
    assert _ulp_errors(got[9:10], x[9:10])[0] <= 1 and got[9] < np.finfo(f32).tiny  # a subnormal result
    assert got[10] == np.finfo(f32).smallest_subnormal and got[11] == 0 and got[12] == 0 and got[13] == 0
    assert (got[14:] == np.inf).all()
