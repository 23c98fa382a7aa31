"""The eager fast path (aot/fft/_fast.py): a prepared call per (kind, shape, strides, dtype, n, axis,
norm) must give numpy's result and the general path's, and an entry must never serve a call whose
key differs in anything that matters."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import aot.fft as afft
from aot import fx
from aot.fft import _api, _fast

from ._eager import RNG, close, data


def _check(name, a, **kw):
    """Twice through aot.fft (the second call runs the prepared entry), against numpy and _api."""
    before = a.copy()
    want, general = getattr(np.fft, name)(a, **kw), getattr(_api, name)(a, **kw)
    for _ in range(2):
        got = getattr(afft, name)(a, **kw)
        close(got, want)
        close(got, general)
        assert not np.shares_memory(got, a)
    np.testing.assert_array_equal(a, before)  # the input is never written


def _entry(name, a, n=None, axis=None, norm=None):
    return _fast.entry(name, a, n, axis, norm)


# views of one (6, 40) array: each has its own strides, offsets or both
VIEWS = {
    "contiguous": lambda x: x,
    "every other": lambda x: x[:, ::2],
    "reversed": lambda x: x[::-1, ::-1],
    "transposed": lambda x: x.T,
    "column slice": lambda x: x[:, 3:35],
    "row of a 2-D array": lambda x: x[2],
    "strided row": lambda x: x[1, ::3],
    "reversed row": lambda x: x[0, ::-1],
}


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_c2c_views(name, dtype, view):
    _check(name, VIEWS[view](data((6, 40), dtype)))


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rfft_views(dtype, view):
    _check("rfft", VIEWS[view](data((6, 40), dtype)))


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_irfft_views(dtype, view):
    _check("irfft", VIEWS[view](data((6, 40), dtype)))


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "fftn", "ifftn", "rfft2", "rfftn",
                                  "irfft2", "irfftn"])
def test_norms(name, norm):
    dtype = np.float64 if name.startswith("rfft") else np.complex128
    _check(name, data((8, 24), dtype), norm=norm)


@pytest.mark.parametrize("kw", [{"n": 24}, {"n": 16}, {"n": 40}, {"n": 15}, {"axis": 0}, {"axis": -2},
                                {"n": 5, "axis": 0}, {"axis": 1, "n": 32}])
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft"])
def test_n_and_axis(name, kw):
    """n equal to, shorter (crop) and longer (zero padding) than the axis, odd n, other axes."""
    dtype = np.float64 if name == "rfft" else np.complex128
    _check(name, data((8, 24), dtype), **kw)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft"])
def test_torch_dim(name):
    dtype = np.float64 if name == "rfft" else np.complex128
    x = data((6, 10), dtype)
    for dim, axis in ((0, 0), (-1, -1), (1, 1)):
        for _ in range(2):
            close(getattr(afft, name)(x, dim=dim), getattr(np.fft, name)(x, axis=axis))
    with pytest.raises(TypeError, match="dim"):
        getattr(afft, name)(x, axis=0, dim=1)
    close(getattr(afft, name)(x, axis=1, dim=1), getattr(np.fft, name)(x, axis=1))


@pytest.mark.parametrize("shape", [(1,), (2,), (1, 1), (3, 1), (1, 8), (0, 8), (8, 1, 16)])
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft"])
def test_small_and_empty(name, shape):
    dtype = np.float64 if name == "rfft" else np.complex128
    _check(name, data(shape, dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.dtype(">f8"), np.dtype(">c16"), np.int64])
def test_fft_of_other_dtypes(dtype):
    """Real input is converted (numpy's complex dtype), byte-swapped and integer input too."""
    x = (RNG.standard_normal((4, 16)) * 10).astype(dtype)
    _check("fft", x)
    _check("fft2", x)


def test_read_only_input():
    x = data((4, 32), np.complex128)
    x.setflags(write=False)
    _check("fft", x)
    r = data((4, 32), np.float64)
    r.setflags(write=False)
    _check("rfft", r)
    _check("irfft", np.fft.rfft(r))


@pytest.mark.parametrize("name", ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "rfftn", "irfft2", "irfftn"])
@pytest.mark.parametrize("shape", [(16, 24), (24,), (3, 8, 12), (5, 6, 7)])
def test_nd(name, shape):
    dtype = np.float64 if name.startswith("rfft") else np.complex128
    x = data(shape, dtype)
    if len(shape) == 1 and name.endswith("2"):
        with pytest.raises(Exception) as want:
            getattr(np.fft, name)(x)
        with pytest.raises(type(want.value)):
            getattr(afft, name)(x)
        return
    _check(name, x)
    _check(name, x[..., ::-1])


