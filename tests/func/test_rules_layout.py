"""The layout, gather and scatter rows' transform rules through the numpy calls users write: flip,
slicing, concatenate, stack, pad, x[idx], np.take, np.take_along_axis, diagonal, broadcast_to and
the other view rows, zeros_like, the `require` check (np.average) and in-place updates (x[idx] = v,
ufunc.at) inside functions.

grad (real and complex128) and jacrev/jacfwd are checked against central finite differences in
float64; vmap against a loop over the examples, for in_dims 0, 1 and mixtures with None."""
from __future__ import annotations

import numpy as np
import pytest

import aot
from aot import func
from aot.compiler.creations import current_capture
from ir.opdef import OPDEFS

from ._fd import TOL, H, close, fd_grad, fd_jac  # noqa: F401

RNG = np.random.default_rng(7)








def check_derivatives(fn, x, complex_ok=True):
    for cplx in (False, True) if complex_ok else (False,):
        z = x + 1j * RNG.standard_normal(x.shape) if cplx else x
        out = np.asarray(fn(z))
        w = RNG.standard_normal(out.shape) + (1j * RNG.standard_normal(out.shape) if cplx else 0)

        def loss(v):
            return np.sum(np.real(fn(v) * w))

        close(func.grad(loss)(z), fd_grad(loss, z))
    jac = fd_jac(fn, x)
    close(func.jacrev(fn)(x), jac)
    close(func.jacfwd(fn)(x), jac)


def loop(fn, args, dims):
    size = next(np.shape(a)[d] for a, d in zip(args, dims) if d is not None)
    return np.stack([fn(*[a if d is None else np.take(a, b, axis=d) for a, d in zip(args, dims)])
                     for b in range(size)])


def check_vmap(fn, args, dims):
    got = func.vmap(fn, in_dims=tuple(dims))(*args)
    ref = loop(fn, args, dims)
    assert got.shape == ref.shape
    close(got, ref, 1e-12)


def batched(shape, d, size=3):
    """An array of `size` examples of `shape`, batched at dim d."""
    return np.moveaxis(RNG.standard_normal((size, *shape)), 0, d)


def row(name, **attrs):
    """Core op `name` applied directly (traced), or its numpy reference (finite differences)."""
    def fn(*xs):
        if current_capture() is None:
            return OPDEFS[name].reference(*xs, **attrs)
        return current_capture().emit(name, list(xs), attrs)

    return fn


# --- layout and gathers on one array -------------------------------------------------------------------
IDX = np.array([[0, -1], [2, 2]])
ALONG = np.array([[0, 4, 4], [1, 1, -1], [-5, 2, 3], [3, 3, 0]])
ALONG_0 = np.array([[3, 0, -1, 1, 1], [0, 0, 2, -4, 3]])
UNARY = {
    "flip": lambda x: np.flip(x, 1),
    "flipud": lambda x: np.flipud(x) * x,
    "slice": lambda x: x[1:-1:2, ::3],
    "slice_backward": lambda x: x[::-2, 4:0:-3],
    "slice_row": row("slice", starts=(0, 4), stops=(3, None), steps=(1, -2)),
    "slice_row_negative": row("slice", starts=(-1, -1), stops=(None, -6), steps=(-1, -3)),
    "slice_empty": lambda x: x[2:2, ::2],
    "concatenate": lambda x: np.concatenate([x, 2 * x[:1], x * x], axis=0),
    "concatenate_last": lambda x: np.concatenate([x[:, :2], x], axis=-1),
    "stack": lambda x: np.stack([x, x * x], axis=1),
    "stack_last": lambda x: np.stack([x, np.sin(x), x], axis=-1),
    "pad": lambda x: np.pad(x, ((1, 0), (2, 1)), constant_values=3.0),
    "getitem_array": lambda x: x[:, [0, 2, 2, -1]],
    "getitem_rows": lambda x: x[[1, 1, -4]] * x[0],
    "getitem_2d_index": lambda x: x[IDX],
    "getitem_two_arrays": lambda x: x[[1, 2, 2], [0, 4, -1]],
    "take": lambda x: np.take(x, IDX, axis=1),
    "take_flat": lambda x: np.take(x, [3, 3, 19, -20]),
    "take_along_axis": lambda x: np.take_along_axis(x, ALONG, axis=1),
    "take_along_axis_broadcast": lambda x: np.take_along_axis(x, ALONG[:, :1], axis=1) + x,
    "take_along_axis_0": lambda x: np.take_along_axis(x, ALONG_0, axis=0),
    "diagonal": lambda x: x.diagonal(),
    "diagonal_offset": lambda x: np.diagonal(x, 2),
    "diagonal_below": lambda x: np.diagonal(x, -1) ** 2,
    "trace": lambda x: np.trace(x, 1),
    "broadcast_to": lambda x: np.broadcast_to(x[:, :1], (2, 4, 5)),
    "reshape": lambda x: x.reshape(2, 10)[:, ::3],
    "transpose": lambda x: np.moveaxis(x[None], 0, 2) * x.T[None],
    "expand_squeeze": lambda x: np.squeeze(np.expand_dims(x, (0, 2))[:, :, :, :1], axis=(0, 3)),
    "zeros_like": lambda x: np.zeros_like(x) + x * np.ones_like(x),
}


