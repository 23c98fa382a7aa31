"""np.linalg.eig, np.linalg.eigvals (aot/ops/linalg_eig.py, codegen/kernels/linalg_eig.py and
linalg_schur.py) and np.roots against numpy, through the compiled default, backend="eager" and one
library.

Eigenvalues are unique only as a multiset and eigenvectors only up to a phase, so results are
checked as LAPACK's are: eigenvalues matched one to one with numpy's (an optimal assignment) within
what the matrix's conditioning allows (Bauer-Fike: cond(V) times a backward error of n eps ||A||),
each eigenvalue's backward error sigma_min(A - w I) / ||A||, the eigenvector residual
||A V - V diag(w)|| / (||A|| ||V||) against numpy's own with a small factor, and unit 2-norms. Results
are always complex (numpy's are real when every eigenvalue is: the one value-dependent dtype).
"""
from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

import aot
from codegen.kernels import linalg_schur

L = np.linalg
EPS = {"float32": 2**-23, "complex64": 2**-23, "float64": 2**-52, "complex128": 2**-52}


def eig_both(a):
    w, v = L.eig(a)
    return w, v, L.eigvals(a)


EIG = aot.compile(eig_both, dynamic=True)  # one compile per dtype and rank, shared by the tests


def rand(shape, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def complex_of(dtype) -> np.dtype:
    return np.result_type(np.dtype(dtype) if np.dtype(dtype).kind in "fc" else np.float64, np.complex64)


def match_error(w, w0) -> float:
    """The largest distance of an optimal one-to-one matching of two eigenvalue multisets."""
    d = np.abs(np.asarray(w, complex)[:, None] - np.asarray(w0, complex)[None, :])
    r, c = linear_sum_assignment(d)
    return float(d[r, c].max(initial=0))


def residual(a, w, v) -> float:
    """max over the batch of ||A V - V diag(w)|| / (||A|| ||V||)"""
    a, w, v = (np.asarray(x, np.complex128) for x in (a, w, v))
    r = np.linalg.norm(a @ v - v * w[..., None, :], axis=(-2, -1))
    scale = np.linalg.norm(a, axis=(-2, -1)) * np.linalg.norm(v, axis=(-2, -1))
    return float(np.max(r / np.maximum(scale, 1e-300), initial=0))


def backward_error(a, w) -> float:
    """max over w of sigma_min(A - w I) / ||A||: how far A is from having w as an eigenvalue."""
    a = np.asarray(a, np.complex128)
    nrm = max(np.linalg.norm(a, 2), 1e-300)
    return max((L.svd(a - x * np.eye(len(a)), compute_uv=False)[-1] / nrm for x in w), default=0.0)


def check_member(a, w, v, w2, dtype="float64"):
    """One matrix's compiled eig (w, v) and eigvals (w2) against numpy."""
    n, eps = len(a), EPS[np.dtype(complex_of(dtype)).name]
    w0, v0 = L.eig(a)
    norm = max(np.linalg.norm(np.asarray(a, complex), 2), 1e-300)
    assert backward_error(a, w) <= 30 * n * eps and backward_error(a, w2) <= 30 * n * eps
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cond = np.linalg.cond(v0) if n else 1.0
    bound = 100 * n * eps * norm * cond  # Bauer-Fike, ours and numpy's each within it of the truth
    assert match_error(w, w0) <= bound and match_error(w2, w0) <= bound
    assert residual(a, w, v) <= 10 * residual(a, w0, v0) + 20 * n * eps
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1.0, atol=20 * n * eps)


def same_type(got, dtype, shape):
    got = np.asarray(got)
    assert got.dtype == dtype and got.shape == shape, (got.dtype, dtype, got.shape, shape)


def jordan(n, lam=2.0):
    return lam * np.eye(n) + np.eye(n, k=1)


def hilbert(n):
    return 1.0 / (np.arange(n)[:, None] + np.arange(n) + 1.0)


def structured():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((10, 10))
    return {
        "random 3": rand((3, 3), seed=3), "random 8": rand((8, 8), seed=8),
        "random 30": rand((30, 30), seed=30),
        "symmetric": x + x.T, "jordan": jordan(6), "near-defective": jordan(8) + 1e-10 * rand((8, 8), seed=1),
        "hilbert (cond 1e10)": hilbert(8), "badly scaled": np.diag(10.0 ** np.arange(-6, 7)) @ rand((13, 13)),
        "graded similarity": np.diag(10.0 ** -np.arange(7)) @ rand((7, 7), seed=2)
        @ np.diag(10.0 ** np.arange(7)),
        "cyclic permutation": np.eye(5)[[1, 2, 3, 4, 0]], "rotation": np.array([[0.0, -1.0], [1.0, 0.0]]),
        "nilpotent": np.triu(rand((5, 5), seed=4), 1), "zeros": np.zeros((4, 4)), "identity": np.eye(3),
        "grcar": np.eye(20, k=-1) * -1 + sum(np.eye(20, k=k) for k in range(4)),
        "1e300": 1e300 * rand((4, 4), seed=5), "1e-300": 1e-300 * rand((4, 4), seed=6),
    }