def test_fast_path_is_taken_for_the_common_cases():
    """The cases the issue is about have prepared entries after one call (else this file would
    only test the general path)."""
    cases = [("fft", data(1024, np.complex128)), ("fft", data(1024, np.complex64)),
             ("ifft", data((16, 64), np.complex128)), ("rfft", data(1024, np.float64)),
             ("irfft", data(513, np.complex128)), ("fft", data(256, np.float64)),
             ("fft", data((8, 40), np.complex128)[:, ::2]), ("fft2", data((32, 32), np.complex128)),
             ("rfft2", data((32, 32), np.float64)), ("fftn", data((4, 8, 16), np.complex128)),
             ("ifftn", data((6, 8, 10), np.complex64)[:, ::-1]), ("rfftn", data((4, 8, 16), np.float64)),
             ("irfft2", data((32, 17), np.complex128)), ("irfftn", data((5, 6, 9), np.complex64)[::-1])]
    for name, x in cases:
        getattr(afft, name)(x)
        assert _entry(name, x) is not None, (name, x.dtype, x.shape, x.strides)
    x = data(64, np.complex128)
    afft.fft(x, norm="ortho", n=32)
    assert _entry("fft", x, n=32, norm="ortho") is not None
    middle = data((5, 12, 7), np.complex128)  # batch dims that do not merge: one call per outer index
    afft.fft(middle, axis=1)
    assert len(_entry("fft", middle, axis=1)[5]) == 4


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("view", [lambda x: x, lambda x: x[:, ::2, ::-1], lambda x: x.transpose(1, 2, 0)])
def test_three_d_axes(axis, view):
    _check("fft", view(data((5, 12, 14), np.complex128)), axis=axis)
    _check("ifft", view(data((5, 12, 14), np.complex64)), axis=axis, n=4)


def test_general_path_cases_have_no_entry():
    x = data(64, np.int64)  # other dtypes convert on the general path
    afft.fft(x, n=100)
    assert _entry("fft", x, n=100) is None
    planes = data((64, 2048), np.complex128)  # n-D transforms of threaded work: their own ways
    afft.fft2(planes)
    assert _entry("fft2", planes) is None
    prime = data(40009, np.complex128)  # Bluestein beyond 512 KB of convolution: numpy steps
    afft.fft(prime)
    assert _entry("fft", prime) is None


@pytest.mark.parametrize("shape, axis, dtype", [((1009,), -1, np.complex128), ((3, 97, 70), 1, np.complex64),
                                                ((256, 1009), -1, np.complex128)])
def test_bluestein_runs_a_prepared_job(shape, axis, dtype):
    """Below 512 KB of convolution a Bluestein length has an entry: the planner's job on the plan
    block (a batch on the pool), the general path's bits, and numpy's values."""
    x = data(shape, dtype)
    for name in ("fft", "ifft"):
        _check(name, x, axis=axis)
        assert _entry(name, x, axis=axis) is not None
        assert np.array_equal(getattr(afft, name)(x, axis=axis), getattr(_api, name)(x, axis=axis))


def test_entries_are_not_reused_across_keys():
    """Same shape with other strides, dtype, data or byte order: each call gets its own answer."""
    base = data((8, 64), np.complex128)
    views = [base[:, :32], base[:, ::2], base[:, 32:], base[:, 1:33], base[:, :32].copy(),
             base[:, :32].astype(np.complex64), base[:, :32].astype(">c16")]
    assert len({v.shape for v in views}) == 1
    for _ in range(2):
        for v in views:
            for name in ("fft", "ifft"):
                got, want = getattr(afft, name)(v), getattr(np.fft, name)(v)
                close(got, want)
    r = data(64, np.float64)
    for _ in range(2):  # one length, two data pointers (the second not 16-byte aligned as complex)
        for x in (r[:32], r[1:33], r[:32].astype(np.float32)):
            close(afft.rfft(x), np.fft.rfft(x))


