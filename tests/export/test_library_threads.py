"""The thread pool inside shared libraries: the run-time thread count (AOT_NUM_THREADS,
NAME_set_num_threads) and the workers joined when the library is unloaded (dlclose, fork)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from . import funcs

pytestmark = pytest.mark.skipif(
    shutil.which("cc") is None or not Path("/proc/self/task").is_dir(),
    reason="needs a system C compiler (cc) and /proc (threads are counted in /proc/self/task)",
)

ROWS = 300_000  # 900,000 elements: far above the parallel threshold
BUILD_THREADS = 2

_PROGRAM = r"""
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "big_ew.h"

#define ROWS @ROWS@
typedef int (*run_fn)(const DLTensor *, int32_t, DLTensor *, int32_t);
typedef int (*set_fn)(int32_t);
typedef const char *(*err_fn)(void);

static double x[ROWS * 3], y[ROWS * 3], o[ROWS * 3];
static run_fn run;
static set_fn set_threads;
static err_fn last_error;

static int threads(void) { /* this process's threads, the pool's workers included */
  DIR *d = opendir("/proc/self/task");
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

static void *sym(void *h, const char *name) {
  void *p = dlsym(h, name);
  if (p == NULL) { fprintf(stderr, "dlsym %s: %s\n", name, dlerror()); exit(3); }
  return p;
}

static void *load(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL), *p;
  if (h == NULL) { fprintf(stderr, "dlopen: %s\n", dlerror()); exit(2); }
  p = sym(h, "big_ew"); memcpy(&run, &p, sizeof run);
  p = sym(h, "big_ew_set_num_threads"); memcpy(&set_threads, &p, sizeof set_threads);
  p = sym(h, "big_ew_last_error"); memcpy(&last_error, &p, sizeof last_error);
  return h;
}

/* runs big_ew on the inputs; returns 0 when every element is the numpy function's value */
static int call(void) {
  int64_t shape[2] = {ROWS, 3};
  DLTensor t[3];
  double *data[3] = {x, y, o};
  memset(t, 0, sizeof t);
  for (int k = 0; k < 3; k++) {
    t[k].data = data[k]; t[k].device.device_type = kDLCPU; t[k].ndim = 2; t[k].shape = shape;
    t[k].dtype.code = kDLFloat; t[k].dtype.bits = 64; t[k].dtype.lanes = 1;
  }
  memset(o, 0, sizeof o);
  int rc = run(t, 2, t + 2, 1);
  if (rc) { fprintf(stderr, "big_ew: %d %s\n", rc, last_error()); return 1; }
  for (long i = 0; i < ROWS * 3; i++) {
    double want = sin(x[i]) * exp(-y[i]) + x[i] * y[i] / (1 + y[i] * y[i]);
    if (fabs(o[i] - want) > 1e-12 * (1 + fabs(want))) return 1;
  }
  return 0;
}

/* load, (call on n threads,) unload, again: the workers must be gone after each dlclose */
static int reload_loop(const char *path, int rounds) {
  for (int r = 0; r < rounds; r++) {
    void *h = load(path);
    int n = 2 + r % 3, bad = 0, during = 1;
    if (r % 4 != 3) { /* every 4th round: a pool that never started */
      bad = set_threads(n) != 0 || call() != 0;
      during = threads();
    }
    if (dlclose(h) != 0) { fprintf(stderr, "dlclose: %s\n", dlerror()); return 1; }
    printf("round %d %d %d %d %d\n", r, r % 4 == 3 ? 1 : n, bad, during, threads());
  }
  return 0;
}

/* the pool after fork: the child restarts its own workers and unloads; the parent's are intact */
static int forked(const char *path) {
  void *h = load(path);
  int bad = set_threads(3) != 0 || call() != 0;
  printf("parent_before %d %d\n", bad, threads());
  fflush(stdout);
  for (int child_calls = 0; child_calls < 2; child_calls++) {
    pid_t pid = fork();
    if (pid == 0) {
      int cbad = child_calls ? call() : 0, during = threads();
      cbad |= dlclose(h) != 0;
      printf("child %d %d %d %d\n", child_calls, cbad, during, threads());
      exit(0); /* the library's destructor has run: exit's must not join the parent's workers */
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) return 1;
  }
  bad = call() != 0;
  printf("parent_after %d %d\n", bad, threads());
  bad |= dlclose(h) != 0;
  printf("parent_closed %d %d\n", bad, threads());
  return 0;
}

/* one call at the environment's thread count, then set_num_threads(0) and (4); output to a file */
static int env_count(const char *path, const char *out) {
  void *h = load(path);
  int bad = call();
  printf("threads %d %d\n", bad, threads());
  FILE *f = fopen(out, "wb");
  bad |= f == NULL || fwrite(o, sizeof o[0], ROWS * 3, f) != ROWS * 3;
  int rc = set_threads(0);
  printf("set0 %d %s\n", rc, last_error());
  rc = set_threads(4);
  printf("set4 %d [%s]\n", rc, last_error());
  bad |= call();
  printf("after_set4 %d %d\n", bad, threads());
  bad |= f == NULL || fwrite(o, sizeof o[0], ROWS * 3, f) != ROWS * 3;
  if (f) fclose(f);
  dlclose(h);
  return bad;
}

