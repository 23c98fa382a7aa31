#!/usr/bin/env python3
"""Charts of benchmark results: one PNG per benchmark from the JSON that `tools/bench_*.py --json` writes.

Each chart shows, per case, the ratio contestant time / aot time against each contestant as grouped
horizontal bars on a log axis, anchored at the line 1.0 ("aot = contestant"): a bar to the right means
aot is faster, to the left slower. A benchmark with several tables gets one panel per table (a table
with another baseline, e.g. bench_fft_fused's "fused", is labelled with that baseline).

Run: python tools/plot_bench.py results/*.json -o docs/charts
     python tools/plot_bench.py --run [--quick] [--sizes 1e4,1e6,1e7] [--python PY] -o docs/charts
--run first runs bench_elementwise, bench_reduction and bench_fft with --json into --results (default:
results/ under the repository) with this interpreter (or --python: e.g. the environment that has the
contestants), then plots those files: the one command that regenerates the README's charts.
Needs matplotlib (Agg backend, no display).
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
sys.path.insert(0, TOOLS)
from benchlib import ResultsError, read_results

# the benchmarks behind the README's charts, in the order --run runs them
RUN_SCRIPTS = ("bench_elementwise", "bench_reduction", "bench_fft")
BAR_HEIGHT = 0.8  # of the space one case has on the y axis, shared by its contestants' bars


def load_matplotlib():
    """matplotlib.pyplot on the Agg backend, or SystemExit that names the missing package."""
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("plot_bench: matplotlib is not installed; install the package 'matplotlib' "
                         "(pip install matplotlib, or the project's test extra: pip install -e '.[test]')") from None
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    return plt


def tables(data: dict) -> list[tuple[str, str, list[dict]]]:
    """(table title, baseline, rows) in the order the rows were recorded."""
    out: dict[tuple[str, str], list[dict]] = {}
    for row in data["rows"]:
        key = (row.get("table") or data["benchmark"], row.get("baseline") or "aot")
        out.setdefault(key, []).append(row)
    return [(title, base, rows) for (title, base), rows in out.items()]


def contestants(data: dict) -> list[str]:
    """Every contestant with a ratio somewhere, in first-seen order (the colours follow it)."""
    seen: dict[str, None] = {}
    for row in data["rows"]:
        for name in row["ratios"]:
            seen.setdefault(name, None)
    return list(seen)


def _plottable(ratio) -> bool:
    return isinstance(ratio, (int, float)) and ratio > 0  # a log axis has no place for the rest


def fmt_ratio(r: float) -> str:
    return f"{r:.0f}" if r >= 10 else f"{r:.2g}"


def ratio_limits(data: dict) -> tuple[float, float]:
    vals = [r for row in data["rows"] for r in row["ratios"].values() if _plottable(r)] + [1.0]
    return min(vals) / 1.6, max(vals) * 1.6  # room for the value labels at the bars' ends


def _title(data: dict) -> str:
    m = data.get("machine") or {}
    cpu, cores = m.get("cpu", "unknown CPU"), m.get("cores", "?")
    date = str(data.get("date", "undated")).replace("T", " ")[:16]
    return f"aot benchmark: {data['benchmark']}\n{cpu}, {cores} cores, {date}"


def _draw_table(ax, title: str, baseline: str, rows: list[dict], names: list[str], colors: dict) -> None:
    from matplotlib.transforms import blended_transform_factory

    here = [n for n in names if any(n in r["ratios"] for r in rows)]
    h = BAR_HEIGHT / max(len(here), 1)
    for i, row in enumerate(rows):
        for j, name in enumerate(here):
            r = row["ratios"].get(name)
            if not _plottable(r):
                continue
            y = i - BAR_HEIGHT / 2 + (j + 0.5) * h
            # anchored at 1.0: the bar runs from 1 to r, rightwards when aot is faster
            ax.barh(y, r - 1.0, left=1.0, height=h * 0.9, color=colors[name])
            ax.text(r * (1.03 if r >= 1 else 1 / 1.03), y, fmt_ratio(r), va="center",
                    ha="left" if r >= 1 else "right", fontsize=7)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r["case"] for r in rows], fontsize=8)
    ax.set_ylim(len(rows) - 0.5, -0.5)  # the first case on top
    ax.axvline(1.0, color="black", linewidth=1)
    ax.text(1.0, 1.0, f"{baseline} = contestant", transform=blended_transform_factory(ax.transData, ax.transAxes),
            ha="center", va="bottom", fontsize=8)
    ax.set_title(title, fontsize=9, loc="left", pad=14)
    ax.grid(axis="x", which="major", alpha=0.3)


def _format_log_axis(ax, limits: tuple[float, float]) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    ax.set_xlim(*limits)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def plot_one(data: dict, path: str, plt) -> str:
    """One PNG for one benchmark's results; returns its path."""
    groups = tables(data)
    names = contestants(data)
    cmap = plt.get_cmap("tab10")
    colors = {n: cmap(i % 10) for i, n in enumerate(names)}
    heights = [max(len(rows), 1) * (0.3 + 0.22 * len(names)) + 0.9 for _, _, rows in groups]
    fig, axes = plt.subplots(len(groups) or 1, 1, figsize=(11, sum(heights) + 1.6), sharex=True, squeeze=False,
                             gridspec_kw={"height_ratios": heights or [1]})
    limits = ratio_limits(data)
    for ax, (title, base, rows) in zip(axes[:, 0], groups):
        _draw_table(ax, title, base, rows, names, colors)
        _format_log_axis(ax, limits)
    bottom = axes[-1, 0]
    bases = sorted({base for _, base, _ in groups}) or ["aot"]
    base = bases[0] if len(bases) == 1 else "baseline"  # else each panel's line names its own
    bottom.set_xlabel(f"ratio = contestant time / {base} time (log scale; > 1, bar to the right: {base} is faster)")
    if names:
        handles = [plt.Rectangle((0, 0), 1, 1, color=colors[n]) for n in names]
        fig.legend(handles, names, loc="upper right", fontsize=8, ncol=min(len(names), 4), frameon=False)
    fig.suptitle(_title(data), x=0.01, ha="left", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def chart_name(benchmark: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", benchmark).strip("_") + ".png"


def plot_files(paths: list[str], out_dir: str) -> list[str]:
    """Read every file first (a bad one fails before any chart is written), then one PNG per benchmark."""
    if not paths:
        raise ResultsError("no results files given")
    loaded = [(p, read_results(p)) for p in paths]
    by_name: dict[str, str] = {}
    for p, data in loaded:
        name = chart_name(data["benchmark"])
        if name in by_name:
            raise ResultsError(f"{p}: benchmark {data['benchmark']!r} is also in {by_name[name]}; "
                               "one file per benchmark (its chart would be overwritten)")
        by_name[name] = p
    plt = load_matplotlib()
    os.makedirs(out_dir, exist_ok=True)
    return [plot_one(data, os.path.join(out_dir, chart_name(data["benchmark"])), plt) for _, data in loaded]


def bench_args(script: str, quick: bool, sizes: str | None) -> list[str]:
    """The quick/size flags each script has."""
    if script == "bench_elementwise":
        return (["--sizes", sizes] if sizes else []) + (["--no-memory"] if quick else [])
    if script in ("bench_fft", "bench_reduction"):
        return ["--quick"] if quick else []
    return []


def run_benchmarks(results_dir: str, python: str, quick: bool, sizes: str | None) -> list[str]:
    """Run each of RUN_SCRIPTS with --json into results_dir; their tables go to this stdout."""
    os.makedirs(results_dir, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    out = []
    for script in RUN_SCRIPTS:
        path = os.path.join(results_dir, script.removeprefix("bench_") + ".json")
        cmd = [python, os.path.join(TOOLS, script + ".py"), "--json", path, *bench_args(script, quick, sizes)]
        print(f"$ {' '.join(cmd)}", flush=True)
        rc = subprocess.run(cmd, env=env, check=False).returncode
        if rc != 0:
            raise SystemExit(f"plot_bench: {script}.py failed (exit status {rc}); no charts written")
        out.append(path)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="*", help="results JSON files (from tools/bench_*.py --json PATH)")
    p.add_argument("-o", "--out", default="charts", help="directory of the PNG charts (default: charts)")
    p.add_argument("--run", action="store_true",
                   help=f"first run {', '.join(RUN_SCRIPTS)} with --json, then plot their results")
    p.add_argument("--results", default=os.path.join(ROOT, "results"), help="--run: directory of the JSON files")
    p.add_argument("--python", default=sys.executable, help="--run: the interpreter of the benchmarks")
    p.add_argument("--quick", action="store_true",
                   help="--run: bench_fft and bench_reduction --quick, bench_elementwise --no-memory")
    p.add_argument("--sizes", default=None, help="--run: bench_elementwise --sizes")
    a = p.parse_args(argv)
    if a.run == bool(a.files):
        p.error("give results files, or --run (not both)")
    try:
        load_matplotlib()  # before any benchmark runs: its absence would only show at the end
        files = run_benchmarks(a.results, a.python, a.quick, a.sizes) if a.run else a.files
        for path in plot_files(files, a.out):
            print(f"wrote {path}")
    except ResultsError as e:
        print(f"plot_bench: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
