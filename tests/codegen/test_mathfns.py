"""Accuracy of the vectorised (libmvec) and scalar (libm) transcendental paths against numpy:
<= 4 ulp in float64 and float32 over wide ranges, exact results at special values."""

from __future__ import annotations

import numpy as np
import pytest

import ir
from ir import dtypes as D
from ir.opdef import OPDEFS
from ir.types import TensorType

from .helpers import add_elementwise, jit, ulp_distance

UNARY = {  # op -> (lo, hi) of |x| as powers of ten, or a linear range
    "exp": ("lin", -745, 710),
    "expm1": ("lin", -50, 710),
    "log": ("log", -300, 300),
    "log1p": ("log", -300, 300),
    "sin": ("log", -300, 6),
    "cos": ("log", -300, 6),
    "tan": ("log", -300, 6),
    "tanh": ("log", -300, 3),
    "sinh": ("lin", -710, 710),
    "cosh": ("lin", -710, 710),
    "arcsin": ("lin", -1, 1),
    "arccos": ("lin", -1, 1),
    "arctan": ("log", -300, 300),
    "sqrt": ("log", -300, 300),
    "rsqrt": ("log", -300, 300),
    "erf": ("lin", -6, 6),
    "sigmoid": ("lin", -800, 800),
    "exp2": ("lin", -1080, 1030),
    "log2": ("log", -300, 300),
    "log10": ("log", -300, 300),
    "arcsinh": ("log", -300, 300),
    "arccosh": ("log", 0, 300),
    "arctanh": ("lin", -1, 1),
}
F32_RANGE = {
    "exp": ("lin", -103, 88),
    "expm1": ("lin", -20, 88),
    "sinh": ("lin", -89, 89),
    "cosh": ("lin", -89, 89),
    "sigmoid": ("lin", -110, 110),
    "exp2": ("lin", -155, 130),
}
SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 1e-310, 0.5]
N = 4099


def _inputs(name, dt, rng):
    kind, lo, hi = (F32_RANGE.get(name) if dt == np.float32 and name in F32_RANGE else None) or UNARY[name]
    if kind == "lin":
        x = rng.uniform(lo, hi, N)
    else:
        if dt == np.float32:
            lo, hi = max(lo, -37), min(hi, 37)
        x = 10.0 ** rng.uniform(lo, hi, N) * np.where(rng.random(N) < 0.5, -1, 1)
    x = x.astype(dt)
    x[: len(SPECIALS)] = np.array(SPECIALS, dtype=np.float64).astype(dt)
    return x


def _truth(name, x):
    """numpy in float64 (rounded once for float32 inputs). sigmoid: exp(x)/(1+exp(x)) for x < 0,
    which (like ours, unlike 1/(1+exp(-x))) keeps the subnormal tail for x < -709."""
    ref = OPDEFS[name].reference if name != "sigmoid" else _sigmoid
    with np.errstate(all="ignore"):
        if x.dtype == np.float32:
            return np.asarray(ref(x.astype(np.float64))).astype(np.float32)
        return np.asarray(ref(x))


@pytest.fixture(scope="module")
def fns():
    m = ir.Module("math")
    for name in UNARY:
        for dt in (D.float64, D.float32):
            add_elementwise(m, f"{name}_{dt}", name, [TensorType(dt, (N,))])
    add_elementwise(m, "arctan2_f64", "arctan2", [TensorType(D.float64, (N,))] * 2)
    add_elementwise(m, "pow_f64", "pow", [TensorType(D.float64, (N,))] * 2)
    add_elementwise(m, "pow_f32", "pow", [TensorType(D.float32, (N,))] * 2)
    return jit(m)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_unary_ulp(fns, name, dt, layout):
    rng = np.random.default_rng(hash(name) % 2**32)
    x = _inputs(name, dt, rng)
    fn = fns[f"{name}_{ir.dtypes.from_numpy(dt)}"]
    if layout == "strided":  # innermost stride 2: the scalar libm path
        x2 = np.empty(2 * N, dt)[::2]
        x2[...] = x
        x = x2
        fn = _strided(name, dt)
    got = fn(x)
    want = _truth(name, x)
    d = ulp_distance(got, want)
    worst = int(np.argmax(d))
    assert d.max() <= 4, (
        f"{name}[{dt.__name__}]: {d.max()} ulp at x={x[worst]!r}: got {got[worst]!r}, want {want[worst]!r}"
    )
    special = np.isnan(x) | np.isinf(x) | (x == 0)
    np.testing.assert_array_equal(
        np.signbit(got[special & (want == 0)]), np.signbit(want[special & (want == 0)])
    )


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)


_STRIDED: dict = {}


def _strided(name, dt):
    """The same op compiled for an input of shape (N,) passed with stride 2 (JIT cached per op)."""
    key = (name, dt)
    if key not in _STRIDED:
        if not _STRIDED:
            m = ir.Module("strided")
            for n in UNARY:
                for d in (D.float64, D.float32):
                    add_elementwise(m, f"{n}_{d}", n, [TensorType(d, (N,))])
            compiled = jit(m)
            for n in UNARY:
                for d in (np.float64, np.float32):
                    _STRIDED[(n, d)] = compiled[f"{n}_{ir.dtypes.from_numpy(d)}"]
    return _STRIDED[key]


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_pow_ulp_and_specials(fns, dt):
    rng = np.random.default_rng(1)
    x = (10.0 ** rng.uniform(-20, 20, N)).astype(dt)
    y = rng.uniform(-15, 15, N).astype(dt)
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0], dtype=dt)
    xs, ys = np.meshgrid(sp, sp)
    x[: xs.size], y[: ys.size] = xs.ravel(), ys.ravel()
    got = fns[f"pow_{ir.dtypes.from_numpy(dt)}"](x, y)
    with np.errstate(all="ignore"):
        want = np.power(x.astype(np.float64), y.astype(np.float64)).astype(dt)
    assert ulp_distance(got, want).max() <= 4


def test_arctan2_specials(fns):
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0])
    y, x = (a.ravel() for a in np.meshgrid(sp, sp))
    rng = np.random.default_rng(2)
    y = np.concatenate([y, rng.normal(size=N - y.size) * 10.0 ** rng.uniform(-100, 100, N - y.size)])
    x = np.concatenate([x, rng.normal(size=N - x.size) * 10.0 ** rng.uniform(-100, 100, N - x.size)])
    got = fns["arctan2_f64"](y, x)
    want = np.arctan2(y, x)
    assert ulp_distance(got, want).max() <= 4
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