@pytest.mark.parametrize("name", list(UNARY))
def test_derivatives(name):
    check_derivatives(UNARY[name], RNG.standard_normal((4, 5)))


@pytest.mark.parametrize("d", [0, 1, 2])
@pytest.mark.parametrize("name", list(UNARY))
def test_vmap(name, d):
    check_vmap(UNARY[name], (batched((4, 5), d),), (d,))


def test_diagonal_of_a_stack():
    fn = lambda x: np.diagonal(x, -1, 0, 2)
    check_derivatives(fn, RNG.standard_normal((4, 2, 5)))
    for d in range(4):
        check_vmap(fn, (batched((4, 2, 5), d),), (d,))


# --- gathers with batched indices ----------------------------------------------------------------------
def _index_cases(idx_shape, lo, hi):
    one = RNG.integers(lo, hi, idx_shape)
    return [(one, None), (RNG.integers(lo, hi, (3, *idx_shape)), 0),
            (np.moveaxis(RNG.integers(lo, hi, (3, *idx_shape)), 0, 1), 1)]


@pytest.mark.parametrize("fn", [lambda x, i: np.take(x, i, axis=1), lambda x, i: x[i]],
                         ids=["take_axis1", "getitem"])
def test_take_batched_indices(fn):
    for idx, di in _index_cases((2, 2), -4, 4):
        for x, dx in ((RNG.standard_normal((4, 5)), None), (batched((4, 5), 0), 0), (batched((4, 5), 2), 2)):
            if dx is not None or di is not None:
                check_vmap(fn, (x, idx), (dx, di))


def test_take_along_axis_batched_indices():
    fn = lambda x, i: np.take_along_axis(x, i, axis=1)
    for idx, di in _index_cases((4, 2), -5, 5):
        for x, dx in ((RNG.standard_normal((4, 5)), None), (batched((4, 5), 0), 0), (batched((4, 5), 1), 1)):
            if dx is not None or di is not None:
                check_vmap(fn, (x, idx), (dx, di))


def test_grad_of_gathers_per_example():
    """vmap(grad) of a gather: its scatter-add backward batched with per-example indices."""
    loss = lambda x, i: np.sum(np.take_along_axis(x, i, axis=1) ** 2) + np.sum(x[i[:, 0]] ** 3)
    x, idx = batched((4, 5), 0), RNG.integers(-4, 4, (3, 4, 2))
    check_vmap(func.grad(loss), (x, idx), (0, 0))
    for b in range(3):
        close(func.grad(loss)(x[b], idx[b]), fd_grad(lambda v: loss(v, idx[b]), x[b]))


