"""Shipping (aot/compiler/shipping.py): a pickled compiled function carries its native code, and
the process that unpickles it runs that code without tracing or compiling.

The cases that depend on being another process (no sender's JIT, no sender's disk cache) pickle in
this process and unpickle in a fresh Python process with an empty disk cache of its own; those that
check how one process receives (damage, CPU features, one function per sender) run here.
"""
from __future__ import annotations

import hashlib
import importlib
import os
import pickle
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pytest

import aot
from aot.compiler import shipping

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="loads object code via the JIT")

REPO = Path(__file__).resolve().parents[3]

# The receiving process: unpickle a payload {"fns": {name: compiled}, "steps": [...]}, run its
# steps, pickle back what the calls returned and what the functions and the LLVM backend counted.
# A step is ("call", name, args) or ("set_global", name, variable, value) (in the function's globals).
CHILD = """
import pickle, sys
from aot.fft import _native
built = []  # FFT kernel groups this process had to build (the shipped libraries spare them)
_build = _native._built_group
_native._built_group = lambda *a: (built.append(a[2]), _build(*a))[1]
with open(sys.argv[1], "rb") as fh:
    payload = pickle.load(fh)
from aot.compiler import llvm_backend
fns, results = payload["fns"], []
for step in payload["steps"]:
    if step[0] == "call":
        results.append(fns[step[1]](*step[2]))
    else:
        fns[step[1]].__wrapped__.__globals__[step[2]] = step[3]
report = {"results": results, "info": {k: f.cache_info() for k, f in fns.items()},
          "llvm_compiles": llvm_backend.STATS["compiles"], "fft_builds": len(built),
          "sympy": "sympy" in sys.modules}
with open(sys.argv[2], "wb") as fh:
    pickle.dump(report, fh)
"""


