"""Libraries built with aot_compile, loaded with aot_load (in this and in a fresh process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import aot

from . import funcs

REPO = Path(__file__).resolve().parents[2]

_CHECK = r"""
import importlib.util, json, sys
import numpy as np
import aot
spec = importlib.util.spec_from_file_location("funcs", sys.argv[1])
funcs = importlib.util.module_from_spec(spec); spec.loader.exec_module(funcs)
libs = json.loads(sys.argv[2])
rng = np.random.default_rng(7)
cases = {
    "elementwise_static": (funcs.elementwise, [funcs.elementwise_inputs(5, np.float32)], 1e-5),
    "elementwise_dyn": (funcs.elementwise, [funcs.elementwise_inputs(n) for n in (1, 2, 1000, 100000)], 1e-12),
    "reduction": (funcs.reduction, [(rng.random((n, m)),) for n, m in ((1, 1), (3, 64), (257, 5), (4096, 64))], 1e-11),
    "matmul": (funcs.matmul, [(rng.random((n, k)), rng.random((k, 3))) for n, k in ((1, 1), (4, 9), (33, 70))], 1e-12),
    "with_weights": (funcs.with_weights, [(rng.random((n, 4)),) for n in (1, 50)], 1e-12),
}
assert "llvmlite" not in sys.modules
for name, path in libs.items():
    fn, inputs, rtol = cases[name]
    lib = aot.aot_load(path)
    for args in inputs:
        got, want = lib(*args), fn(*args)
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype, (name, g.dtype, w.dtype)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)
assert "llvmlite" not in sys.modules and "sympy" not in sys.modules, "aot_load must not need llvmlite or sympy"
print("ok", len(libs))
"""


def test_fresh_process_matches_numpy(libs):
    r = subprocess.run(
        [sys.executable, "-c", _CHECK, funcs.__file__, json.dumps(libs)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["ok", str(len(libs))]


def test_strided_views_and_output_shapes(libs):
    lib = aot.aot_load(libs["elementwise_dyn"])
    x, y = funcs.elementwise_inputs(42)
    xs, ys = x[::3], y[1::3]  # non-contiguous views run without copies
    np.testing.assert_allclose(lib(xs, ys), funcs.elementwise(xs, ys), rtol=1e-12)
    assert lib.output_shapes(xs, ys) == [(xs.shape[0], 3)]
    assert lib.signature == "(f64[N,3], f64[N,3]) -> (f64[N,3])"


def test_bad_inputs_raise_with_library_message(libs):
    lib = aot.aot_load(libs["elementwise_dyn"])
    x, y = funcs.elementwise_inputs(5)
    with pytest.raises(ValueError, match=r"input 0 \(x\): expected ndim 2, got 1"):
        lib(x[:, 0], y)
    with pytest.raises(TypeError, match="dtype"):
        lib(x.astype(np.float32), y)
    with pytest.raises(ValueError, match=r"dim 0 is 4, expected 5 \(= N\)"):
        lib(x, y[:4])
    huge = np.broadcast_to(np.zeros(3), ((1 << 20) + 1, 3))  # stride-0 rows: no memory behind them
    with pytest.raises(ValueError, match=r"size N = 1048577 is outside its range 1 <= N <= 1048576"):
        lib(huge, huge)
    with pytest.raises(TypeError, match="expected 2 input"):
        lib(x)


@pytest.mark.parametrize("dynamic", [False, True])
def test_fft_library(tmp_path, dynamic):
    """A dynamic transform length: the library builds (and caches) its plan at run time, direct
    or Bluestein (97, 1009), and switches between lengths."""
    x = np.random.default_rng(3).random(16)
    shapes = {"x": {0: aot.Dim("N", max=1 << 16)}} if dynamic else None
    path = aot.aot_compile(funcs.fft, (x,), dynamic_shapes=shapes, path=tmp_path / "fft16.so")
    lib = aot.aot_load(path)
    for n in (12, 16, 97, 16, 1009, 1) if dynamic else (16,):
        x = np.random.default_rng(n).random(n)
        np.testing.assert_allclose(lib(x), np.fft.fft(x), rtol=1e-12, atol=1e-12)


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        aot.aot_load(tmp_path / "missing.so")
    bogus = tmp_path / "bogus.so"
    bogus.write_bytes(b"not a library")
    with pytest.raises(OSError):
        aot.aot_load(bogus)


def test_guards_are_checked_by_the_library(tmp_path):
    """Guards (sympy booleans over the Dims, as a ShapeEnv records them) become C checks."""
    from ir.symbols import size_symbol, sympy

    sp = sympy()
    N = size_symbol("N")
    ep = aot.export(
        funcs.elementwise, funcs.elementwise_inputs(4), dynamic_shapes=({0: aot.Dim("N")}, {0: aot.Dim("N")})
    )
    ep.guards.append(sp.And(sp.Eq(sp.Mod(N, 2), 0), sp.Le(sp.floor(N / 4) + sp.Max(N, 3), 40)))
    lib = aot.aot_load(aot.aot_compile(ep, path=tmp_path / "even.so"))
    for n in (2, 4, 32):
        x, y = funcs.elementwise_inputs(n)
        np.testing.assert_allclose(lib(x, y), funcs.elementwise(x, y), rtol=1e-12)
        np.testing.assert_allclose(ep.module()(x, y), funcs.elementwise(x, y), rtol=1e-12)
    for n in (3, 34):  # odd; 34 + 8 > 40
        x, y = funcs.elementwise_inputs(n)
        with pytest.raises(ValueError, match="guard"):
            lib(x, y)
        with pytest.raises(ValueError, match="guard"):
            ep.module()(x, y)
    assert "Guard:" in (tmp_path / "even.h").read_text()


def test_example_c_abi_builds_and_runs(tmp_path):
    import shutil

    if shutil.which("make") is None or shutil.which("cc") is None:
        pytest.skip("needs make and cc")
    r = subprocess.run(
        [
            "make",
            "-C",
            str(REPO / "examples" / "c_abi"),
            "run",
            f"OUT={tmp_path}",
            f"PYTHON={sys.executable}",
            "N=7",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    x = (0.01 * np.arange(21.0)).reshape(7, 3)
    w = np.array([0.5, -1.0, 0.25, 2.0, -0.75, 0.1]).reshape(3, 2)
    h = np.log1p(np.exp(x @ w))
    assert f"h[0] = {h[0, 0]:.6f} {h[0, 1]:.6f}" in r.stdout
    assert f"mean = {h.mean(0)[0]:.6f} {h.mean(0)[1]:.6f}" in r.stdout
    assert "bad call: code 1: row_features: input 0 (x): expected ndim 2, got 1" in r.stdout


def test_nn_module_library(tmp_path):
    """Parameters of an aot.nn model are frozen into the library as constants."""
    model = aot.nn.Sequential(aot.nn.Linear(4, 8), aot.nn.ReLU(), aot.nn.Linear(8, 2))
    x = np.random.default_rng(5).random((3, 4))
    path = aot.aot_compile(
        model, (x,), dynamic_shapes=({0: aot.Dim("B", max=1024)},), path=tmp_path / "mlp.so"
    )
    lib = aot.aot_load(path)
    assert lib.signature == "(f64[B,4]) -> (f64[B,2])"
    x2 = np.random.default_rng(6).random((37, 4))
    np.testing.assert_allclose(lib(x2), model(x2), rtol=1e-12, atol=1e-12)


def test_bool_int_complex_dtypes(tmp_path):
    def f(mask, a, z):
        return np.where(mask, z, 0), a * 2, np.abs(z).astype(np.float32)

    rng = np.random.default_rng(0)

    def inputs(n):
        z = (rng.random(n) + 1j * rng.random(n)).astype(np.complex64)
        return rng.random(n) < 0.5, rng.integers(-5, 5, n).astype(np.int32), z

    N = aot.Dim("N")
    path = aot.aot_compile(f, inputs(4), dynamic_shapes=({0: N}, {0: N}, {0: N}), path=tmp_path / "mixed.so")
    lib = aot.aot_load(path)
    assert lib.signature == "(bool[N], i32[N], c64[N]) -> (c64[N], i32[N], f32[N])"
    for n in (1, 33):
        args = inputs(n)
        for g, w in zip(lib(*args), f(*args), strict=True):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-6)
