"""A gradient exported into a shared library: the same results from Python (aot_load) and from a C
program written against the generated header."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import aot
from aot import func

needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")


def loss(w, x):
    return np.sum(np.tanh(w @ x) ** 2)


def closed_form(w, x):
    y = np.tanh(w @ x)
    return np.outer(2 * y * (1 - y * y), x), np.sum(y * y)


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gradlib")
    w = np.ones((3, 4))
    x = np.linspace(0, 1, 4)
    n = aot.Dim("N", min=1, max=1024)
    path = aot.aot_compile(func.grad_and_value(loss), (w, x), path=tmp / "loss_grad.so",
                           dynamic_shapes={"w": {1: n}, "x": {0: n}})
    return path


def test_loaded_gradient_equals_eager(library):
    lib = aot.aot_load(library)
    rng = np.random.default_rng(1)
    for n in (4, 9):
        w, x = rng.standard_normal((3, n)), rng.standard_normal(n)
        g, v = lib(w, x)
        ge, ve = func.grad_and_value(loss)(w, x)
        gc, vc = closed_form(w, x)
        np.testing.assert_allclose(g, ge, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(g, gc, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(v, vc, rtol=1e-13)


_PROGRAM = r"""
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "loss_grad.h"

static DLTensor tensor(double *data, int ndim, int64_t *shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data; t.device.device_type = kDLCPU; t.ndim = ndim;
  t.dtype.code = kDLFloat; t.dtype.bits = 64; t.dtype.lanes = 1; t.shape = shape;
  return t;
}

int main(void) {
  enum { M = 3, N = 6 };
  double w[M * N], x[N], g[M * N], v;
  for (int i = 0; i < M * N; i++) w[i] = 0.1 * i - 0.7;
  for (int j = 0; j < N; j++) x[j] = 0.3 * j - 0.5;
  int64_t ws[2] = {M, N}, xs[1] = {N}, gs[2] = {M, N};
  DLTensor in[2] = {tensor(w, 2, ws), tensor(x, 1, xs)};
  DLTensor out[2] = {tensor(g, 2, gs), tensor(&v, 0, NULL)};
  int rc = loss_grad(in, 2, out, 2);
  if (rc) { printf("error %d %s\n", rc, loss_grad_last_error()); return 1; }
  double worst = 0, value = 0;  /* the gradient by hand: 2 y (1 - y^2) x^T */
  for (int i = 0; i < M; i++) {
    double a = 0;
    for (int j = 0; j < N; j++) a += w[i * N + j] * x[j];
    double y = tanh(a);
    value += y * y;
    for (int j = 0; j < N; j++) {
      double want = 2 * y * (1 - y * y) * x[j], err = fabs(g[i * N + j] - want);
      if (err > worst) worst = err;
    }
  }
  printf("signature %s\n", loss_grad_signature());
  printf("max_error %.3g value_error %.3g\n", worst, fabs(v - value));
  in[1].shape[0] = N - 1;  /* x no longer matches w: an error, not a crash */
  printf("mismatch %d\n", loss_grad(in, 2, out, 2));
  return 0;
}
"""


@needs_cc
def test_c_program_calls_the_exported_gradient(library, tmp_path):
    from pathlib import Path

    lib = Path(library)
    src = tmp_path / "main.c"
    src.write_text(_PROGRAM)
    exe = tmp_path / "main"
    subprocess.run(["cc", "-O1", "-o", str(exe), str(src), f"-I{lib.parent}", str(lib), "-lm",
                    f"-Wl,-rpath,{lib.parent}"], check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    errors = dict(line.split(" ", 1) for line in out.splitlines())
    assert "f64[3,N], f64[N]" in errors["signature"]
    max_error, value_error = (float(t) for t in errors["max_error"].replace("value_error", "").split())
    assert max_error < 1e-14 and value_error < 1e-13
    assert int(errors["mismatch"]) == 2  # AOT_STATUS_SHAPE_MISMATCH