@pytest.mark.parametrize("fn", [lambda a, b: np.concatenate([a, b, a], axis=1),
                                lambda a, b: np.stack([a, b, a], axis=2), lambda a, b: np.stack([a, b])],
                         ids=["concatenate", "stack_last", "stack_first"])
def test_joins_with_unbatched_operands(fn):
    for a, da in ((RNG.standard_normal((4, 5)), None), (batched((4, 5), 0), 0), (batched((4, 5), 1), 1)):
        for b, db in ((RNG.standard_normal((4, 5)), None), (batched((4, 5), 0), 0), (batched((4, 5), 2), 2)):
            if da is not None or db is not None:
                check_vmap(fn, (a, b), (da, db))
    a, b = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 5))
    grads = func.grad(lambda a, b: np.sum(np.sin(fn(a, b))), argnums=(0, 1))(a, b)
    close(grads[0], fd_grad(lambda v: np.sum(np.sin(fn(v, b))), a))
    close(grads[1], fd_grad(lambda v: np.sum(np.sin(fn(a, v))), b))


# --- in-place updates: the scatter row's kinds ---------------------------------------------------------
POS = [0, 2, 2, -1]


def _updated(kind):
    def fn(x):
        y = x.copy()
        if kind == "set":
            y[POS] = x[1:5] * 3
        elif kind == "set_slice":
            y[::2] = x[:3] * 2
        elif kind == "multiply_zeros":  # one and two zero factors at a position
            np.multiply.at(y, [0, 2, 2, 2, 3, 3], x[:6] * np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0]))
        elif kind == "sin":
            np.sin.at(y, [0, 3])
        elif kind == "power":
            y = y * y + 1.0
            np.power.at(y, [0, 2, 5], x[1:4])
        else:
            ufunc = getattr(np, kind)
            np.add.at(y, [1], 0.0)  # a no-op scatter first: updates chain
            ufunc.at(y, POS, x[1:5] * 0.2 + 3.0 if kind == "divide" else x[1:5])  # divisors far from 0
        return y

    return fn


KINDS = ["set", "set_slice", "add", "subtract", "multiply", "multiply_zeros", "divide", "maximum", "minimum",
         "sin", "power"]


@pytest.mark.parametrize("kind", KINDS)
def test_update_derivatives(kind):
    real_only = kind in ("maximum", "minimum", "power")  # numpy orders complex numbers; power: branch cuts
    check_derivatives(_updated(kind), RNG.standard_normal(6), complex_ok=not real_only)


@pytest.mark.parametrize("kind", KINDS)
def test_update_vmap(kind):
    for d in (0, 1):
        x = batched((6,), d)
        check_vmap(_updated(kind), (x,), (d,))
        loss = lambda v: np.sum(_updated(kind)(v) * np.arange(1.0, 7.0))
        check_vmap(func.grad(loss), (x,), (d,))


def test_maximum_at_ties_share_the_derivative():
    """JAX's convention (as the max reduction's): x and the updates equal to the result share it."""
    def fn(x):
        y = x.copy()
        np.maximum.at(y, [0, 0, 1], x[1:4] * np.array([0.0, 1.0, 1.0]) + np.array([1.0, 0.0, 0.0]))
        return y

    x = np.array([1.0, 1.0, 0.5, 3.0])  # position 0: x[0] ties with the constant update 1.0
    want = np.array([[0.5, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0], [0, 0, 0, 1]])
    close(func.jacrev(fn)(x), want, 1e-15)
    close(func.jacfwd(fn)(x), want, 1e-15)


def _assign(x, idx, v):
    y = x.copy()
    y[idx] = v
    return y


def _add_at(x, idx, v):
    y = x.copy()
    np.add.at(y, idx, v)
    return y


def _max_at(x, idx, v):
    y = x.copy()
    np.maximum.at(y, idx, v)
    return y