def test_argument_values_that_equal_valid_ones_still_fail():
    """A float n or axis equals an int key but numpy rejects it; bad norms and n fail the same way
    after a valid call prepared an entry."""
    x = data(16, np.complex128)
    afft.fft(x, n=16, axis=0)
    for kw in ({"n": 16.0}, {"axis": 0.0}, {"n": 0}, {"norm": "bad"}, {"axis": 1}):
        with pytest.raises(Exception) as want:
            np.fft.fft(x, **kw)
        with pytest.raises(type(want.value)):
            afft.fft(x, **kw)
    with pytest.raises(TypeError):
        afft.rfft(x)
    zero_d = np.array(1.0 + 0j)  # no axis -1
    with pytest.raises(Exception) as want:
        np.fft.fft(zero_d)
    with pytest.raises(type(want.value)):
        afft.fft(zero_d)


def test_threads_get_their_own_entries():
    x = data((4, 256), np.complex128)
    want = np.fft.fft(x)
    errors = []

    def work():
        try:
            for _ in range(200):
                close(afft.fft(x), want)
        except AssertionError as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_plan_cache_clear_drops_entries_and_stats_count_reuse():
    x = data(128, np.complex128)
    afft.fft(x)
    assert _entry("fft", x) is not None
    hits = afft.plan_cache.stats().hits
    afft.fft(x)
    assert afft.plan_cache.stats().hits == hits + 1
    afft.plan_cache.clear()
    assert _entry("fft", x) is None
    close(afft.fft(x), np.fft.fft(x))


def test_tracing_records_one_call_of_the_public_function():
    def f(x):
        return afft.fft(x, n=8, norm="ortho") + afft.rfft2(x.real)[..., :1]

    gm = fx.symbolic_trace(f)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert afft.fft in targets and afft.rfft2 in targets
    node = next(n for n in gm.graph.nodes if n.target is afft.fft)
    assert node.kwargs == {"n": 8, "norm": "ortho"}
    x = data((4, 8), np.complex128)
    close(gm(x), f(x))


def test_broadcast_inputs():
    """Zero strides (np.broadcast_to): the kernel reads one row or element many times."""
    row = data(32, np.complex128)
    _check("fft", np.broadcast_to(row, (4, 32)))
    _check("fft", np.broadcast_to(row[:, None], (32, 6)), axis=0)
    _check("fft", np.broadcast_to(np.complex64(1 + 2j), (16,)))
    _check("rfft", np.broadcast_to(data(16, np.float64), (3, 16)))


def test_without_thunks_every_call_takes_the_general_path(monkeypatch):
    """When numpy's array struct is not as probed there are no thunks: no entries, same results."""
    from aot.fft._native import kernels

    afft.plan_cache.clear()
    for precision in ("f32", "f64"):
        monkeypatch.setattr(kernels(precision), "thunks", None)
    x = data((4, 64), np.complex128)
    _check("fft", x)
    _check("rfft", x.real.copy())
    assert _entry("fft", x) is None
    afft.plan_cache.clear()  # the keys recorded as general-path ones must not outlive the patch


def test_irfftn_work_buffer_is_reused_safely():
    """irfft2/irfftn run their complex passes in a work buffer the entry keeps: calls with the same
    key and other data, and round trips, must not see each other's values."""
    xs = [data((12, 16), np.float64) for _ in range(3)]
    specs = [np.fft.rfft2(x) for x in xs]
    for _ in range(2):
        for x, spec in zip(xs, specs):
            close(afft.irfft2(spec), np.fft.irfft2(spec))
            close(afft.irfft2(afft.rfft2(x)), x)
            close(afft.irfftn(spec[::-1]), np.fft.irfftn(spec[::-1]))
    assert _entry("irfft2", specs[0]) is not None


@pytest.mark.parametrize("n, dtype, norm", [
    (1 << 16, np.complex64, None),  # two halves
    (1 << 16, np.complex128, "ortho"),  # four steps, with a work array
    (1 << 17, np.complex64, "forward"),  # four steps
])
def test_long_transforms_run_their_split_job_from_an_entry(n, dtype, norm):
    """One long transform, split in halves or four steps over the pool's threads: a prepared
    "job" call (no ~25 us of argument handling), the same bits as the general path's, any thread count."""
    from aot.fft import _exec

    x = data(n, dtype)
    for name in ("fft", "ifft"):
        general = getattr(_api, name)(x, norm=norm)
        getattr(afft, name)(x, norm=norm)
        entry = _entry(name, x, norm=norm)
        assert entry is not None and entry[3] is afft._native.loaded(_exec._precision(x.dtype)).thunks["job"]
        hits = _fast.local.cache.hits
        np.testing.assert_array_equal(getattr(afft, name)(x, norm=norm), general)
        out = np.empty_like(general)
        assert getattr(afft, name)(x, norm=norm, out=out) is out
        np.testing.assert_array_equal(out, general)
        assert _fast.local.cache.hits == hits + 2
        close(general, getattr(np.fft, name)(x, norm=norm))
    threads = _exec.num_threads()
    try:
        for t in (1, 3):
            _exec.set_num_threads(t)  # drops the entries: their jobs hold the count
            assert _entry("fft", x, norm=norm) is None
            for _ in range(2):
                np.testing.assert_array_equal(afft.fft(x, norm=norm), _api.fft(x, norm=norm))
    finally:
        _exec.set_num_threads(threads)


