"""The linear-algebra rows' transform rules (aot/ops/linalg_kernels.py, linalg_eig.py) through the
numpy calls users write: grad against central finite differences (float64; complex128 in torch's
convention, dL/dRe + i dL/dIm), jvp against directional differences, jacrev == jacfwd, vmap (and
vmap of grad) against a loop with in_dims 0 and 1, and compiled grads against eager ones.

Eigen- and singular vectors enter only through gauge-invariant values (|v|^2, U diag(s) V^H,
projectors). cholesky, eigh and eigvalsh read one triangle (and the real part of the diagonal), and
their rules differentiate exactly that, so unsymmetric perturbations are checked too. Also ldexp's
rule and the batching of ldexp, frexp's exponent, gcd and lcm.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import aot
from aot import func
from aot.func import TransformError

H = 1e-6
FD_RTOL = 1e-6  # of max(1, |reference|)
B = 3  # vmap batch size


def _rng(name: str):
    return np.random.default_rng(zlib.crc32(name.encode()))


def _draw(rng, shape, cplx):
    r = rng.standard_normal(shape)
    return r + 1j * rng.standard_normal(shape) if cplx else r


def _mH(x):
    return np.conj(np.swapaxes(x, -1, -2))


# --- the functions: input maker and a function of it (a tuple of arrays, gauge invariant) ------------
def _square(n=3):
    return lambda rng, c: _draw(rng, (n, n), c) + 3 * np.eye(n)


def _shape(*s):
    return lambda rng, c: _draw(rng, s, c)


def _spd(n=3):
    def make(rng, c):
        x = _draw(rng, (n, n), c)
        return x @ _mH(x) + np.eye(n)
    return make


def _svd_parts(full):
    def f(a):
        u, s, vh = np.linalg.svd(a, full_matrices=full)
        k = s.shape[-1]
        u1, vh1 = u[..., :, :k], vh[..., :k, :]
        outs = (s, (u1 * (s * np.arange(1, k + 1))) @ vh1, np.abs(u1) ** 2, np.abs(vh1) ** 2)
        if full:  # the complement's projectors
            outs += (u[..., :, k:] @ _mH(u[..., :, k:]), _mH(vh[..., k:, :]) @ vh[..., k:, :])
        return outs
    return f


def _eig_parts(a):
    w, v = np.linalg.eig(a)
    return w, np.abs(v) ** 2, (v * w ** 2) @ np.linalg.inv(v)


CASES = {
    "det": (_square(), lambda a: (np.linalg.det(a),)),
    "slogdet": (_square(), lambda a: tuple(np.linalg.slogdet(a))),
    "inv": (_square(), lambda a: (np.linalg.inv(a),)),
    "solve_a": (_square(), lambda a: (np.linalg.solve(a, np.arange(6.0).reshape(3, 2) - 2),)),
    "solve_b": (_shape(3, 2), lambda b: (np.linalg.solve(np.diag([2.0, 3, 4]) + 0.5, b),)),
    "solve_vector": (_shape(3), lambda b: (np.linalg.solve(np.diag([2.0, 3, 4]) + 0.5, b),)),
    "solve_broadcast": (_square(), lambda a: (np.linalg.solve(np.stack([a, 2 * a]), a[:, :2]),)),
    "cholesky": (_spd(), lambda a: (np.linalg.cholesky(a),)),
    "cholesky_upper": (_spd(), lambda a: (np.linalg.cholesky(a, upper=True),)),
    "qr_tall": (_shape(4, 3), lambda a: tuple(np.linalg.qr(a))),
    "qr_square": (_shape(3, 3), lambda a: tuple(np.linalg.qr(a))),
    "qr_wide": (_shape(3, 5), lambda a: tuple(np.linalg.qr(a))),
    "qr_wide_complete": (_shape(3, 5), lambda a: tuple(np.linalg.qr(a, mode="complete"))),
    "qr_r": (_shape(4, 3), lambda a: (np.linalg.qr(a, mode="r"),)),
    "eigh": (_spd(), lambda a: (lambda w, v: (w, np.abs(v) ** 2))(*np.linalg.eigh(a))),
    "eigh_upper": (_spd(), lambda a: (lambda w, v: (w, np.abs(v) ** 2))(*np.linalg.eigh(a, UPLO="U"))),
    "eigvalsh": (_spd(), lambda a: (np.linalg.eigvalsh(a),)),
    "eigvalsh_upper": (_spd(), lambda a: (np.linalg.eigvalsh(a, UPLO="U"),)),
    "svd_tall": (_shape(4, 3), _svd_parts(False)),
    "svd_tall_full": (_shape(4, 3), _svd_parts(True)),
    "svd_square_full": (_shape(3, 3), _svd_parts(True)),
    "svd_wide": (_shape(3, 4), _svd_parts(False)),
    "svd_wide_full": (_shape(3, 4), _svd_parts(True)),
    "svdvals": (_shape(4, 3), lambda a: (np.linalg.svd(a, compute_uv=False),)),
    "norm2": (_shape(3, 4), lambda a: (np.linalg.norm(a, ord=2), np.linalg.norm(a, ord="nuc"))),
    "cond": (_square(), lambda a: (np.linalg.cond(a),)),
    "pinv": (_shape(4, 3), lambda a: (np.linalg.pinv(a),)),
    "lstsq": (_shape(4, 3), lambda a: (np.linalg.lstsq(a, np.arange(4.0) - 1)[0],)),
    "eig": (_square(4), _eig_parts),
    "eigvals": (_square(4), lambda a: (np.linalg.eigvals(a),)),
}
PARAMS = [pytest.param(name, c, id=f"{name}-{'complex128' if c else 'float64'}") for name in CASES
          for c in (False, True)]


def _weights(name, outs):
    rng = _rng("w" + name)
    return [(rng.standard_normal(np.shape(o)), rng.standard_normal(np.shape(o))) for o in outs]


def _loss(f, ws):
    def loss(a):
        total = 0.0
        for o, (w1, w2) in zip(f(a), ws):
            total = total + np.sum(np.real(o) * w1)
            if o.dtype.kind == "c":
                total = total + np.sum(np.imag(o) * w2)
        return total
    return loss


def _flat(f):
    """f's results as one real vector (jacrev and jacfwd agree on real functions)."""
    def flat(a):
        parts = []
        for o in f(a):
            parts.append(np.reshape(np.real(o), (-1,)))
            if o.dtype.kind == "c":
                parts.append(np.reshape(np.imag(o), (-1,)))
        return np.concatenate(parts)
    return flat


