"""The native fast call of dynamic-shape and static entries (runtime/buffers.py strided_fast_function,
the aot_call_strided trampoline of codegen/trampolines.py): sizes, strides and the simple size guards
checked natively, outputs made natively, the other guards and error paths unchanged."""
from __future__ import annotations

import sys
from unittest import mock

import numpy as np
import pytest

import aot
from aot.compiler import guards
from aot.compiler.guards import size_relations
from runtime.buffers import ArgPacker, ArgSpec, Signature, _DimPlan


def _chain(x, y):
    return np.sin(x) * np.exp(-y) + x * y / (1 + y * y)


def _entry_fast(f):
    (entry,) = f._entries
    assert entry.fast, "the entry has a fast path"
    return entry.fast


def _warm(f, *args):
    f(*args)
    f(*args)  # the second call builds and uses the entry's fast path
    return _entry_fast(f)


def test_simple_guards_need_no_python():
    f = aot.compile(_chain, dynamic=True)
    x, y = np.random.default_rng(0).random((2, 50))
    fast = _warm(f, x, y)
    assert type(fast).__name__ == "builtin_function_or_method"  # the trampoline itself
    for n in (2, 7, 1000):
        a, b = np.random.default_rng(n).random((2, n))
        np.testing.assert_allclose(fast(a, b), _chain(a, b), rtol=1e-13)
    assert f.cache_info()["compiles"] == 1


@pytest.mark.parametrize("layout", ["reversed", "step", "column", "transposed"])
def test_non_contiguous_inputs(layout):
    f = aot.compile(lambda x, y: x * y + 1.0, dynamic=True)
    base = np.random.default_rng(1).random((40, 30))
    pick = {"reversed": lambda a: a[::-1], "step": lambda a: a[::3, ::2], "column": lambda a: a[:, 3:17],
            "transposed": lambda a: a.T}[layout]
    x, y = pick(base), pick(base * 2)
    contiguous = _warm(f, np.ones(x.shape), np.ones(x.shape))
    assert contiguous(x, y) is None  # that entry's code reads its arguments as C-contiguous
    np.testing.assert_array_equal(f(x, y), x * y + 1.0)  # the layout guard fails: an entry for any layout
    f(x, y)
    fast = f._entries[-1].fast
    assert type(fast).__name__ == "builtin_function_or_method"
    np.testing.assert_array_equal(fast(x, y), x * y + 1.0)
    for shape in ((7, 5), (30, 40)):  # other sizes and layouts through the native strided call
        a, b = np.ones(shape)[::-1], np.arange(float(np.prod(shape))).reshape(shape).T.copy().T
        np.testing.assert_array_equal(fast(a, b), a * b + 1.0)


def test_broadcast_and_size_one_inputs():
    f = aot.compile(lambda a, b: a * b - b, dynamic=True)
    a, b = np.arange(12.0).reshape(3, 4), np.arange(4.0)
    fast = _warm(f, a, b)
    a2, b2 = np.arange(35.0).reshape(5, 7), np.arange(7.0)
    np.testing.assert_array_equal(fast(a2, b2), a2 * b2 - b2)
    assert fast(a2, np.arange(6.0)) is None  # the equal-size guard fails natively: not this entry
    with pytest.raises(ValueError):  # numpy's broadcast error, after the general path
        f(a2, np.arange(6.0))
    one = np.ones((1, 1))
    np.testing.assert_array_equal(f(one, np.ones(1)), one * np.ones(1) - np.ones(1))  # size 1: specialised
    col = np.broadcast_to(np.arange(5.0)[:, None], (5, 7))  # a stride-0 input
    np.testing.assert_array_equal(f(col, b2), col * b2 - b2)


def test_zero_size_inputs():
    f = aot.compile(lambda x: np.exp(x) + 1, dynamic=True)
    _warm(f, np.ones(9))
    for x in (np.ones(0), np.ones((0, 3)), np.ones((4, 0))):
        r = f(x)
        assert r.shape == x.shape and r.dtype == x.dtype


