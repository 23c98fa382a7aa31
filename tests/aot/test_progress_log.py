"""Long first-time work announces itself on `aot.progress` (INFO) before it starts: a large compile,
a precision's first FFT kernels; the CLI prints those lines."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

import aot
import codegen

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str, cache: Path, *args: str, kernels: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "AOT_CACHE_DIR": str(cache), "AOT_WARM_START": "0", "PYTHONPATH": str(ROOT)}
    if kernels is not None:
        env["AOT_PREBUILT"] = kernels
    env.pop("AOT_LOGS", None)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True,
                          text=True, env=env, timeout=240, cwd=ROOT, check=False)


def test_large_compile_is_announced_before_llvm_runs(caplog, monkeypatch):
    from codegen import targets

    events = []
    real_optimize = targets.optimize
    monkeypatch.setattr(targets, "optimize", lambda *a, **k: events.append("llvm") or real_optimize(*a, **k))
    monkeypatch.setattr(codegen, "LARGE_MODULE_INSTRUCTIONS", 1)
    caplog.set_level(logging.INFO, logger="aot.progress")
    marker = logging.Handler()
    marker.emit = lambda record: events.append("announce")
    logging.getLogger("aot.progress").addHandler(marker)
    try:
        f = aot.compile(lambda x: np.tanh(x) * 3.5 - x, options={"disk_cache": False})
        x = np.linspace(-2, 2, 37)
        np.testing.assert_allclose(f(x), np.tanh(x) * 3.5 - x, rtol=1e-15)
    finally:
        logging.getLogger("aot.progress").removeHandler(marker)
    lines = [r.getMessage() for r in caplog.records if r.name == "aot.progress"]
    assert len(lines) == 1 and "LLVM instructions" in lines[0] and "entry aot_" in lines[0]
    assert events.index("announce") < events.index("llvm")


def test_small_compile_says_nothing(caplog):
    caplog.set_level(logging.INFO, logger="aot.progress")
    f = aot.compile(lambda x: x * 2.25 + 1, options={"disk_cache": False})
    np.testing.assert_array_equal(f(np.arange(5.0)), np.arange(5.0) * 2.25 + 1)
    assert not [r for r in caplog.records if r.name == "aot.progress"]


def test_first_fft_kernels_are_announced_once_before_they_build(tmp_path):
    r = _run("""
        import logging, numpy as np
        logging.basicConfig(level=logging.INFO, format="%(name)s|%(message)s")
        import aot.fft
        x = np.exp(1j * np.arange(1024.0))
        for n in (1024, 1000, 1024):
            np.testing.assert_allclose(aot.fft.fft(x[:n]), np.fft.fft(x[:n]), rtol=1e-12, atol=1e-9)
        """, tmp_path, kernels="0")  # built, not prebuilt (aot/fft/_prebuilt.py)
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("aot.")]
    progress = [k for k, ln in enumerate(lines) if ln.startswith("aot.progress|")]
    built = [k for k, ln in enumerate(lines) if "fft kernels f64" in ln and "compiled" in ln]
    assert len(progress) == 1, lines  # one line for the precision's first build, not one per group
    assert "f64 FFT kernels" in lines[progress[0]]
    assert built and progress[0] < built[0], lines

    again = _run("""
        import logging, numpy as np
        logging.basicConfig(level=logging.INFO, format="%(name)s|%(message)s")
        import aot.fft
        aot.fft.fft(np.ones(1024, complex))
        """, tmp_path)
    assert again.returncode == 0, again.stderr
    assert "aot.progress" not in again.stderr  # loaded from the disk cache: nothing long to announce


def test_cli_prints_progress_lines(tmp_path):
    src = tmp_path / "prog.py"
    src.write_text("import numpy as np\n\ndef f(x):\n    return np.sin(x) * x\n")
    r = _run("""
        import sys
        import codegen
        codegen.LARGE_MODULE_INSTRUCTIONS = 1  # every compile counts as large here
        from aot.cli import main
        sys.exit(main(["show", sys.argv[1] + ":f", "--arg", "f64[N]", "--stage", "asm"]))
        """, tmp_path, str(src))
    assert r.returncode == 0, r.stderr
    assert "[aot.progress] compiling a large module" in r.stderr
