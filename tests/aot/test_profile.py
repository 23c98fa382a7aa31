"""aot.profile and options["profile"]: rows per launch site named by their LLVM kernels, counts and
time bounds (never one time against another), results as numpy's, separate cache entries and no
clock in unprofiled or library code, FFT kernels, traced loops, threaded launches, graphs without
native code, a disk-cache hit in a fresh process, and clear errors."""
from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import aot
from aot.compiler import llvm_backend
from codegen import lower_module
from codegen.options import CodegenOptions, ProfileLayout

REPEAT = 3
RNG = np.random.default_rng(0)
X = RNG.random((8, 16))


def three(x):  # three kernels: a column max, a column sum, the elementwise rest (column reductions
    return np.exp(x - x.max(axis=0)) / x.sum(axis=0)  # form no row group: codegen/row_groups.py)


def steps(x):  # a traced loop: the same two kernels once per step (column means: no row group)
    for _ in range(3):
        x = x - x.mean(axis=0) * 0.5
    return x


@pytest.fixture(scope="module")
def three_profile():
    """(the profile of `three`, the LLVM IR text of its profiled module)."""
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    llvm_log = logging.getLogger("aot.llvm")
    old = llvm_log.level
    llvm_log.addHandler(handler)
    llvm_log.setLevel(logging.INFO)
    try:
        p = aot.profile(three, X, repeat=REPEAT)
    finally:
        llvm_log.removeHandler(handler)
        llvm_log.setLevel(old)
    texts = [r.getMessage() for r in records if f'@"{p.entry_name}.profile"' in r.getMessage()]
    return p, texts[0] if texts else None


def _defined(text: str) -> set[str]:
    return set(re.findall(r'define [^@\n]*@"([^"]+)"\(', text))


def test_rows_name_each_kernel(three_profile):
    p, text = three_profile
    assert text is not None, "the profiled module was not lowered in this test"
    labels = [r.label for r in p.rows]
    assert len(labels) == 3 and len(set(labels)) == 3
    assert all(label.startswith(f"{p.entry_name}.") for label in labels)
    assert set(labels) <= _defined(text)  # the LLVM names of the kernels, as defined in the module
    assert [r.site for r in p.rows] == sorted(r.site for r in p.rows)  # in launch order


def test_counts_and_time_bounds(three_profile):
    p, _ = three_profile
    assert p.repeat == REPEAT
    assert all(r.calls == REPEAT for r in p.rows)
    assert all(r.total >= 0 and r.mean >= 0 and 0 <= r.share <= 1 for r in p.rows)
    assert 0 <= p.kernels <= p.entry <= p.wall
    assert p.host == pytest.approx(p.entry - p.kernels) and p.host >= 0
    assert sum(r.total for r in p.rows) == pytest.approx(p.kernels * REPEAT)
    assert sum(r.share for r in p.rows) <= 1 + 1e-12


def test_report(three_profile):
    p, _ = three_profile
    text = str(p)
    assert "three" in text and "kernel" in text
    for r in p.rows:
        assert r.label.removeprefix(f"{p.entry_name}.") in text
    d = p.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert [r["label"] for r in d["rows"]] == [r.label for r in p.rows]
    assert {"wall", "entry", "host", "kernels", "repeat"} <= set(d)


def test_profiled_results_equal_numpy():
    profiled = aot.compile(three, options={"profile": True})
    plain = aot.compile(three)
    np.testing.assert_allclose(profiled(X), three(X), rtol=1e-12)
    np.testing.assert_array_equal(profiled(X), plain(X))  # the same kernels
    assert profiled._entries[0].runner.profile.layout.labels


def _lowered_text(fn, x, options: CodegenOptions) -> str:
    cf = aot.compile(fn)
    cf(x)
    from codegen import host_target

    return str(lower_module(llvm_backend.build_ir(cf.graphs[0]), host_target(), options))


def test_unprofiled_code_has_no_clock():
    plain = _lowered_text(three, X, CodegenOptions())
    profiled = _lowered_text(three, X, CodegenOptions(profile=True))
    assert "clock_gettime" not in plain and ".profile" not in plain
    assert "clock_gettime" in profiled and "atomicrmw add" in profiled


def test_profiled_and_plain_are_separate_cache_entries():
    def f(x):
        return np.tanh(x) * 1.375 + x.sum()

    plain = aot.compile(f)
    plain(X)
    profiled = aot.compile(f, options={"profile": True})
    profiled(X)
    again = aot.compile(f)  # served by the in-process cache: the plain entry, not the profiled one
    again(X)
    plain_runner, profiled_runner = plain._entries[0].runner, profiled._entries[0].runner
    assert plain_runner.address != profiled_runner.address
    assert again._entries[0].runner.address == plain_runner.address
    assert not hasattr(plain_runner, "profile") and hasattr(profiled_runner, "profile")
    assert profiled_runner.object_key is None  # never linked into a warm-start library
    module = llvm_backend.build_ir(plain.graphs[0])
    target = llvm_backend._host(3)
    assert (llvm_backend.cache_key_of(module, target, CodegenOptions(profile=True))
            != llvm_backend.cache_key_of(module, target, CodegenOptions()))


