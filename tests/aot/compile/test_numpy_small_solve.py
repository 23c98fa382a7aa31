"""np.linalg.solve of small static sizes through the unrolled kernel (codegen/kernels/linalg_small.py)
against numpy (LAPACK gesv): n from 1 to 16 and a few right-hand sides, stacks that broadcast, input
dtypes numpy promotes, strided operands, pivoting (a zero leading entry), singular members
(LinAlgError), the general kernel just past the limits and for dynamic sizes, and a library.
"""
from __future__ import annotations

import shutil

import numpy as np
import pytest

import aot
from codegen.kernels import linalg_small
from ir import dtypes as D

L = np.linalg
RTOL = {np.float64: 1e-10, np.float32: 1e-4}


def _well_conditioned(rng, shape, dtype=np.float64):
    n = shape[-1]
    return (rng.standard_normal(shape) + n * np.eye(n)).astype(dtype)


def _same(got, want, what: str) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, f"{what}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    np.testing.assert_allclose(got, want, rtol=RTOL[want.dtype.type], atol=RTOL[want.dtype.type], err_msg=what)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13, 16])
def test_sizes_and_right_hand_sides(n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n))  # not diagonally dominant: the pivots move rows
    b, bk = rng.standard_normal(n), rng.standard_normal((n, 3))
    assert linalg_small.applies(n, 3, D.float64)

    def fn(a, b, bk):
        return L.solve(a, b), L.solve(a, bk), L.solve(a.T, b)

    for k, (g, w) in enumerate(zip(aot.compile(fn)(a, b, bk), fn(a, b, bk), strict=True)):
        _same(g, w, f"n={n} output {k}")


def test_stacks_dtypes_and_strides():
    rng = np.random.default_rng(20)
    A = _well_conditioned(rng, (5, 4, 4))
    B = rng.standard_normal((3, 1, 4, 2))  # broadcasts against A's stack
    Ai = rng.integers(-3, 4, (4, 4)) + 9 * np.eye(4, dtype=np.int64)
    A32 = A[0].astype(np.float32)
    big = rng.standard_normal((12, 9))

    def fn(A, B, Ai, A32, big):
        return (L.solve(A, B), L.solve(A, B[0, 0, :, 0]), L.solve(Ai, np.ones(4, np.int32)),
                L.solve(A32, np.arange(4, dtype=np.float32)), L.solve(big[::3, ::2][:, :4], big[1, :4]),
                L.solve(A[:, ::-1, ::-1], B[0]))

    for k, (g, w) in enumerate(zip(aot.compile(fn)(A, B, Ai, A32, big), fn(A, B, Ai, A32, big), strict=True)):
        _same(g, w, f"output {k}")


def test_pivoting_and_special_values():
    """A zero leading entry needs a row swap; ties in |pivot| take the first row (idamax)."""
    a = np.array([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [-1.0, 0.0, 3.0]])
    t = np.array([[1.0, 2.0], [-1.0, 3.0]])
    b = np.array([1.0, 2.0, 3.0])
    f = aot.compile(lambda a, t, b: (L.solve(a, b), L.solve(t, b[:2]), L.solve(a * 1e-300, b)))
    for k, (g, w) in enumerate(zip(f(a, t, b), (L.solve(a, b), L.solve(t, b[:2]), L.solve(a * 1e-300, b)))):
        _same(g, w, f"output {k}")


def test_singular_raises():
    f = aot.compile(lambda a, b: L.solve(a, b))
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(L.LinAlgError, match="Singular"):
        f(s, np.ones(2))
    stack = np.stack([np.eye(3), np.zeros((3, 3)), 2 * np.eye(3)])  # one singular member
    with pytest.raises(L.LinAlgError):
        aot.compile(lambda a, b: L.solve(a, b))(stack, np.ones((3, 3, 1)))
    np.testing.assert_allclose(f(np.eye(2) * 4, np.ones(2)), [0.25, 0.25])  # the entry works again


def test_general_kernel_past_the_limits_and_dynamic():
    """n = 17 and 40 right-hand sides take the blocked kernel, as do dynamic sizes."""
    rng = np.random.default_rng(21)
    a17, a4 = _well_conditioned(rng, (17, 17)), _well_conditioned(rng, (4, 4))
    b17, b40 = rng.standard_normal(17), rng.standard_normal((4, 40))
    assert not linalg_small.applies(17, 1, D.float64) and not linalg_small.applies(4, 40, D.float64)
    got = aot.compile(lambda a, b, c, d: (L.solve(a, b), L.solve(c, d)))(a17, b17, a4, b40)
    _same(got[0], L.solve(a17, b17), "n=17")
    _same(got[1], L.solve(a4, b40), "k=40")
    f = aot.compile(lambda a, b: L.solve(a, b), dynamic=True)
    for n in (3, 6, 9):
        a, b = _well_conditioned(rng, (2, n, n)), rng.standard_normal((2, n, 1))
        _same(f(a, b), L.solve(a, b), f"dynamic n={n}")


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_library(tmp_path):
    rng = np.random.default_rng(22)
    A, a, b = _well_conditioned(rng, (6, 8, 8)), _well_conditioned(rng, (3, 3)), rng.standard_normal((8, 2))

    def fn(A, a, b):
        return L.solve(A, b), L.solve(a, b[:3, 0])

    path = aot.aot_compile(fn, (A, a, b), dynamic_shapes={"A": {0: aot.Dim("B", min=2, max=4096)}},
                           path=tmp_path / "small_solve.so")
    lib = aot.aot_load(path)
    for m in (6, 2, 300):
        A = _well_conditioned(rng, (m, 8, 8))
        for k, (g, w) in enumerate(zip(lib(A, a, b), fn(A, a, b), strict=True)):
            _same(g, w, f"library batch {m} output {k}")
    with pytest.raises(L.LinAlgError):
        lib(np.zeros((2, 8, 8)), a, b)
