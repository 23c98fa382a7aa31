"""A sensor report in ordinary numpy, compiled: cleaning (nan handling), running totals, robust
statistics (median, percentiles), a histogram, smoothing by convolution, a masked statistic and a
least-squares trend fit. The compiled function is checked against numpy and timed.

Run: python examples/sensor_report.py
"""
from __future__ import annotations

import time

import numpy as np

import aot


def report(readings, weights):
    x = np.asarray(readings, dtype=np.float64)
    clean = np.nan_to_num(x, nan=np.nanmean(x))
    spread = np.nanstd(x)
    total = np.cumsum(clean)
    q10, q50, q90 = np.percentile(clean, [10, 50, 90])
    counts, _ = np.histogram(clean, bins=16, range=(-4.0, 4.0))
    smooth = np.convolve(clean, np.ones(9) / 9, mode="same")
    peak_mean = clean[clean > q90].mean()  # a masked selection, reduced: no data-dependent shape
    t = np.linspace(0.0, 1.0, clean.shape[0])
    design = np.stack([np.ones_like(t), t], axis=1)
    trend = np.linalg.solve(design.T @ (design * weights[:, None]), design.T @ (clean * weights))
    return total[-1], spread, np.median(clean), q10, q50, q90, counts, smooth, peak_mean, trend


def main() -> None:
    rng = np.random.default_rng(0)
    n = 200_000
    readings = rng.standard_normal(n) + np.linspace(0.0, 0.5, n)
    readings[rng.integers(0, n, 500)] = np.nan  # dropped samples
    weights = rng.uniform(0.5, 1.5, n)

    compiled = aot.compile(report, fullgraph=True)
    got, want = compiled(readings, weights), report(readings, weights)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-9)

    def best(fn, repeats=5):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn(readings, weights)
            times.append(time.perf_counter() - t0)
        return min(times)

    t_np, t_aot = best(report), best(compiled)
    print(f"median {got[2]:.4f}, p90 {got[5]:.4f}, mean above p90 {got[8]:.4f}, trend {got[9][1]:.4f}/unit")
    print(f"numpy {t_np * 1e3:.2f} ms, aot {t_aot * 1e3:.2f} ms ({t_np / t_aot:.1f}x); compiles: "
          f"{compiled.cache_info()['compiles']}")


if __name__ == "__main__":
    main()