def test_compiled_function_with_a_traced_loop():
    cf = aot.compile(steps, options={"num_threads": 1, "opt_level": 1})
    p = aot.profile(cf, X, repeat=2, warmup=0)
    assert len(p.rows) >= 3  # a mean per step at least, each its own launch site
    assert len({r.label for r in p.rows}) == len(p.rows)
    assert all(r.calls == 2 for r in p.rows)
    np.testing.assert_allclose(cf(X), steps(X))


def test_fft_kernels():
    x = RNG.random((4, 64)) + 0j
    p = aot.profile(lambda x: np.abs(np.fft.fft(x, axis=1)) ** 2, x, repeat=REPEAT)
    assert any("fft" in r.label for r in p.rows)
    assert all(r.calls == REPEAT for r in p.rows)
    assert 0 <= p.kernels <= p.entry <= p.wall


def test_threaded_launches():
    x = RNG.random(1 << 17)
    p = aot.profile(aot.compile(lambda x: np.sin(x) * 2.5, options={"num_threads": 2}), x, repeat=2)
    assert len(p.rows) == 1 and p.rows[0].calls == 2  # timed around parallel_for, which joins
    assert 0 <= p.kernels <= p.entry <= p.wall


def test_graph_without_native_code():
    p = aot.profile(lambda x: x.shape[0] * 2.0, X, repeat=2)
    assert p.rows == () and p.entry == 0 and p.kernels == 0 and p.wall >= 0
    assert "no kernel launches" in str(p)


def test_disk_cache_hit_keeps_the_layout():
    """A fresh process with the same cache loads the profiled object and its layout from disk."""
    aot.profile(three, X, repeat=1)  # stored in this session's disk cache (tests/conftest.py)
    code = ("import numpy as np, aot\n"
            "from aot.compiler import llvm_backend\n"
            "from tests.aot.test_profile import three, X\n"
            "p = aot.profile(three, X, repeat=2)\n"
            "print(llvm_backend.STATS['disk_hits'], [r.calls for r in p.rows])\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "AOT_WARM_START": "0"}, check=False)
    assert out.returncode == 0, out.stderr
    hits, calls = out.stdout.split(" ", 1)
    assert int(hits) >= 2 and calls.strip() == "[2, 2, 2]"  # the plain and the profiled objects


def test_layout_round_trip():
    layout = ProfileLayout("aot_x", ("aot_x.ew1.sin", "aot_x.red2.sum"))
    assert ProfileLayout.from_json(layout.to_json()) == layout
    assert layout.symbol == "aot_x.profile" and layout.size == 6


def test_library_build_is_unaffected(tmp_path):
    path = aot.aot_compile(three, (X,), path=tmp_path / "three.so")
    data = Path(path).read_bytes()
    assert b"clock_gettime" not in data and b".profile" not in data
    np.testing.assert_allclose(aot.aot_load(path)(X), three(X), rtol=1e-12)
    with pytest.raises(TypeError, match="unknown options"):
        aot.aot_compile(three, (X,), path=tmp_path / "p.so", options={"profile": True})


def test_codegen_refuses_profiled_libraries_and_gpu_entries():
    from codegen import host_target
    from codegen.ptx import compile_ptx

    cf = aot.compile(three)
    cf(X)
    module = llvm_backend.build_ir(cf.graphs[0])
    with pytest.raises(ValueError, match="JIT entries only"):
        lower_module(module, host_target(), CodegenOptions(library="lib", profile=True))
    with pytest.raises(NotImplementedError, match="CPU host"):
        compile_ptx(module, "cuda:sm_80", CodegenOptions(profile=True))


@pytest.mark.parametrize("kwargs, error, match", [
    ({"repeat": 0}, ValueError, "repeat must be an int >= 1"),
    ({"repeat": 2.0}, ValueError, "repeat must be an int >= 1"),
    ({"warmup": -1}, ValueError, "warmup must be an int >= 0"),
])
def test_bad_counts(kwargs, error, match):
    with pytest.raises(error, match=match):
        aot.profile(three, X, **kwargs)


def test_bad_functions():
    with pytest.raises(TypeError, match="fn must be a numpy function"):
        aot.profile(42, X)
    with pytest.raises(ValueError, match="backend 'eager'"):
        aot.profile(aot.compile(three, backend="eager"), X)
    with pytest.raises(ValueError, match=r"options\['profile'\] must be True or False"):
        aot.compile(three, options={"profile": "yes"})(X)


def test_eager_fallback_is_refused():
    def branchy(x):
        if x.sum() > 0:  # data-dependent control flow: a graph break
            return x * 2
        return x

    with pytest.warns(RuntimeWarning, match="eagerly"), pytest.raises(RuntimeError, match="runs eagerly with numpy"):
        aot.profile(branchy, X)


def test_asynchronous_function():
    cf = aot.compile(three, options={"async_compile": True})
    p = aot.profile(cf, X, repeat=2)
    assert len(p.rows) == 3 and all(r.calls == 2 for r in p.rows)
