"""Test inputs: special values plus wide random ranges per dtype."""

from __future__ import annotations

import numpy as np

N = 37  # odd, > one vector: exercises full vectors and the masked remainder

_F_SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0, -3.0, 1e-30, -7.25]


def floats(dt, n: int, rng, lo: float = -6, hi: float = 6, specials: bool = True) -> np.ndarray:
    dt = np.dtype(dt)
    mag = 10.0 ** rng.uniform(lo, hi, n)
    x = (np.where(rng.random(n) < 0.5, -mag, mag)).astype(dt)
    if specials:
        k = min(n, len(_F_SPECIAL))
        x[:k] = np.array(_F_SPECIAL[:k], dtype=dt)
        rng.shuffle(x)
    return x


def ints(dt, n: int, rng, small: bool = False) -> np.ndarray:
    info = np.iinfo(dt)
    if small:
        return rng.integers(-9, 10, n).astype(dt)
    x = rng.integers(-100, 100, n).astype(dt)
    x[:8] = np.array([0, 1, -1, 2, -7, 7, info.min, info.max], dtype=dt)
    rng.shuffle(x)
    return x


def sample(dt, n: int, rng, *, specials: bool = True) -> np.ndarray:
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.random(n) < 0.5
    if dt.kind == "i":
        return ints(dt, n, rng)
    if dt.kind == "f":
        return floats(dt, n, rng, specials=specials)
    rt = np.float32 if dt == np.complex64 else np.float64
    out = np.empty(n, dt)
    out.real = floats(rt, n, rng, -3, 2, specials=False)
    out.imag = floats(rt, n, rng, -3, 2, specials=False)
    return out
