"""The math accuracy contract of the CPU code generator (codegen/llvm/mathfns.py): every real
transcendental, compiled, is within 4 ulp of the exact value (mpmath) in float64 and float32, on
the libmvec vector path (the host's, and the SSE and AVX2 variants where the host runs them) and
the scalar libm path; numpy's answers at special values; exact results where the exact value is
representable.

The default run samples ~2k points per range; the slow test 2^16 (tools/ulp_report.py prints the
table of maxima)."""

from __future__ import annotations

import numpy as np
import pytest

from . import accuracy as A

MAX_ULP = 4
N_QUICK = 2053  # odd: full vectors and a masked remainder
N_FULL = 2**16 + 3


def test_every_libm_row_is_measured():
    """Each transcendental row lowered to a C math function (its row's libm=) has a spec here."""
    import aot.ops  # noqa: F401  (the rows)
    from ir.opdef import OPDEFS

    rows = {n for n, d in OPDEFS.items() if d.libm and d.has("transcendental")}
    assert rows <= set(A.SPECS), f"no accuracy spec for {sorted(rows - set(A.SPECS))}"


def _check(rows):
    bad = [r for r in rows if not r.max_ulp <= MAX_ULP]
    assert not bad, "\n".join(
        f"{r.name}[{r.dtype.__name__}, {r.range}, {r.layout}]: {r.max_ulp:.3g} ulp at x={r.worst_input}: "
        f"got {r.got!r}, want {r.want!r}" for r in bad)


@pytest.mark.parametrize("rng_name", A.RANGES)
@pytest.mark.parametrize("dt", A.DTYPES, ids=lambda d: d.__name__)
def test_max_ulp(dt, rng_name):
    _check(A.measure(N_QUICK, seed=1, dtypes=[dt], ranges=[rng_name], targets=A.runnable_isa_targets()))


@pytest.mark.slow
@pytest.mark.parametrize("rng_name", A.RANGES)
@pytest.mark.parametrize("dt", A.DTYPES, ids=lambda d: d.__name__)
def test_max_ulp_full(dt, rng_name):
    _check(A.measure(N_FULL, seed=2, dtypes=[dt], ranges=[rng_name], targets=A.runnable_isa_targets()))


@pytest.mark.parametrize("layout", A.LAYOUTS)
@pytest.mark.parametrize("dt", A.DTYPES, ids=lambda d: d.__name__)
def test_special_values(dt, layout):
    """0, -0, +-inf, nan, +-1, subnormals, the extremes (all pairs for the binary functions)."""
    errs = A.special_errors(dt, layout)
    bad = {name: A.special_inputs(name, dt)[0][e > MAX_ULP] for name, e in errs.items()
           if (e > MAX_ULP).any()}
    assert not bad, f"differs from numpy at {bad}"


def _exact_points(dt) -> dict[str, list[tuple[tuple, np.ndarray]]]:
    """name -> [(operands, exact result)] where the exact result is representable."""
    info = np.finfo(dt)
    lo, hi = info.minexp - info.nmant, info.maxexp - 1  # powers of 2 from the least subnormal up
    k = np.arange(lo, hi + 1, dtype=np.float64)
    p10 = np.arange(0, 23 if dt == np.float64 else 11, dtype=np.float64)
    ints = np.arange(1, 2**12, dtype=np.float64)
    z, one = np.array([0.0, -0.0]), np.array([1.0])
    pts = {
        "exp2": [((k,), 2.0 ** k)],
        "log2": [((2.0 ** k,), k)],
        "log10": [((10.0 ** p10,), p10)],
        "exp": [((z,), one)], "log": [((one,), np.zeros(1))], "cos": [((z,), one)],
        "cosh": [((z,), one)], "arccos": [((one,), np.zeros(1))], "arccosh": [((one,), np.zeros(1))],
        "sigmoid": [((z,), np.array([0.5]))],
        "sqrt": [((ints * ints,), ints), ((z,), z)],
        "arctan2": [((z, one), z)],
        "power": [((np.full(41, 2.0), np.arange(-20.0, 21.0)), 2.0 ** np.arange(-20.0, 21.0)),
                  ((np.full(10, 10.0), np.arange(10.0)), 10.0 ** np.arange(10.0)),
                  ((np.array([-2.0, 3.0, 4.0]), np.array([3.0, 5.0, 0.5])), np.array([-8.0, 243.0, 2.0])),
                  ((ints, np.ones_like(ints)), ints), ((ints, np.zeros_like(ints)), np.ones_like(ints))],
    }
    for name in ("sin", "tan", "tanh", "sinh", "arcsin", "arctan", "arcsinh", "arctanh", "expm1", "log1p",
                 "erf"):
        pts[name] = [((z,), z)]  # odd functions keep the sign of zero
    return {name: [(tuple(x.astype(dt) for x in xs), np.asarray(w).astype(dt)) for xs, w in cases]
            for name, cases in pts.items()}


@pytest.mark.parametrize("layout", A.LAYOUTS)
@pytest.mark.parametrize("dt", A.DTYPES, ids=lambda d: d.__name__)
def test_exact_points(dt, layout):
    """exp2 of integers, log2 of powers of 2, log10 of powers of 10, exp(0) = 1, sqrt of squares,
    ... are exact (users compare them with ==), and zeros keep their sign."""
    pts = _exact_points(dt)
    wrong = []
    for i in range(max(len(c) for c in pts.values())):
        per = {}
        for name in A.SPECS:
            cases = pts.get(name, [])
            xs = cases[i][0] if i < len(cases) else (np.ones(1, dt),) * A.SPECS[name].arity
            per[name] = xs
        size = max(xs[0].size for xs in per.values()) | 1  # odd: a masked remainder too
        got = A.run_compiled(dt, layout, {n: tuple(np.resize(x, size) for x in xs) for n, xs in per.items()})
        for name, cases in pts.items():
            if i >= len(cases):
                continue
            xs, want = cases[i]
            g = got[name][: want.size]
            bad = (g != want) | (np.signbit(g) != np.signbit(want))
            if bad.any():
                wrong.append(f"{name}{tuple(x[bad][:5] for x in xs)} = {g[bad][:5]}, want {want[bad][:5]}")
    assert not wrong, "\n".join(wrong)