def test_bounds_guard_fails_natively_and_recompiles():
    def f(x):
        if x.shape[0] > 10:
            return x * 2
        return x + 1

    c = aot.compile(f, dynamic=True)
    fast = _warm(c, np.ones(20))
    assert type(fast).__name__ == "builtin_function_or_method"
    assert fast(np.ones(11)) is not None and fast(np.ones(10)) is None  # 11 <= s0, natively
    np.testing.assert_array_equal(c(np.ones(5)), np.ones(5) + 1)
    np.testing.assert_array_equal(c(np.ones(30)), np.ones(30) * 2)
    assert c.cache_info()["compiles"] == 2


def test_guards_python_keeps_and_output_expressions():
    def f(x, y):
        return np.concatenate([x, y]).reshape(-1, 2).sum(1)

    c = aot.compile(f, dynamic=True)
    fast = _warm(c, np.arange(6.0)[::-1], np.arange(4.0))
    assert type(fast).__name__ == "function"  # the output size is an expression: computed in Python
    x, y = np.arange(10.0)[::-1], np.arange(8.0)
    np.testing.assert_array_equal(fast(x, y), f(x, y))
    assert fast(np.arange(5.0), np.arange(4.0)) is None  # the divisibility guard, in Python


def test_tuple_outputs_and_reference_counts():
    c = aot.compile(lambda x: (x + 1, x * 2), dynamic=True)
    x = np.arange(6.0)
    fast = _warm(c, x)
    before = sys.getrefcount(x)
    for _ in range(200):
        r = fast(x)
    assert sys.getrefcount(x) == before
    assert type(r) is tuple and sys.getrefcount(r) == 2 and [sys.getrefcount(o) for o in r] == [3, 3]
    np.testing.assert_array_equal(r[0], x + 1)
    np.testing.assert_array_equal(r[1], x * 2)


def test_bad_inputs_still_take_the_general_path_or_raise():
    c = aot.compile(lambda x, y: x * y + 1.0, dynamic=True)
    fast = _warm(c, np.ones(8), np.ones(8))
    x = np.arange(8.0)
    unaligned = np.frombuffer(bytearray(8 * 8 + 1), np.float64, 8, offset=1)
    unaligned[:] = x
    for bad in ([1.0] * 8, x.astype(np.float32), x.reshape(8, 1), unaligned, x.astype(">f8")):
        assert fast(bad, x) is None
        np.testing.assert_array_equal(c(bad, x), np.asarray(bad) * x + 1.0)
    assert fast(x) is None and fast(x, x, x) is None
    with pytest.raises(TypeError):
        c(x)


def test_native_status_raises_numpys_error():
    c = aot.compile(lambda x, y: x ** y, dynamic=True)
    x = np.arange(5)
    fast = _warm(c, x, x)
    with pytest.raises(ValueError, match="negative integer powers"):
        fast(x, -x - 1)
    assert sys.getrefcount(x) == 2


def test_output_allocation_failure_raises_memory_error():
    c = aot.compile(lambda a, b: a * b, dynamic=True)
    fast = _warm(c, np.broadcast_to(np.ones(1), (3, 1)), np.broadcast_to(np.ones(1), (1, 4)))
    a = np.broadcast_to(np.ones(1), (2**22, 1))
    b = np.broadcast_to(np.ones(1), (1, 2**22))
    with pytest.raises(MemoryError):  # 128 TiB of output, refused by numpy's allocator
        fast(a, b)


@pytest.mark.parametrize("layout", ["contiguous", "reversed", "column", "transposed", "broadcast"])
def test_static_entries_call_the_trampoline_itself(layout):
    f = aot.compile(lambda x, y: (x * y + 1.0, x - y))
    base = np.random.default_rng(2).random((6, 6))
    wide = np.random.default_rng(3).random((6, 9))
    x = {"contiguous": base, "reversed": base[::-1], "column": wide[:, 2:8], "transposed": base.T,
         "broadcast": np.broadcast_to(base[0], (6, 6))}[layout]
    if layout != "contiguous":
        g = aot.compile(lambda x, y: (x * y + 1.0, x - y))
        assert _warm(g, base, base)(x, base) is None  # an entry specialised on C order refuses it
    fast = _warm(f, x, base)  # an entry for x's layout (any strides)
    assert type(fast).__name__ == "builtin_function_or_method"
    s, d = fast(x, base)
    np.testing.assert_array_equal(s, x * base + 1.0)
    np.testing.assert_array_equal(d, x - base)
    assert s.flags.c_contiguous and s.flags.writeable
    for bad in (base.astype(">f8"), [list(r) for r in base], base.astype(np.float32)):
        assert fast(bad, base) is None  # not an exact dtype or not an ndarray: the general path's case
        np.testing.assert_allclose(f(bad, base)[0], np.asarray(bad) * base + 1.0, rtol=1e-7)
    assert fast(base[:5], base[:5]) is None and fast(base) is None  # another shape, another count


