"""Numpy written with in-place updates, compiled as it is: an explicit heat-equation solver that
updates its grid in place, with fixed boundaries and a source term scattered with np.add.at, and
a particle-binning step that fills a preallocated output. Each function is checked against numpy,
including the caller's array that numpy updates in place."""
import numpy as np

import aot


def heat_steps(u, sources, strength, steps: int = 20, alpha: float = 0.2):
    for _ in range(steps):
        lap = u[2:] - 2 * u[1:-1] + u[:-2]
        u[1:-1] += alpha * lap           # the caller's u changes, as in numpy
        np.add.at(u, sources, strength)  # repeated sources add up (unbuffered)
        u[0] = u[-1] = 0.0               # fixed boundaries
        u[u < 0] = 0.0
    return u.max()


def bin_particles(pos, mass, nbins: int = 16):
    out = np.zeros(nbins)
    idx = np.clip((pos * nbins).astype(np.int64), 0, nbins - 1)
    np.add.at(out, idx, mass)
    out[out == 0] = np.nan               # mark empty bins
    return out


def main():
    rng = np.random.default_rng(0)
    u = rng.random(256)
    sources, strength = np.array([10, 10, 200]), np.array([0.5, 0.25, 1.0])
    want_u = u.copy()
    want = heat_steps(want_u, sources, strength)
    got = aot.compile(heat_steps, fullgraph=True)(u, sources, strength)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(u, want_u, rtol=1e-12)  # updated in place, as numpy did
    pos, mass = rng.random(10_000), rng.random(10_000)
    b = aot.compile(bin_particles, fullgraph=True)(pos, mass)
    np.testing.assert_allclose(b, bin_particles(pos, mass), rtol=1e-12)
    print(f"heat: max {got:.4f} after 20 steps; bins: {np.nansum(b):.1f} total mass, both equal numpy's")


if __name__ == "__main__":
    main()
