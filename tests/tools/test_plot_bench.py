"""tools/plot_bench.py and benchlib's JSON record: charts from saved results (one PNG per benchmark),
clear errors for bad files and a missing matplotlib, the writer's round trip, the --run wiring, and
one real script's --json in a quick configuration.

tools/ is not a package: its modules are loaded from their file paths.
"""
from __future__ import annotations

import datetime
import importlib.util
import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[2] / "tools"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _load(name: str):
    """tools/<name>.py as module `name` (benchlib first, so plot_bench shares its ResultsError)."""
    if name in sys.modules:
        return sys.modules[name]
    saved = list(sys.path)  # plot_bench puts tools/ on sys.path; keep the test process's path as it was
    try:
        spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    finally:
        sys.path[:] = saved
    return mod


benchlib = _load("benchlib")
plot_bench = _load("plot_bench")


def _row(case, times, table, baseline="aot"):
    base = times[baseline]
    return {"case": case, "table": table, "baseline": baseline, "times": times,
            "ratios": {k: t / base for k, t in times.items() if k != baseline and t}, "notes": {}}


def _results(benchmark: str, rows: list[dict]) -> dict:
    """A results object in the documented schema, written by hand (independent of the writer)."""
    return {"benchmark": benchmark, "date": "2025-01-02T03:04:05+00:00",
            "machine": {"cpu": "Test CPU @ 1 GHz", "cores": 2, "system": "Linux-test"},
            "versions": {"python": "3.11", "numpy": "2.0", "aot": "0.1.0", "numba": "0.60"},
            "threads": {"aot": 2, "numba": 2}, "rows": rows}


FIXTURES = {
    "elementwise": _results("elementwise", [
        _row("float32 N=1e+04", {"aot": 1e-5, "numpy": 3e-5, "numba": 2e-5, "torch.compile": 0.5e-5}, "chain"),
        _row("float64 N=1e+06", {"aot": 1e-3, "numpy": 8e-3, "numba": None, "torch.compile": 2e-3}, "chain"),
    ]),
    "fft": _results("fft", [
        _row("fft n=1024 [complex128]", {"aot": 1e-5, "numpy": 2e-5, "scipy w=1": 0.8e-5}, "1-D c2c"),
        _row("fft2 (1024,1024)", {"aot": 1e-2, "numpy": 4e-2, "scipy w=2": 1.1e-2}, "batched"),
        _row("fft fused", {"fused": 1e-3, "unfused": 2e-3}, "fusion", baseline="fused"),
    ]),
}


def _write(path: Path, data) -> Path:
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def _png_size(path: Path) -> tuple[int, int]:
    """(width, height) from the PNG header; asserts the signature and the IHDR chunk first."""
    head = path.read_bytes()[:24]
    assert head[:8] == PNG_SIGNATURE, f"{path} is not a PNG"
    assert head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


