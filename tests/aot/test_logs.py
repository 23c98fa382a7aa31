"""AOT_LOGS switches on the debug output of each stage through logging."""
from __future__ import annotations

import os
import subprocess
import sys

CODE = """
import numpy as np, aot
f = aot.compile(lambda x: np.exp(x).sum())
f(np.ones(3)); f(np.ones(4))
"""


def run(spec: str) -> str:
    env = dict(os.environ, AOT_LOGS=spec)
    return subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, check=True).stderr


def test_artifacts_print_when_named():
    err = run("recompiles,fusion,guards,graph,ir,llvm")
    assert "[aot.recompiles] Recompiling function <lambda>: guard failed: L['x'].shape == (3,)" in err
    assert "[aot.fusion] @main: kernel.reduce sum" in err
    assert "[aot.guards] guards for <lambda>" in err
    assert "[aot.graph] captured graph" in err
    assert "[aot.ir]" in err and "kernel.reduce" in err
    assert "[aot.llvm]" in err and "define" in err


def test_nothing_prints_by_default():
    assert run("") == ""
