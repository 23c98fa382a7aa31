"""ir.size_render: one walk of a size expression, three emitters (LLVM, C, Python) that compute
the same values as Python and sympy, division by zero included."""
from __future__ import annotations

import ctypes
import itertools
import math
import random
import shutil
import subprocess

import pytest
import sympy

from aot.export.cexpr import CEmitter, to_c
from aot.shapes.sympy_functions import FloorDiv
from ir.size_render import INTEGER_OPS, SizeEmitter, SizeRenderError, python_source, render
from ir.symbols import int_emittable

a, b, c = (sympy.Symbol(n, integer=True) for n in "abc")
SYMS = (a, b, c)

# integer size expressions: every emitter renders them
INTEGER = [
    a + 1, 2 * a - 3 * b + 1, a * b - c, -a, -2 * a, 7 - a, a**2, (a - b) ** 3, a * b * c,
    sympy.Mod(a, 3), sympy.Mod(a, -3), sympy.Mod(a, b), sympy.Mod(a - 5, b - 2), sympy.Mod(2 * a + 1, b * c),
    FloorDiv(a, b), FloorDiv(a, -3), FloorDiv(2 * a + 1, b - c), FloorDiv(-a, b + 1),
    sympy.floor(a / 2), sympy.floor((a + 1) / (b - 1)), sympy.floor(a / b) + sympy.Mod(a, b),
    sympy.floor(sympy.Rational(1, 3) * a + sympy.Rational(1, 2) * b),
    sympy.Max(a, b), sympy.Min(a, b - 1, 0), sympy.Max(a - 1, 0), sympy.Max(sympy.Mod(a, b), FloorDiv(a, c)),
    sympy.Min(FloorDiv(a, b), 3) * 2 - sympy.Max(c, 1),
]
# also C and Python (generated code specialises these: int_emittable is False)
C_AND_PYTHON = [sympy.ceiling(a / 3), sympy.ceiling((a - 1) / b)]
# guards: C and Python
BOOLEAN = [
    sympy.Eq(sympy.Mod(a, 2), 0), a + b > 3, sympy.Ne(FloorDiv(a, b), c), sympy.Le(2 * a, b - 1),
    sympy.And(a > 1, sympy.Ne(b, c)), sympy.Or(a < -2, sympy.Eq(sympy.Mod(b, c), 1)), sympy.Not(a >= b),
    sympy.true, sympy.false,
]
# Python only
PYTHON_ONLY = [a / 2, sympy.Rational(1, 3) * a + 1, 2**a, sympy.Abs(a - b), 0.5 * a, 1 / (a - b),
               sympy.floor(0.5 * a), sympy.Piecewise((a, b > 2), (c, True))]

SMALL = list(range(-7, 8))
BIG = [1 << 19, -(1 << 19) + 3, (1 << 19) - 1]


def _values(k=None):
    pts = list(itertools.product(SMALL, repeat=3))
    rng = random.Random(0)
    pts += [tuple(rng.choice(SMALL + BIG) for _ in range(3)) for _ in range(400)]
    return pts if k is None else rng.sample(pts, k)


def _python(expr):
    code = compile(python_source(expr), "<size>", "eval")

    def run(v):
        try:
            return int(eval(code, {"math": math, "__builtins__": {"max": max, "min": min}}, dict(zip("abc", v))))
        except ZeroDivisionError:
            return "zero"

    return run


def _sympy(expr, v):
    try:
        r = expr.subs(dict(zip(SYMS, v)))
    except ZeroDivisionError:
        return "zero"
    if r is sympy.true or r is sympy.false:
        return int(bool(r))
    return int(r) if r.is_Integer else "zero"  # zoo, nan: a zero divisor


def test_python_agrees_with_sympy():
    for expr in INTEGER + C_AND_PYTHON + BOOLEAN:
        run = _python(expr)
        for v in _values(60):
            got = run(v)
            if got != "zero":  # (sympy's subs makes 0/0 zero: Python's ZeroDivisionError is the contract)
                assert got == _sympy(expr, v), (expr, v, python_source(expr))


def test_python_text():
    assert python_source(2 * a - 3 * b + 1) == "2*a - 3*b + 1"
    assert python_source(sympy.floor(a / 2)) == "a // 2"
    assert python_source(sympy.ceiling(a / 3)) == "-(-a // 3)"
    assert python_source(sympy.Max(a - 1, 0)) == "max(0, a - 1)"
    assert python_source(sympy.Mod(a + b, 3)) == "(a + b) % 3"
    assert python_source(FloorDiv(a, b) * 2) == "2*(a // b)"
    assert python_source(sympy.floor(0.5 * a)) == "math.floor(0.5*a)"
    assert python_source(a - 2 * b, {"a": "L[0]", "b": "L[1]"}) == "L[0] - 2*L[1]"
    with pytest.raises(KeyError, match="no source for symbol c"):
        python_source(a + c, {"a": "A"})


