"""One pool of workers per process (runtime/pools.py): compiled graphs, the FFT kernel libraries
and warm-start libraries each carry a pool; jobs run on one of them, an FFT library's when one is
loaded."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads threads from Linux's /proc")

# the native threads (the process's tasks that are not Python threads) appearing at each step, and
# the CPU time each then spends while every step runs again; OpenBLAS keeps to the calling thread
_CHILD = """
import json, os, threading
import numpy as np
import aot, aot.fft
from aot.fft import _exec

def native():
    python = {t.native_id for t in threading.enumerate()}
    return {int(t) for t in os.listdir("/proc/self/task")} - python

def cpu(tid):
    with open(f"/proc/self/task/{tid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])

_exec.set_num_threads(3)
y = np.random.default_rng(0).random(1 << 22)
x = np.random.default_rng(1).random((512, 1024)) + 1j
f = aot.compile(lambda a: np.sqrt(a) * 2.0 + 1.0, options={"num_threads": 3})
steps = {"compiled": lambda: bool(np.allclose(f(y), np.sqrt(y) * 2.0 + 1.0)),
         "fft": lambda: bool(np.allclose(aot.fft.fft(x), np.fft.fft(x)))}
order = os.environ["ORDER"].split(",")
ok, seen, new = True, set(), {}
for step in order:
    ok &= steps[step]()
    new[step] = sorted(native() - seen)
    seen |= set(new[step])
before = {t: cpu(t) for t in seen}
for _ in range(40):
    for step in order:
        steps[step]()
busy = {step: sum(cpu(t) - before[t] for t in tids) for step, tids in new.items()}
from runtime import pools
print(json.dumps({"ok": ok, "new": {k: len(v) for k, v in new.items()}, "busy": busy,
                  "pool": pools.process_pool() is not None}))
"""


@pytest.mark.parametrize("order", ["compiled,fft", "fft,compiled"])
def test_compiled_code_and_fft_run_on_one_pool(tmp_path, order):
    env = {**os.environ, "AOT_CACHE_DIR": str(tmp_path), "ORDER": order, "OPENBLAS_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1", "AOT_NUM_THREADS": "3"}
    r = subprocess.run([sys.executable, "-c", _CHILD], env=env, cwd=ROOT, capture_output=True, text=True,
                       timeout=600, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.splitlines()[-1])
    assert got["ok"] and got["pool"], got
    first, second = order.split(",")
    assert got["new"][first] == 2, got  # the first pool's two workers (three threads with the caller)
    if first == "fft":  # the compiled code's pool passes its jobs on from the start: no workers of its own
        assert got["new"][second] == 0, got
    else:  # the FFT library's pool became the process's: the compiled code's workers sleep from then on
        assert got["new"][second] == 2, got
        assert got["busy"][first] <= 2 and got["busy"][second] >= 5, got  # clock ticks (1/100 s)
