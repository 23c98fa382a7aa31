"""aot.fft's native call tables (aot/fft/_tables.py): a repeated eager call runs as one builtin that
checks the array against its entries, makes the output and runs the kernels. An entry must serve
only arrays of its exact key, and every result must equal numpy's."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import aot.fft as afft
from aot.fft import _fast, _tables
from ir.abi_slots import FFT_CALL_ENTRIES, FFT_CALL_HEADER

from ._eager import close, data


def _native(kind, args=(None, None, None)):
    k = _tables.kind(kind)
    return k.default if args == (None, None, None) else k.keyed.get(args)


def _entries(kind, args=(None, None, None)) -> int:
    t = _native(kind, args)
    return 0 if t is None else int(t.ctx[FFT_CALL_HEADER.n_entries])


@pytest.fixture(autouse=True)
def _fresh():
    afft.plan_cache.clear()
    yield
    afft.plan_cache.clear()


CASES = [  # (kind, input shape, input dtype)
    ("fft", (64,), np.complex128), ("fft", (4, 32), np.complex64), ("ifft", (100,), np.complex128),
    ("rfft", (3, 64), np.float64), ("rfft", (128,), np.float32), ("irfft", (4, 33), np.complex128),
    ("fft2", (16, 8), np.complex128), ("ifftn", (4, 6, 8), np.complex64), ("rfft2", (8, 16), np.float64),
    ("rfftn", (4, 4, 8), np.float32), ("irfft2", (8, 9), np.complex128), ("irfftn", (4, 6, 5), np.complex64),
]


@pytest.mark.parametrize("kind, shape, dtype", CASES)
def test_repeated_default_calls_run_natively(kind, shape, dtype):
    x = data(shape, dtype)
    want = getattr(np.fft, kind)(x)
    first = getattr(afft, kind)(x)
    assert _entries(kind) == 1
    hits = _tables.hits()
    python_hits = sum(c.hits for c in list(_fast._CACHES.values()))
    results = [getattr(afft, kind)(x) for _ in range(3)]
    assert _tables.hits() == hits + 3
    assert sum(c.hits for c in list(_fast._CACHES.values())) == python_hits  # no Python entry ran
    for got in [first, *results]:
        close(got, want)
        assert got.flags.c_contiguous and got.flags.writeable and got.flags.owndata
    assert len({id(r) for r in results}) == 3 and not np.shares_memory(results[0], results[1])


@pytest.mark.parametrize("kwargs", [{"norm": "ortho"}, {"axis": 0}, {"n": 48},
                                    {"norm": "forward", "axis": -1}, {"dim": 0}])
def test_other_arguments_have_tables_of_their_own(kwargs):
    x = data((6, 48), np.complex128)
    want = np.fft.fft(x, **{("axis" if k == "dim" else k): v for k, v in kwargs.items()})
    for _ in range(3):
        close(afft.fft(x, **kwargs), want)
    args = (kwargs.get("n"), kwargs.get("axis", kwargs.get("dim")), kwargs.get("norm"))
    assert _entries("fft", args) == 1 and _entries("fft") == 0
    close(afft.fft(x), np.fft.fft(x))  # the default table is another one


def test_an_entry_serves_only_its_exact_key():
    x = data((8, 32), np.complex128)
    afft.fft(x)
    others = [
        x[:, :16], x[:4], x.T.copy(), np.asfortranarray(x), x[::2], x[:, ::2],  # shape or strides
        x.astype(np.complex64), x.astype(x.dtype.newbyteorder()),  # descr
        np.frombuffer(bytearray(x.nbytes + 8), np.complex128, x.size, offset=8).reshape(8, 32),  # unaligned
        x[None],  # rank
    ]
    others[-2][...] = x
    for y in others:
        close(afft.fft(y), np.fft.fft(y))
        close(afft.fft(y), np.fft.fft(y))


def test_subclasses_and_other_objects_take_the_general_path():
    class Sub(np.ndarray):
        pass

    x = data(32, np.complex128)
    afft.fft(x)
    s = x.view(Sub)
    close(np.asarray(afft.fft(s)), np.fft.fft(x))
    close(afft.fft(list(x)), np.fft.fft(x))
    with pytest.raises(TypeError):
        afft.fft(x, n=32.0)  # numpy's error, although a table of n=32 ...
    afft.fft(x, n=32)
    afft.fft(x, n=32)
    with pytest.raises(TypeError):
        afft.fft(x, n=32.0)  # ... exists now


def test_a_full_table_replaces_entries_and_stays_right():
    xs = [data(8 + k, np.complex128) for k in range(FFT_CALL_ENTRIES + 5)]
    wants = [np.fft.fft(x) for x in xs]
    for _ in range(3):
        for x, want in zip(xs, wants):
            close(afft.fft(x), want)
    assert _entries("fft") == FFT_CALL_ENTRIES


def test_many_argument_keys_stay_right():
    x = data(128, np.complex128)  # every n below crops it
    for _ in range(2):
        close(afft.fft(x, norm="ortho"), np.fft.fft(x, norm="ortho"))
    assert "ortho" in _tables.kind("fft").by_norm
    for n in range(2, 2 + 2 * _tables._MAX_KEYED):
        for _ in range(2):
            close(afft.fft(x, n=n), np.fft.fft(x, n=n))
    keyed = _tables.kind("fft").keyed
    newest = (1 + 2 * _tables._MAX_KEYED, None, None)
    assert len(keyed) == _tables._MAX_KEYED and newest in keyed
    assert "ortho" not in _tables.kind("fft").by_norm  # replaced with its keyed table, the oldest
    close(afft.fft(x, norm="ortho"), np.fft.fft(x, norm="ortho"))
    afft.plan_cache.clear()
    assert not keyed and not _tables.kind("fft").by_norm
    afft.fft(x, norm="ortho")
    assert _entries("fft", (None, None, "ortho")) == 1


def test_large_calls_are_not_installed():
    big = data(_tables._MAX_ELEMENTS * 2, np.complex128)
    for _ in range(2):
        close(afft.fft(big), np.fft.fft(big))
    assert _entries("fft") == 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind, shape", [("fft", (96,)), ("ifft", (3, 40)), ("fft2", (8, 12)),
                                         ("ifftn", (2, 4, 6))])
def test_real_input_of_complex_transforms_is_widened_natively(kind, shape, dtype):
    x = data(shape, dtype)
    want = getattr(np.fft, kind)(x)
    assert want.dtype == (np.complex64 if dtype == np.float32 else np.complex128)
    getattr(afft, kind)(x)
    hits = _tables.hits()
    for _ in range(2):
        close(getattr(afft, kind)(x), want)
    assert _tables.hits() == hits + 2
    close(getattr(afft, kind)(x[..., ::-1]), getattr(np.fft, kind)(x[..., ::-1]))  # not contiguous


def test_clear_drops_the_tables():
    x = data(64, np.complex128)
    afft.fft(x)
    afft.fft(x, norm="ortho")
    assert _entries("fft") == 1 and _entries("fft", (None, None, "ortho")) == 1
    afft.plan_cache.clear()
    assert _entries("fft") == 0 and _entries("fft", (None, None, "ortho")) == 0
    close(afft.fft(x), np.fft.fft(x))


def test_native_and_python_entries_of_one_key_do_not_share_buffers():
    """irfft2's work buffer and the scratch: the table's copy of an entry has its own, so a call
    through _fast's entry of the same key (another thread's path) cannot disturb it."""
    specs = [np.fft.rfft2(data((12, 16), np.float64)) for _ in range(3)]
    for s in specs:
        afft.irfft2(s)
    for _ in range(2):
        for s in specs:
            close(afft.irfft2(s), np.fft.irfft2(s))
            close(_fast.call("irfft2", s, None, None, None), np.fft.irfft2(s))


def test_threads_share_tables_safely():
    shapes = [(64,), (4, 32), (128,), (2, 96)]
    xs = [data(s, np.complex128) for s in shapes]
    wants = [np.fft.fft(x) for x in xs]
    errors = []

    def work(offset):
        try:
            for i in range(300):
                j = (i + offset) % len(xs)
                close(afft.fft(xs[j]), wants[j])
        except AssertionError as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert _entries("fft") == len(shapes)
