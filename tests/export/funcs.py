"""numpy functions the export tests compile into libraries (also imported by a fresh process)."""

from __future__ import annotations

import numpy as np

W = np.linspace(-1.0, 1.0, 12).reshape(4, 3)  # a captured global: frozen into the library


def elementwise(x, y):
    return np.sin(x) * np.exp(-y) + x * y / (1 + y * y)


def reduction(x):
    return x.sum(axis=1), x.max(axis=0), np.mean(x)


def matmul(a, b):
    return a @ b


def with_weights(x):
    return np.tanh(x @ W)


def fft(x):
    return np.fft.fft(x)


def elementwise_inputs(n=5, dtype=np.float64):
    rng = np.random.default_rng(1)
    return rng.random((n, 3)).astype(dtype), rng.random((n, 3)).astype(dtype)
