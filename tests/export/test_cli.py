"""The `aot` command line, run as `python -m aot` in a subprocess."""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
import sys

import pytest

from aot.cli import main

from . import funcs

FUNCS = f"{funcs.__file__}"


def aot_cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "aot", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs cc")
def test_compile_then_inspect(tmp_path):
    r = aot_cli(
        "compile",
        f"{FUNCS}:matmul",
        "--arg",
        "f64[N,K]",
        "--arg",
        "f64[K,3]",
        "--dynamic",
        "N=1..4096",
        "-o",
        str(tmp_path),
    )
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["matmul.h", "matmul.so"]
    r = aot_cli("inspect", str(tmp_path / "matmul.so"))
    assert r.returncode == 0, r.stderr
    assert "signature:   (f64[N,K], f64[K,3]) -> (f64[N,3])" in r.stdout
    assert "abi version: 1" in r.stdout and "target:" in r.stdout
    if platform.libc_ver()[0] == "glibc":
        assert re.search(r"glibc:       >= 2\.\d+\n", r.stdout), r.stdout
    header = (tmp_path / "matmul.h").read_text()
    assert "1 <= N <= 4096" in header and "1 <= K\n" in header


@pytest.mark.parametrize(
    "stage, expect", [("graph", "matmul"), ("ir", "func @main"), ("llvm", "define"), ("asm", "ret"),
                      ("ptx", ".visible .entry aot_kernel0")]
)
def test_show_stages(stage, expect, capsys):
    rc = main(["show", f"{FUNCS}:matmul", "--arg", "f64[4,N]", "--arg", "f64[N,3]", "--stage", stage])
    assert rc == 0
    assert expect in capsys.readouterr().out


@pytest.mark.parametrize("cmd", [[], ["compile"], ["inspect"], ["show"], ["bench"]])
def test_help(cmd, capsys):
    with pytest.raises(SystemExit) as e:
        main([*cmd, "--help"])
    assert e.value.code == 0 and "usage: aot" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, code, message",
    [
        (["compile", f"{FUNCS}:matmul", "--arg", "f64[N,", "-o", "{tmp}"], 2, "expected DTYPE[DIMS]"),
        (["compile", f"{FUNCS}:nope", "--arg", "f64[3]", "-o", "{tmp}"], 2, "no function 'nope'"),
        (
            ["compile", f"{FUNCS}:matmul", "--arg", "f64[N]", "--dynamic", "M=1..3", "-o", "{tmp}"],
            2,
            "do not appear",
        ),
        (["compile", f"{FUNCS}:matmul", "--arg", "f64[3]", "--arg", "f64[4]", "-o", "{tmp}"], 1, "matmul"),
        (["inspect", "{tmp}/missing.so"], 2, "no such file"),
    ],
)
def test_errors(argv, code, message, tmp_path, capsys):
    rc = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert rc == code
    assert message in capsys.readouterr().err


def test_unknown_command_exits_nonzero(capsys):
    with pytest.raises(SystemExit) as e:
        main(["frobnicate"])
    assert e.value.code == 2


def test_bench(libs, capsys):
    assert main(["bench", libs["matmul"], "--arg", "f64[8,5]", "--arg", "f64[5,3]", "--repeat", "5"]) == 0
    assert "median" in capsys.readouterr().out


def test_prebuild_refuses_an_unknown_target(tmp_path, capsys):
    assert main(["prebuild", "--dir", str(tmp_path / "p"), "--target", "x86-64-v9"]) == 1
    assert "FFT target must be 'host' or one of" in capsys.readouterr().err


def test_prebuild_skips_what_is_up_to_date(tmp_path, monkeypatch, capsys):
    """A second run builds nothing: the helpers are there under their keys, the kernels' manifest
    names these sources and this CPU (the FFT build is stubbed here: tests/fft/test_prebuilt.py
    builds real ones)."""
    from aot.fft import prebuild as fft_prebuild

    built = []
    monkeypatch.setattr(fft_prebuild, "build", lambda root, targets, force=False: built.append(root) or
                        {"root": root, "targets": ["host"], "groups": 0, "seconds": 0.0, "skipped": not force})
    assert main(["prebuild", "--dir", str(tmp_path / "p")]) == 0
    assert "runtime helpers 3 built" in capsys.readouterr().out
    assert main(["prebuild", "--dir", str(tmp_path / "p")]) == 0
    assert "runtime helpers 0 built; FFT kernels (host) up to date" in capsys.readouterr().out
    assert built == [str(tmp_path / "p" / "fft")] * 2
