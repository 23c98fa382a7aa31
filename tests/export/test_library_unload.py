"""A library with a dynamic FFT length frees its cached plans when it is unloaded: loading,
running and unloading it many times must not grow the process (codegen/llvm/unload.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import aot

from . import funcs

pytestmark = pytest.mark.skipif(
    shutil.which("cc") is None or not Path("/proc/self/statm").is_file(),
    reason="needs a system C compiler (cc) and /proc/self/statm",
)

N = 1 << 16  # a 1 MiB plan per load

_PROGRAM = r"""
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "fftdyn.h"

typedef int (*run_fn)(const DLTensor *, int32_t, DLTensor *, int32_t);
static double x[@N@], out[2 * @N@];

static long rss_kib(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL || fscanf(f, "%ld %ld", &pages, &resident) != 2) exit(4);
  fclose(f);
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv) {
  int64_t n = @N@, shape_in[1] = {n}, shape_out[1] = {n};
  for (int64_t i = 0; i < n; i++) x[i] = (double)(i % 7);
  DLTensor in = {x, {1, 0}, 1, {2, 64, 1}, shape_in, NULL, 0};
  DLTensor o = {out, {1, 0}, 1, {5, 128, 1}, shape_out, NULL, 0};
  long first = 0;
  for (int round = 0; round < 60; round++) {
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) { fprintf(stderr, "%s\n", dlerror()); return 2; }
    run_fn run = (run_fn)dlsym(h, "fftdyn");
    if (run == NULL || run(&in, 1, &o, 1) != 0) return 3;
    dlclose(h);
    if (round == 20) first = rss_kib();  /* after malloc's arenas have settled */
  }
  printf("first %ld last %ld X0 %.6f\n", first, rss_kib(), out[0]);
  return 0;
}
"""


def test_unloading_frees_the_plan_cache(tmp_path):
    x = np.random.default_rng(0).random(16)
    lib = aot.aot_compile(funcs.fft, (x,), dynamic_shapes={"x": {0: aot.Dim("N", max=1 << 20)}},
                          path=tmp_path / "fftdyn.so")
    src, exe = tmp_path / "prog.c", tmp_path / "prog"
    src.write_text(_PROGRAM.replace("@N@", str(N)))
    r = subprocess.run(["cc", "-std=c99", "-O1", "-iquote", str(tmp_path), str(src), "-o", str(exe), "-ldl"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(exe), str(lib)], capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    words = r.stdout.split()
    first, last, x0 = int(words[1]), int(words[3]), float(words[5])
    assert x0 == pytest.approx(sum(i % 7 for i in range(N)))
    # 40 more loads; a leaked plan each would be 40 MiB. The first rounds grow by up to ~2 MiB each (glibc
    # keeps the pool threads' freed arenas: seen on a Xeon host, flat from round 8 on), hence round 20
    assert last - first < 8 * 1024, r.stdout
