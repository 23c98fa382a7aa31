"""numpy.linalg on generated kernels (aot/ops/linalg_kernels.py, codegen/kernels/linalg_*.py) against
numpy, through backend="eager", the compiled default and one library.

Factorisations are unique only up to signs / phases, and a solution is only as good as the
problem's conditioning, so results are checked the way LAPACK is: residuals ||A x - b|| / (||A|| ||x||)
against numpy's own residual with a small factor, reconstructions (Q R = A, U S Vh = A, A V = V diag(w)),
orthogonality, and values that are unique (det, eigenvalues, singular values, R's diagonal
magnitudes) against numpy at dtype-fitting tolerances. Every result's dtype and shape are numpy's.
"""
from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

import aot

L = np.linalg
DTYPES = ("float32", "float64", "complex64", "complex128")
SLOW = pytest.mark.slow


def sweep(*fast: str) -> list:
    """The dtypes of a sweep: `fast` in the default run (the sweeps share the four dtypes out), the
    others with -m slow (each compile costs LLVM time; the kernels are the same for every dtype)."""
    return [d if d in fast else pytest.param(d, marks=SLOW) for d in DTYPES]
EPS = {"float32": 2e-7, "complex64": 2e-7, "float64": 1e-15, "complex128": 1e-15}


def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def herm(x):
    return x + np.conj(np.swapaxes(x, -1, -2))


def ct(x):
    return np.conj(np.swapaxes(x, -1, -2))


def eye_like(x):
    return np.broadcast_to(np.eye(x.shape[-1]), x.shape[:-2] + (x.shape[-1], x.shape[-1]))


def cond_matrix(n, cond, seed=0):
    """A random n x n matrix with condition number `cond`."""
    rng = np.random.default_rng(seed)
    u, _ = np.linalg.qr(rng.standard_normal((n, n)))
    v, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return (u * np.logspace(0, -np.log10(cond), n)) @ v.T


def hilbert(n):
    return 1.0 / (np.arange(n)[:, None] + np.arange(n) + 1.0)


def residual(a, x, b):
    """max over the batch of ||a x - b|| / (||a|| ||x|| + ||b||)"""
    a, x, b = (np.asarray(v, np.complex128) for v in (a, x, b))
    r = np.linalg.norm(a @ x - b, axis=(-2, -1))
    return float(np.max(r / (np.linalg.norm(a, axis=(-2, -1)) * np.linalg.norm(x, axis=(-2, -1))
                             + np.linalg.norm(b, axis=(-2, -1)) + 1e-300), initial=0))


def same_type(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)


# --- LU: det, slogdet, inv, solve ---------------------------------------------------------------------
def lu_family(a, b, B):
    sign, logdet = L.slogdet(a)
    return L.det(a), sign, logdet, L.inv(a), L.solve(a, b), L.solve(a, B)


@pytest.mark.parametrize("dtype, batch", [("float64", (3,)), ("complex64", ()),
                                          *(pytest.param(d, b, marks=SLOW) for d, b in
                                            [("float32", (3,)), ("complex128", (3,)), ("float64", ())])])
def test_lu_family(dtype, batch):
    f = aot.compile(lu_family, dynamic=True)
    eps = EPS[dtype]
    for n in (2, 5, 16, 37, 1):
        a = rand(batch + (n, n), dtype, seed=n)
        b, B = rand((n,), dtype, seed=n + 1), rand(batch + (n, 3), dtype, seed=n + 2)
        got, want = f(a, b, B), lu_family(a, b, B)
        for g, w in zip(got, want, strict=True):
            same_type(g, w)
        for g, w in zip(got[:3], want[:3]):  # det, sign, logdet are unique
            np.testing.assert_allclose(g, w, rtol=50 * n * eps, atol=50 * n * eps)
        assert residual(a, got[3], eye_like(a)) <= 10 * residual(a, want[3], eye_like(a)) + 20 * n * eps
        assert residual(a, got[4][..., None], np.broadcast_to(b[:, None], batch + (n, 1))) <= \
            10 * residual(a, want[4][..., None], np.broadcast_to(b[:, None], batch + (n, 1))) + 20 * n * eps
        assert residual(a, got[5], B) <= 10 * residual(a, want[5], B) + 20 * n * eps
    assert f.cache_info()["compiles"] == 2  # size 1 is specialised, the rest share one symbolic entry


