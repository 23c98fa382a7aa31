"""Every registered elementwise op, lowered to LLVM, JIT-compiled and compared with its numpy
reference for every dtype its rule accepts (same-dtype and mixed operands)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import ir
from ir import dtypes as D
from ir.opdef import OPDEFS, MissingRule, OpError
from ir.types import TensorType

from . import samples
from .helpers import add_elementwise, jit, ulp_distance

# transcendental rows (their trait), and square roots (complex sqrt is a formula, rsqrt rounds
# twice): compared in ulps against a float64 evaluation of the reference
MATH = {n for n, d in OPDEFS.items() if d.has("transcendental")} | {"sqrt", "rsqrt"}
# complex rules not lowered (documented gaps)
COMPLEX_GAPS: set[str] = set()
SKIP_OPS = {"round"}  # tested separately with decimals


def _elementwise_ops() -> list[str]:
    return sorted(
        n
        for n, d in OPDEFS.items()
        if d.has("elementwise") and d.arity in (1, 2, 3) and n not in SKIP_OPS and not n.startswith("test.")
    )


def _dtype_combos(name: str, arity: int):
    d = OPDEFS[name]
    singles = [(t,) * arity for t in D.ALL_DTYPES]
    mixed = (
        [
            (D.int32, D.float64),
            (D.float32, D.int64),
            (D.bool_, D.int32),
            (D.float32, D.complex128),
            (D.int64, D.float32),
        ]
        if arity == 2
        else []
    )
    if name == "where":
        singles = [(D.bool_, t, t) for t in D.ALL_DTYPES] + [(D.int32, D.float32, D.float64)]
    out = []
    for combo in singles + mixed:
        try:
            dt = d.dtype_rule(list(combo), **d.full_attrs({}))
        except (OpError, TypeError):
            continue
        if name in COMPLEX_GAPS and (dt.is_complex or any(c.is_complex for c in combo)):
            continue
        out.append(combo)
    return out


def _cases():
    cases = []
    for name in _elementwise_ops():
        if name == "cast":
            for src, dst in itertools.product(D.ALL_DTYPES, repeat=2):
                cases.append((name, (src,), {"dtype": dst}))
            continue
        for combo in _dtype_combos(name, OPDEFS[name].arity):
            cases.append((name, combo, {}))
    return cases


CASES = _cases()


def _case_id(case) -> str:
    name, combo, attrs = case
    return f"{name}-{'-'.join(str(c) for c in combo)}" + (f"-{attrs['dtype']}" if attrs else "")


@pytest.fixture(scope="module")
def compiled():
    m = ir.Module("ops")
    for i, (name, combo, attrs) in enumerate(CASES):
        add_elementwise(m, f"case{i}", name, [TensorType(c, (samples.N,)) for c in combo], attrs)
    return jit(m)


def _inputs(name: str, combo, rng):
    xs = [samples.sample(c.numpy, samples.N, rng) for c in combo]
    if name == "pow" and all(c.kind in "bi" for c in combo):
        xs[1] = np.abs(samples.ints(combo[1].numpy, samples.N, rng, small=True)) % 6
    if name == "sigmoid" and combo[0].kind == "i":  # the reference negates in int (wraps at the minimum)
        xs = [samples.ints(combo[0].numpy, samples.N, rng, small=True)]
    if name == "pow" and any(c.is_complex for c in combo):
        xs = [samples.sample(c.numpy, samples.N, rng, specials=False) for c in combo]
    return xs


def _reference(name: str, xs, attrs, out_dtype):
    ref = OPDEFS[name].reference
    with np.errstate(all="ignore"):
        if name in MATH and out_dtype.name in ("f32", "c64"):
            # a double-precision evaluation rounded once (we compute complex64 math in float64)
            up = {np.dtype(np.float32): np.float64, np.dtype(np.complex64): np.complex128}
            wide = [x.astype(up.get(x.dtype, x.dtype)) for x in xs]
            return np.asarray(ref(*wide, **attrs)).astype(out_dtype.numpy)
        return np.asarray(ref(*xs, **attrs))


@pytest.mark.parametrize("idx", range(len(CASES)), ids=[_case_id(c) for c in CASES])
def test_op_matches_numpy(compiled, idx):
    name, combo, attrs = CASES[idx]
    rng = np.random.default_rng(idx)
    xs = _inputs(name, combo, rng)
    got = compiled[f"case{idx}"](*xs)
    out_dtype = OPDEFS[name].dtype_rule(list(combo), **OPDEFS[name].full_attrs(attrs))
    want = _reference(name, xs, attrs, out_dtype)
    assert got.dtype == out_dtype.numpy
    assert want.dtype == got.dtype, f"reference dtype {want.dtype} != {got.dtype}"
    check_close(name, got, want, xs)


def check_close(name: str, got, want, xs) -> None:
    if got.dtype.kind in "bi":
        np.testing.assert_array_equal(got, want)
    elif got.dtype.kind == "f":
        tol = 4 if name in MATH or any(x.dtype.kind == "c" for x in xs) else 0
        d = ulp_distance(got, want)
        bad = d > tol
        assert not bad.any(), (
            f"{name}: {d[bad].max()} ulp at inputs "
            f"{[x[bad][:4] for x in xs]}: got {got[bad][:4]}, want {want[bad][:4]}"
        )
        if tol == 0:  # exact ops also keep the sign of zero
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    else:
        rtol = 1e-12 if got.dtype == np.complex128 else 2e-5
        for part in (np.real, np.imag):
            np.testing.assert_allclose(part(got), part(want), rtol=rtol, atol=rtol * 1e-3, equal_nan=True)


def test_round_half_even_and_decimals():
    m = ir.Module("round")
    dts = [D.float64, D.float32, D.int32, D.int64, D.complex128]
    for k, dt in enumerate(dts):
        add_elementwise(m, f"r{k}", "round", [TensorType(dt, (samples.N,))])
    add_elementwise(m, "dec", "round", [TensorType(D.float64, (samples.N,))], {"decimals": 2})
    fns = jit(m)
    rng = np.random.default_rng(0)
    for k, dt in enumerate(dts):
        x = samples.sample(dt.numpy, samples.N, rng)
        if dt.is_float:
            x[:6] = [0.5, 1.5, 2.5, -0.5, -2.5, 3.5]
        np.testing.assert_array_equal(fns[f"r{k}"](x), np.round(x))
    x = rng.uniform(-100, 100, samples.N)
    np.testing.assert_allclose(fns["dec"](x), np.round(x, 2), rtol=1e-15)


def test_missing_rule_names_the_op():
    """An op the registry knows but codegen has no rule for (registered here, in the test only)."""
    from ir.opdef import OpDef, register, same_dtype, same_shape

    if "test.unlowered" not in OPDEFS:
        register(
            OpDef(
                "test.unlowered",
                1,
                dtype_rule=same_dtype,
                shape_rule=same_shape,
                traits=frozenset({"elementwise"}),
            )
        )
    m = ir.Module("missing")
    add_elementwise(m, "f", "test.unlowered", [TensorType(D.complex128, (4,))])
    with pytest.raises(MissingRule, match="test.unlowered"):
        jit(m)


def test_complex_order_with_nans():
    m = ir.Module("corder")
    names = ["maximum", "minimum", "lt", "le", "gt", "ge", "eq", "ne"]
    for name in names:
        add_elementwise(m, name, name, [TensorType(D.complex128, (samples.N,))] * 2)
    fns = jit(m)
    vals = np.array(
        [1 + 1j, 1 + 2j, 2 + 0j, complex(np.nan, 0), complex(0, np.nan), complex(1, np.nan), 1 + 1j]
    )
    a, b = (v.ravel() for v in np.meshgrid(vals, vals))
    a, b = np.resize(a, samples.N), np.resize(b, samples.N)
    for name in names:
        with np.errstate(invalid="ignore"):
            want = OPDEFS[name].reference(a, b)
        np.testing.assert_array_equal(fns[name](a, b), want)