def test_plots_one_png_per_benchmark(tmp_path):
    files = [_write(tmp_path / f"{name}.json", data) for name, data in FIXTURES.items()]
    out = tmp_path / "charts"
    assert plot_bench.main([*map(str, files), "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["elementwise.png", "fft.png"]
    sizes = {}
    for png in out.iterdir():
        width, height = _png_size(png)
        assert png.stat().st_size > 20_000, f"{png.name}: {png.stat().st_size} bytes, a near-empty image?"
        assert width >= 800 and height >= 300, (png.name, width, height)
        sizes[png.stem] = height
    assert sizes["fft"] > sizes["elementwise"]  # three panels (tables) against one


def test_chart_contents(tmp_path):
    """The figure itself: log ratio axis, the 1.0 line and its label, one bar per plottable ratio."""
    plt = plot_bench.load_matplotlib()
    data = FIXTURES["elementwise"]
    captured = {}
    real_close = plt.close
    plt.close = lambda fig: captured.setdefault("fig", fig)  # keep the figure for inspection
    try:
        plot_bench.plot_one(data, str(tmp_path / "e.png"), plt)
    finally:
        plt.close = real_close
    fig = captured["fig"]
    (ax,) = fig.axes
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["float32 N=1e+04", "float64 N=1e+06"]
    assert any(t.get_text() == "aot = contestant" for t in ax.texts)
    assert any(list(line.get_xdata()) == [1.0, 1.0] for line in ax.get_lines())
    bars = ax.patches
    assert len(bars) == 5  # 3 + 2 ratios: numba has no time in the second row
    ends = sorted(round(b.get_x() + b.get_width(), 6) for b in bars)
    assert ends == sorted(round(r, 6) for row in data["rows"] for r in row["ratios"].values())
    slower = [b for b in bars if b.get_width() < 0]  # torch.compile 0.5: the bar runs left of 1.0
    assert len(slower) == 1 and slower[0].get_x() == 1.0
    assert "Test CPU @ 1 GHz, 2 cores" in fig._suptitle.get_text()
    assert "elementwise" in fig._suptitle.get_text() and "2025-01-02" in fig._suptitle.get_text()
    real_close(fig)


BAD = {
    "not JSON": ("{not json", "not valid JSON"),
    "a list": ("[1, 2]", "top level is list"),
    "no rows": (json.dumps({k: v for k, v in FIXTURES["fft"].items() if k != "rows"}), "missing key(s) rows"),
    "bad ratio": (json.dumps(_results("x", [{"case": "c", "times": {"aot": 1.0}, "ratios": {"numpy": "fast"}}])),
                  "rows[0].ratios['numpy'] is 'fast'"),
    "row without times": (json.dumps(_results("x", [{"case": "c", "ratios": {}}])), "rows[0] has no 'times'"),
}


@pytest.mark.parametrize("kind", list(BAD))
def test_bad_json_names_the_file_and_the_problem(tmp_path, capsys, kind):
    text, why = BAD[kind]
    good = _write(tmp_path / "good.json", FIXTURES["fft"])
    bad = _write(tmp_path / "bad.json", text)
    out = tmp_path / "charts"
    assert plot_bench.main([str(good), str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and why in err, err
    assert not out.exists() or not list(out.iterdir()), "a chart was written although one file was bad"


def test_missing_file_and_duplicate_benchmark(tmp_path, capsys):
    missing = tmp_path / "nope.json"
    assert plot_bench.main([str(missing), "-o", str(tmp_path)]) == 2
    assert f"{missing}: cannot read it" in capsys.readouterr().err
    a = _write(tmp_path / "a.json", FIXTURES["fft"])
    b = _write(tmp_path / "b.json", FIXTURES["fft"])
    assert plot_bench.main([str(a), str(b), "-o", str(tmp_path)]) == 2
    assert "benchmark 'fft' is also in" in capsys.readouterr().err


def test_missing_matplotlib_is_named(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` raise ImportError
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("benchmarks ran without matplotlib"))
    with pytest.raises(SystemExit, match="matplotlib is not installed.*'matplotlib'"):
        plot_bench.main(["--run", "--results", str(tmp_path / "r"), "-o", str(tmp_path / "c")])


def test_run_runs_the_three_benchmarks_then_plots(monkeypatch, tmp_path):
    """--run's wiring, with the benchmarks faked: each gets --json PATH and the quick flags it has."""
    calls = []

    def fake_run(cmd, **kw):
        calls.append(cmd)
        path = Path(cmd[cmd.index("--json") + 1])
        name = path.stem
        _write(path, FIXTURES.get(name) or _results(name, [_row("c", {"aot": 1.0, "numpy": 2.0}, "t")]))
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(subprocess, "run", fake_run)
    out = tmp_path / "charts"
    assert plot_bench.main(["--run", "--quick", "--sizes", "1e3", "--results", str(tmp_path / "res"),
                            "-o", str(out)]) == 0
    assert [Path(c[1]).name for c in calls] == ["bench_elementwise.py", "bench_reduction.py", "bench_fft.py"]
    assert all(c[0] == sys.executable for c in calls)
    assert calls[0][-3:] == ["--sizes", "1e3", "--no-memory"] and calls[2][-1] == "--quick"
    assert calls[1][-1] == "--quick"  # bench_reduction --quick
    assert sorted(p.name for p in out.iterdir()) == ["elementwise.png", "fft.png", "reduction.png"]

    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: subprocess.CompletedProcess(cmd, 3))
    with pytest.raises(SystemExit, match=r"bench_elementwise\.py failed \(exit status 3\)"):
        plot_bench.main(["--run", "--results", str(tmp_path / "res2"), "-o", str(tmp_path / "c2")])


def test_files_or_run_not_both(tmp_path):
    with pytest.raises(SystemExit):
        plot_bench.main(["-o", str(tmp_path)])
    with pytest.raises(SystemExit):
        plot_bench.main(["--run", str(tmp_path / "x.json"), "-o", str(tmp_path)])


def test_writer_round_trips_rows(tmp_path, capsys):
    """A tiny fake benchmark through benchlib's API: print_table's rows and a direct add."""
    rows = [{"case": "small", "aot": 2e-6, "numpy": 5e-6, "numba": None},
            {"case": "large", "aot": 4e-3, "numpy": 2e-3, "numba": 8e-3}]
    benchlib.print_table("plain", rows)
    plain = capsys.readouterr().out
    res = benchlib.Results("fake")
    benchlib.print_table("plain", rows, results=res, notes={"aot threads": 1})
    assert capsys.readouterr().out == plain  # recording leaves the printed table as it was
    res.add("direct", {"fused": 1.0, "unfused": 3.0}, baseline="fused", table="other", notes={"k": [1, 2]})
    res.threads["aot"] = 1
    res.notes["memory"] = {"aot": 1.0}
    path = tmp_path / "sub" / "fake.json"
    res.write(str(path))
    data = benchlib.read_results(str(path))
    assert set(benchlib.SCHEMA_KEYS) <= set(data)
    assert data["benchmark"] == "fake"
    assert datetime.datetime.fromisoformat(data["date"]).tzinfo is not None
    assert data["machine"]["cpu"] and data["machine"]["cores"] >= 1 and data["machine"]["system"]
    assert {"python", "numpy", "aot"} <= set(data["versions"])
    assert data["threads"]["aot"] == 1 and data["notes"] == {"memory": {"aot": 1.0}}
    assert [r["case"] for r in data["rows"]] == ["small", "large", "direct"]
    small, large, direct = data["rows"]
    assert small["times"] == {"aot": 2e-6, "numpy": 5e-6, "numba": None}
    assert small["ratios"] == pytest.approx({"numpy": 2.5})  # no ratio for an untimed contestant
    assert large["ratios"] == pytest.approx({"numpy": 0.5, "numba": 2.0})
    assert small["table"] == "plain" and small["baseline"] == "aot" and small["notes"] == {"aot threads": 1}
    assert direct["ratios"] == pytest.approx({"unfused": 3.0}) and direct["notes"] == {"k": [1, 2]}
    assert data["rows"] == res.to_dict()["rows"]


def test_versions_only_of_the_contestants_in_the_rows(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", type(sys)("numba"))
    sys.modules["numba"].__version__ = "9.9"
    res = benchlib.Results("v")
    assert "numba" not in res.to_dict()["versions"]
    res.add("c", {"aot": 1.0, "numba_par": 2.0})
    assert res.to_dict()["versions"]["numba"] == "9.9"


def test_real_script_json_quick(tmp_path):
    """bench_elementwise at one small size, without the memory section (about a second)."""
    path = tmp_path / "elementwise.json"
    proc = subprocess.run([sys.executable, str(TOOLS / "bench_elementwise.py"), "--sizes", "1e3",
                           "--dtypes", "float64", "--no-memory", "--json", str(path)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "| float64 N=1e+03 |" in proc.stdout  # the printed table is still there
    data = benchlib.read_results(str(path))
    assert data["benchmark"] == "elementwise"
    (row,) = data["rows"]
    assert row["case"] == "float64 N=1e+03" and {"aot", "numpy"} <= set(row["times"])
    assert row["ratios"]["numpy"] == pytest.approx(row["times"]["numpy"] / row["times"]["aot"])