def test_solve_broadcasts_stacks_and_promotes():
    f = aot.compile(lambda a, b: L.solve(a, b))
    a, b = rand((2, 1, 4, 4), "float64"), rand((3, 4, 2), "float32")
    same_type(f(a, b), L.solve(a, b))
    np.testing.assert_allclose(f(a, b), L.solve(a, b), rtol=1e-9)
    ai = np.arange(9).reshape(3, 3) ** 2 + np.eye(3, dtype=int)  # ints compute in float64
    same_type(f(ai, np.ones((3, 1), np.int32)), L.solve(ai, np.ones((3, 1), np.int32)))
    bi = np.ones((3, 1), np.int32)
    np.testing.assert_allclose(f(ai, bi), L.solve(ai, bi), rtol=1e-12)
    bool_f32 = aot.compile(lambda a: L.inv(a))(np.eye(3, dtype=bool))  # numpy's _commonType: bool is double
    assert bool_f32.dtype == np.float64


def test_ill_conditioned():
    """Residuals as small as LAPACK's even when the solution itself is inaccurate (Hilbert 8, condition
    numbers 1e10 at n = 30 and n = 130)."""
    f = aot.compile(lambda a, b: (L.solve(a, b), L.inv(a), L.det(a), L.eigvalsh(herm(a) / 2), L.svdvals(a)),
                    dynamic=True)
    for a in (hilbert(8), cond_matrix(30, 1e10), cond_matrix(130, 1e10, seed=3)):
        b = np.random.default_rng(1).standard_normal(len(a))
        x, ai, det, w, s = f(a, b)
        x0, ai0 = L.solve(a, b), L.inv(a)
        assert residual(a, x[:, None], b[:, None]) <= 10 * residual(a, x0[:, None], b[:, None]) + 1e-15
        assert residual(a, ai, np.eye(len(a))) <= 10 * residual(a, ai0, np.eye(len(a))) + 1e-15
        np.testing.assert_allclose(det, L.det(a), rtol=1e-6)
        np.testing.assert_allclose(w, L.eigvalsh(herm(a) / 2), atol=1e-13 * np.abs(w).max())
        np.testing.assert_allclose(s, L.svdvals(a), rtol=1e-8, atol=1e-14 * s[0])


def test_singular_raises_linalgerror():
    for f in (lambda a: L.inv(a), lambda a: L.solve(a, np.ones(3))):
        g = aot.compile(f)
        with pytest.raises(L.LinAlgError, match="^Singular matrix$"):
            g(np.ones((3, 3)))
        with pytest.raises(L.LinAlgError, match="Singular matrix"):
            g(np.stack([np.eye(3), np.zeros((3, 3))]))  # one singular member of a stack
        g(np.eye(3))  # the function still works afterwards
    # det and slogdet of a singular matrix are values, as numpy's
    got = aot.compile(lambda a: (L.det(a), *L.slogdet(a)))(np.ones((3, 3)))
    assert got[0] == 0 and got[1] == 0 and got[2] == -np.inf


@pytest.mark.parametrize("fn, shape, match", [
    (L.inv, (2, 3), "Last 2 dimensions of the array must be square"),
    (L.det, (3,), "1-dimensional array given. Array must be at least two-dimensional"),
    (L.cholesky, (4, 2, 3), "Last 2 dimensions"),
    (L.eigh, (2, 3), "Last 2 dimensions"),
    (L.qr, (3,), "1-dimensional"),
    (L.svd, (5,), "1-dimensional"),
])
def test_shape_errors_are_numpy_linalgerrors(fn, shape, match):
    with pytest.raises(L.LinAlgError, match=match):
        fn(np.ones(shape))
    with pytest.raises(L.LinAlgError, match=match):
        aot.compile(fn, backend="eager", fullgraph=True)(np.ones(shape))


def test_argument_errors_are_numpys():
    a = np.eye(3)
    for f, err, match in [
        (lambda a: L.solve(a, np.ones(4)), ValueError, "mismatch in its core dimension 0"),
        (lambda a: L.qr(a, mode="bogus"), ValueError, "Unrecognized mode 'bogus'"),
        (lambda a: L.eigh(a, UPLO="X"), ValueError, "UPLO argument must be 'L' or 'U'"),
        (lambda a: L.norm(a, "nuc", axis=0), ValueError, "Invalid norm order 'nuc' for vectors"),
        (lambda a: L.norm(a, 3), ValueError, "Invalid norm order for matrices."),
        (lambda a: L.matrix_power(a, 1.5), TypeError, "exponent must be an integer"),
        (lambda a: L.cross(a[:, :2], a[:, :2]), ValueError, "3-dimensional vectors"),
    ]:
        with pytest.raises(err, match=match):
            f(a)
        with pytest.raises(err, match=match):
            aot.compile(f, fullgraph=True)(a)