def test_static_native_status_raises_numpys_error():
    c = aot.compile(lambda x, y: x ** y)
    x = np.arange(5)
    fast = _warm(c, x, x)
    assert type(fast).__name__ == "builtin_function_or_method"
    with pytest.raises(ValueError, match="negative integer powers"):
        fast(x, -x - 1)
    with pytest.raises(ValueError, match="negative integer powers"):
        c(x, -x - 1)
    assert sys.getrefcount(x) == 2


def test_static_unaligned_input_takes_the_general_path():
    c = aot.compile(lambda x: np.sqrt(x) * 2)
    x = np.arange(8.0)
    fast = _warm(c, x)
    unaligned = np.frombuffer(bytearray(8 * 8 + 1), np.float64, 8, offset=1)
    unaligned[:] = x
    assert fast(unaligned) is None
    np.testing.assert_array_equal(c(unaligned), np.sqrt(x) * 2)
    assert c.cache_info()["compiles"] == 1


def test_size_relations_parse_only_simple_comparisons():
    assert size_relations("L[1].shape[0] == L[0].shape[0]") == [("==", ("dim", 1, 0), ("dim", 0, 0))]
    assert size_relations("2 <= L[0].shape[1]") == [("<=", ("int", 2), ("dim", 0, 1))]
    assert size_relations("L[0].shape == (3, 4)") == [("==", ("dim", 0, 0), ("int", 3)),
                                                      ("==", ("dim", 0, 1), ("int", 4))]
    for text in ("L[0].shape[0] % 2 == 0", "L[0].shape[0] != 3", "L[0].shape[0] + L[1].shape[0] <= 9",
                 "1 < L[0].shape[0] < 9", "isinstance(L[0], ndarray)"):
        assert size_relations(text) is None


@pytest.mark.parametrize("text", ["L[0].shape == (1000,)", "L[3].shape == (3, 4, 5)", "L[0].shape == ()",
                                  "L[0].shape == (x, 4)", "L[0].shape == (3, -4)", "L[0].shape == (3,,)",
                                  "L[0].shape == (3, 4) or True", "L[x].shape == (3,)", "L[0].shape == (1_000,)"])
def test_static_shape_text_read_as_parsed(text):
    """The static shapes that _leaf_guards writes are read without a parse (a warm start): the same
    relations as the parse gives, or None where the text is anything else."""
    fast = guards._static_shape(text)
    with mock.patch.object(guards, "_static_shape", lambda t: None):
        parsed = size_relations(text)
    assert fast is None or fast == parsed
    assert (fast is not None) == (text in ("L[0].shape == (1000,)", "L[3].shape == (3, 4, 5)", "L[0].shape == ()"))


def test_dim_plan_rows():
    sig = Signature((ArgSpec(np.float64, ("s0", 3)), ArgSpec(np.float64, ("s1",))),
                    (ArgSpec(np.float64, ("s0", "s1 + 1")),), "f")
    texts = ["L[1].shape[0] == L[0].shape[0]", "2 <= L[0].shape[0]", "L[1].shape[0] < 100",
             "L[0].shape[0] <= L[1].shape[0]", "L[0].shape[0] % 2 == 0"]
    plan = _DimPlan(ArgPacker(sig), ([(t, size_relations(t)) for t in texts], {}))
    assert plan.leftover == texts[3:] and not plan.alloc  # an output size is an expression
    big = 2**63 - 1
    num = np.dtype(np.float64).num
    # input 0: (s0 in [2, 99], 3); input 1: s1 == meta[0] (input 0's dim 0); the output's rows
    assert plan.rows() == [num, 2, 99, -1, 3, 3, -1, num, 2, 99, 0, num, 0, big, 0, 0, big, -1]
