"""Seeing inside a compiled function: what it built and where its time goes.

A spectral-density estimate of a noisy signal (windowing, FFT, power, a smoothing stencil, a
normalisation), compiled once, then:
  1. its captured graph and its fused ir drawn as Graphviz DOT (and SVG when `dot` is installed):
     each fused kernel of the ir is a box of its ops;
  2. `aot.profile`: per-kernel times of a timed run;
  3. profiler symbols: with AOT_PERF_MAP=1 every generated function has a line in /tmp/perf-PID.map,
     so `perf top` / `perf report` name aot's kernels (a child process shows its lines).

Run: python examples/seeing_inside.py [OUT_DIR]    (pictures go to OUT_DIR, default ./aot_pictures)
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

import aot
from aot.fx.passes import FxGraphDrawer
from aot.fx.passes.shape_prop import ShapeProp

N = 1 << 16


def spectrum(signal, window):
    """Smoothed, normalised power spectrum of a real signal (one-sided)."""
    x = (signal - signal.mean()) * window
    power = np.abs(np.fft.rfft(x)) ** 2
    smooth = 0.25 * power[:-2] + 0.5 * power[1:-1] + 0.25 * power[2:]
    return smooth / smooth.sum()


def draw(out: Path, signal, window) -> None:
    gm = aot.make_fx(spectrum)(signal, window)
    ShapeProp(gm).propagate(signal, window)  # dtypes and shapes on every node
    dot = FxGraphDrawer(gm, "spectrum").get_dot_graph()
    dot.write_raw(out / "graph.dot")
    here = Path(__file__).resolve()
    ir_dot = out / "ir.dot"
    subprocess.run([sys.executable, "-m", "aot", "show", f"{here}:spectrum", "--arg", f"f64[{N}]",
                    "--arg", f"f64[{N}]", "--stage", "ir", "--format", "dot", "-o", str(ir_dot)], check=True)
    if "cluster_" not in ir_dot.read_text():
        raise SystemExit("the ir picture has no kernel clusters")
    if shutil.which("dot"):
        dot.write_svg(out / "graph.svg")
        print(f"pictures: {out}/graph.svg, {out}/graph.dot, {out}/ir.dot")
    else:
        print(f"pictures: {out}/graph.dot, {out}/ir.dot (install Graphviz for SVG/PNG)")


def profile(signal, window) -> None:
    p = aot.profile(spectrum, signal, window, repeat=20)
    print(p)
    if not p.rows or not all(r.calls == 20 for r in p.rows):
        raise SystemExit("every kernel should have run once per call")


def perf_map_lines() -> None:
    """A child process with AOT_PERF_MAP=1 compiles the function and prints its map lines."""
    code = ("import numpy as np, os, sys; sys.path.insert(0, sys.argv[1]); import seeing_inside as s, aot\n"
            "f = aot.compile(s.spectrum); x = np.random.default_rng(1).standard_normal(s.N)\n"
            "f(x, np.hanning(s.N))\n"
            "lines = open(f'/tmp/perf-{os.getpid()}.map').read().splitlines()\n"
            "os.remove(f'/tmp/perf-{os.getpid()}.map')\n"
            "print('\\n'.join(ln for ln in lines if ':spectrum:' in ln))\n")
    env = {**os.environ, "AOT_PERF_MAP": "1"}
    r = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)], env=env, capture_output=True,
                       text=True, check=True)
    lines = r.stdout.split("\n")
    print(f"perf map: {len(lines)} functions of spectrum, e.g.")
    for line in lines[:4]:
        print("   ", line)
    if not any(".ew" in ln for ln in lines):
        raise SystemExit("the perf map should name spectrum's elementwise kernels")


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "aot_pictures")
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    t = np.arange(N) / N
    signal = np.sin(2 * np.pi * 440 * t) + 0.5 * rng.standard_normal(N)
    window = np.hanning(N)
    f = aot.compile(spectrum)
    np.testing.assert_allclose(f(signal, window), spectrum(signal, window), rtol=1e-9, atol=1e-15)
    draw(out, signal, window)
    profile(signal, window)
    perf_map_lines()


if __name__ == "__main__":
    main()