int main(int argc, char **argv) {
  for (long i = 0; i < ROWS * 3; i++) { x[i] = (i % 1000) * 0.001; y[i] = 0.5 + (i % 7) * 0.125; }
  if (argc == 4 && !strcmp(argv[2], "loop")) return reload_loop(argv[1], atoi(argv[3]));
  if (argc == 3 && !strcmp(argv[2], "fork")) return forked(argv[1]);
  if (argc == 4 && !strcmp(argv[2], "env")) return env_count(argv[1], argv[3]);
  fprintf(stderr, "usage: prog LIB loop ROUNDS | LIB fork | LIB env OUT\n");
  return 64;
}
""".replace("@ROWS@", str(ROWS))


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """(library path, compiled C program) for big_ew = funcs.elementwise on (ROWS, 3) f64."""
    import aot

    tmp = tmp_path_factory.mktemp("threads")
    x = np.zeros((ROWS, 3))
    lib = Path(
        aot.aot_compile(
            funcs.elementwise, (x, x), path=tmp / "big_ew.so", options={"num_threads": BUILD_THREADS}
        )
    )
    src, exe = tmp / "prog.c", tmp / "prog"
    src.write_text(_PROGRAM)
    cmd = ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-iquote", str(tmp), str(src),
           "-o", str(exe), "-ldl", "-lm"]  # fmt: skip
    r = subprocess.run(cmd, check=False, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return lib, exe


def _run(exe: Path, *args, threads: str | None = None) -> dict[str, list[list[str]]]:
    """Run the program (AOT_NUM_THREADS as given, else unset); its lines by first word."""
    env = {k: v for k, v in os.environ.items() if k != "AOT_NUM_THREADS"}
    if threads is not None:
        env["AOT_NUM_THREADS"] = threads
    r = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, env=env, timeout=120,
                       check=False)  # fmt: skip
    assert r.returncode == 0, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    out: dict[str, list[list[str]]] = {}
    for line in r.stdout.splitlines():
        word, *rest = line.split(" ", 1)
        out.setdefault(word, []).append(rest[0].split() if rest else [])
    return out


def _inputs():
    i = np.arange(ROWS * 3)
    return ((i % 1000) * 0.001).reshape(ROWS, 3), (0.5 + (i % 7) * 0.125).reshape(ROWS, 3)


def test_dlclose_joins_the_workers(big):
    lib, exe = big
    rounds = _run(exe, lib, "loop", 24)["round"]
    assert len(rounds) == 24
    for r, n, bad, during, after in (map(int, row) for row in rounds):
        assert bad == 0, r
        assert during == n, (r, during, n)  # the caller and n-1 workers
        assert after == 1, (r, after)  # dlclose joined them


def test_fork_child_has_its_own_pool(big):
    lib, exe = big
    out = _run(exe, lib, "fork")
    assert out["parent_before"] == [["0", "3"]]
    # a child that never calls starts no workers; one that calls starts its own, joined at dlclose
    assert out["child"] == [["0", "0", "1", "1"], ["1", "0", "3", "1"]]
    assert out["parent_after"] == [["0", "3"]]
    assert out["parent_closed"] == [["0", "1"]]


def test_num_threads_from_environment_same_results(big, tmp_path):
    lib, exe = big
    want = funcs.elementwise(*_inputs())
    ref = None
    # unset, or not a positive integer: the build-time default
    for env, n in ((None, BUILD_THREADS), ("1", 1), ("3", 3), ("zero", BUILD_THREADS), ("0", BUILD_THREADS),
                   (" 3\n", 3)):  # fmt: skip
        path = tmp_path / f"out{n}.bin"
        out = _run(exe, lib, "env", path, threads=env)
        assert out["threads"] == [["0", str(n)]], env
        assert out["set0"][0][0] == "1" and "big_ew_set_num_threads: n must be >= 1, got 0" in " ".join(
            out["set0"][0]
        )
        assert out["set4"] == [["0", "[]"]]  # success clears the message
        assert out["after_set4"] == [["0", str(max(n, 4))]]  # the pool grows, never shrinks
        got = np.fromfile(path).reshape(2, ROWS, 3)
        np.testing.assert_allclose(got[0], want, rtol=1e-13, atol=1e-15)
        ref = got[0] if ref is None else ref
        np.testing.assert_array_equal(got[0], ref)  # bit for bit, whatever the thread count
        np.testing.assert_array_equal(got[1], ref)


_REDUCE = r"""
import sys
import numpy as np
import aot
lib = aot.aot_load(sys.argv[1])
x = np.random.default_rng(3).random((200_000, 4))
np.savez(sys.argv[2], *lib(x))
"""


def test_split_reduction_same_results_any_thread_count(tmp_path):
    """A full sum split into build-time many partials: the run-time count only schedules them."""
    import aot

    lib = aot.aot_compile(funcs.reduction, (np.zeros((200_000, 4)),), path=tmp_path / "red.so",
                          options={"num_threads": 3})  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "AOT_NUM_THREADS"}
    results = []
    for n in ("1", "2", "5"):
        out = tmp_path / f"red{n}.npz"
        r = subprocess.run([sys.executable, "-c", _REDUCE, lib, out], env={**env, "AOT_NUM_THREADS": n},
                           capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        assert r.returncode == 0, r.stderr
        with np.load(out) as z:
            results.append([z[k] for k in sorted(z.files)])
    x = np.random.default_rng(3).random((200_000, 4))
    for got, want in zip(results[0], funcs.reduction(x), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    for other in results[1:]:
        for a, b in zip(results[0], other, strict=True):
            np.testing.assert_array_equal(a, b)
