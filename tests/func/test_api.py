"""aot.func's API: torch.func's signatures and semantics, pytrees, composition and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import aot
from aot import func, nn
from aot.compiler.capture import GraphBreak
from aot.func import TransformError

RNG = np.random.default_rng(0)
X = RNG.standard_normal(5)
W = RNG.standard_normal((4, 5))
B = RNG.standard_normal(4)


def f(x):
    return np.sum(np.sin(x) * x)


def df(x):
    return np.cos(x) * x + np.sin(x)


def layer(x):
    return np.tanh(W @ x + B)


def layer_jac(x):
    return (1 - np.tanh(W @ x + B) ** 2)[:, None] * W


def close(a, b, rtol=1e-12, atol=1e-12):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


# --- grad ---------------------------------------------------------------------------------------
def test_grad_matches_closed_form():
    close(func.grad(f)(X), df(X))


def test_grad_keeps_float32():
    x = X.astype(np.float32)
    g = func.grad(f)(x)
    assert g.dtype == np.float32
    close(g, df(x), rtol=1e-6, atol=1e-6)


def test_grad_argnums_and_pytrees():
    def loss(params, x, scale):
        return scale * np.sum(np.tanh(params["w"] @ x + params["b"]) ** 2)

    params = {"w": W, "b": B}
    g = func.grad(loss)(params, X, 2.0)
    assert set(g) == {"w", "b"} and g["w"].shape == W.shape
    h = 1 - np.tanh(W @ X + B) ** 2
    y = np.tanh(W @ X + B)
    close(g["b"], 2.0 * 2 * y * h)
    close(g["w"], np.outer(2.0 * 2 * y * h, X))
    gp, gx = func.grad(loss, argnums=(0, 1))(params, X, 2.0)
    close(gp["b"], g["b"])
    close(gx, W.T @ (2.0 * 2 * y * h))
    close(func.grad(loss, argnums=-2)(params, X, 2.0), gx)


def test_grad_has_aux_and_grad_and_value():
    def loss(x):
        return np.sum(x * x), {"norm": np.sqrt(np.sum(x * x))}

    g, aux = func.grad(loss, has_aux=True)(X)
    close(g, 2 * X)
    close(aux["norm"], np.linalg.norm(X))
    g, (value, aux) = func.grad_and_value(loss, has_aux=True)(X)
    close(value, np.sum(X * X))
    g, value = func.grad_and_value(f)(X)
    close(g, df(X))
    close(value, f(X))


def test_grad_of_a_constant_function_is_zero():
    close(func.grad(lambda x: np.sum(np.floor(x)))(X), np.zeros(5))


def test_complex_inputs_follow_torchs_convention():
    z = X + 1j * X[::-1]
    # torch: d/dz |z|^2 summed is 2 z (dL/dRe + i dL/dIm)
    close(func.grad(lambda z: np.sum(np.abs(z) ** 2))(z), 2 * z)
    close(func.grad(lambda z: np.sum(np.real(z * z)))(z), 2 * np.conj(z))


# --- vjp / jvp / linearize ------------------------------------------------------------------------
def test_vjp():
    out, vjp_fn = func.vjp(layer, X)
    close(out, layer(X))
    ct = RNG.standard_normal(4)
    (g,) = vjp_fn(ct)
    close(g, layer_jac(X).T @ ct)
    (g2,) = vjp_fn(2 * ct)  # called again: the same pullback
    close(g2, 2 * g)


def test_vjp_has_aux_and_several_primals():
    out, vjp_fn, aux = func.vjp(lambda a, b: (a * b, a + b), X, X[::-1].copy(), has_aux=True)
    close(aux, X + X[::-1])
    ga, gb = vjp_fn(np.ones(5))
    close(ga, X[::-1])
    close(gb, X)


def test_jvp_and_linearize():
    t = RNG.standard_normal(5)
    out, tan = func.jvp(layer, (X,), (t,))
    close(out, layer(X))
    close(tan, layer_jac(X) @ t)
    out, jvp_fn = func.linearize(layer, X)
    close(out, layer(X))
    close(jvp_fn(t), layer_jac(X) @ t)


# --- Jacobians and Hessians -------------------------------------------------------------------------
def test_jacrev_and_jacfwd():
    close(func.jacrev(layer)(X), layer_jac(X))
    close(func.jacfwd(layer)(X), layer_jac(X))
    close(func.jacrev(layer, chunk_size=3)(X), layer_jac(X))


def test_jacobian_of_several_outputs_and_argnums():
    def g(a, b):
        return {"p": a * b, "s": np.sum(a) * b}

    a, b = X, X[::-1].copy()
    jr = func.jacrev(g, argnums=(0, 1))(a, b)
    jf = func.jacfwd(g, argnums=(0, 1))(a, b)
    close(jr["p"][0], np.diag(b))
    close(jr["s"][0], np.outer(b, np.ones(5)))
    close(jr["s"][1], np.sum(a) * np.eye(5))
    for k in ("p", "s"):
        for i in range(2):
            close(jr[k][i], jf[k][i])


def test_hessian():
    def g(x):
        return np.sum(np.tanh(W @ x + B))

    y = np.tanh(W @ X + B)
    want = W.T @ np.diag(-2 * y * (1 - y * y)) @ W
    h = func.hessian(g)(X)
    close(h, want)
    close(h, h.T)
    close(func.jacrev(func.jacrev(g))(X), want)
    close(func.jacfwd(func.jacfwd(g))(X), want)


# --- vmap -----------------------------------------------------------------------------------------
def test_vmap_in_and_out_dims():
    xs = RNG.standard_normal((7, 5))
    close(func.vmap(layer)(xs), np.stack([layer(x) for x in xs]))
    close(func.vmap(layer, in_dims=1)(xs.T), np.stack([layer(x) for x in xs]))
    close(func.vmap(layer, out_dims=1)(xs), np.stack([layer(x) for x in xs], axis=1))
    got = func.vmap(lambda a, b: a * b, in_dims=(0, None))(xs, X)
    close(got, xs * X)


def test_vmap_pytree_in_dims_kwargs_and_chunks():
    xs = RNG.standard_normal((6, 5))

    def g(p, x, *, scale):
        return scale * np.tanh(p["w"] @ x + p["b"])

    params = {"w": W, "b": B}
    want = np.stack([g(params, x, scale=3.0) for x in xs])
    close(func.vmap(g, in_dims=({"w": None, "b": None}, 0))(params, xs, scale=3.0), want)
    close(func.vmap(g, in_dims=(None, 0), chunk_size=4)(params, xs, scale=3.0), want)


def test_vmap_unbatched_output_is_repeated():
    xs = RNG.standard_normal((3, 5))
    out = func.vmap(lambda x: (x * 2, np.sum(W)))(xs)
    close(out[1], np.full(3, np.sum(W)))


def test_nested_vmap():
    xs = RNG.standard_normal((3, 4, 5))
    got = func.vmap(func.vmap(layer))(xs)
    close(got, np.stack([[layer(x) for x in row] for row in xs]))
    got = func.vmap(func.vmap(lambda a, b: a @ b, in_dims=(None, 0)), in_dims=(0, None))(xs, xs[0])
    close(got, np.einsum("bij,kj->bki", xs, xs[0]))


# --- compositions ------------------------------------------------------------------------------------
def test_per_sample_gradients_equal_a_loop():
    def loss(p, x, y):
        h = np.tanh(p["w0"] @ x + p["b0"])
        z = p["w1"] @ h + p["b1"]
        z = z - np.max(z)
        return -np.sum((z - np.log(np.sum(np.exp(z)))) * y)

    p = {"w0": RNG.standard_normal((8, 5)), "b0": RNG.standard_normal(8),
         "w1": RNG.standard_normal((3, 8)), "b1": RNG.standard_normal(3)}
    xs, ys = RNG.standard_normal((6, 5)), np.eye(3)[RNG.integers(0, 3, 6)]
    got = func.vmap(func.grad(loss), in_dims=(None, 0, 0))(p, xs, ys)
    loop = [func.grad(loss)(p, x, y) for x, y in zip(xs, ys)]
    for k in p:
        close(got[k], np.stack([g[k] for g in loop]))


def test_grad_of_grad_and_vmap_of_jacrev():
    close(func.grad(lambda x: np.sum(func.grad(f)(x)))(X), 2 * np.cos(X) - X * np.sin(X))
    xs = RNG.standard_normal((3, 5))
    close(func.vmap(func.jacrev(layer))(xs), np.stack([layer_jac(x) for x in xs]))
    close(func.jacfwd(func.jacrev(f))(X), np.diag(2 * np.cos(X) - X * np.sin(X)))


def test_ensembles_with_stack_module_state():
    models = [nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 2)) for _ in range(3)]
    params, buffers = func.stack_module_state(models)
    assert params["0.weight"].shape == (3, 8, 5)
    base = models[0]
    xs = RNG.standard_normal((4, 5))

    def call(p, b, x):
        return func.functional_call(base, (p, b), (x,))

    got = func.vmap(call, in_dims=(0, 0, None))(params, buffers, xs)
    close(got, np.stack([m(xs) for m in models]))
    one = {k: v[1] for k, v in params.items()}
    close(func.functional_call(base, one, (xs,)), models[1](xs))
    assert base[0].weight is models[0][0].weight  # the module's own parameters are back


def test_grad_through_functional_call():
    model = nn.Sequential(nn.Linear(5, 3), nn.Tanh())
    params = dict(model.named_parameters())

    def loss(p, x):
        return np.sum(func.functional_call(model, p, (x,)) ** 2)

    g = func.grad(loss)(params, X)
    y = np.tanh(model[0].weight @ X + model[0].bias)
    close(g["0.bias"], 2 * y * (1 - y * y))


# --- the three paths ----------------------------------------------------------------------------------
def test_compiled_paths_equal_eager():
    eager = func.grad(f)(X)
    close(aot.compile(func.grad(f))(X), eager, rtol=1e-14)
    compiled_f = aot.compile(f)
    g = func.grad(compiled_f)
    close(g(X), eager, rtol=1e-14)
    assert g._staged._backend_name == "llvm"  # forward and backward as one native function
    close(aot.compile(func.jacrev(layer))(X), layer_jac(X))


def test_eager_transform_traces_once():
    g = func.grad(f)
    for _ in range(5):
        g(X)
    info = g._staged.cache_info()
    assert info["compiles"] == 1 and info["hits"] == 4
    g(RNG.standard_normal(7))  # a new signature: traced again
    assert g._staged.cache_info()["compiles"] == 2


def test_symbolic_shapes():
    g = aot.compile(func.grad(f), dynamic=True)
    for n in (3, 8, 17):
        x = RNG.standard_normal(n)
        close(g(x), df(x))
    assert len(g.graphs) == 1


# --- errors --------------------------------------------------------------------------------------------
def test_errors_name_the_problem():
    with pytest.raises(TransformError, match="scalar"):
        func.grad(np.sin)(X)
    with pytest.raises(TransformError, match="dtype i64"):
        func.grad(f)(np.arange(3))
    with pytest.raises(TransformError, match="argnums 3 is out of range"):
        func.grad(f, argnums=3)(X)
    with pytest.raises(TransformError, match="has_aux=True"):
        func.grad(f, has_aux=True)(X)
    with pytest.raises(TransformError, match="in_dim=1 is out of range"):
        func.vmap(np.sin, in_dims=1)(X)
    with pytest.raises(TransformError, match="same size"):
        func.vmap(lambda a, b: a + b)(np.ones(3), np.ones(4))
    with pytest.raises(TransformError, match="in_dims is not compatible"):
        func.vmap(lambda a, b: a + b, in_dims=(0,))(np.ones(3), np.ones(3))
    with pytest.raises(TransformError, match="out_dims=None"):
        func.vmap(np.sin, out_dims=None)(np.ones((2, 3)))
    with pytest.raises(TransformError, match="structure"):
        func.vjp(np.sin, X)[1]((np.ones(5), np.ones(5)))


def test_data_dependent_control_flow_names_the_line():
    def g(x):
        if x[0] > 0:  # the line the error names
            return np.sum(x)
        return np.sum(-x)

    with pytest.raises(GraphBreak, match=r"grad: data-dependent .*test_api.py:\d+: if x\[0\] > 0"):
        func.grad(g)(X)


def test_random_calls_under_vmap():
    xs = np.ones((3, 5))
    with pytest.raises(TransformError, match="randomness='error'"):
        func.vmap(lambda x: x + np.random.rand(5))(xs)
    out = func.vmap(lambda x: x + np.random.rand(5), randomness="same")(xs)
    close(out[0], out[1])
    with pytest.raises(TransformError, match="randomness='different' is not supported"):
        func.vmap(lambda x: x + np.random.rand(5), randomness="different")(xs)
    with pytest.raises(TransformError, match="randomness must be one of"):
        func.vmap(np.sin, randomness="sometimes")


def test_a_leaked_traced_array_is_an_error():
    leaked = []

    def g(x):
        leaked.append(x * 2)
        return np.sum(x)

    func.grad(g)(X)
    with pytest.raises(TransformError, match="used after that function returned"):
        func.grad(lambda x: np.sum(x * leaked[0]))(X)


def test_more_signatures_than_the_cache_keeps(monkeypatch):
    from aot.func import _staging

    monkeypatch.setattr(_staging, "CACHE_SIZE_LIMIT", 2)
    g = func.grad(f)
    with pytest.warns(RuntimeWarning, match="cache size limit"):
        for n in (2, 3, 4, 5):
            x = RNG.standard_normal(n)
            close(g(x), df(x))