# --- cholesky ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", sweep("float32", "complex128"))
def test_cholesky(dtype):
    f = aot.compile(lambda a: (L.cholesky(a), L.cholesky(a, upper=True)), dynamic=True)
    for n in (4, 23):
        x = rand((2, n, n), dtype, seed=n)
        a = x @ ct(x) + n * np.eye(n)
        lo, up = f(a)
        same_type(lo, L.cholesky(a))
        tol = 200 * EPS[dtype] * n
        np.testing.assert_allclose(lo, L.cholesky(a), rtol=tol, atol=tol * np.abs(lo).max())
        np.testing.assert_allclose(up, L.cholesky(a, upper=True), rtol=tol, atol=tol * np.abs(lo).max())
    if dtype != "float64":
        return
    # only the named triangle is read, as numpy's
    a = np.array([[4.0, 99.0], [2.0, 3.0]])
    np.testing.assert_allclose(aot.compile(L.cholesky)(a), L.cholesky(a))
    b = np.array([[4.0, 2.0], [99.0, 3.0]])
    np.testing.assert_allclose(aot.compile(lambda a: L.cholesky(a, upper=True))(b), L.cholesky(b, upper=True))


def test_cholesky_not_positive_definite():
    f = aot.compile(lambda a: L.cholesky(a))
    for bad in (-np.eye(3), np.ones((3, 3)), np.array([[1.0, np.nan], [np.nan, 1.0]])):
        with pytest.raises(L.LinAlgError, match="^Matrix is not positive definite$"):
            f(bad)


# --- qr ----------------------------------------------------------------------------------------------
def qr_modes(a):
    return (*L.qr(a), *L.qr(a, mode="complete"), L.qr(a, mode="r"))


QR_SHAPES = {"matrices": [(5, 3), (3, 5), (40, 33), (6, 6)], "stacks": [(3, 4, 2), (2, 8, 8)],
             "edges": [(1, 1), (0, 3), (3, 0), (1, 4)]}


@pytest.mark.parametrize("dtype", sweep("float64", "complex64"))
@pytest.mark.parametrize("shapes", ["matrices", *(pytest.param(s, marks=SLOW) for s in ("stacks", "edges"))])
def test_qr(dtype, shapes):
    f = aot.compile(qr_modes, dynamic=True)
    for shape in QR_SHAPES[shapes]:
        a = rand(shape, dtype, seed=sum(shape))
        q, r, qc, rc, r_only = got = f(a)
        for g, w in zip(got, qr_modes(a), strict=True):
            same_type(g, w)
        tol = 100 * EPS[dtype] * max(shape + (1,))
        scale = max(np.abs(a).max(initial=0), 1)
        np.testing.assert_allclose(q @ r, a, atol=tol * scale)
        np.testing.assert_allclose(qc @ rc, a, atol=tol * scale)
        np.testing.assert_allclose(ct(qc) @ qc, eye_like(qc), atol=tol)
        np.testing.assert_array_equal(r, np.triu(r))
        # R's diagonal follows LAPACK's sign convention, so R itself matches numpy's
        np.testing.assert_allclose(r, L.qr(a)[1], atol=tol * scale)
        np.testing.assert_allclose(r_only, r)


# --- eigh --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", sweep("float32", "complex128"))
def test_eigh(dtype):
    f = aot.compile(lambda a: (*L.eigh(a), *L.eigh(a, UPLO="U"), L.eigvalsh(a)), dynamic=True)
    for n in (3, 17, 36):
        a = herm(rand((2, n, n), dtype, seed=n))
        w, v, wu, vu, w2 = f(a)
        w0, v0 = L.eigh(a)
        same_type(w, w0)
        same_type(v, v0)
        tol = 50 * EPS[dtype] * n * np.abs(w0).max()
        for ww in (w, wu, w2):
            np.testing.assert_allclose(ww, w0, atol=tol)  # ascending, as numpy's
        for vv, ww in ((v, w), (vu, wu)):
            np.testing.assert_allclose(a @ vv, vv * ww[..., None, :], atol=tol)
            np.testing.assert_allclose(ct(vv) @ vv, eye_like(a), atol=50 * EPS[dtype] * n)


