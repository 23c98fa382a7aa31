"""Plans built in native code (codegen/fft/planner.py) for lengths known only at run time:
the same plans as plan.py, and compiled graphs / libraries whose transform length is a symbol."""

import threading

import numpy as np
import pytest

import aot
from aot.fft._native import ffi, kernels
from aot.fft._plans import NATIVE_PLAN_MIN, DirectPlan
from codegen.fft.plan import bluestein_size, make_cplan, use_bluestein
from codegen.fft.planner import FIELD_BLUE, FIELD_HDR, FIELD_N, FIELD_N2, FIELD_TW, plan_names

PRECISIONS = {"f32": np.complex64, "f64": np.complex128}
LENGTHS = [1, 2, 3, 4, 5, 7, 8, 11, 16, 17, 49, 53, 97, 101, 128, 1000, 1009, 1536, 4096, 10007, 27648]


class Native:
    """The planner entries of one precision as cffi functions."""

    def __init__(self, precision: str):
        k = kernels(precision)
        self.k, self.ct = k, PRECISIONS[precision]
        names = plan_names(precision)
        addr = {w: k.address(n) for w, n in names.items()}
        t = k.ctype
        self.make, self.release = k.plan_make, k.plan_release
        self.get = ffi.cast("void *(*)(void *, int64_t)", addr["get"])
        self.exec = ffi.cast(f"int32_t (*)(void *, {t} *, {t} *, int64_t, int64_t, int64_t, int64_t, int64_t, "
                             f"int32_t, {t})", addr["exec"])

    def words(self, block):
        return ffi.cast("int64_t *", block)

    def table(self, block, field: int, dtype, count: int) -> np.ndarray:
        start = ffi.cast("char *", block) + self.words(block)[field]
        return np.frombuffer(ffi.buffer(start, count * np.dtype(dtype).itemsize), dtype).copy()

    def run(self, block, x: np.ndarray, forward: bool, scale: float = 1.0, axis: int = -1) -> np.ndarray:
        out = np.empty_like(x)
        its, ots = (s // x.itemsize for s in x.strides), (s // out.itemsize for s in out.strides)
        its, ots = list(its), list(ots)
        other = 0 if axis in (-1, 1) else 1
        ptr = ffi.cast(self.k.cptr, x.ctypes.data), ffi.cast(self.k.cptr, out.ctypes.data)
        rc = self.exec(block, *ptr, x.shape[other], its[axis], its[other], ots[axis], ots[other],
                       (1 if forward else 0) | 2, scale)
        assert rc == 0
        return out


@pytest.fixture(scope="module", params=sorted(PRECISIONS))
def native(request):
    return Native(request.param)


def _rms(got, want):
    return np.sqrt(np.mean(np.abs(got - want) ** 2) / np.mean(np.abs(want) ** 2))


@pytest.mark.parametrize("n", LENGTHS)
def test_same_plan_as_plan_py(native, n):
    """Factors, header and the Bluestein choice equal plan.py's; twiddles within an ulp or two."""
    block = native.make(n)
    try:
        w = native.words(block)
        assert w[FIELD_N] == n
        assert bool(w[FIELD_BLUE]) == use_bluestein(n)
        n2 = bluestein_size(n) if use_bluestein(n) else n
        assert w[FIELD_N2] == n2
        ref = make_cplan(n2, native.ct)
        header = native.table(block, FIELD_HDR, np.int64, ref.header.size)
        np.testing.assert_array_equal(header, ref.header)
        tw = native.table(block, FIELD_TW, native.ct, ref.twiddles.size)
        eps = np.finfo(native.ct).eps
        assert np.abs(tw - ref.twiddles).max(initial=0) <= 2 * eps
    finally:
        native.release(block)


@pytest.mark.parametrize("n", LENGTHS)
def test_exec_matches_numpy(native, n):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((3, n)) + 1j * rng.standard_normal((3, n))).astype(native.ct)
    block = native.make(n)
    try:
        tol = 4 * np.finfo(native.ct).eps * max(1.0, np.log2(n))
        want = np.fft.fft(x.astype(np.complex128), axis=1)
        assert _rms(native.run(block, x, True), want) < tol
        want = np.fft.ifft(x.astype(np.complex128), axis=1)
        assert _rms(native.run(block, x, False, 1.0 / n), want) < tol
        xt = np.ascontiguousarray(x.T)  # the transform along axis 0: strided rows
        assert _rms(native.run(block, xt, True, axis=0), np.fft.fft(xt.astype(np.complex128), axis=0)) < tol
    finally:
        native.release(block)


def test_cache_slot_reuses_and_replaces(native):
    slot = ffi.new("int64_t[2]")
    a, b = native.get(slot, 100), native.get(slot, 100)
    assert a == b and native.words(a)[2] == 3  # the slot's reference and two callers'
    native.release(a)
    native.release(b)
    c = native.get(slot, 97)  # replaces the slot's plan; `a` is freed by its last release
    assert c != a and native.words(c)[FIELD_N] == 97
    native.release(c)
    assert native.make(0) == ffi.NULL


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("n", [NATIVE_PLAN_MIN, 3 << 16, 40000, 5**7, 36992, 240240, 1 << 20, 3**10, 9 << 15,
                               27 * 5**5])