def _fd_grad(loss, a):
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        for unit in ((1.0, 1j) if np.iscomplexobj(a) else (1.0,)):
            e = np.zeros_like(a)
            e[idx] = unit * H
            g[idx] += unit * (loss(a + e) - loss(a - e)) / (2 * H)
    return g


def _close_fd(got, ref):
    err = np.max(np.abs(np.asarray(got) - ref)) / max(1.0, np.max(np.abs(ref)))
    assert err < FD_RTOL, err


def _setup(name, cplx):
    make, f = CASES[name]
    a = make(_rng(name + str(cplx)), cplx)
    return a, f


# --- grad / jvp / jacobians ------------------------------------------------------------------------
@pytest.mark.parametrize("name,cplx", PARAMS)
def test_grad_matches_finite_differences(name, cplx):
    a, f = _setup(name, cplx)
    loss = _loss(f, _weights(name, f(a)))
    _close_fd(func.grad(loss)(a), _fd_grad(loss, a))


@pytest.mark.parametrize("name,cplx", PARAMS)
def test_jvp_matches_finite_differences(name, cplx):
    a, f = _setup(name, cplx)
    t = _draw(_rng("t" + name), a.shape, cplx)
    out, tan = func.jvp(lambda x: f(x), (a,), (t,))
    fd = [(p - m) / (2 * H) for p, m in zip(f(a + H * t), f(a - H * t))]
    for got, ref in zip(tan, fd):
        _close_fd(got, ref)


@pytest.mark.parametrize("name", list(CASES))
def test_jacrev_equals_jacfwd(name):
    a, f = _setup(name, False)
    flat = _flat(f)
    jr, jf = func.jacrev(flat)(a), func.jacfwd(flat)(a)
    np.testing.assert_allclose(jr, jf, rtol=1e-9, atol=1e-9)


# --- vmap -------------------------------------------------------------------------------------------
def _batch(name, cplx, d):
    make, f = CASES[name]
    rng = _rng("b" + name + str(cplx))
    xs = np.stack([make(rng, cplx) for _ in range(B)], axis=d)
    return xs, f


def _examples(xs, d):
    return [np.take(xs, i, axis=d) for i in range(B)]


@pytest.mark.parametrize("d", [0, 1])
@pytest.mark.parametrize("name,cplx", PARAMS)
def test_vmap_matches_loop(name, cplx, d):
    xs, f = _batch(name, cplx, d)
    got = func.vmap(f, in_dims=d)(xs)
    loop = [f(x) for x in _examples(xs, d)]
    for k, g in enumerate(got):
        np.testing.assert_allclose(g, np.stack([r[k] for r in loop]), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name,cplx", PARAMS)
def test_vmap_of_grad_matches_loop(name, cplx):
    xs, f = _batch(name, cplx, 1)
    d = 1
    loss = _loss(f, _weights(name, f(_examples(xs, d)[0])))
    got = func.vmap(func.grad(loss), in_dims=d)(xs)
    ref = np.stack([func.grad(loss)(x) for x in _examples(xs, d)])
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10)