def test_eigh_reads_one_triangle_and_special_spectra():
    f = aot.compile(lambda a: (L.eigvalsh(a), L.eigvalsh(a, UPLO="U")))
    a = np.array([[2.0, 99.0], [1.0, 2.0]])
    np.testing.assert_allclose(f(a)[0], L.eigvalsh(a))
    np.testing.assert_allclose(f(a)[1], L.eigvalsh(a, UPLO="U"))
    g = aot.compile(lambda a: L.eigh(a), dynamic=True)
    for a in (np.zeros((3, 3)), np.eye(4), np.diag([1.0, 1.0, 2.0, 2.0]), np.ones((5, 5)), hilbert(8)):
        w, v = g(a)
        np.testing.assert_allclose(w, L.eigvalsh(a), atol=1e-14)
        np.testing.assert_allclose(a @ v, v * w, atol=1e-14)
        np.testing.assert_allclose(v.T @ v, np.eye(len(a)), atol=1e-14)


# --- svd ---------------------------------------------------------------------------------------------
def svd_modes(a):
    return (*L.svd(a), *L.svd(a, full_matrices=False), L.svdvals(a), L.svd(a, compute_uv=False))


SVD_SHAPES = {"matrices": [(6, 4), (4, 6), (35, 12), (5, 5)], "stacks": [(3, 2, 4), (2, 5, 5)],
              "edges": [(1, 1), (0, 3), (3, 0), (1, 5)]}


@pytest.mark.parametrize("dtype", sweep("float64", "complex64"))
@pytest.mark.parametrize("shapes", ["matrices", *(pytest.param(s, marks=SLOW) for s in ("stacks", "edges"))])
def test_svd(dtype, shapes):
    f = aot.compile(svd_modes, dynamic=True)
    for shape in SVD_SHAPES[shapes]:
        a = rand(shape, dtype, seed=sum(shape))
        u, s, vh, ur, sr, vhr, s2, s3 = got = f(a)
        for g, w in zip(got, svd_modes(a), strict=True):
            same_type(g, w)
        s0 = L.svdvals(a)
        tol = 50 * EPS[dtype] * max(shape + (1,))
        top = max(s0.max(initial=0), 1)
        for ss in (s, sr, s2, s3):
            np.testing.assert_allclose(ss, s0, atol=tol * top)  # descending, as numpy's
        k = s.shape[-1]
        np.testing.assert_allclose((ur * sr[..., None, :]) @ vhr, a, atol=tol * top)
        np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, atol=tol * top)
        np.testing.assert_allclose(ct(u) @ u, eye_like(u), atol=tol)
        np.testing.assert_allclose(vh @ ct(vh), eye_like(vh), atol=tol)


def test_stacks_and_edge_shapes():
    """Stacks, and empty and 1-element matrices (their sizes are specialised: one compile each)."""
    f = aot.compile(lambda a: (*qr_modes(a), *svd_modes(a)))
    for shape in ((2, 3, 2), (1, 1), (0, 3), (3, 0)):
        a = rand(shape, "float64")
        got, want = f(a), (*qr_modes(a), *svd_modes(a))
        for g, w in zip(got, want, strict=True):
            same_type(g, w)
        q, r, qc, rc, _, u, s, vh = got[:8]
        np.testing.assert_allclose(q @ r, a, atol=1e-14)
        np.testing.assert_allclose(qc @ rc, a, atol=1e-14)
        np.testing.assert_allclose(s, L.svdvals(a), atol=1e-14)
        np.testing.assert_allclose((u[..., :s.shape[-1]] * s[..., None, :]) @ vh[..., :s.shape[-1], :], a,
                                   atol=1e-14)