@pytest.mark.parametrize("name", list(structured()))
def test_real_matrices(name):
    a = structured()[name]
    w, v, w2 = EIG(a)
    n = len(a)
    same_type(w, np.complex128, (n,))
    same_type(v, np.complex128, (n, n))
    same_type(w2, np.complex128, (n,))
    if name in ("1e300", "1e-300"):  # numpy's norms over- and underflow there: compare scaled
        s = 1e300 if name == "1e300" else 1e-300
        check_member(a / s, w / s, v, w2 / s)
        return
    check_member(a, w, v, w2)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_vectors_are_numpys_up_to_sign(dtype):
    """Both normalise as LAPACK's geev (unit norm, largest component real): for distinct
    eigenvalues the vectors agree up to a factor +-1."""
    a = rand((12, 12), dtype, seed=21)
    w, v, _ = EIG(a)
    w0, v0 = L.eig(a)
    d = np.abs(w[:, None] - w0[None, :])
    for i, j in zip(*linear_sum_assignment(d)):
        sign = np.sign(np.vdot(v0[:, j], v[:, i]).real)
        np.testing.assert_allclose(v[:, i], sign * v0[:, j], atol=1e-12)


def test_defective_and_repeated():
    """An exact Jordan block gives its eigenvalue exactly and (nearly) parallel unit vectors, as
    numpy's; a repeated eigenvalue of a diagonalisable matrix gets independent vectors."""
    w, v, _ = EIG(jordan(5))
    np.testing.assert_array_equal(w, np.full(5, 2.0))
    assert np.abs(np.abs(v[0]) - 1).max() < 1e-12  # every vector ~ e_0
    d = np.diag([1.0, 1.0, 3.0, 3.0, 3.0])
    q, _ = L.qr(rand((5, 5), seed=9))
    a = q @ d @ q.T
    w, v, _ = EIG(a)
    assert match_error(w, np.diag(d)) < 1e-13
    assert np.linalg.matrix_rank(v, tol=1e-8) == 5
    check_member(a, w, v, w)


@pytest.mark.parametrize("dtype", ["complex128", "complex64", "float32"])
def test_complex_and_single(dtype):
    a = rand((2, 9, 9), dtype, seed=11)
    w, v, w2 = EIG(a)
    cdt = complex_of(dtype)
    same_type(w, cdt, (2, 9))
    same_type(v, cdt, (2, 9, 9))
    for k in range(2):
        check_member(a[k], w[k], v[k], w2[k], dtype)


def test_int_and_bool_promote_to_double():
    """ints and bools compute in double (numpy's _commonType); one compile for all the operands."""
    f = aot.compile(lambda i32, i64, b: (L.eigvals(i32), *L.eig(i64), L.eigvals(b)))
    i32 = np.arange(9, dtype=np.int32).reshape(3, 3) ** 2 % 7
    i64 = np.array([[2, -1, 0], [1, 2, 0], [0, 0, 5]])
    b = np.array([[True, False], [True, True]])
    w32, w64, v64, wb = f(i32, i64, b)
    for got, x in ((w32, i32), (w64, i64), (wb, b)):
        same_type(got, np.complex128, (len(x),))
        assert match_error(got, L.eigvals(x)) < 1e-13
    check_member(i64.astype(float), w64, v64, w64)
    assert match_error(w64, [2 + 1j, 2 - 1j, 5]) < 1e-14


def test_batches_and_threads():
    """A stack of stacks, and a stack large enough to run on threads (one matrix per work item)."""
    a = rand((3, 4, 5, 5), seed=12)
    w, v, w2 = EIG(a)
    same_type(v, np.complex128, (3, 4, 5, 5))
    for idx in np.ndindex(3, 4):
        check_member(a[idx], w[idx], v[idx], w2[idx])
    big = rand((400, 6, 6), seed=13)
    w, v, w2 = aot.compile(eig_both)(big)
    w0, v0 = L.eig(big)
    assert residual(big, w, v) <= 10 * residual(big, w0, v0) + 1e-14
    assert max(match_error(x, y) for x, y in zip(w2, w0)) < 1e-10  # random: well conditioned