def test_solve_batches_each_operand():
    rng = _rng("solve_batch")
    a = rng.standard_normal((3, B, 3)) + 3 * np.eye(3)[:, None]  # batched at dim 1
    b = rng.standard_normal((3, 2, B))
    stacked = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)  # an example's own batch dims broadcast
    cases = [((1, 2), a, lambda i: a[:, i]), ((None, 2), a[:, 0], lambda i: a[:, 0]),
             ((None, 2), stacked, lambda i: stacked), ((1, None), a, lambda i: a[:, i])]
    for dims, left, pick in cases:
        right = b if dims[1] is not None else b[..., 0]
        col = (lambda i: b[..., i]) if dims[1] is not None else (lambda i: right)
        got = func.vmap(np.linalg.solve, in_dims=dims)(left, right)
        ref = np.stack([np.linalg.solve(pick(i), col(i)) for i in range(B)])
        np.testing.assert_allclose(got, ref, rtol=1e-12)


# --- conventions ------------------------------------------------------------------------------------
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_triangle_read_gradient(uplo):
    """eigvalsh's gradient lives on the triangle it reads; through (X + X^H)/2 it is torch's Hermitian one."""
    rng = _rng("tri" + uplo)
    x = _draw(rng, (4, 4), True)
    a = x @ _mH(x)
    wts = np.arange(4.0)
    g = func.grad(lambda m: np.sum(np.linalg.eigvalsh(m, UPLO=uplo) * wts))(a)
    unread = np.triu(g, 1) if uplo == "L" else np.tril(g, -1)
    assert np.all(unread == 0) and np.all(np.imag(np.diag(g)) == 0)
    v = np.linalg.eigh(a)[1]
    herm = (v * wts) @ _mH(v)
    gs = func.grad(lambda m: np.sum(np.linalg.eigvalsh((m + _mH(m)) / 2, UPLO=uplo) * wts))(a)
    np.testing.assert_allclose(gs, herm, rtol=1e-10, atol=1e-10)


def test_qr_complete_of_a_tall_matrix_is_refused():
    a = _draw(_rng("qrc"), (4, 3), False)
    with pytest.raises(TransformError, match="mode='complete'"):
        func.grad(lambda m: np.sum(np.linalg.qr(m, mode="complete")[0]))(a)


def test_svd_values_only_survive_repeated_values():
    """Only the values reach the loss: no 0/0 from the vectors' terms (identity: all values equal)."""
    g = func.grad(lambda m: np.sum(np.linalg.svd(m)[1]))(np.eye(3))
    np.testing.assert_allclose(g, np.eye(3), atol=1e-12)
    g = func.grad(lambda m: np.sum(np.linalg.eigh(m)[0]))(np.eye(3))
    np.testing.assert_allclose(g, np.eye(3), atol=1e-12)


# --- compiled -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("cplx", [False, True], ids=["float64", "complex128"])
@pytest.mark.parametrize("name", ["det", "solve_a"])
def test_compiled_grad_equals_eager(name, cplx):
    a, f = _setup(name, cplx)
    loss = _loss(f, _weights(name, f(a)))
    eager = func.grad(loss)(a)
    np.testing.assert_allclose(aot.compile(func.grad(loss))(a), eager, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(func.grad(aot.compile(loss))(a), eager, rtol=1e-12, atol=1e-12)


# --- ldexp, frexp, gcd, lcm -------------------------------------------------------------------------
def test_ldexp_rules():
    rng = _rng("ldexp")
    x, n, w = rng.standard_normal((3, 4)), rng.integers(-4, 5, (3, 4)), rng.standard_normal((3, 4))
    np.testing.assert_array_equal(func.grad(lambda v: np.sum(np.ldexp(v, n) * w))(x), w * 2.0 ** n)
    _, t = func.jvp(lambda v: np.ldexp(v, n), (x,), (w,))
    np.testing.assert_array_equal(t, w * 2.0 ** n)
    mant = func.grad(lambda v: np.sum(np.frexp(v)[0]))(x)  # mantissa = ldexp(x, -exponent)
    np.testing.assert_array_equal(mant, 2.0 ** -np.frexp(x)[1])


@pytest.mark.parametrize("d", [0, 1])
def test_integer_exponent_rows_batch(d):
    rng = _rng("ints")
    x, n = rng.standard_normal((3, 4)), rng.integers(-4, 5, (3, 4))
    m = n + 7

    def per(fn, *args, dims):
        return np.stack([fn(*[a if k is None else np.take(a, i, axis=k) for a, k in zip(args, dims)])
                         for i in range(args[0].shape[d])])

    cases = [(np.ldexp, (x, n), (d, d)), (np.ldexp, (x, n[0] if d == 0 else n[:, 0]), (d, None)),
             (lambda v: np.frexp(v)[1], (x,), (d,)), (lambda v: np.frexp(v)[0], (x,), (d,)),
             (np.gcd, (n, m), (d, d)), (np.lcm, (n, np.int64(6)), (d, None))]
    for fn, args, dims in cases:
        np.testing.assert_array_equal(func.vmap(fn, in_dims=dims)(*args), per(fn, *args, dims=dims))
