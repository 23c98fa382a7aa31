"""FFTs fused with their elementwise producer and consumer (kernel.fft, ir/passes/fuse_fft.py,
codegen/graph_fft_fused.py): compiled results against numpy, the fused IR's structure, its text
round trip, its verifier and the reference interpreter."""
from __future__ import annotations

import numpy as np
import pytest

import aot
import ir
from aot.compiler.llvm_backend import build_ir
from ir import dtypes as D
from ir.interp import run_func
from ir.parser import parse_module
from ir.passes import run_pipeline
from ir.printer import print_module
from ir.types import TensorType
from ir.verifier import VerifyError, verify
from tests.fft.test_compiled import _check, _data

C64, C128, F32, F64 = np.complex64, np.complex128, np.float32, np.float64


def _fused_ir(fn, *args) -> list:
    """The ops of `fn`'s function after the backend's pipeline."""
    return list(build_ir(aot.explain(fn, *args).graphs[0]).funcs["main"].body.ops)


def _kernels(ops, kind=None) -> list:
    return [op for op in ops if op.name == "kernel.fft" and kind in (None, op.attrs["kind"])]


def _same_fused(fn, *args, prologue=True, epilogue=False):
    """Compiled fn agrees with numpy and its IR holds one kernel.fft with these parts."""
    _check(aot.compile(fn)(*args), fn(*args))
    ops = _fused_ir(fn, *args)
    assert not [op.name for op in ops if op.name in ("fft", "rfft", "irfft", "kernel.elementwise")]
    (k,) = _kernels(ops)
    assert _has_prologue(k) == prologue and _has_epilogue(k) == epilogue


def _has_prologue(k) -> bool:
    return len(k.regions[0].block.ops) > 1


def _has_epilogue(k) -> bool:
    return len(k.regions[1].block.ops) > 1


def _window(n, dtype=F64):
    return np.hanning(n + 2)[1:-1].astype(dtype)


# --- compiled against numpy -----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [C64, C128, F32, F64])
@pytest.mark.parametrize("axis", [-1, 0])
def test_window_before_fft(dtype, axis):
    x = _data((12, 16), dtype)
    w = _window(x.shape[axis], np.float32 if dtype in (C64, F32) else F64)
    w = w if axis == -1 else w[:, None]
    _same_fused(lambda a: np.fft.fft(a * w, axis=axis), x)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("axis", [-1, 0])
def test_window_before_rfft(dtype, axis):
    x = _data((10, 24), dtype)
    w = _window(x.shape[axis], dtype)
    _same_fused(lambda a: np.fft.rfft(a * (w if axis == -1 else w[:, None]), axis=axis), x)


@pytest.mark.parametrize("dtype", [C64, C128])
@pytest.mark.parametrize("power", [lambda X: abs(X) ** 2, lambda X: np.abs(X) ** 2,
                                   lambda X: X.real ** 2 + X.imag ** 2])
def test_power_spectrum_after_fft(dtype, power):
    x = _data((6, 32), dtype)
    _same_fused(lambda a: power(np.fft.fft(a)), x, prologue=False, epilogue=True)


@pytest.mark.parametrize(("kind", "dtype"), [("fft", C64), ("fft", C128), ("fft", F32), ("fft", F64),
                                           ("rfft", F32), ("rfft", F64)])
def test_window_and_power_spectrum(kind, dtype):
    x = _data((5, 40), dtype)
    w = _window(40, np.float32 if dtype in (C64, F32) else F64)
    fn = getattr(np.fft, kind)
    _same_fused(lambda a: np.abs(fn(a * w)) ** 2, x, epilogue=True)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("n", [64, 97, 142])  # even (half-length path), odd (Bluestein), Bluestein half