def test_edge_sizes():
    """1 x 1, 0 x 0 and empty stacks (sizes 0 and 1 are specialised: one compile each)."""
    f = aot.compile(eig_both)
    w, v, w2 = f(np.array([[-2.5]]))
    np.testing.assert_array_equal(w, [-2.5])
    np.testing.assert_array_equal(v, [[1.0]])
    np.testing.assert_array_equal(w2, [-2.5])
    for shape in ((0, 0), (2, 0, 0), (0, 3, 3)):
        w, v, w2 = f(np.zeros(shape))
        same_type(w, np.complex128, shape[:-1])
        same_type(v, np.complex128, shape)
        same_type(w2, np.complex128, shape[:-1])


def test_nonfinite_input_raises():
    """numpy refuses a NaN or an infinity anywhere in the stack (LinAlgError), compiled or eager."""
    eager = aot.compile(eig_both, backend="eager")
    for bad in (np.nan, np.inf, -np.inf):
        a = rand((3, 4, 4), seed=14)
        a[2, 1, 3] = bad
        for f in (EIG, eager):
            with pytest.raises(L.LinAlgError, match="^Array must not contain infs or NaNs$"):
                f(a)
            with pytest.raises(L.LinAlgError, match="Array must not contain infs or NaNs"):
                f(a[2])
    a = rand((400, 6, 6), seed=15)  # one bad member of a threaded stack
    a[397, 0, 0] = np.nan
    with pytest.raises(L.LinAlgError, match="infs or NaNs"):
        aot.compile(lambda a: L.eigvals(a))(a)
    EIG(rand((4, 4)))  # still usable afterwards


def test_no_convergence_raises(monkeypatch):
    """With no QR iterations allowed (a kernel built for this test only, kept out of the disk cache
    and the in-process code cache by its options) a matrix that needs one fails as numpy's
    LinAlgError; a triangular one needs none."""
    monkeypatch.setattr(linalg_schur, "ITERATIONS", 0)
    f = aot.compile(lambda a: L.eigvals(a), options={"disk_cache": False})
    with pytest.raises(L.LinAlgError, match="^Eigenvalues did not converge$"):
        f(rand((2, 5, 5), seed=22))
    np.testing.assert_array_equal(f(np.triu(np.ones((2, 5, 5)))), np.ones((2, 5)))


@pytest.mark.parametrize("fn, shape, match", [
    (L.eig, (2, 3), "Last 2 dimensions of the array must be square"),
    (L.eigvals, (4, 2, 3), "Last 2 dimensions of the array must be square"),
    (L.eig, (3,), "1-dimensional array given. Array must be at least two-dimensional"),
    (L.eigvals, (), "0-dimensional array given"),
])
def test_shape_errors_are_numpys(fn, shape, match):
    with pytest.raises(L.LinAlgError, match=match):
        fn(np.ones(shape))
    with pytest.raises(L.LinAlgError, match=match):
        aot.compile(fn, fullgraph=True)(np.ones(shape))


def test_views_and_named_result():
    a = rand((8, 8), seed=16)
    f = aot.compile(lambda a: (L.eig(a.T[::2, ::2]), L.eigvals(a[1::3, 1::3]), L.eig(a)))
    r, w2, fortran = f(np.asfortranarray(a))
    assert type(r) is type(L.eig(np.eye(2))) and r.eigenvectors.shape == (4, 4)
    sub = a.T[::2, ::2]
    check_member(sub, r.eigenvalues, r.eigenvectors, L.eigvals(sub))
    assert match_error(w2, L.eigvals(a[1::3, 1::3])) < 1e-12
    check_member(a, *fortran, fortran.eigenvalues)


def test_eager_backend_is_numpy_made_complex():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])  # real eigenvalues: numpy's results are real
    w, v, w2 = aot.compile(eig_both, backend="eager")(a)
    w0, v0 = L.eig(a)
    assert w.dtype == v.dtype == w2.dtype == np.complex128 and w0.dtype == np.float64
    np.testing.assert_array_equal(w, w0)
    np.testing.assert_array_equal(v, v0)
    wc, _, _ = EIG(a)
    np.testing.assert_allclose(np.sort(wc.real), np.sort(w0), rtol=1e-14)
    assert np.abs(wc.imag).max() < 1e-15


# --- np.roots --------------------------------------------------------------------------------------
ROOTS = aot.compile(lambda p: np.roots(p), dynamic=True)  # np.roots looked up while tracing (substituted)


