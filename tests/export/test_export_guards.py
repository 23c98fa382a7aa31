"""Guards of aot.export: decisions on dynamic dims, recorded, shown, and checked by `.module()` and
by the compiled library; decisions that pin or narrow a Dim refused with a suggested fix."""

from __future__ import annotations

import numpy as np
import pytest

import aot
from aot.export import ExportError
from aot.export.guards import readable

from .conftest import needs_cc


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).random(shape)


def branchy(x, y):
    s = x.sum(axis=0) - y.sum(axis=0) if x.shape[0] > y.shape[0] else x.sum(axis=0) + y.sum(axis=0)
    return s * 2 if x.shape[0] % 2 == 0 else s


def guarded(x, y):
    """reshape(2, -1) needs an even length; x[1:] + y needs len(y) == len(x) - 1; x[1::3] needs
    nothing (its length is (N + 1) // 3)."""
    return x.reshape(2, -1) * 2.0, x[1:] + y, x[1::3] * 3.0


def _export(fn, shapes, dims):
    return aot.export(fn, tuple(_rand(*s, seed=i) for i, s in enumerate(shapes)), dynamic_shapes=dims)


def test_branches_on_sizes_are_guards_checked_by_module():
    N, M = aot.Dim("N"), aot.Dim("M")
    ep = _export(branchy, [(8, 3), (5, 3)], ({0: N}, {0: M}))
    assert [readable(g) for g in ep.guards] == ["N > M", "N % 2 == 0"]
    assert "guards: [N > M, N % 2 == 0]" in str(ep)
    run = ep.module()
    for n, m in ((8, 5), (4, 3), (100, 1)):
        x, y = _rand(n, 3, seed=n), _rand(m, 3, seed=m)
        np.testing.assert_allclose(run(x, y), branchy(x, y), rtol=1e-12)
    with pytest.raises(ValueError, match=r"sizes \(M = 7, N = 6\) break the guard N > M"):
        run(_rand(6, 3), _rand(7, 3))
    with pytest.raises(ValueError, match=r"sizes \(N = 7\) break the guard N % 2 == 0"):
        run(_rand(7, 3), _rand(5, 3))


def test_slices_and_reshapes_keep_dims_dynamic_under_guards():
    A, B = aot.Dim("A"), aot.Dim("B")
    strided = _export(lambda x: x[::2] * 2, [(8, 3)], ({0: A},))
    assert strided.guards == [] and [str(s) for s in strided.output_specs] == ["out: f64[floor(A/2+1/2),3]"]
    shifted = _export(lambda x, y: x[1:] + y, [(8, 3), (7, 3)], ({0: A}, {0: B}))
    assert [readable(g) for g in shifted.guards] == ["A - 1 == B"]
    assert [str(s) for s in shifted.input_specs] == ["x: f64[A,3]", "y: f64[B,3]"]  # as declared
    halves = _export(lambda x: x.reshape(2, -1), [(8, 3)], ({0: A},))
    assert "A % 2 == 0" in [readable(g) for g in halves.guards]
    assert [str(s) for s in halves.output_specs] == ["out: f64[2,floor(3*A/2)]"]
    for n in (5, 6, 13):
        x = _rand(n, 3, seed=n)
        np.testing.assert_allclose(strided.module()(x), x[::2] * 2, rtol=1e-12)
        np.testing.assert_allclose(shifted.module()(x, x[:-1]), x[1:] + x[:-1], rtol=1e-12)
    np.testing.assert_array_equal(halves.module()(_rand(6, 3)), _rand(6, 3).reshape(2, -1))
    with pytest.raises(ValueError, match=r"\(A = 7, B = 7\) break the guard A - 1 == B"):
        shifted.module()(_rand(7, 3), _rand(7, 3))
    with pytest.raises(ValueError, match=r"\(A = 9\) break the guard A % 2 == 0"):
        halves.module()(_rand(9, 3))


@needs_cc
def test_library_checks_guards(tmp_path):
    from runtime.abi import STATUS_CODE

    ep = _export(guarded, [(6, 3), (5, 3)], ({0: aot.Dim("N", max=1 << 16)}, {0: aot.Dim("M")}))
    assert {"N % 2 == 0", "N - 1 == M"} <= {readable(g) for g in ep.guards}
    lib = aot.aot_load(aot.aot_compile(ep, path=tmp_path / "guarded.so"))
    assert "Guard:     N % 2 == 0" in (tmp_path / "guarded.h").read_text()
    for n in (4, 10, 1000):
        x, y = _rand(n, 3, seed=n), _rand(n - 1, 3, seed=n + 1)
        for got, want in zip(lib(x, y), guarded(x, y), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError, match=r"guarded: the input sizes break the guard N % 2 == 0 \(N = 7\)"):
        lib(_rand(7, 3), _rand(6, 3))
    # the C entry points themselves: a non-zero code, and NAME_last_error() names the guard
    desc, _keep = lib._describe((_rand(6, 3), _rand(6, 3)))
    shapes = lib.ffi.new("int64_t[]", 16)
    assert lib._shapes(desc, 2, shapes) == STATUS_CODE["SHAPE_MISMATCH"]
    msg = lib.ffi.string(lib._error()).decode()
    assert msg == "guarded: the input sizes break the guard N - 1 == M (M = 6, N = 6)"


def test_pinning_a_dim_is_refused_with_a_fix():
    x = _rand(8, 3)
    with pytest.raises(
        ExportError,
        match=r"x.shape\[0\] \(Dim 'N'\) is specialised to 8 by the guard N == 8 "
        r"\(at .*test_export_guards.py.*make x.shape\[0\] static",
    ):
        aot.export(lambda x, y: x + y, (x, _rand(8, 3)), dynamic_shapes=({0: aot.Dim("N")}, None))
    with pytest.raises(ExportError, match=r"specialised to 8 by the guard N == 8"):
        aot.export(lambda x: x * len(x), (x,), dynamic_shapes={"x": {0: aot.Dim("N")}})
    # N >= 8 with max=8 leaves one size: make it static, or lift the max
    with pytest.raises(
        ExportError, match=r"specialised to 8 by the guard N >= 8.*or use aot.Dim\('N', min=8\)"
    ):
        aot.export(
            lambda x: x * 2 if x.shape[0] >= 8 else x, (x,), dynamic_shapes={"x": {0: aot.Dim("N", max=8)}}
        )
    with pytest.raises(
        ExportError, match=r"pinned to the few sizes where N // 2 == 4.*make x.shape\[0\] static"
    ):
        aot.export(lambda x: x.reshape(x.shape[0] // 2, -1), (x,), dynamic_shapes={"x": {0: aot.Dim("N")}})


def test_narrowing_a_dim_suggests_its_range():
    def f(x):
        return x * 2 if x.shape[0] > 3 else x

    with pytest.raises(ExportError, match=r"satisfies the guard N > 3 .*use aot.Dim\('N', min=4, max=50\)"):
        aot.export(f, (_rand(8, 3),), dynamic_shapes={"x": {0: aot.Dim("N", max=50)}})
    with pytest.raises(ExportError, match=r"satisfies the guard N <= 3 .*use aot.Dim\('N', max=3\)"):
        aot.export(f, (_rand(2, 3),), dynamic_shapes={"x": {0: aot.Dim("N")}})
    ep = aot.export(f, (_rand(8, 3),), dynamic_shapes={"x": {0: aot.Dim("N", min=4)}})  # the fix
    assert ep.guards == []
    np.testing.assert_allclose(ep.module()(_rand(4, 3)), f(_rand(4, 3)), rtol=1e-12)
