#!/usr/bin/env python3
"""Max ulp error of the compiled real transcendentals, per function, dtype and input range.

Run: .venv/bin/python tools/ulp_report.py [--n 65536] [--dtypes f64,f32] [--functions exp,log2]

Each range's cell is "vector / scalar": the contiguous (the host's libmvec variant) and stride-2
(scalar libm) paths, in ulps of the exact value (mpmath at 80 bits; a correctly rounded result is
within 0.5). The "<level> vec" columns are the maxima over the ranges of the libmvec variants of
other x86-64 levels (SSE for x86-64, AVX2 for x86-64-v3), where the host can run them. The range
"e^±700" means magnitudes e^±(690..709.7) (e^±(80..88.7) in float32), and for exp, expm1, exp2,
sinh, cosh and sigmoid the inputs up to their overflow and underflow thresholds instead. The
"specials" column is the largest distance from numpy over 0, -0, +-inf, nan, +-1, subnormals and
the extremes (0: identical). The contract is <= 4 ulp (tests/codegen/test_accuracy.py).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tests.codegen import accuracy as A  # noqa: E402

DTYPES = {"f64": np.float64, "f32": np.float32}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2**16, help="samples per range (default 65536)")
    ap.add_argument("--dtypes", default="f64,f32")
    ap.add_argument("--functions", default=",".join(A.SPECS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--targets", default=None,
                    help="other x86-64 levels whose vector paths to measure (default: those the host runs)")
    args = ap.parse_args()
    targets = A.runnable_isa_targets() if args.targets is None else [t for t in args.targets.split(",") if t]
    dtypes = [DTYPES[d] for d in args.dtypes.split(",")]
    names = args.functions.split(",")
    t0 = time.perf_counter()
    rows = A.measure(args.n, seed=args.seed, dtypes=dtypes, names=names, targets=targets)
    cell = {(r.name, r.dtype, r.range, r.layout): r for r in rows}
    specials = {(dt, layout): A.special_errors(dt, layout) for dt in dtypes for layout in A.LAYOUTS}

    header = ["function", "dtype", *A.RANGES, *(f"{t} vec" for t in targets), "specials", "max"]
    table = []
    worst = []
    for name in names:
        for dt in dtypes:
            line = [name, np.dtype(dt).name]
            top = 0.0
            for rng_name in A.RANGES:
                if not A.applies(name, rng_name):
                    line.append("-")
                    continue
                v, s = (cell[(name, dt, rng_name, lay)] for lay in A.LAYOUTS)
                line.append(f"{v.max_ulp:.2f} / {s.max_ulp:.2f}")
                for r in (v, s):
                    if r.max_ulp > top:
                        top, at = r.max_ulp, r
            for t in targets:  # max over the ranges
                rs = [cell[(name, dt, rng, f"{t} vector")] for rng in A.RANGES if A.applies(name, rng)]
                r = max(rs, key=lambda r: r.max_ulp)
                line.append(f"{r.max_ulp:.2f}")
                if r.max_ulp > top:
                    top, at = r.max_ulp, r
            sp = max(float(specials[(dt, lay)][name].max()) for lay in A.LAYOUTS)
            line += [f"{sp:g}", f"{top:.2f}"]
            table.append(line)
            worst.append((top, at))
    widths = [max(len(str(row[i])) for row in [header, *table]) for i in range(len(header))]
    for row in [header, ["-" * w for w in widths], *table]:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
    print(f"\n{args.n} samples per range, {time.perf_counter() - t0:.0f} s. Worst inputs:")
    for top, r in sorted(worst, key=lambda t: -t[0])[:8]:
        where = f"{r.name}[{np.dtype(r.dtype).name}, {r.range}, {r.layout}]"
        print(f"  {where}: {top:.3g} ulp at x={r.worst_input} (got {r.got!r}, exact {r.want!r})")


if __name__ == "__main__":
    main()