@pytest.mark.parametrize(("shape", "axis", "dtype"), [
    ((64, 2048), -1, np.complex128), ((2048, 64), 0, np.complex64), ((4, 16, 2048), -1, np.complex128),
    ((8, 1024, 16), 1, np.complex64), ((300, 1000), -1, np.float64)])
def test_threaded_batches_run_prepared_jobs(shape, axis, dtype):
    """A batch with enough work for the pool runs _exec.run_direct's job from its entry (one per
    index of the dims the job does not cover), on any thread count the general path's bits."""
    from aot.fft import _exec

    x = data(shape, dtype)
    want = _api.fft(x, axis=axis)
    threads = _exec.num_threads()
    try:
        for t in (1, 2, 3, 5):
            _exec.set_num_threads(t)
            afft.fft(x, axis=axis)
            entry = _entry("fft", x, axis=axis)
            kind = "job" if t > 1 else "c2c"
            assert entry is not None and entry[3] is afft._native.loaded(_exec._precision(want.dtype)).thunks[kind]
            hits = _fast.local.cache.hits
            np.testing.assert_array_equal(afft.fft(x, axis=axis), want)
            out = np.empty_like(want)
            assert afft.fft(x, axis=axis, out=out) is out
            np.testing.assert_array_equal(out, want)
            assert _fast.local.cache.hits == hits + 2
    finally:
        _exec.set_num_threads(threads)
    close(want, np.fft.fft(x, axis=axis))


def test_long_real_input_is_converted_then_transformed():
    for dtype in (np.float32, np.float64):  # halves need another output than input: the general path
        x = data(1 << 16, dtype)
        want = _api.fft(x)
        for _ in range(2):
            np.testing.assert_array_equal(afft.fft(x), want)


def test_a_bluestein_job_that_ran_out_of_memory_raises():
    """The thunks cannot raise: the entry's pass after a Bluestein job reads the job's status word
    (set by a row that could not allocate its buffer) and raises MemoryError, once."""
    from aot.fft._exec import _PLAN_JOB

    x = data(1009, np.complex128)
    afft.fft(x)
    entry = _entry("fft", x)
    assert entry is not None
    jobs = [k for k in entry[6] if isinstance(k, np.ndarray) and k.dtype == np.int64 and k.size == len(_PLAN_JOB)]
    assert len(jobs) == 1
    jobs[0][_PLAN_JOB["status"]] = 1  # as a failed row leaves it
    with pytest.raises(MemoryError, match="Bluestein transform of length 1009"):
        afft.fft(x)
    close(afft.fft(x), np.fft.fft(x))  # the status was reset


@pytest.mark.parametrize("name", ["fftn", "ifftn", "fft2", "ifft2", "rfftn", "rfft2", "irfftn", "irfft2"])
@pytest.mark.parametrize("shape, s, axes", [
    ((6, 8, 10), None, (0, 2)), ((6, 8, 10), None, [1, 2]), ((6, 8, 10), None, (-1, 0)),
    ((16, 12), (16, 8), (0, 1)), ((4, 5, 6), (4, 6), (0, 2)), ((5, 6, 7, 8), None, (1, 3)),
])
def test_nd_with_s_and_axes_run_prepared_entries(name, shape, s, axes):
    """Given `s` and `axes` key entries of their own: the general path's bits, numpy's results."""
    if name.endswith("2") and len(axes) != 2:
        return
    x = data(shape, np.float64 if name.startswith("rfft") else np.complex128)
    kw = {"s": s, "axes": axes}
    _check(name, x, **kw)
    np.testing.assert_array_equal(getattr(afft, name)(x, **kw), getattr(_api, name)(x, **kw))
    assert _fast.entry(name, x, None if s is None else tuple(s), tuple(axes)) is not None  # (a real axis
    # not the array's last: a composed entry, tests/fft/test_composed.py)


