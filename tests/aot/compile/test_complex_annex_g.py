"""Complex elementwise ops, compiled, against numpy on a grid of special values (C99 Annex G: numpy's
complex ufuncs call glibc's cexp, clog, csinh, ctanh, cpow, ... or npymath's own formulas).

Each part of z runs over {0, -0, +-0.5, +-1, +-2, 1e-20, 1e300 (complex128 only), +-inf, nan}; binary
ops take both operands from that grid. The comparison: the same nan-ness of each complex value (a
complex nan is nan in either part), infinite parts exactly equal (sign included), zero parts exactly
zero with numpy's sign, and finite parts within a few eps of the dtype relative to |w| (numpy's
value). The inverse functions have their own grid in test_complex_special.py.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import aot

PARTS = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 1e-20, 1e300, np.inf, -np.inf, np.nan]
# complex64: no finite parts whose products overflow float32 (numpy's complex64 results there
# depend on its float32 intermediates and FMA contraction)
PARTS64 = [p for p in PARTS if p != 1e300]
DTYPES = [np.complex128, np.complex64]
EPS = {np.complex128: np.finfo(np.float64).eps, np.complex64: np.finfo(np.float32).eps}
TINY = {np.complex128: np.finfo(np.float64).tiny, np.complex64: np.finfo(np.float32).tiny}
K = 4  # eps

UNARY = [np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.sqrt, np.sin, np.cos, np.tan,
         np.sinh, np.cosh, np.tanh, np.reciprocal, np.square, np.sign]
BINARY = [np.power, np.multiply, np.divide]


def grid(dt) -> np.ndarray:
    parts = PARTS if dt == np.complex128 else PARTS64
    re, im = np.meshgrid(parts, parts)
    z = np.empty(re.size, dt)
    z.real, z.imag = re.ravel(), im.ravel()
    return z


def layouts(*args: np.ndarray):
    """The compiled loops: the vector loop with and without a masked remainder (two lengths, one of
    them not a multiple of any lane count), and a strided view (the scalar loop)."""
    n = args[0].size
    yield "contiguous", args
    yield "tail", tuple(np.ascontiguousarray(a[: n - 1 if n % 2 == 0 else n - 2]) for a in args)
    strided = []
    for a in args:
        s = np.empty(2 * a.size, a.dtype)[::2]
        s[...] = a
        strided.append(s)
    yield "strided", tuple(strided)


def assert_annex_g(got, want, dt, what: str, rtol=None, loose_sign=None) -> None:
    """`got` as numpy's `want`: nan-ness per complex value, infinite and zero parts exactly (signs
    included), finite parts within rtol * |want| (rtol: K eps, or an array per element).
    `loose_sign`: elements whose infinite parts are compared without their signs."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, what
    with np.errstate(all="ignore"):
        _compare(got, want, dt, what, rtol, loose_sign)


def _compare(got, want, dt, what, rtol, loose_sign) -> None:
    rtol = K * EPS[dt] if rtol is None else rtol
    w_nan = np.isnan(want.real) | np.isnan(want.imag)
    g_nan = np.isnan(got.real) | np.isnan(got.imag)
    bad = w_nan != g_nan
    mag = np.abs(want.astype(np.complex128))
    loose = np.zeros(want.shape, bool) if loose_sign is None else loose_sign
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        g, w = g.astype(np.float64), w.astype(np.float64)
        inf = np.isinf(w) | np.isinf(g)
        same_inf = np.where(loose, np.isinf(w) == np.isinf(g), g == w)
        zero = w == 0
        same_zero = (g == 0) & (np.signbit(g) == np.signbit(w))
        scale = np.where(np.isfinite(mag), mag, np.abs(w))  # a finite part beside an infinite one
        close = np.abs(g - w) <= rtol * scale + TINY[dt]  # subnormal results: absolute rounding
        ok = np.where(inf, same_inf, np.where(zero, same_zero, close))
        bad |= ~w_nan & ~ok
    if bad.any():
        idx = np.flatnonzero(bad)
        pytest.fail(f"{what}: {idx.size} of {bad.size} differ from numpy, e.g. "
                    + "; ".join(f"#{i}: got {got.flat[i]!r} want {want.flat[i]!r}" for i in idx[:6]))


