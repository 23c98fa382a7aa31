"""Sources of the golden IR text files: each entry builds a Module with ir.Builder.

`tools/update_golden.py` prints every entry into tests/golden/ir/<name>.air; tests/ir/test_text.py
checks that the printer still produces exactly that text and that the text round-trips through the
parser. Ops come from the registry (`import aot.ops`); `test.attrs` below is a test-only op that
carries one attribute of every kind the text form supports.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

import aot.ops  # noqa: F401  (registers the op rows)
import ir
from ir import dtypes as D
from ir.opdef import OPDEFS, OpDef, register
from ir.symbols import size_symbol, sympy
from ir.types import ScalarType, TensorType
from tests.ir.op_samples import all_ops_module

if "test.attrs" not in OPDEFS:
    register(OpDef("test.attrs", None, infer=lambda types, attrs, regions: [], num_results=0,
                   attrs={k: None for k in ("i", "neg", "f", "special", "c", "b", "s", "none", "dt", "t",
                                            "nested", "sym", "arr", "scalar")},
                   doc="test only: carries one attribute of every kind"))


def elementwise_chain() -> ir.Module:
    m = ir.Module("elementwise")
    t = TensorType(D.float32, (4, 8))
    f, b = ir.new_func(m, "f", [t, t], ["x", "y"])
    x, y = f.args
    p = b.mul(x, y)
    q = b.add(p, x)
    e = b.exp(b.neg(q))
    b.ret(b.sub(e, y))
    return m


def _symbolic_module(name: str) -> tuple[ir.Module, object, object]:
    m = ir.Module(name)
    s0, s1 = size_symbol("s0"), size_symbol("s1")
    m.declare_symbol(ir.SymbolInfo("s0", 2, None, 64))
    m.declare_symbol(ir.SymbolInfo("s1", 2, 16, 8))
    sp = sympy()
    m.guards.append(sp.Ge(s0, 2))
    m.guards.append(sp.Eq(sp.Mod(s0, 2), 0))
    m.guards.append(sp.And(sp.Le(s1, 16), sp.Ne(s1, s0)))
    return m, s0, s1


def symbolic_dims() -> ir.Module:
    m, s0, s1 = _symbolic_module("demo")
    t = TensorType(D.float32, (s0, 128))
    f, b = ir.new_func(m, "f", [t, t, TensorType(D.float64, (s1,))], ["x", "y", "z"])
    x, y, z = f.args
    c = b.concatenate(b.mul(x, y), x, axis=0)
    r = b.reshape(c, shape=(2 * s0 * 128,))
    sp = b.rfft(x, axis=1, n=128, norm="backward")
    padded = b.pad(z, pad_width=((1, 2),), value=0.0)
    b.ret(r, sp, b.sum(padded, axes=(0,), keepdims=False))
    return m


def _kernel(b: ir.Builder, name: str, operands: list, attrs: dict, body) -> ir.Operation:
    block = ir.Block([ScalarType(v.type.dtype) for v in operands], ["a", "b", "c"][:len(operands)])
    body(ir.Builder(block), *block.args)
    return b.create(name, operands, attrs, regions=[ir.Region([block])])


def kernel_elementwise() -> ir.Module:
    m, s0, _ = _symbolic_module("fused")
    f, b = ir.new_func(m, "f", [TensorType(D.float32, (s0, 128)), TensorType(D.float32, (128,))], ["x", "y"])

    def body(kb: ir.Builder, a, c):
        kb.yield_(kb.exp(kb.mul(a, c)))

    op = _kernel(b, "kernel.elementwise", list(f.args), {"shape": (s0, 128)}, body)
    b.ret(op.result)
    return m


def multi_result() -> ir.Module:
    m = ir.Module("multi")
    t = TensorType(D.float64, (3, 5))
    f, b = ir.new_func(m, "f", [t, t], ["x", "y"])

    def body(kb: ir.Builder, a, c):
        s = kb.add(a, c)
        kb.yield_(s, kb.mul(s, a))

    op = _kernel(b, "kernel.elementwise", list(f.args), {"shape": (3, 5)}, body)
    op.results[0].name_hint, op.results[1].name_hint = "s", "p"
    b.ret(*op.results)
    return m


def kernel_reduce() -> ir.Module:
    m, s0, _ = _symbolic_module("reduce")
    t = TensorType(D.float32, (s0, 64))
    f, b = ir.new_func(m, "dot_rows", [t, t], ["x", "y"])

    def body(kb: ir.Builder, a, c):
        kb.yield_(kb.mul(a, c))

    attrs = {"shape": (s0, 64), "axes": (1,), "kind": "sum", "keepdims": False, "dtype": D.float32}
    op = _kernel(b, "kernel.reduce", list(f.args), attrs, body)
    b.ret(op.result)
    return m


def kernel_fft() -> ir.Module:
    """|rfft(x * w)|^2 over a symbolic batch: a prologue (the window) and an epilogue (the power)."""
    m, s0, _ = _symbolic_module("spectrum")
    f, b = ir.new_func(m, "power", [TensorType(D.float32, (s0, 128)), TensorType(D.float32, (128,))],
                       ["x", "w"])
    pro = ir.Block([ScalarType(D.float32)] * 2, ["a", "c"])
    pb = ir.Builder(pro)
    pb.yield_(pb.mul(*pro.args))
    epi = ir.Block([ScalarType(D.complex64)], ["z"])
    eb = ir.Builder(epi)
    eb.yield_(eb.square(eb.abs(epi.args[0])))
    attrs = {"kind": "rfft", "axis": 1, "n": 128, "norm": "ortho", "shape": (s0, 128), "inputs": 2}
    op = b.create("kernel.fft", list(f.args), attrs, regions=[ir.Region([pro]), ir.Region([epi])])
    b.ret(op.result)
    return m


def every_attribute() -> ir.Module:
    m, s0, _ = _symbolic_module("attrs")
    f, b = ir.new_func(m, "f", [TensorType(D.complex64, (s0, 8))], ["x"])
    x = f.args[0]
    b.create("test.attrs", [], {
        "i": 3, "neg": -12, "f": 0.1, "special": (float("inf"), float("-inf"), float("nan"), -0.0, 1e-300),
        "c": complex(1.5, -0.0), "b": True, "s": 'quote " backslash \\ newline \n tab \t é', "none": None,
        "dt": D.complex128, "t": [1, 2], "nested": ((1, 2), (), ((3,),)), "sym": (s0, 2 * s0 + 1, s0 // 2),
        "arr": np.array([[1, -2], [3, 4]], np.int32), "scalar": np.float32(0.1),
    })
    y = b.fft(x, axis=1, n=None, norm="ortho", inverse=True)
    a = b.abs(y)
    b.ret(b.max(a, axes=(0, 1), keepdims=True), b.cast(a, dtype=D.float64))
    return m


def constants() -> ir.Module:
    m = ir.Module("constants")
    f, b = ir.new_func(m, "f", [])
    values = [
        np.array([1.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, 0.1], np.float64),
        np.array([[0.1, 3.4028235e38], [1e-45, -2.5]], np.float32),
        np.array([-(2**31), 2**31 - 1], np.int32),
        np.array([[-(2**63), 2**63 - 1, 0]], np.int64),
        np.array([1 + 2j, -0.0 - 1j, complex(np.inf, np.nan)], np.complex64),
        np.array([[0.1 + 0.2j]], np.complex128),
        np.array([[True, False], [False, True]]),
        np.array(2.5, np.float64),
        np.zeros((0, 3), np.float32),
    ]
    outs = []
    for v in values:
        c = b.constant(value=v, dtype=D.from_numpy(v.dtype))
        c.name_hint = "c"
        outs.append(c)
    b.ret(*outs)
    return m


def name_hints() -> ir.Module:
    m = ir.Module("names")
    t = TensorType(D.int64, (5,))
    f, b = ir.new_func(m, "f", [t, t, t], ["x", None, "x"])
    x, anon, x2 = f.args
    hints = ["x", "x_1", None, "1st", "a-b.c", "x", None]
    v = x
    for h, other in zip(hints, [anon, x2, x, anon, x2, x, anon]):
        v = b.add(v, other)
        v.name_hint = h
    b.ret(v)
    return m


def locations() -> ir.Module:
    m = ir.Module("locs")
    t = TensorType(D.float32, (3,))
    f, b = ir.new_func(m, "f", [t], ["x"])
    b.loc = "model.py:12"
    y = b.sin(f.args[0])
    b.loc = 'dir with space/"quoted".py:7'
    z = b.sum(y, axes=(0,), keepdims=False)
    b.loc = None
    b.ret(z)
    return m


def all_ops() -> ir.Module:
    return all_ops_module()[0]


# name -> (builder, print in generic form)
GOLDEN: dict[str, tuple[Callable[[], ir.Module], bool]] = {
    "elementwise_chain": (elementwise_chain, False),
    "symbolic_dims": (symbolic_dims, False),
    "kernel_elementwise": (kernel_elementwise, False),
    "multi_result": (multi_result, False),
    "kernel_reduce": (kernel_reduce, False),
    "kernel_fft": (kernel_fft, False),
    "every_attribute": (every_attribute, False),
    "constants": (constants, False),
    "name_hints": (name_hints, False),
    "locations": (locations, False),
    "all_ops": (all_ops, False),
    "all_ops_generic": (all_ops, True),
}


def render(name: str) -> str:
    build, generic = GOLDEN[name]
    return ir.print_module(build(), generic=generic)