def test_svd_rank_deficient_and_scaled():
    f = aot.compile(lambda a: L.svd(a), dynamic=True)
    rng = np.random.default_rng(5)
    for a in (np.zeros((4, 3)), np.ones((3, 5)), np.outer(np.arange(1.0, 6), np.arange(1.0, 4)),
              1e-300 * rng.standard_normal((5, 4)), 1e300 * rng.standard_normal((4, 5))):
        u, s, vh = f(a)
        k = len(s)
        top = max(s.max(), 1e-300)
        np.testing.assert_allclose(s, L.svdvals(a), atol=1e-14 * top)
        np.testing.assert_allclose((u[:, :k] * s) @ vh[:k], a, atol=1e-14 * top)
        np.testing.assert_allclose(u.T @ u, np.eye(len(u)), atol=1e-14)  # completed to a basis
        np.testing.assert_allclose(vh @ vh.T, np.eye(len(vh)), atol=1e-14)


def test_nonfinite_inputs_follow_numpy():
    """What LAPACK does for numpy: NaNs out of eigh, inv and det; svd fails on a NaN and returns NaNs
    for an infinity; lstsq fails on both."""
    values = aot.compile(lambda a: (L.eigvalsh(a), L.inv(a), L.det(a)))
    fails = aot.compile(lambda a: L.lstsq(a, np.ones(2))[0])
    svd = aot.compile(lambda a: L.svd(a))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for bad in (np.nan, np.inf):
            a = np.array([[1.0, 2.0], [bad, 3.0]])
            for g, w in zip(values(a), (L.eigvalsh(a), L.inv(a), L.det(a)), strict=True):
                np.testing.assert_array_equal(g, w)
            with pytest.raises(L.LinAlgError, match="SVD did not converge in Linear Least Squares"):
                fails(a)
        with pytest.raises(L.LinAlgError, match="^SVD did not converge$"):
            svd(np.array([[1.0, np.nan], [2.0, 3.0]]))
        inf = np.array([[np.inf, 1.0], [1.0, 1.0]])
        np.testing.assert_array_equal(svd(inf).S, L.svd(inf).S)
        singular = np.array([[1.0, 2.0], [2.0, 4.0]])
        assert aot.compile(L.cond)(singular) > 1e15  # numpy: 4.8e16 (LAPACK's rounding); here inf


# --- built on the factorisations ---------------------------------------------------------------------
def check(f, *args, tol=1e-9, dynamic=None):
    got = aot.compile(f, dynamic=dynamic)(*args)
    want = f(*args)
    if not isinstance(want, tuple):
        got, want = (got,), (want,)
    for g, w in zip(got, want, strict=True):
        same_type(g, w)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["int64", "complex128", *(pytest.param(d, marks=SLOW) for d in
                                                             ("float32", "float64", "complex64"))])
def test_norms(dtype):
    tol = 1e-5 if dtype in ("float32", "complex64") else 1e-10
    x = rand((3, 4, 5), dtype) if dtype != "int64" else np.random.default_rng(0).integers(-5, 5, (3, 4, 5))
    v = x[0, 0]

    def vector_norms(v, x):
        return tuple(L.norm(v, o) for o in (None, np.inf, -np.inf, 0, 1, -1, 2, -2, 3, 0.5)) + \
            tuple(L.norm(x, o, axis=1, keepdims=True) for o in (None, np.inf, 1, 2.5))

    def matrix_norms(x):
        return tuple(L.norm(x[0], o) for o in (None, "fro", "nuc", np.inf, -np.inf, 1, -1, 2, -2)) + \
            tuple(L.norm(x, o, axis=(2, 0)) for o in ("fro", 1, -np.inf, 2, "nuc")) + \
            (L.norm(x), L.norm(x, keepdims=True), L.matrix_norm(x, ord=-2, keepdims=True), L.vector_norm(x),
             L.vector_norm(x, axis=(0, 2), keepdims=True, ord=3), L.vector_norm(x, axis=1, ord=np.inf))

    check(lambda v, x: vector_norms(v, x) + matrix_norms(x), v, x, tol=tol)


@pytest.mark.parametrize("dtype", ["float64", "complex64", *(pytest.param(d, marks=SLOW) for d in
                                                               ("int64", "float32", "complex128"))])
def test_built_on_factorisations(dtype):
    tol = 1e-4 if dtype in ("float32", "complex64") else 1e-8
    x = rand((3, 4, 5), dtype) if dtype != "int64" else np.random.default_rng(0).integers(-5, 5, (3, 4, 5))
    sq = x[..., :4]

    def fn(x, sq):
        exact_rtol = L.pinv(x, rtol=None) if dtype != "int64" else L.pinv(x, rtol=1e-12)  # finfo(int) raises
        return (L.pinv(x), exact_rtol, L.cond(sq), L.cond(sq, 1), L.cond(sq, -2), L.cond(sq, "fro"),
                L.matrix_rank(x), L.matrix_rank(sq[0], tol=0.5), L.matrix_power(sq, 3),
                L.matrix_power(sq, -2), L.matrix_power(sq, 0), L.matrix_power(sq, 1))

    check(fn, x, sq, tol=tol)


