"""A C program written against the generated header, compiled with cc, linked with the library."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from runtime.elf import read_header
from runtime.shared_lib import needed_libraries

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")

_PROGRAM = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include "elementwise_dyn.h"

static DLTensor t2(double *data, int64_t *shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data; t.device.device_type = kDLCPU; t.ndim = 2;
  t.dtype.code = kDLFloat; t.dtype.bits = 64; t.dtype.lanes = 1; t.shape = shape;
  return t;
}

static void report(const char *what, int rc) {
  printf("%s %d %s\n", what, rc, rc ? elementwise_dyn_last_error() : "-");
}

/* threads: each its own sizes (large ones run on the library's thread pool); errors stay per thread */
static void *worker(void *arg) {
  int64_t n = (int64_t)(intptr_t)arg, shape[2] = {n, 3};
  double *x = calloc(n * 3, sizeof(double)), *y = calloc(n * 3, sizeof(double)), *o = calloc(n * 3, sizeof(double));
  DLTensor in[2] = {t2(x, shape), t2(y, shape)}, out[1] = {t2(o, shape)};
  int bad = 0;
  for (int k = 0; k < 40; k++) {
    for (int64_t i = 0; i < n * 3; i++) { x[i] = 0.001 * (i + k); y[i] = 0.5; }
    if (elementwise_dyn(in, 2, out, 1) != 0) bad++;
    for (int64_t i = 0; i < n * 3; i++) {  /* the numpy function, in C */
      double want = sin(x[i]) * exp(-y[i]) + x[i] * y[i] / (1 + y[i] * y[i]);
      if (fabs(o[i] - want) > 1e-12 * (1 + fabs(want))) { bad++; break; }
    }
    in[0].ndim = 1;
    if (elementwise_dyn(in, 2, out, 1) != AOT_STATUS_INVALID_ARGUMENT || !strstr(elementwise_dyn_last_error(), "ndim")) bad++;
    in[0].ndim = 2;
  }
  free(x); free(y); free(o);
  return (void *)(intptr_t)bad;
}

int main(void) {
  printf("signature %s\n", elementwise_dyn_signature());
  printf("abi %d %d\n", (int)elementwise_dyn_abi_version(), AOT_ABI_VERSION);
  double x[4 * 3], y[4 * 3], o[4 * 3], wide[4 * 4];
  for (int i = 0; i < 12; i++) { x[i] = 0.1 * i; y[i] = 1.0 - 0.05 * i; }
  int64_t shape[2] = {4, 3}, oshape[elementwise_dyn_OUTPUT_SHAPES_LEN];
  DLTensor in[2] = {t2(x, shape), t2(y, shape)}, out[1] = {t2(o, shape)};
  report("shapes", elementwise_dyn_output_shapes(in, 2, oshape));
  printf("oshape %lld %lld\n", (long long)oshape[0], (long long)oshape[1]);
  report("ok", elementwise_dyn(in, 2, out, 1));
  for (int i = 0; i < 12; i++) printf("%.17g\n", o[i]);

  /* strided output: every other column of a 4x4 buffer is not it; use row stride 4 */
  int64_t ostrides[2] = {4, 1};
  DLTensor sout[1] = {t2(wide, shape)};
  sout[0].strides = ostrides;
  report("strided", elementwise_dyn(in, 2, sout, 1));
  printf("strided_equal %d\n", wide[4] == o[3] && wide[13] == o[10]);

  /* a valid byte_offset: the same x stored after 3 leading doubles */
  double xx[3 + 12];
  for (int i = 0; i < 12; i++) xx[3 + i] = x[i];
  in[0].data = xx; in[0].byte_offset = 3 * sizeof(double);
  report("offset", elementwise_dyn(in, 2, sout, 1));
  printf("offset_equal %d\n", wide[4] == o[3] && wide[13] == o[10] && wide[0] == o[0]);
  in[0].data = x; in[0].byte_offset = 0;

  /* bad inputs: each must give a non-zero code and a message, never crash */
  in[0].ndim = 1; report("ndim", elementwise_dyn(in, 2, out, 1)); in[0].ndim = 2;
  in[1].dtype.bits = 32; report("dtype", elementwise_dyn(in, 2, out, 1)); in[1].dtype.bits = 64;
  in[0].data = NULL; report("null_data", elementwise_dyn(in, 2, out, 1)); in[0].data = x;
  report("null_inputs", elementwise_dyn(NULL, 2, out, 1));
  report("null_outputs", elementwise_dyn(in, 2, NULL, 1));
  report("count", elementwise_dyn(in, 1, out, 1));
  in[0].shape = NULL; report("null_shape", elementwise_dyn(in, 2, out, 1)); in[0].shape = shape;
  int64_t big[2] = {2000000, 3}; in[0].shape = big; in[1].shape = big;
  report("range", elementwise_dyn_output_shapes(in, 2, oshape)); in[0].shape = shape; in[1].shape = shape;
  int64_t other[2] = {3, 3}; in[1].shape = other; report("mismatch", elementwise_dyn(in, 2, out, 1)); in[1].shape = shape;
  int64_t badcols[2] = {4, 2}; in[0].shape = badcols; report("static_dim", elementwise_dyn(in, 2, out, 1)); in[0].shape = shape;
  in[0].byte_offset = 3; report("byte_offset", elementwise_dyn(in, 2, out, 1)); in[0].byte_offset = 0;
  in[0].device.device_type = 2; report("device", elementwise_dyn(in, 2, out, 1)); in[0].device.device_type = kDLCPU;
  int64_t small[2] = {2, 3}; out[0].shape = small; report("out_shape", elementwise_dyn(in, 2, out, 1)); out[0].shape = shape;
  report("after_errors", elementwise_dyn(in, 2, out, 1));

  pthread_t th[4];
  for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, worker, (void *)(intptr_t)(1 + 40000 * i));
  long bad = 0;
  for (int i = 0; i < 4; i++) { void *r; pthread_join(th[i], &r); bad += (long)(intptr_t)r; }
  printf("threads_bad %ld\n", bad);
  return 0;
}
"""