@pytest.mark.parametrize("fn", [_assign, _add_at, _max_at], ids=["assign", "add_at", "maximum_at"])
def test_updates_at_traced_indices(fn):
    """Indices passed as arguments (unknown when traced; repeated ones: the last assignment wins)."""
    x, v, idx = RNG.standard_normal(6), RNG.standard_normal(4), np.array([0, 2, 2, -1])
    for argnum, fd in ((0, lambda z: fn(z, idx, v)), (2, lambda z: fn(x, idx, z))):
        jac = fd_jac(fd, (x, idx, v)[argnum])
        close(func.jacrev(fn, argnums=argnum)(x, idx, v), jac)
        close(func.jacfwd(fn, argnums=argnum)(x, idx, v), jac)
    xs, vs = batched((6,), 0), batched((4,), 1)
    idxs = np.array([[0, 2, 2, -1], [5, 5, 1, 0], [3, 3, 3, 3]])
    for dims in [(None, 0, None), (None, None, 1), (0, 0, None), (0, 0, 1), (None, 0, 1), (0, None, 1)]:
        args = [a if d is not None else a1 for a, a1, d in zip((xs, idxs, vs), (x, idx, v), dims)]
        check_vmap(fn, args, dims)


def test_batched_update_checks_its_indices():
    x, v = RNG.standard_normal(6), RNG.standard_normal(4)
    with pytest.raises(IndexError):
        func.vmap(_assign, in_dims=(None, 0, None))(x, np.array([[0, 1, 2, 6], [0, 1, 2, 3]]), v)


def test_generic_kind_with_traced_indices_refuses():
    def fn(x, idx):
        y = x.copy()
        np.sin.at(y, idx)
        return np.sum(y)

    with pytest.raises(NotImplementedError, match="may repeat"):
        func.grad(fn)(RNG.standard_normal(5), np.array([0, 2]))


# --- creation and checks ----------------------------------------------------------------------------
def test_full_like_is_unbatched_and_constant():
    x = batched((4, 5), 1)
    check_vmap(lambda v: np.full_like(v, 2.0, dtype=np.float32) + v, (x,), (1,))
    close(func.grad(lambda v: np.sum(np.zeros_like(v) + np.ones_like(v) * 2))(x), np.zeros_like(x))


def test_require_passes_the_derivative_through():
    """np.average checks its weights' sum (a `require` row) before dividing."""
    avg = lambda x, w: np.average(x ** 2, weights=w)
    x, w = RNG.standard_normal(5), RNG.uniform(0.5, 1.5, 5)
    gx, gw = func.grad(avg, argnums=(0, 1))(x, w)
    close(gx, fd_grad(lambda v: avg(v, w), x))
    close(gw, fd_grad(lambda v: avg(x, v), w))
    ws = RNG.uniform(0.5, 1.5, (3, 5))
    check_vmap(avg, (x, ws), (None, 0))
    check_vmap(func.grad(avg, argnums=1), (x, ws), (None, 0))
    with pytest.raises(ZeroDivisionError), np.errstate(divide="ignore", invalid="ignore"):
        func.vmap(avg, in_dims=(None, 0))(x, np.array([[1.0, -1, 0, 0, 0], [1, 1, 1, 1, 1]]))


# --- second order and compiled ---------------------------------------------------------------------
def _second_order(x):
    y = x.copy()
    np.add.at(y, [0, 2, 2], x[1:4] ** 2)
    m = np.pad(y.reshape(2, 3), 1)
    return np.sum(y[[0, 0, 4]] ** 3) + np.sum(np.diagonal(m, 1) ** 3) + np.sum(m[::2, 1:] * m[1::2, 1:])


def test_hessian():
    x = RNG.standard_normal(6)
    close(func.hessian(_second_order)(x), fd_jac(func.grad(_second_order), x), 1e-5)


@pytest.mark.parametrize("fn", [_second_order, _updated("multiply_zeros")], ids=["mixed", "multiply_at"])
def test_compiled_grad_matches_eager(fn):
    x = RNG.standard_normal(6)
    loss = lambda v: np.sum(np.sin(fn(v)))
    close(aot.compile(func.grad(loss))(x), func.grad(loss)(x), 1e-12)