def test_convolution_multiply_fuses_into_irfft_load(dtype, n):
    x = _data((3, n), dtype)
    h = np.exp(-np.arange(n // 2 + 1) / 5.0).astype(dtype)

    def conv(a):
        return np.fft.irfft(np.fft.rfft(a) * h, n=n)

    _check(aot.compile(conv)(x), conv(x))
    ops = _fused_ir(conv, x)
    assert [op.name for op in ops[:-1]] == ["rfft", "kernel.fft"]
    (k,) = _kernels(ops, "irfft")
    assert k.attrs["inputs"] == 2 and _has_prologue(k) and not _has_epilogue(k)


def test_windowed_convolution_fuses_both_transforms():
    x = _data((4, 48), F64)
    w, h = _window(48), np.exp(-np.arange(25) / 3.0)

    def conv(a):
        return np.abs(np.fft.irfft(np.fft.rfft(a * w) * h, n=48))

    _check(aot.compile(conv)(x), conv(x))
    ops = _fused_ir(conv, x)
    rf, irf = _kernels(ops, "rfft"), _kernels(ops, "irfft")
    assert len(rf) == 1 and _has_prologue(rf[0]) and not _has_epilogue(rf[0])
    assert len(irf) == 1 and _has_prologue(irf[0]) and _has_epilogue(irf[0])


@pytest.mark.parametrize("dtype", [C64, C128, F32, F64])
def test_fft2_with_window(dtype):
    """The window runs in the first transform's load, the power spectrum in the last one's store."""
    x = _data((12, 20), dtype)
    w2 = np.outer(_window(12), _window(20)).astype(np.float32 if dtype in (C64, F32) else F64)
    if dtype in (C64, C128):
        fn, parts = (lambda a: np.abs(np.fft.fft2(a * w2)) ** 2), [(True, False), (False, True)]
    else:
        fn, parts = (lambda a: np.fft.rfft2(a * w2)), [(True, False)]
    _check(aot.compile(fn)(x), fn(x))
    ops = _fused_ir(fn, x)
    assert [(_has_prologue(k), _has_epilogue(k)) for k in _kernels(ops)] == parts
    assert not [op for op in ops if op.name == "kernel.elementwise"]


@pytest.mark.parametrize("n", [6, 9, 13])  # truncated, equal, padded along an axis of 9
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_rank3_padding_truncation(n, axis):
    """The general path: work buffer filled by the prologue, result written by the epilogue."""
    x = _data((9, 9, 9), F64)
    w = _window(9).reshape([-1 if k == axis else 1 for k in range(3)])
    _same_fused(lambda a: np.abs(np.fft.fft(a * w, n=n, axis=axis)) * 2.0, x, epilogue=True)
    _same_fused(lambda a: np.fft.rfft(a * w + 1.0, n=n, axis=axis) * 1j, x, epilogue=True)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_transcendental_prologue(axis):
    """Across rows (axis not last) such a prologue is evaluated in the input's layout first."""
    x = _data((6, 9, 10), F64)
    _same_fused(lambda a: np.fft.fft(np.sin(a) * np.exp(a), axis=axis), x)
    _same_fused(lambda a: np.fft.rfft(np.exp(a), n=8, axis=axis), x.astype(F32))


def test_symbolic_transform_length():
    """One compiled entry serves every length: the fused passes follow the run-time length."""
    f = aot.compile(lambda a: np.abs(np.fft.rfft(a * 0.5 + 1.0)) ** 2, dynamic=True)
    for m in (16, 17, 30, 97):
        x = _data((3, m), F64)
        _check(f(x), np.abs(np.fft.rfft(x * 0.5 + 1.0)) ** 2)
    assert f.cache_info()["compiles"] == 1


def test_operands_broadcast_along_the_transform_axis():
    """A per-row gain (stride 0 along the axis) before, a per-bin filter of another rank after."""
    x = _data((6, 32), C128)
    gain = np.linspace(0.5, 2.0, 6)[:, None]
    filt = _data((17,), C128)
    _same_fused(lambda a: np.fft.fft(a * gain, n=17, axis=-1) * filt, x, epilogue=True)
    _same_fused(lambda a: np.fft.ifft(a * gain, axis=0, norm="ortho") - 1.0, x, epilogue=True)


def test_consumer_with_two_outputs():
    x = _data((3, 30), F64)

    def fn(a):
        p = np.abs(np.fft.rfft(a * 0.5)) ** 2
        return p, np.sqrt(p)

    got, want = aot.compile(fn)(x), fn(x)
    for g, v in zip(got, want):
        _check(g, v)
    (k,) = _kernels(_fused_ir(fn, x))
    assert len(k.results) == 2


def test_symbolic_batch():
    w = _window(32)
    f = aot.compile(lambda a: np.abs(np.fft.rfft(a * w)) ** 2, dynamic=True)
    for rows in (2, 5, 1):
        x = _data((rows, 32), F64)
        _check(f(x), np.abs(np.fft.rfft(x * w)) ** 2)


def test_strided_and_transposed_arguments_and_results():
    base = _data((16, 40), C128)
    w = _window(16)[:, None]
    f = aot.compile(lambda a: (np.abs(np.fft.fft(a * w, axis=0)) ** 2).T)
    for x in (base[:, ::3][:, :9], base[::-1, 5:14], np.asfortranarray(base[:, :9])):
        _check(f(x), (np.abs(np.fft.fft(x * w, axis=0)) ** 2).T)


# --- what stays unfused -----------------------------------------------------------------------------
def test_producer_read_twice_stays_unfused():
    x = _data((4, 32), F64)
    w = _window(32)

    def fn(a):
        y = a * w
        return np.fft.rfft(y), y

    got, want = aot.compile(fn)(x), fn(x)
    for g, v in zip(got, want):
        _check(g, v)
    ops = _fused_ir(fn, x)
    assert [op.name for op in ops[:-1]] == ["kernel.elementwise", "rfft"]


def test_result_read_twice_stays_unfused():
    x = _data((4, 32), C128)

    def fn(a):
        X = np.fft.fft(a)
        return np.abs(X) ** 2, X

    got, want = aot.compile(fn)(x), fn(x)
    for g, v in zip(got, want):
        _check(g, v)
    assert [op.name for op in _fused_ir(fn, x)[:-1]] == ["fft", "kernel.elementwise"]


def test_consumer_over_a_broadcast_result_stays_unfused():
    """A consumer iterating a larger shape than the transform's result would repeat it."""
    x = _data((32,), C128)
    y = _data((3, 32), C128)

    def fn(a, b):
        return np.fft.fft(a) * b

    _check(aot.compile(fn)(x, y), fn(x, y))
    assert [op.name for op in _fused_ir(fn, x, y)[:-1]] == ["fft", "kernel.elementwise"]


# --- the op in the IR ---------------------------------------------------------------------------------
def _spectrum_module():
    """@main(x: f32[4,16], w: f32[16], h: c64[9]) -> |rfft(x * w) * h|^2 and its square root."""
    m = ir.Module("t")
    f, b = ir.new_func(m, "main", [TensorType(D.float32, (4, 16)), TensorType(D.float32, (16,)),
                                   TensorType(D.complex64, (9,))])
    x, w, h = f.args
    spec = b.rfft(b.mul(x, w), axis=1, n=None, norm="ortho")
    p = b.square(b.abs(b.mul(spec, h)))
    b.ret(p, b.sqrt(p))
    verify(m)
    return m, f


def _spectrum_inputs():
    return [_data((4, 16), F32), _data((16,), F32), _data((9,), C64)]


def test_pass_makes_one_kernel_and_keeps_meaning():
    m, f = _spectrum_module()
    args = _spectrum_inputs()
    run_pipeline(m, "fuse", verify_each=True)
    before = run_func(f, *args)
    run_pipeline(m, "fuse_fft", verify_each=True)
    after = run_func(f, *args)
    (k,) = [op for op in f.body.ops if op.name != "return"]
    assert k.name == "kernel.fft" and k.attrs["kind"] == "rfft" and k.attrs["inputs"] == 2
    assert k.operands == f.args and len(k.results) == 2
    want = np.abs(np.fft.rfft(args[0] * args[1], norm="ortho") * args[2]) ** 2
    for got, ref, exp in zip(after, before, (want, np.sqrt(want))):
        assert got.dtype == ref.dtype == exp.dtype
        np.testing.assert_array_equal(got, ref)
        np.testing.assert_allclose(got, exp, rtol=1e-5, atol=1e-5 * float(exp.max()))


def test_text_round_trip():
    m, _ = _spectrum_module()
    run_pipeline(m, "fuse,fuse_fft", verify_each=True)
    text = print_module(m)
    assert '"kernel.fft"' in text and 'kind = "rfft"' in text
    again = parse_module(text)
    verify(again)
    assert print_module(again) == text
    args = _spectrum_inputs()
    for a, b in zip(run_func(m.funcs["main"], *args), run_func(again.funcs["main"], *args)):
        np.testing.assert_array_equal(a, b)


def test_compiled_ir_module_matches_the_interpreter():
    from aot.compiler.llvm_backend import load_module

    m, f = _spectrum_module()
    run_pipeline(m, "fuse,fuse_fft", verify_each=True)
    args = _spectrum_inputs()
    native = load_module(m, {"disk_cache": False}).returning_tuples()
    for got, ref in zip(native(*args), run_func(f, *args)):
        _check(got, ref, single=True)


def _kernel(m):
    return next(op for op in m.funcs["main"].walk() if op.name == "kernel.fft")


def test_verifier_rejects_malformed_kernels():
    m, _ = _spectrum_module()
    run_pipeline(m, "fuse,fuse_fft", verify_each=True)
    k = _kernel(m)
    k.attrs["inverse"] = True
    with pytest.raises(VerifyError, match="inverse"):
        verify(m)
    k.attrs["inverse"] = False
    k.attrs["kind"] = "dct"
    with pytest.raises(VerifyError, match="kind"):
        verify(m)
    k.attrs["kind"] = "rfft"
    k.attrs["inputs"] = 1
    with pytest.raises(VerifyError, match="arguments"):
        verify(m)
    k.attrs["inputs"] = 2
    verify(m)


def test_parser_rejects_wrong_result_types():
    m, _ = _spectrum_module()
    run_pipeline(m, "fuse,fuse_fft", verify_each=True)
    lines = print_module(m).splitlines()
    k = next(i for i, line in enumerate(lines) if "kernel.fft" in line)
    lines[k] = lines[k].replace("-> (f32[4,9], f32[4,9])", "-> (f32[4,16], f32[4,9])")
    text = "\n".join(lines)
    with pytest.raises(ValueError, match="inferred"):
        parse_module(text)


def test_fusion_log_names_the_parts(caplog):
    m, _ = _spectrum_module()
    with caplog.at_level("INFO", logger="aot.fusion"):
        run_pipeline(m, "fuse,fuse_fft")
    assert "kernel.fft rfft along axis 1: prologue [mul], epilogue [mul, abs, square, sqrt]" in caplog.text