def test_native_direct_plans_are_plan_py_bits(n, dtype):
    """Eager plans from NATIVE_PLAN_MIN on come from the native planner, and a compiled graph bakes
    in plan.py's: the same header and the same twiddle bits (generic radices' tables too)."""
    got, ref = DirectPlan(n, np.dtype(dtype)), make_cplan(n, dtype)
    assert got.factors == ref.factors
    np.testing.assert_array_equal(got.header, ref.header)
    assert got.twiddles[: ref.twiddles.size].tobytes() == ref.twiddles.tobytes()


def test_a_bluestein_length_has_no_native_direct_plan():
    """The planner makes a Bluestein plan for such a length, running passes an eager process may
    not have loaded: a direct plan of it (valid, only slow) comes from plan.py."""
    n = 40008  # 8 * 3 * 1667
    assert use_bluestein(n)
    plan = DirectPlan(n, np.dtype(np.complex128))
    assert plan._block is None and plan.factors == make_cplan(n, np.complex128).factors


def _check(f, ref, inputs, rtol):
    for x in inputs:
        got, want = f(x), ref(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max(initial=1))


def _c(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


CASES = {
    "fft": (lambda x: np.fft.fft(x), lambda r, n: _c(r, n)),
    "ifft_axis0_ortho": (lambda x: np.fft.ifft(x, axis=0, norm="ortho"), lambda r, n: _c(r, n, 3)),
    "rfft": (lambda x: np.fft.rfft(x), lambda r, n: r.standard_normal((2, n))),
    "irfft": (lambda x: np.fft.irfft(x), lambda r, n: _c(r, 2, n)),
    "fft2": (lambda x: np.fft.fft2(x), lambda r, n: _c(r, n, n + 3)),
    "c64_forward": (lambda x: np.fft.fft(x.astype(np.complex64), norm="forward"), lambda r, n: _c(r, 3, n)),
    "f32_rfft": (lambda x: np.fft.rfft(x.astype(np.float32)), lambda r, n: r.standard_normal(n)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_symbolic_length(case):
    """One compiled entry serves every length (direct and Bluestein: 53, 97, 1009)."""
    fn, make = CASES[case]
    f = aot.compile(fn, dynamic=True)
    rng = np.random.default_rng(0)
    single = "64" in case or "32" in case
    _check(f, fn, [make(rng, n) for n in (16, 17, 53, 97, 100, 1009, 16)], 2e-5 if single else 1e-12)
    assert f.cache_info()["compiles"] == 1


def test_automatic_dynamic_length_compiles_twice():
    f = aot.compile(lambda x: np.abs(np.fft.fft(x)) ** 2)
    rng = np.random.default_rng(1)
    _check(f, lambda x: np.abs(np.fft.fft(x)) ** 2, [_c(rng, n) for n in range(100, 112)], 1e-12)
    assert f.cache_info()["compiles"] == 2


def test_threads_share_the_plan_slot():
    """Threads calling one compiled entry with alternating lengths race on its plan slot: each
    call must use a plan of its own length, and none may be freed under it."""
    f = aot.compile(lambda x: np.fft.fft(x), dynamic=True)
    rng = np.random.default_rng(2)
    inputs = {n: _c(rng, 4, n) for n in (64, 97, 120)}
    want = {n: np.fft.fft(x) for n, x in inputs.items()}
    f(inputs[64])
    errors = []

    def worker(k):
        for i in range(60):
            n = (64, 97, 120)[(i + k) % 3]
            if not np.allclose(f(inputs[n]), want[n], rtol=1e-12, atol=1e-9):
                errors.append(n)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_library_real_transforms_of_run_time_length(tmp_path):
    """Even run-time lengths take the half-length path (its table computed by the planner), odd
    ones the full transform; both in one library."""
    def spectrum(x):
        return np.fft.irfft(np.fft.rfft(x) * 0.5, n=x.shape[0])

    x = np.random.default_rng(3).random(16)
    lib = aot.aot_load(aot.aot_compile(spectrum, (x,), dynamic_shapes={"x": {0: aot.Dim("N", min=2, max=1 << 16)}},
                                       path=tmp_path / "spectrum.so"))
    for n in (16, 17, 2, 3, 1000, 1009, 4096):
        x = np.random.default_rng(n).random(n)
        np.testing.assert_allclose(lib(x), spectrum(x), rtol=1e-12, atol=1e-13)


def test_explicit_run_time_n_and_later_specialisation():
    """n=x.shape[0] stays symbolic; a size recorded in an attribute follows a symbol that a
    later guard specialises (the slice below)."""
    def fn(x):
        return aot.fft.irfft(aot.fft.rfft(x), n=x.shape[0]) + np.fft.fft(x, n=2 * x.shape[0]).real[:x.shape[0]]

    f = aot.compile(fn, dynamic=True)
    for n in (8, 9, 30):
        x = np.random.default_rng(n).random(n)
        np.testing.assert_allclose(f(x), fn(x), rtol=1e-12, atol=1e-12)