def _numpy(fn, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn", UNARY, ids=lambda f: f.__name__)
def test_unary_grid(fn, dt):
    z = grid(dt)
    compiled = aot.compile(lambda x: fn(x))
    for name, (x,) in layouts(z):
        assert_annex_g(compiled(x), _numpy(fn, x), dt, f"np.{fn.__name__}[{dt.__name__}, {name}]")


def _pow_tolerance(a, b, want, dt):
    """exp(b log a) is as exact as b log a: numpy's error (cpowf's float32 intermediates for
    complex64, libm's last bits for complex128) grows with |b log a|; integer exponents are
    npymath's products (as exact as numpy's, the same operations)."""
    with np.errstate(all="ignore"):
        bla = np.abs(b.astype(np.complex128) * np.log(a.astype(np.complex128)))
    grow = np.where(_npymath_cases(a, b) | ~np.isfinite(bla), 1.0, 1.0 + bla)
    return K * EPS[dt] * grow


def _npymath_cases(a, b):
    """Where npy_cpow answers without glibc's cpow: b == 0, a == 0, integer exponents |n| < 100."""
    integer = (b.imag == 0) & (np.abs(b.real) < 100) & (np.trunc(b.real) == b.real)
    return integer | (b == 0) | (a == 0)


def _angle_lost(a, b):
    """Where the angle of exp(b log a) is beyond 2^52 rad, the signs of an infinite result come
    from the last bit of atan2 (libmvec's and glibc's differ): compare them without signs."""
    with np.errstate(all="ignore"):
        angle = (b.astype(np.complex128) * np.log(a.astype(np.complex128))).imag
    return np.isfinite(angle) & (np.abs(angle) > 2.0**52)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn", BINARY, ids=lambda f: f.__name__)
def test_binary_grid(fn, dt):
    z = grid(dt)
    a, b = (v.ravel() for v in np.meshgrid(z, z))
    compiled = aot.compile(lambda x, y: fn(x, y))
    for name, (x, y) in layouts(a, b):
        want = _numpy(fn, x, y)
        what = f"np.{fn.__name__}[{dt.__name__}, {name}]"
        if fn is np.power:
            got = compiled(x, y)
            if dt == np.complex64:
                # cpowf's float32 angle flips the signs of parts near 0 (x ** (2+1e-20j) at x =
                # 1e-20j: sin(float32(pi)) < 0); we take that path in float64, as does the reference
                # here, and npymath's integer exponents and 0 ** b, a ** 0 in the dtype, as numpy
                assert np.array_equal(np.isnan(got), np.isnan(want)), what
                wide = _numpy(lambda u, v: fn(u, v).astype(dt), x.astype(np.complex128), y.astype(np.complex128))
                want = np.where(_npymath_cases(x, y), want, wide)
            assert_annex_g(got, want, dt, what, _pow_tolerance(x, y, want, dt), _angle_lost(x, y))
        else:
            assert_annex_g(compiled(x, y), want, dt, what)


def test_issue_examples():
    inf, nan = np.inf, np.nan
    cases = [
        (np.exp, complex(-inf, -inf), complex(0.0, -0.0)),
        (np.exp, complex(inf, inf), complex(inf, nan)),
        (np.exp, complex(inf, nan), complex(inf, nan)),
        (np.exp, complex(-inf, nan), complex(0.0, 0.0)),
        (np.tanh, complex(-inf, -inf), complex(-1.0, -0.0)),
        (np.tanh, complex(inf, 2.0), complex(1.0, -0.0)),  # +0 * sin(2y): sin 4 < 0
        (np.tanh, complex(1.0, inf), complex(nan, nan)),
    ]
    for fn, z, want in cases:
        got = aot.compile(lambda x, fn=fn: fn(x))(np.array([z] * 3))
        assert_annex_g(got, np.array([want] * 3), np.complex128, f"np.{fn.__name__}({z})")
        assert_annex_g(got, _numpy(fn, np.array([z] * 3)), np.complex128, f"np.{fn.__name__}({z}) vs numpy")
    a = np.array([complex(-1.5563359, 0.5)] * 3)
    got = aot.compile(lambda x, y: x ** y)(a, np.array([complex(-inf, 0.0)] * 3))
    assert_annex_g(got, np.array([complex(0.0, -0.0)] * 3), np.complex128, "(-1.5563359+0.5j) ** (-inf+0j)")


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.__name__)
def test_integer_exponents_are_numpys_products(dt):
    """npy_cpow multiplies for integer exponents |n| < 100 (z**2 = z*z exactly, 1/z**n for n < 0):
    the same operations in the dtype, so the same bits as numpy's."""
    rng = np.random.default_rng(5)
    z = (rng.uniform(-3, 3, 203) + 1j * rng.uniform(-3, 3, 203)).astype(dt)
    z[:4] = [1e-20 + 1e-20j, 3e10 - 1j, -0.0 + 2j, 1 + 0j]
    for n in [2, 3, -1, -2, 5, 7, -9, 33, 99, -99]:
        want = _numpy(np.power, z, dt(n))
        got = aot.compile(lambda x, n=n: np.power(x, n))(z)
        np.testing.assert_array_equal(got, want, err_msg=f"z ** {n} ({dt.__name__})")
        exps = np.full(z.shape, n, dt)
        got = aot.compile(lambda x, y: np.power(x, y))(z, exps)
        np.testing.assert_array_equal(got, want, err_msg=f"z ** array of {n} ({dt.__name__})")


