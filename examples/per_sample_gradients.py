"""Differentially private training of a small classifier with aot.func: per-sample gradients
(vmap of grad), clipped per example and noised (DP-SGD), compiled into one native function; an
ensemble of models evaluated at once with stack_module_state + vmap(functional_call); and the
Jacobian of a layer. Each result is checked against a Python loop or a closed form."""
import time

import numpy as np

import aot
from aot import func, nn


def init(rng, sizes):
    params = {}
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
        params[f"w{i}"] = (rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)).astype(np.float32)
        params[f"b{i}"] = np.zeros(n_out, np.float32)
    return params


def loss(params, x, y):
    """Softmax cross-entropy of one example (x: features, y: one-hot label)."""
    h = np.tanh(params["w0"] @ x + params["b0"])
    z = params["w1"] @ h + params["b1"]
    z = z - np.max(z)
    return -np.sum((z - np.log(np.sum(np.exp(z)))) * y)


per_sample = func.vmap(func.grad(loss), in_dims=(None, 0, 0))


@aot.compile
def dp_step(params, x, y, noise, lr, clip):
    """One DP-SGD step: per-sample gradients, each clipped to norm `clip`, averaged, noised."""
    grads = per_sample(params, x, y)
    norms = np.sqrt(sum(np.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in grads.values()))
    scale = np.minimum(1.0, clip / (norms + 1e-6))
    new = {}
    for k, g in grads.items():
        clipped = g * scale.reshape((-1,) + (1,) * (g.ndim - 1))
        new[k] = params[k] - lr * (np.mean(clipped, axis=0) + noise[k])
    return new


def main():
    rng = np.random.default_rng(0)
    params = init(rng, [64, 128, 10])
    centers = rng.standard_normal((10, 64)).astype(np.float32)
    labels = rng.integers(0, 10, 256)
    x = (centers[labels] + 0.5 * rng.standard_normal((256, 64))).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[labels]

    # per-sample gradients equal a loop of grads
    grads = aot.compile(per_sample)(params, x, y)
    loop = [func.grad(loss)(params, x[i], y[i]) for i in range(8)]
    for k in params:
        np.testing.assert_allclose(grads[k][:8], np.stack([g[k] for g in loop]), rtol=1e-4, atol=1e-6)

    start = np.mean([loss(params, a, b) for a, b in zip(x, y)])
    t0 = time.perf_counter()
    for step in range(30):
        noise = {k: (0.01 * rng.standard_normal(v.shape)).astype(np.float32) for k, v in params.items()}
        params = dp_step(params, x, y, noise, 0.5, 1.0)
    elapsed = time.perf_counter() - t0
    end = np.mean([loss(params, a, b) for a, b in zip(x, y)])
    accuracy = np.mean([np.argmax(params["w1"] @ np.tanh(params["w0"] @ a + params["b0"]) + params["b1"]) == c
                        for a, c in zip(x, labels)])
    print(f"DP-SGD: loss {start:.3f} -> {end:.3f}, accuracy {accuracy:.2f}, 30 steps in {elapsed:.2f} s")
    assert end < start and accuracy > 0.5

    # an ensemble of five models, evaluated at once
    models = [nn.Sequential(nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 10)) for _ in range(5)]
    stacked, buffers = func.stack_module_state(models)
    base = models[0]
    ensemble = aot.compile(func.vmap(lambda p, b, x: func.functional_call(base, (p, b), (x,)),
                                     in_dims=(0, 0, None)))
    out = ensemble(stacked, buffers, x.astype(np.float64))
    # atol: an output near zero is a sum of O(1) terms, whose rounding depends on the summation order
    want = np.stack([m(x.astype(np.float64)) for m in models])
    np.testing.assert_allclose(out, want, rtol=1e-10, atol=1e-14)
    print(f"ensemble of {len(models)} models: outputs {out.shape}")

    # the Jacobian of a layer, by reverse mode, against its closed form
    w, b = rng.standard_normal((100, 100)) / 10, rng.standard_normal(100)
    jac = aot.compile(func.jacrev(lambda v: np.tanh(w @ v + b)))
    v = rng.standard_normal(100)
    np.testing.assert_allclose(jac(v), (1 - np.tanh(w @ v + b) ** 2)[:, None] * w, rtol=1e-12, atol=1e-15)
    print("jacrev of tanh(W @ x + b): matches the closed form")


if __name__ == "__main__":
    main()