@pytest.mark.parametrize("dtype", ["float64", pytest.param("complex64", marks=SLOW)])
def test_hermitian_svd_and_pinv(dtype):
    tol = 1e-4 if dtype == "complex64" else 1e-8
    h = herm(rand((3, 4, 4), dtype))

    def fn(h):
        u, s, vh = L.svd(h, hermitian=True)
        return L.pinv(h, hermitian=True), L.svd(h, hermitian=True, compute_uv=False), u, s, vh

    p, s2, u, s, vh = aot.compile(fn)(h)
    np.testing.assert_allclose(p, L.pinv(h, hermitian=True), rtol=tol, atol=tol)
    np.testing.assert_allclose(s2, L.svd(h, hermitian=True, compute_uv=False), rtol=tol, atol=tol)
    np.testing.assert_allclose(s, L.svd(h, hermitian=True)[1], rtol=tol, atol=tol)
    np.testing.assert_allclose((u * s[..., None, :]) @ vh, h, rtol=tol, atol=tol)


def lstsq_both(a, b):
    return (*L.lstsq(a, b), *L.lstsq(a, b, rcond=1e-3))


def test_lstsq():
    rng = np.random.default_rng(2)
    a, b, bm = rng.standard_normal((6, 4)), rng.standard_normal(6), rng.standard_normal((6, 3))
    tall = aot.compile(lstsq_both)
    for g, w in zip(tall(a, b), lstsq_both(a, b), strict=True):
        same_type(g, w)
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
    check(lambda a, b: L.lstsq(a, b), a.T, bm[:4])  # wide: no residuals
    # a rank-deficient tall matrix: numpy's residuals are empty there, compiled code's are NaN
    deficient = np.c_[a[:, :2], a[:, :2]]
    x, res, rank, s = tall(deficient, b)[:4]
    np.testing.assert_allclose(x, L.lstsq(deficient, b)[0], atol=1e-12)
    assert rank == 2 and rank.dtype == np.int32 and np.isnan(res).all()


@SLOW
def test_lstsq_single_precision_and_square():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((6, 4)), rng.standard_normal(6)
    check(lambda a, b: L.lstsq(a, b), a.astype(np.complex64), b.astype(np.float32), tol=1e-5)
    check(lambda a, b: L.lstsq(a, b), a[:4], b[:4])


def test_other_decompositions_and_aliases():
    x = rand((3, 4, 5), "float64")
    t, ta, tb = rand((6, 2, 3), "float64"), rand((2, 3, 6), "float64"), rand((2, 3), "float64")

    def fn(x, t, ta, tb):
        a, b, c, v = x[0], x[1].T, x[2], x[0, 0]
        return (L.multi_dot([a, b, c]), L.multi_dot([a[0], b]), L.multi_dot([a[0], b, c, a[0]]),
                L.tensorinv(t, ind=1), L.tensorsolve(ta, tb), L.matmul(x, x[0].T), L.outer(v, v[:3]),
                L.vecdot(x, v), L.vecdot(x, x, axis=0), L.matrix_transpose(x), L.trace(x),
                L.trace(x, offset=1, dtype=np.float32), L.diagonal(x, offset=-1),
                L.tensordot(x, x[0].T, axes=1), L.cross(x[..., :3], v[:3]))

    check(fn, x, t, ta, tb)


# --- layouts, dynamic shapes, eager, threads, library ---------------------------------------------------
def test_strided_views():
    a = rand((8, 8), "float64", seed=3)
    f = aot.compile(lambda a: (L.inv(a.T[::2, ::2]), L.det(a[::-1]), L.eigvalsh(herm(a)[1::2, 1::2]),
                               L.svd(a.T[:, :5])[1], L.qr(a[::3].T)[1]))
    got = f(a)
    want = (L.inv(a.T[::2, ::2]), L.det(a[::-1]), L.eigvalsh(herm(a)[1::2, 1::2]), L.svd(a.T[:, :5])[1],
            L.qr(a[::3].T)[1])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    fortran = np.asfortranarray(a)
    np.testing.assert_allclose(aot.compile(L.inv)(fortran), L.inv(a), rtol=1e-10)


