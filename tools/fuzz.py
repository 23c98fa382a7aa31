"""Differential fuzzing: N random numpy programs compiled and compared with numpy.

    .venv/bin/python tools/fuzz.py --programs 20000 [--start 0] [--workers 2] [--library-every 25]

Programs come from tests/fuzz/programs.py, one per seed (so any finding is reproduced by its seed:
`--start SEED --programs 1`). Seeds run in chunks, each in a fresh worker process with an empty
disk cache of its own, so that a crash is caught and named (the chunk's seeds are retried one per
process to find the culprit), every compile really runs LLVM, and the compile-time maximum is
real. A compile that runs past --hang-seconds counts as a hang. Prints the findings and one
summary line: programs, mismatches (wrong values, dtypes, shapes or errors), crashes, hangs and
the slowest compile.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORKER = """
import json, sys
sys.path.insert(0, {root!r})
from tests.fuzz.runner import run
r = run(range({lo}, {hi}), library_every={library_every}, tmp={tmp!r})
print(json.dumps({{"programs": r.programs, "compiles": r.compiles, "failures": r.failures,
                  "max_compile_s": r.max_compile_s, "slowest": r.slowest}}))
"""


def _worker(lo: int, hi: int, args) -> dict:
    with tempfile.TemporaryDirectory(prefix="aot-fuzz-") as tmp:
        os.chmod(tmp, 0o700)
        env = dict(os.environ, AOT_CACHE_DIR=str(Path(tmp) / "cache"), AOT_NUM_THREADS="1")
        code = WORKER.format(root=str(ROOT), lo=lo, hi=hi, library_every=args.library_every, tmp=tmp)
        timeout = args.hang_seconds * (hi - lo) + 120
        try:
            p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"programs": hi - lo, "hangs": [f"seeds {lo}..{hi - 1}: no answer in {timeout} s"]}
        if p.returncode != 0:
            return {"programs": hi - lo, "crashes": [f"seeds {lo}..{hi - 1}: exit {p.returncode}: "
                                                     f"{p.stderr.strip()[-500:]}"]}
        return json.loads(p.stdout.strip().splitlines()[-1])


def _chunk(lo: int, hi: int, args) -> dict:
    """Run seeds lo..hi; a chunk that crashes or hangs is retried seed by seed to name the culprit."""
    r = _worker(lo, hi, args)
    if ("crashes" in r or "hangs" in r) and hi - lo > 1:
        parts = [_worker(s, s + 1, args) for s in range(lo, hi)]
        r = _merge(parts)
    return r


def _merge(results: list[dict]) -> dict:
    out = {"programs": 0, "compiles": 0, "failures": [], "crashes": [], "hangs": [], "max_compile_s": 0.0,
           "slowest": ""}
    for r in results:
        out["programs"] += r.get("programs", 0)
        out["compiles"] += r.get("compiles", 0)
        for k in ("failures", "crashes", "hangs"):
            out[k] += r.get(k, [])
        if r.get("max_compile_s", 0.0) > out["max_compile_s"]:
            out["max_compile_s"], out["slowest"] = r["max_compile_s"], r.get("slowest", "")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--programs", type=int, default=2000)
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--chunk", type=int, default=250, help="programs per worker process")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--library-every", type=int, default=25,
                    help="every Nth batch goes through aot_compile/aot_load (0: never)")
    ap.add_argument("--hang-seconds", type=float, default=30.0)
    ap.add_argument("--json", help="write the full report here")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    bounds = [(lo, min(lo + args.chunk, args.start + args.programs))
              for lo in range(args.start, args.start + args.programs, args.chunk)]
    with ThreadPoolExecutor(args.workers) as pool:
        report = _merge(list(pool.map(lambda b: _chunk(*b, args), bounds)))
    hangs = report["hangs"]  # a compile over the watchdog's budget warns, and counts as a mismatch too
    for kind in ("failures", "crashes", "hangs"):
        for line in report[kind]:
            print(f"{kind[:-1]}: {line}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    print(f"{report['programs']} programs ({report['compiles']} compiles) in {time.perf_counter() - start:.0f} s: "
          f"{len(report['failures'])} mismatches, {len(report['crashes'])} crashes, {len(hangs)} hangs; "
          f"slowest compile {report['max_compile_s']:.2f} s")
    print(f"slowest: {report['slowest'][:400]}")
    return 0 if not (report["failures"] or report["crashes"] or report["hangs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