@pytest.mark.parametrize("p", [
    [1.0, -3.0, 2.0], [1.0, 0.0, 1.0], [1.0, 2.0, 3.0, 4.0, 5.0], [2.0, -1.0], [1e-3, 1e3, 1.0],
    [1.0, 0.0, 0.0, -1.0, 0.0, 0.0],  # trailing zeros: exact zero roots, last
    [3.0, 0.0, 0.0], [1.0, 2.0, 0.0, 3.0, 0.0],
])
def test_roots(p):
    p = np.array(p)
    r, r0 = ROOTS(p), np.roots(p)
    same_type(r, np.complex128, r0.shape)
    assert match_error(r, r0) <= 1e-12 * max(1.0, np.abs(r0).max())
    zeros = len(p) - 1 - np.flatnonzero(p).max()
    if zeros:
        np.testing.assert_array_equal(r[-zeros:], 0)
        assert not np.signbit(r[-zeros:].real).any()


def test_roots_dtypes_and_accuracy():
    f = aot.compile(lambda a, b, c: (np.roots(a), np.roots(b), np.roots(c)))
    a, b = np.array([1, -6, 11, -6]), np.array([1, 2, 5], np.float32)
    c = np.array([1j, 2, 3 - 1j], np.complex64)
    ra, rb, rc = f(a, b, c)
    for got, p in ((ra, a), (rb, b), (rc, c)):
        want = np.roots(p)
        same_type(got, complex_of(want.dtype), want.shape)
        assert match_error(got, want) < (1e-5 if got.dtype == np.complex64 else 1e-12)
    # Wilkinson's polynomial: as accurate as numpy's (balancing the companion matrix matters here)
    p = np.poly(np.arange(1.0, 21.0))
    exact = np.arange(1.0, 21.0)
    assert match_error(ROOTS(p), exact) <= 2 * match_error(np.roots(p), exact) + 1e-6
    assert ROOTS.cache_info()["compiles"] == 1  # every length >= 2 shares the symbolic entry


def test_roots_leading_zero_and_shapes():
    with pytest.raises(ValueError, match="the leading coefficient is zero"):
        ROOTS(np.array([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match="the leading coefficient is zero"), np.errstate(divide="ignore"):
        aot.compile(lambda p: np.roots(p), backend="eager")(np.array([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match="Input must be a rank-1 array."):
        aot.compile(lambda p: np.roots(p))(np.ones((2, 2)))
    short = aot.compile(lambda p: np.roots(p))(np.array([4.0]))  # a constant has no roots
    same_type(short, np.float64, (0,))
    # coefficients known while tracing are numpy's own roots (its dtype: real roots, real array)
    const = aot.compile(lambda x: x + np.roots([1.0, -3.0, 2.0]))(np.zeros(2))
    np.testing.assert_allclose(const, np.roots([1.0, -3.0, 2.0]))
    assert const.dtype == np.float64
    listed = aot.compile(lambda b, c: np.roots([1.0, b, c]))(np.array(-3.0), np.array(2.0))  # traced scalars
    assert match_error(listed, [1.0, 2.0]) < 1e-14 and listed.dtype == np.complex128


# --- one library -----------------------------------------------------------------------------------
@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_library(tmp_path):
    def fn(a, p):
        w, v = L.eig(a)
        return w, v, L.eigvals(a @ a), np.roots(p)

    n, m = aot.Dim("n", min=2, max=64), aot.Dim("m", min=2, max=64)
    path = aot.aot_compile(fn, (rand((5, 5)), rand((4,))), dynamic_shapes={"a": {0: n, 1: n}, "p": {0: m}},
                           path=tmp_path / "eig.so")
    lib = aot.aot_load(path)
    for k in (2, 7, 20):
        a, p = rand((k, k), seed=k), rand((k + 1,), seed=k + 1)
        w, v, w2, r = lib(a, p)
        same_type(w, np.complex128, (k,))
        check_member(a, w, v, L.eigvals(a))
        assert match_error(w2, L.eigvals(a @ a)) < 1e-10 * np.linalg.norm(a @ a)
        assert match_error(r, np.roots(p)) < 1e-9 * max(1, np.abs(np.roots(p)).max())
    bad = np.eye(3)
    bad[0, 1] = np.nan
    with pytest.raises(L.LinAlgError, match="Array must not contain infs or NaNs"):
        lib(bad, rand((3,)))
    with pytest.raises(ValueError, match="leading coefficient"):
        lib(np.eye(3), np.array([0.0, 1.0, 1.0]))