def _llvm_functions(exprs):
    """{expr: f(values) -> int | "zero"} through codegen/llvm/sizes.py, JIT-compiled."""
    from llvmlite import ir as L

    from codegen.llvm.sizes import emit_size
    from codegen.llvm.types import I32, I64, PTR
    from runtime.jit import default_engine

    mod = L.Module(name="sizes")
    names = []
    for k, expr in enumerate(exprs):
        fn = L.Function(mod, L.FunctionType(I32, [PTR, PTR]), name=f"size{k}")
        b = L.IRBuilder(fn.append_basic_block("entry"))
        syms = {s.name: b.load(b.gep(fn.args[0], [L.Constant(I64, i)], source_etype=I64), typ=I64)
                for i, s in enumerate(SYMS)}

        def on_zero(bad, fn=fn, b=b):
            fail, ok = fn.append_basic_block("zero"), fn.append_basic_block("ok")
            b.cbranch(bad, fail, ok)
            b.position_at_end(fail)
            b.ret(L.Constant(I32, 4))
            b.position_at_end(ok)

        b.store(emit_size(b, expr, syms, on_zero), fn.args[1])
        b.ret(L.Constant(I32, 0))
        names.append(fn.name)
    eng = default_engine()
    got = eng.add(str(mod), entries=names)
    proto = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64))
    out = {}
    for expr, name in zip(exprs, names):
        f = proto(eng.address(got[name]))

        def run(v, f=f):
            res = ctypes.c_int64()
            rc = f((ctypes.c_int64 * 3)(*v), ctypes.byref(res))
            assert rc in (0, 4)
            return "zero" if rc == 4 else res.value

        out[expr] = run
    return out


def _c_functions(exprs, tmp_path):
    """{expr: f(values) -> int | "zero"} through aot/export/cexpr.py and the wrapper's helpers,
    with every helper call checked for a zero divisor (where the library's entry fails)."""
    from runtime.abi_wrapper import SIZE_HELPERS

    lines = ["#include <stdint.h>", "#define aot_floordiv aot_floordiv_impl", "#define aot_mod aot_mod_impl",
             SIZE_HELPERS, "#undef aot_floordiv", "#undef aot_mod", "static int zero;",
             "static int64_t aot_floordiv(int64_t x, int64_t y) {",
             "  zero |= y == 0;",
             "  return aot_floordiv_impl(x, y);",
             "}",
             "static int64_t aot_mod(int64_t x, int64_t y) { zero |= y == 0; return aot_mod_impl(x, y); }"]
    for k, expr in enumerate(exprs):
        lines += [f"int64_t size{k}(const int64_t *v, int *z) {{",
                  "  int64_t a = v[0], b = v[1], c = v[2]; (void)a; (void)b; (void)c;",
                  f"  zero = 0; int64_t r = {to_c(expr)}; *z = zero; return r;", "}"]
    src, so = tmp_path / "sizes.c", tmp_path / "sizes.so"
    src.write_text("\n".join(lines) + "\n")
    subprocess.run(["cc", "-std=c11", "-O1", "-shared", "-fPIC", "-Wall", "-Werror", "-o", str(so), str(src)],
                   check=True)
    lib = ctypes.CDLL(str(so))
    out = {}
    for k, expr in enumerate(exprs):
        f = getattr(lib, f"size{k}")
        f.restype, f.argtypes = ctypes.c_int64, [ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int)]

        def run(v, f=f):
            z = ctypes.c_int()
            r = f((ctypes.c_int64 * 3)(*v), ctypes.byref(z))
            return "zero" if z.value else r

        out[expr] = run
    return out


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_three_emitters_compute_the_same_values(tmp_path):
    llvm = _llvm_functions(INTEGER)
    cfun = _c_functions(INTEGER + C_AND_PYTHON + BOOLEAN, tmp_path)
    pts = _values()
    for expr in INTEGER + C_AND_PYTHON + BOOLEAN:
        py = _python(expr)
        for v in pts:
            want = py(v)
            assert cfun[expr](v) == want, (expr, v, to_c(expr))
            if expr in llvm:
                assert llvm[expr](v) == want, (expr, v)
    assert any(_python(e)(v) == "zero" for e in INTEGER for v in pts)  # the corpus divides by zero


def test_what_each_emitter_rejects():
    from llvmlite import ir as L

    from codegen.llvm.sizes import LlvmSizes
    from codegen.llvm.types import I64

    fn = L.Function(L.Module(), L.FunctionType(I64, []), name="f")
    one = {s.name: L.Constant(I64, 1) for s in SYMS}
    em = LlvmSizes(L.IRBuilder(fn.append_basic_block()), one, lambda bad: None)
    for expr in INTEGER:
        assert int_emittable(expr), expr
    for expr in C_AND_PYTHON + BOOLEAN + PYTHON_ONLY:
        assert not int_emittable(expr), expr
        with pytest.raises(SizeRenderError, match="cannot emit size expression"):
            render(expr, em)
    for expr in PYTHON_ONLY:
        with pytest.raises(ValueError, match="in C"):
            render(expr, CEmitter())
        python_source(expr)
    # the LLVM emitter implements exactly the integer leaves that int_emittable accepts
    own = {m for m in vars(LlvmSizes) if not m.startswith("_") and callable(getattr(SizeEmitter, m, None))}
    assert own - {"unsupported"} == set(INTEGER_OPS)


def test_guard_errors_are_not_implemented():
    with pytest.raises(NotImplementedError):
        python_source(sympy.zoo + a)