def receive(tmp_path: Path, data: bytes) -> dict:
    """Run CHILD in a fresh process, with an empty disk cache of its own, on pickled `data`."""
    run = tmp_path / f"child-{uuid.uuid4().hex[:8]}"
    run.mkdir()
    (run / "payload.pkl").write_bytes(data)
    env = {**os.environ, "AOT_CACHE_DIR": str(run / "cache"), "AOT_WARM_START": "0",
           "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), str(tmp_path), os.environ.get("PYTHONPATH"))
                                         if p)}
    for name in ("AOT_LOGS", "AOT_TEST_OWN_CACHE"):
        env.pop(name, None)
    out = subprocess.run([sys.executable, "-c", CHILD, str(run / "payload.pkl"), str(run / "report.pkl")],
                         cwd=run, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert out.returncode == 0, out.stderr
    return pickle.loads((run / "report.pkl").read_bytes())


@pytest.fixture
def module(tmp_path, monkeypatch):
    """write(source) -> a module of that source in tmp_path (which the child imports too)."""
    names = []

    def write(source: str):
        name = f"shipmod_{uuid.uuid4().hex[:10]}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        names.append(name)
        return importlib.import_module(name)

    monkeypatch.syspath_prepend(str(tmp_path))
    yield write
    for name in names:
        sys.modules.pop(name, None)


def test_shipped_symbolic_entry_runs_without_sympy(tmp_path, module):
    """A dynamic entry's captured graph (symbolic shapes: sympy) travels pickled and is unpickled
    only if the entry has to compile: running the shipped code imports no sympy."""
    mod = module(ELEMENTWISE)
    f = aot.compile(mod.norms, dynamic=True)
    x = np.linspace(-1.0, 1.0, 50)
    f(x[:10])
    report = receive(tmp_path, pickle.dumps({"fns": {"norms": f}, "steps": [("call", "norms", (x,))]}))
    np.testing.assert_allclose(report["results"][0], mod.norms(x), rtol=1e-13, atol=1e-13)
    assert report["info"]["norms"]["shipped"] == 1 and report["info"]["norms"]["compiles"] == 0
    assert not report["sympy"]


def _received_afresh(state: dict) -> dict:
    """`state` as another sender's: rebuild() gives a new function, not the one received before."""
    return {**state, "id": uuid.uuid4().hex}


# ---- 1. another process runs the shipped code ----------------------------------------------------
ELEMENTWISE = """
import numpy as np


def mixed64(x, y):
    return np.sin(x) * y + np.sum(x * y)


def mixed32(x, y):
    return np.exp(-x) * y - np.max(x)


def norms(x):
    return np.sqrt(np.sum(x * x)) + x


def spectrum(x):
    return np.fft.rfft(x)
"""


def test_fresh_process_runs_shipped_code_without_compiling(tmp_path, module):
    mod = module(ELEMENTWISE)
    rng = np.random.default_rng(0)
    x64, y64 = rng.standard_normal(301), rng.standard_normal(301)
    x32 = rng.standard_normal((7, 33)).astype(np.float32)
    y32 = rng.standard_normal((7, 33)).astype(np.float32)
    sig = rng.standard_normal(256)
    fns = {"mixed64": aot.compile(mod.mixed64), "mixed32": aot.compile(mod.mixed32),
           "norms": aot.compile(mod.norms, dynamic=True), "spectrum": aot.compile(mod.spectrum)}
    sent = {"mixed64": fns["mixed64"](x64, y64), "mixed32": fns["mixed32"](x32, y32),
            "norms": fns["norms"](x64[:10]), "spectrum": fns["spectrum"](sig)}
    np.testing.assert_allclose(sent["spectrum"], np.fft.rfft(sig), rtol=1e-12, atol=1e-12)
    lengths = (10, 17, 64, 301)
    steps = [("call", "mixed64", (x64, y64)), ("call", "mixed32", (x32, y32)), ("call", "spectrum", (sig,))]
    steps += [("call", "norms", (x64[:n],)) for n in lengths]
    report = receive(tmp_path, pickle.dumps({"fns": fns, "steps": steps}))

    got = dict(zip(["mixed64", "mixed32", "spectrum"], report["results"][:3]))
    np.testing.assert_array_equal(got["mixed64"], sent["mixed64"])  # the same code, bit for bit
    np.testing.assert_allclose(got["mixed64"], mod.mixed64(x64, y64), rtol=1e-13, atol=1e-13)
    assert got["mixed32"].dtype == np.float32
    np.testing.assert_array_equal(got["mixed32"], sent["mixed32"])
    np.testing.assert_allclose(got["mixed32"], mod.mixed32(x32, y32), rtol=1e-5, atol=1e-5)
    assert got["spectrum"].dtype == np.complex128
    np.testing.assert_array_equal(got["spectrum"], sent["spectrum"])
    np.testing.assert_allclose(got["spectrum"], np.fft.rfft(sig), rtol=1e-12, atol=1e-12)
    for n, out in zip(lengths, report["results"][3:]):
        assert out.shape == (n,)
        np.testing.assert_allclose(out, mod.norms(x64[:n]), rtol=1e-13, atol=1e-13)

    for name, info in report["info"].items():
        assert info["compiles"] == 0 and info["shipped"] >= 1, (name, info)
        assert info["calls"]["eager"] == 0, (name, info)
    assert report["info"]["norms"]["shipped"] == 1 and len(report["info"]["norms"]["entries"]) == 1
    assert report["llvm_compiles"] == 0  # no LLVM compile in the whole process
    assert report["fft_builds"] == 0  # the FFT kernel libraries came with the rfft entry


# ---- 2. cloudpickle: lambdas and closures travel by value -----------------------------------------
def test_cloudpickled_lambda_and_closure(tmp_path):
    cloudpickle = pytest.importorskip("cloudpickle")

    def make(scale):
        def scaled(x):
            return np.tanh(x) * scale + np.mean(x)

        return scaled

    lam = aot.compile(lambda x, y: np.hypot(x, y) - np.min(y))
    closure = aot.compile(make(1.5))
    changed = make(0.25)
    stale = aot.compile(changed)  # compiled with scale 0.25, shipped with 4.0 in its cell
    x, y = np.linspace(-2, 2, 129), np.linspace(1, 3, 129)
    lam(x, y), closure(x), stale(x)
    changed.__closure__[0].cell_contents = 4.0
    steps = [("call", "lam", (x, y)), ("call", "closure", (x,)), ("call", "stale", (x,))]
    report = receive(tmp_path, cloudpickle.dumps({"fns": {"lam": lam, "closure": closure, "stale": stale},
                                                  "steps": steps}))

    got_lam, got_closure, got_stale = report["results"]
    np.testing.assert_allclose(got_lam, np.hypot(x, y) - np.min(y), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(got_closure, np.tanh(x) * 1.5 + np.mean(x), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(got_stale, np.tanh(x) * 4.0 + np.mean(x), rtol=1e-14, atol=1e-14)
    for name in ("lam", "closure"):
        info = report["info"][name]
        assert info["compiles"] == 0 and info["shipped"] == 1, (name, info)
    stale_info = report["info"]["stale"]  # its guard on the closure variable failed: compiled anew
    assert stale_info["shipped"] == 1 and stale_info["compiles"] == 1 and stale_info["guard_failures"] == 1
    assert report["llvm_compiles"] == 1


# ---- 3. a global scalar changed before pickling --------------------------------------------------
SCALED = """
import numpy as np

K = 2.0


def scaled(x):
    return x * K + 1.0
"""


def test_global_changed_before_pickling(tmp_path, module):
    cloudpickle = pytest.importorskip("cloudpickle")
    by_value, by_ref = module(SCALED), module(SCALED)
    x = np.linspace(0, 1, 65)
    fns = {"by_value": aot.compile(by_value.scaled), "by_ref": aot.compile(by_ref.scaled)}
    for f in fns.values():
        np.testing.assert_allclose(f(x), x * 2.0 + 1.0, rtol=1e-15, atol=0)
    by_value.K = by_ref.K = 3.0  # after the compile, before pickling
    steps = [("call", "by_value", (x,)),
             ("call", "by_ref", (x,)),  # the receiver imports by_ref's file afresh: K == 2.0 there
             ("set_global", "by_ref", "K", 3.0), ("call", "by_ref", (x,))]
    cloudpickle.register_pickle_by_value(by_value)  # its function and the globals it reads, as they are now
    try:
        data = cloudpickle.dumps({"fns": fns, "steps": steps})
    finally:
        cloudpickle.unregister_pickle_by_value(by_value)
    report = receive(tmp_path, data)

    got_value, got_ref2, got_ref3 = report["results"]
    np.testing.assert_allclose(got_value, x * 3.0 + 1.0, rtol=1e-15, atol=0)  # K == 3.0, as numpy reads it
    np.testing.assert_allclose(got_ref2, x * 2.0 + 1.0, rtol=1e-15, atol=0)
    np.testing.assert_allclose(got_ref3, x * 3.0 + 1.0, rtol=1e-15, atol=0)
    info = report["info"]["by_value"]
    assert info["shipped"] == 1 and info["guard_failures"] == 1 and info["compiles"] == 1
    assert any("global K == 3.0" in g for g in info["entries"][-1]["guards"])
    info = report["info"]["by_ref"]
    assert info["shipped"] == 1 and info["compiles"] == 1 and info["guard_failures"] == 1
    assert info["hits"] >= 1


# ---- 4. damaged object code -----------------------------------------------------------------------
def wave(x):
    return np.cos(x) * 3.0 + np.sum(x)


def _sent(n: int = 50, **kw):
    """aot.compile(wave) with one entry (called on a float64 array of length n) and that array."""
    f = aot.compile(wave, **kw)
    x = np.linspace(0, 1, n)
    f(x)
    return f, x


def _with_native(state: dict, **changes) -> dict:
    """A new sender's `state` whose first entry's native code has `changes`."""
    state = _received_afresh(state)
    entry = dict(state["entries"][0])
    entry["native"] = {**entry["native"], **changes}
    return {**state, "entries": [entry, *state["entries"][1:]]}


def test_damaged_object_code_is_refused():
    f, x = _sent()
    data = pickle.dumps(f)
    obj = shipping.state_of(f)["entries"][0]["native"]["object"]
    at = data.find(obj)
    assert at > 0 and data.find(obj, at + 1) < 0
    flipped = bytearray(data)
    flipped[at + len(obj) // 2] ^= 0x10  # one bit, in transit
    with pytest.raises(shipping.ShippedCodeError, match="SHA-256"):
        pickle.loads(bytes(flipped))

    state = shipping.state_of(f)
    short = obj[:len(obj) // 2]  # truncated, with the digest of what is left: the ELF check refuses it
    with pytest.raises(shipping.ShippedCodeError, match="shipped object code"):
        shipping.rebuild(_with_native(state, object=short, sha256=hashlib.sha256(short).hexdigest()))
    for junk in (b"", b"\x7fELF" + bytes(60), bytes(len(obj))):
        with pytest.raises(shipping.ShippedCodeError):
            shipping.rebuild(_with_native(state, object=junk, sha256=hashlib.sha256(junk).hexdigest()))
    good = pickle.loads(data)  # the intact pickle still loads and runs
    np.testing.assert_array_equal(good(x), f(x))
    assert good.cache_info()["shipped"] == 1 and good.cache_info()["compiles"] == 0


# ---- 5. code compiled for CPU features this machine lacks -----------------------------------------
def test_missing_cpu_feature_compiles_on_first_call():
    f, x = _sent()
    native = shipping.state_of(f)["entries"][0]["native"]
    state = _with_native(shipping.state_of(f), features=native["features"] + ",+aot-nonexistent-feature")
    g = shipping.rebuild(state)
    info = g.cache_info()
    assert info["shipped"] == 0 and info["compiles"] == 0 and len(info["entries"]) == 1
    np.testing.assert_allclose(g(x), wave(x), rtol=1e-14, atol=1e-14)
    assert g.cache_info()["compiles"] == 1
    np.testing.assert_allclose(g(x), wave(x), rtol=1e-14, atol=1e-14)
    assert g.cache_info()["compiles"] == 1 and g.cache_info()["hits"] == 2
    assert shipping.rebuild(state) is g  # received again (a Dask task each): no second entry
    assert len(g.cache_info()["entries"]) == 1


def test_entry_without_object_code_compiles_on_first_call():
    f, x = _sent(options={"disk_cache": False})  # no disk-cache copy: the graph travels, not the code
    state = shipping.state_of(f)
    assert state["entries"][0]["native"] is None
    data = pickle.dumps(f)
    g = pickle.loads(data)
    assert g.cache_info()["shipped"] == 0 and len(g.cache_info()["entries"]) == 1
    np.testing.assert_allclose(g(x), wave(x), rtol=1e-14, atol=1e-14)
    assert g.cache_info()["compiles"] == 1
    assert pickle.loads(data) is g and len(g.cache_info()["entries"]) == 1


# ---- 6. one function per sender in a process ------------------------------------------------------
def test_same_sender_received_twice_is_one_function():
    f, x = _sent(n=40)
    data = pickle.dumps(f)
    first, again = pickle.loads(data), pickle.loads(data)
    assert first is again and first is not f
    assert first.cache_info()["shipped"] == 1 and len(first.cache_info()["entries"]) == 1
    y = np.linspace(0, 2, 75)
    f(y)  # the sender compiles a second entry (another length)
    assert len(f.cache_info()["entries"]) == 2
    later = pickle.loads(pickle.dumps(f))
    assert later is first
    info = later.cache_info()
    assert info["shipped"] == 2 and len(info["entries"]) == 2  # the new entry joined, the first kept once
    for a in (x, y):
        np.testing.assert_allclose(later(a), wave(a), rtol=1e-14, atol=1e-14)
    assert later.cache_info()["compiles"] == 0
    assert pickle.loads(pickle.dumps(f)) is first and len(first.cache_info()["entries"]) == 2


# ---- 7. an aot.nn module: its entries read parameters and stay behind -----------------------------
def test_module_round_trip(tmp_path):
    from aot import nn

    net = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    cf = aot.compile(net)
    x = np.random.default_rng(2).standard_normal((5, 6))
    want = net(x)
    np.testing.assert_allclose(cf(x), want, rtol=1e-12, atol=1e-12)
    assert shipping.state_of(cf)["entries"] == []  # lifted parameters: retraced where received
    report = receive(tmp_path, pickle.dumps({"fns": {"net": cf}, "steps": [("call", "net", (x,)),
                                                                          ("call", "net", (x[:2],))]}))
    np.testing.assert_allclose(report["results"][0], want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(report["results"][1], want[:2], rtol=1e-12, atol=1e-12)
    info = report["info"]["net"]
    assert info["shipped"] == 0 and info["compiles"] >= 1 and info["calls"]["eager"] == 0
