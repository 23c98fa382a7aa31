"""tools/bench_func.py --quick runs end to end with aot alone (the other contestants skipped)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_func_quick_aot_only():
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    cmd = [sys.executable, str(ROOT / "tools" / "bench_func.py"), "--quick", "--contestants", "aot"]
    env = dict(os.environ, PYTHONPATH=path)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    out = p.stdout
    assert "FAILED" not in out and "WRONG" not in out, out
    # every case checked and timed, compiled and eager, and the fresh-process first call
    assert out.count(" aot            ok") == 4 + 1 and out.count(" aot eager      ok") == 4, out  # + fresh
    assert "check aot            ok" in out and "| first call (cold) |" in out, out