def test_dynamic_shapes_one_compile():
    def fn(a):
        return (L.svd(a, full_matrices=False)[1], L.qr(a)[1], L.norm(a, 2), L.pinv(a, rtol=None), L.matrix_rank(a),
                L.cond(a))

    f = aot.compile(fn, dynamic=True)
    for shape in ((5, 2), (2, 5), (3, 3), (9, 9), (1, 7)):
        a = rand(shape, "float64", seed=shape[0])
        for g, w in zip(f(a), fn(a), strict=True):
            same_type(g, w)
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
    assert f.cache_info()["compiles"] == 2  # size 1 is specialised
    g = aot.compile(lambda a, b: L.lstsq(a, b), dynamic=True)
    for m, n in ((6, 4), (7, 3), (9, 5)):  # tall: one entry (the guard is M > N)
        a, b = rand((m, n), "float64", seed=m), rand((m,), "float64", seed=n)
        for x, y in zip(g(a, b), L.lstsq(a, b), strict=True):
            np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12)
    assert g.cache_info()["compiles"] == 1


def test_eager_backend_matches_numpy():
    a = rand((2, 4, 4), "float64")
    f = aot.compile(lambda a: (L.det(a), L.inv(a), *L.eigh(herm(a)), L.svd(a)[1], L.norm(a, 2, axis=(1, 2)),
                               L.lstsq(a[0], a[1, 0])[0]), backend="eager")
    want = (L.det(a), L.inv(a), *L.eigh(herm(a)), L.svd(a)[1], L.norm(a, 2, axis=(1, 2)),
            L.lstsq(a[0], a[1, 0])[0])
    for g, w in zip(f(a), want, strict=True):  # numpy's own results (lstsq: numpy's svd, in a few ops)
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-14)
    with pytest.raises(L.LinAlgError, match="Singular matrix"):
        aot.compile(L.inv, backend="eager")(np.zeros((2, 2)))


def test_large_batch_runs_on_threads():
    a = rand((3000, 6, 6), "float64", seed=11)
    b = rand((3000, 6, 2), "float64", seed=12)
    x, w = aot.compile(lambda a, b: (L.solve(a, b), L.eigvalsh(herm(a))))(a, b)
    assert residual(a, x, b) < 1e-13
    np.testing.assert_allclose(w, L.eigvalsh(herm(a)), atol=1e-12)


def test_named_results():
    r = aot.compile(lambda a: (L.qr(a), L.eigh(a + a.T), L.svd(a), L.slogdet(a)))(np.eye(3) + 0.5)
    assert type(r[0]) is type(L.qr(np.eye(2))) and r[0].R.shape == (3, 3)
    assert r[1].eigenvalues.shape == (3,) and r[2].Vh.shape == (3, 3) and r[3].logabsdet.shape == ()


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_library(tmp_path):
    def fn(a, b):
        q, r = L.qr(a)
        u, s, vh = L.svd(a)
        return (L.det(a), L.solve(a, b), L.inv(a), L.cholesky(a @ a.T), r, s, L.eigvalsh(a + a.T),
                L.norm(a, "nuc"))

    n = aot.Dim("n", min=1, max=64)
    a, b = rand((5, 5), "float64"), rand((5,), "float64", seed=1)
    dims = {"a": {0: n, 1: n}, "b": {0: n}}
    path = aot.aot_compile(fn, (a, b), dynamic_shapes=dims, path=tmp_path / "linalg.so")
    lib = aot.aot_load(path)
    for k in (1, 4, 20):
        a, b = rand((k, k), "float64", seed=k) + k * np.eye(k), rand((k,), "float64", seed=k + 1)
        got, want = lib(a, b), fn(a, b)
        for g, w in zip(got, want, strict=True):
            same_type(g, w)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-10)
        for i in (1, 2, 3, 5, 6, 7):
            np.testing.assert_allclose(got[i], want[i], rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(np.abs(got[4]), np.abs(want[4]), rtol=1e-9, atol=1e-11)
    with pytest.raises(L.LinAlgError, match="Singular matrix"):
        lib(np.ones((3, 3)), np.ones(3))