@pytest.mark.parametrize("name", ["fftn", "ifft2", "rfftn", "irfft2"])
@pytest.mark.parametrize("shape, s, axes", [((4, 5, 6), (3, 6), (0, 2)), ((4, 5, 6), (9, 8), (1, 2)),
                                            ((8, 6), (16, 12), (0, 1)), ((8, 6), (5, 7), (1, 0))])
def test_nd_resizing_a_later_axis_runs_a_chain(name, shape, s, axes):
    """s that crops or pads an axis other than the first one transformed: a chain of one-axis
    entries, each axis resized just before its pass as on the general path (the same batches, the
    same bits, zeros' signs included)."""
    from aot.fft._composed import Chain

    x = data(shape, np.float64 if name.startswith("rfft") else np.complex128)
    _check(name, x, s=s, axes=axes)
    got, want = getattr(afft, name)(x, s=s, axes=axes), getattr(_api, name)(x, s=s, axes=axes)
    assert got.tobytes() == want.tobytes()
    assert type(_fast.entry(name, x, s, axes)) is Chain


def test_fft2_axes_none_is_every_axis():
    y = data((4, 5, 6), np.complex128)
    for axes in (None, (0, 1, 2)):  # fft2's axes=None: every axis, as numpy
        np.testing.assert_array_equal(afft.fft2(y, axes=axes), _api.fft2(y, axes=axes))
        close(afft.fft2(y, axes=axes), np.fft.fft2(y, axes=axes))


@pytest.mark.parametrize("name", ["irfftn", "irfft2", "hfftn", "hfft2"])
def test_one_value_per_row_asks_for_zero_points(name):
    """irfftn's default length of a last axis of one value is 0: numpy's ValueError (the fast path
    once divided by it)."""
    x = data((3, 1), np.complex128)
    for _ in range(2):
        with pytest.raises(ValueError, match="Invalid number of FFT data points"):
            getattr(afft, name)(x)


_ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
_N_D = ["fftn", "ifftn", "fft2", "ifft2", "rfftn", "rfft2", "irfftn", "irfft2", "hfftn", "hfft2", "ihfftn", "ihfft2"]


def _random_call(rng):
    """(name, array, kwargs) of a random call: 1 to 3 dims, views, dtypes, n/s, axes, norms."""
    nd = int(rng.integers(1, 4))
    shape = tuple(int(rng.integers(1, 12)) for _ in range(nd))
    dtype = [np.float64, np.float32, np.complex128, np.complex64][int(rng.integers(4))]
    x = data(shape, dtype)
    x = [x, x[::-1], np.swapaxes(x, 0, -1), x[..., ::2]][int(rng.integers(4))]
    kw = {"norm": [None, "ortho", "forward", "backward"][int(rng.integers(4))]}
    if rng.random() < 0.5:
        name = _ONE_D[int(rng.integers(len(_ONE_D)))]
        if rng.random() < 0.6:
            kw["axis"] = int(rng.integers(-nd, nd))
        if rng.random() < 0.5:
            kw["n"] = int(rng.integers(1, 20))
        return name, x, kw
    name = _N_D[int(rng.integers(len(_N_D)))]
    k = 2 if name.endswith("2") else int(rng.integers(1, nd + 1))
    if k > nd:
        return None
    axes = [int(a) for a in rng.permutation(nd)[:k]]
    if rng.random() < 0.7 or name.endswith("2"):
        kw["axes"] = tuple(axes) if rng.random() < 0.5 else axes
        if rng.random() < 0.5:
            kw["s"] = tuple(int(rng.integers(1, 16)) for _ in axes)
    return name, x, kw


def test_random_calls_give_the_general_paths_bits_and_errors():
    """A seeded sweep of calls (the kinds of aot.fft with n/s, axes, norms, dtypes and views): twice
    each, so the second runs its prepared entry; the general path's bytes or its exception."""
    rng = np.random.default_rng(14)
    for _ in range(600):
        call = _random_call(rng)
        if call is None:
            continue
        name, x, kw = call
        try:
            want = getattr(_api, name)(x, **kw)
        except Exception as e:  # noqa: BLE001 - whatever the general path raises, the fast one must too
            for _ in range(2):
                with pytest.raises(type(e)):
                    getattr(afft, name)(x, **kw)
            continue
        for _ in range(2):
            got = getattr(afft, name)(x, **kw)
            assert (got.shape, got.dtype) == (want.shape, want.dtype), (name, x.shape, x.strides, kw)
            assert got.tobytes() == want.tobytes(), (name, x.shape, x.strides, x.dtype, kw)
