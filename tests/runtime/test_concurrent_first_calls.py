"""Many threads making the first call of freshly compiled functions at once, with the interpreter
switching threads every few microseconds: the native call objects they build (runtime/buffers.py
`builtin_at`) must stay valid. Before the fix, two threads could each make the method definition
of one trampoline, the second replacing the first in the process-wide table while the first
thread's builtin still pointed at it (a use after free: a segfault in about half the runs of this test)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent("""
    import os, sys, tempfile, threading, uuid
    import numpy as np, aot
    sys.setswitchinterval(1e-5)
    aot.compile(lambda a: a + 1)(np.ones(3))
    x = np.linspace(-1, 1, 1000)
    for r in range(25):
        os.environ["AOT_CACHE_DIR"] = tempfile.mkdtemp()
        k = float(uuid.uuid4().int % 10_000) + 0.5
        results, errors = [None] * 8, []
        barrier = threading.Barrier(8)
        def work(i):
            try:
                f = aot.compile(lambda a: np.exp(a) * k - a)
                barrier.wait()
                results[i] = f(x)
            except BaseException as e:
                errors.append(e)
        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        for res in results:
            np.testing.assert_allclose(res, np.exp(x) * k - x, rtol=1e-13)
    print("ok")
""")


def test_threads_racing_to_first_calls_do_not_crash(tmp_path):
    out = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path, check=False)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]