def test_log_near_unit_circle():
    """log|z| from log1p(x^2 + y^2 - 1) with the squares exact: numpy's (glibc clog's) tiny real
    parts, each part within a few eps of its own value (not just of |w|)."""
    got = aot.compile(lambda x: np.log(x))(np.array([1 + 1e-20j, 1e-20 + 1j, -1 + 1e-10j] * 3))
    np.testing.assert_allclose(got.real[:3], [5e-41, 5e-41, 5e-21], rtol=1e-15)
    rng = np.random.default_rng(3)
    th = rng.uniform(-np.pi, np.pi, 1001)
    r = 1 + rng.normal(0, 1e-9, th.size)
    z = r * np.exp(1j * th)
    want = np.log(z)
    for f in (np.log, np.log2, np.log10):
        got = aot.compile(lambda x, f=f: f(x))(z)
        w = f(z)
        np.testing.assert_allclose(got.real, w.real, rtol=8 * EPS[np.complex128], atol=0, err_msg=f.__name__)
        np.testing.assert_allclose(got.imag, w.imag, rtol=4 * EPS[np.complex128], atol=0, err_msg=f.__name__)
    z64 = z.astype(np.complex64)
    got = aot.compile(lambda x: np.log(x))(z64)
    np.testing.assert_allclose(got.real, np.log(z64.astype(np.complex128)).real, rtol=4 * EPS[np.complex64])
    assert want.real.std() > 0


def test_huge_real_parts_keep_finite_parts():
    """glibc's cexp/csinh/ccosh take exp(x) in steps past x = 709: the parts that are finite stay
    finite (exp(710 + 1e-300j) has imaginary part 2.2e8, not inf)."""
    z = np.array([710 + 1e-300j, -710 + 1e-300j, 1000 + 1e-300j, 720 - 1e-10j, 2000 + 0j, 711 + 3j] * 3)
    for fn in (np.exp, np.sinh, np.cosh, np.sin, np.cos, np.tanh, np.tan):
        x = z if fn in (np.exp, np.sinh, np.cosh, np.tanh) else z * 1j
        got = aot.compile(lambda v, fn=fn: fn(v))(x)
        assert_annex_g(got, _numpy(fn, x), np.complex128, f"np.{fn.__name__}")