BAD = [
    "ndim",
    "dtype",
    "null_data",
    "null_inputs",
    "null_outputs",
    "count",
    "null_shape",
    "range",
    "mismatch",
    "static_dim",
    "byte_offset",
    "device",
    "out_shape",
]


def _compile_and_run(lib: Path, tmp_path: Path) -> dict[str, list[str]]:
    src = tmp_path / "prog.c"
    src.write_text(_PROGRAM)
    exe = tmp_path / "prog"
    cmd = [
        "cc",
        "-std=c99",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-pedantic",
        "-iquote",
        str(lib.parent),
        str(src),
        "-o",
        str(exe),
        str(lib),
        f"-Wl,-rpath,{lib.parent}",
        "-lpthread",
        "-lm",
    ]
    r = subprocess.run(cmd, check=False, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    run = subprocess.run([str(exe)], check=False, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    return lines, {
        ln.split()[0]: ln.split()[1:] for ln in lines if ln and not ln[0].isdigit() and ln[0] != "-"
    }


def test_c_program_results_and_bad_inputs(libs, tmp_path):
    import numpy as np

    from . import funcs

    lib = Path(libs["elementwise_dyn"])
    lines, out = _compile_and_run(lib, tmp_path)
    assert out["signature"] == ["(f64[N,3],", "f64[N,3])", "->", "(f64[N,3])"]
    assert out["abi"] == ["1", "1"]
    assert out["shapes"][0] == "0" and out["oshape"] == ["4", "3"] and out["ok"][0] == "0"
    x = 0.1 * np.arange(12.0).reshape(4, 3)
    y = 1.0 - 0.05 * np.arange(12.0).reshape(4, 3)
    start = lines.index(next(ln for ln in lines if ln.startswith("ok ")))
    got = np.array([float(v) for v in lines[start + 1 : start + 13]]).reshape(4, 3)
    np.testing.assert_allclose(got, funcs.elementwise(x, y), rtol=1e-14)
    assert out["strided"][0] == "0" and out["strided_equal"] == ["1"]
    assert out["offset"][0] == "0" and out["offset_equal"] == ["1"]
    for what in BAD:
        code, *message = out[what]
        assert code != "0", what
        assert message and message != ["-"], what
    assert out["range"][0] == "2" and "outside its range" in " ".join(out["range"])
    assert "NULL" in " ".join(out["null_data"]) and "ndim" in " ".join(out["ndim"])
    assert out["after_errors"][0] == "0"
    assert out["threads_bad"] == ["0"]


def test_header_is_c99_and_cxx(libs, tmp_path):
    header = Path(libs["matmul"]).with_suffix(".h")
    text = header.read_text()
    includes = [ln.split()[1] for ln in text.splitlines() if ln.startswith("#include")]
    assert includes == ["<stddef.h>", "<stdint.h>"]
    src = tmp_path / "use.c"
    src.write_text(f'#include "{header.name}"\nint main(void) {{ return matmul_abi_version() == 0; }}\n')
    for compiler, std in (("cc", "-std=c99"), ("c++", "-std=c++11")):
        if shutil.which(compiler) is None:
            continue
        r = subprocess.run(
            [
                compiler,
                std,
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-fsyntax-only",
                "-iquote",
                str(header.parent),
                "-x",
                "c" if compiler == "cc" else "c++",
                str(src),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert r.returncode == 0, (compiler, r.stderr)


def test_needed_and_exported_symbols(libs):
    allowed = ("libc.so", "libm.so", "libmvec.so", "libpthread.so", "ld-linux")
    for path in libs.values():
        needed = needed_libraries(path)
        assert needed and all(n.startswith(allowed) for n in needed), needed
        assert read_header(Path(path).read_bytes()[:64]).type == "shared object"
    if shutil.which("nm") is None:
        pytest.skip("nm not available")
    r = subprocess.run(
        ["nm", "-D", "--defined-only", libs["matmul"]], capture_output=True, text=True, check=True
    )
    exported = sorted(ln.split()[-1] for ln in r.stdout.splitlines() if ln.split()[-1] != "_init")
    assert exported == sorted(
        [
            "matmul",
            "matmul_output_shapes",
            "matmul_signature",
            "matmul_last_error",
            "matmul_abi_version",
            "matmul_target",
            "matmul_set_num_threads",
        ]
    )
