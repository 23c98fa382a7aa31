"""Text form of the dialect: golden files, print -> parse -> print identity, parser errors."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ir
from ir.parser import ParseError, Parser, parse_module
from ir.printer import print_attr, print_module, print_op, quoted

pytest.importorskip("aot.ops")

from tests.ir import golden_sources  # noqa: E402  (needs aot.ops)
from tests.ir.op_samples import all_ops_module  # noqa: E402
from tests.ir.strategies import random_functions  # noqa: E402

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "golden" / "ir"


def _read(name: str) -> str:
    path = GOLDEN_DIR / f"{name}.air"
    if not path.exists():
        pytest.fail(f"{path} is missing; run `python tools/update_golden.py`")
    return path.read_text()


def _round_trip(text: str, generic: bool = False) -> str:
    return print_module(parse_module(text), generic=generic)


# --- structural equality of two modules (the text alone could hide a lossy parse) --------------------

def _same_attr(a, b) -> bool:
    if isinstance(a, (np.ndarray, np.generic)) or isinstance(b, (np.ndarray, np.generic)):
        return (type(a) is type(b) and a.dtype == b.dtype and np.shape(a) == np.shape(b)
                and np.asarray(a).tobytes() == np.asarray(b).tobytes())
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(map(_same_attr, a, b))
    if isinstance(a, float) and isinstance(b, float):
        return math.copysign(1, a) == math.copysign(1, b) and (a == b or (a != a and b != b))
    if isinstance(a, complex) and isinstance(b, complex):
        return _same_attr(a.real, b.real) and _same_attr(a.imag, b.imag)
    return type(a) is type(b) and a == b or (hasattr(a, "free_symbols") and a == b)


def assert_same_module(a: ir.Module, b: ir.Module) -> None:
    assert a.name == b.name and a.symbols == b.symbols and a.guards == b.guards
    assert list(a.funcs) == list(b.funcs)
    for fa, fb in zip(a.funcs.values(), b.funcs.values()):
        assert fa.arg_types == fb.arg_types and fa.result_types == fb.result_types
        ops_a, ops_b = list(fa.walk()), list(fb.walk())
        assert [o.name for o in ops_a] == [o.name for o in ops_b]
        for oa, ob in zip(ops_a, ops_b):
            assert oa.result_types == ob.result_types, oa.name
            assert list(oa.attrs) == list(ob.attrs), oa.name
            for k in oa.attrs:
                assert _same_attr(oa.attrs[k], ob.attrs[k]), (oa.name, k, oa.attrs[k], ob.attrs[k])
            assert oa.loc == ob.loc


# --- golden files ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(golden_sources.GOLDEN))
def test_printer_matches_golden(name):
    assert golden_sources.render(name) == _read(name), "run tools/update_golden.py and review the diff"


@pytest.mark.parametrize("name", sorted(golden_sources.GOLDEN))
def test_golden_round_trips(name):
    text = _read(name)
    generic = golden_sources.GOLDEN[name][1]
    assert _round_trip(text, generic) == text
    # the generic form of every op parses back to the same module
    assert _round_trip(_round_trip(text, generic=True), generic) == text


@pytest.mark.parametrize("name", sorted(golden_sources.GOLDEN))
def test_golden_parse_is_lossless_and_verifies(name):
    build, _ = golden_sources.GOLDEN[name]
    parsed = parse_module(_read(name))
    assert_same_module(build(), parsed)
    verifier = pytest.importorskip("ir.verifier")
    verifier.verify(parsed)


def test_no_stale_golden_files():
    assert {p.stem for p in GOLDEN_DIR.glob("*.air")} == set(golden_sources.GOLDEN)


# --- every registered op ---------------------------------------------------------------------------

def test_every_registered_op_round_trips():
    m, missing = all_ops_module()
    assert not missing, f"no sample operands/attributes fit these ops (see tests/ir/op_samples.py): {missing}"
    for generic in (False, True):
        text = print_module(m, generic=generic)
        parsed = parse_module(text)
        assert print_module(parsed, generic=generic) == text
        assert_same_module(m, parsed)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_quoted_strings_are_json(s):
    """The printer writes string literals as json.dumps does (the parser reads them back as JSON),
    plain ASCII without importing json."""
    import json

    assert quoted(s) == json.dumps(s)
    assert quoted("mul") == '"mul"' and quoted('a"b\\c\n\u00e9') == json.dumps('a"b\\c\n\u00e9')


def test_print_op_standalone():
    m = parse_module(_read("elementwise_chain"))
    op = m.funcs["f"].body.ops[1]
    # operands defined elsewhere are named in order of appearance; hints are kept
    assert print_op(op) == "%1 = add %0, %x : f32[4,8]"
    assert print_op(op, generic=True) == '%1 = "add"(%0, %x) : (f32[4,8], f32[4,8]) -> f32[4,8]'


def test_alternative_multi_result_syntax():
    text = _read("multi_result").replace("%s, %p =", "%r:2 =").replace("return %s, %p", "return %r#0, %r#1")
    assert _round_trip(text) == _read("multi_result").replace("%s, %p", "%r, %r_1")


# --- parser errors -----------------------------------------------------------------------------------

HEAD = "module @m {\n  func @f(%x: f32[2], %y: f64[2]) -> (f32[2]) {\n"


@pytest.mark.parametrize("body, line, col, fragment", [
    ('    %0 = "nope"(%x) : (f32[2]) -> f32[2]\n', 3, 10, "unknown op 'nope'"),
    ("    %0 = add %x, %z : f32[2]\n", 3, 18, "use of undefined value %z"),
    ("    %0 = add %x, %y : f32[2]\n", 3, 21, "operand #1 has type f64[2], the text says f32[2]"),
    ('    %0 = "add"(%x, %x) : (f32[2], f32[2]) -> f64[2]\n', 3, 10, "differ from the inferred (f32[2])"),
    ("    %0 = add %x, %x :\n  }\n}\n", 4, 3, "expected a type"),
    ('    %0 = "sum"(%x) {axes = [0], bogus = 1} : (f32[2]) -> f32[]\n', 3, 10,
     "unknown attribute(s) ['bogus']"),
    ('    %0 = "constant"() {value = dense<f32[2]: [1.0]>, dtype = f32} : () -> f32[2]\n', 3, 50,
     "expected ',' (2 elements at nesting level 0), got ']'"),
    ("    %x = neg %x : f32[2]\n", 3, 5, "redefinition of %x"),
    ("    %0 = neg %x : f32[2] ?\n", 3, 26, "unexpected character '?'"),
    ("    %0 = neg %x : f32[2,\n  }\n}\n", 4, 3, "expected a size expression, got '}'"),
    ("    return %x : f32[2]\n  }\n", 5, 1, "expected 'sym', 'guard', 'func' or '}', got end of input"),
    ('    %0 = "sum"(%x) {axes = [0]} : (f32[2]) -> f32[] loc(12)\n', 3, 57, "expected a location string"),
])
def test_parse_errors_name_position_and_expectation(body, line, col, fragment):
    with pytest.raises(ParseError) as err:
        parse_module(HEAD + body + ("  }\n}\n" if body.count("}") == 0 else ""))
    assert (err.value.line, err.value.col) == (line, col), str(err.value)
    assert str(err.value).startswith(f"{line}:{col}: ")
    assert fragment in str(err.value)


def test_parse_error_is_a_value_error_with_caret():
    with pytest.raises(ValueError, match=r"1:1: expected 'module'") as err:
        parse_module("func @f() -> () {}")
    assert "^" in str(err.value)


# --- properties --------------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_functions())
def test_random_functions_round_trip(case):
    m, inputs = case
    f = m.funcs["f"]
    assert len(inputs) == len(f.args)
    for a, x in zip(f.args, inputs):
        assert x.dtype == a.type.dtype.numpy and x.ndim == a.type.rank
    for generic in (False, True):
        text = print_module(m, generic=generic)
        parsed = parse_module(text)
        assert print_module(parsed, generic=generic) == text
        assert_same_module(m, parsed)


def _attr_round_trip(v):
    p = Parser(print_attr(v))
    out = p.attr()
    assert p.peek().kind == "EOF"
    return out


@given(st.floats(allow_nan=True, allow_infinity=True) | st.complex_numbers(allow_nan=True)
       | st.text() | st.integers() | st.booleans())
def test_scalar_attrs_round_trip(v):
    assert _same_attr(v, _attr_round_trip(v))


@given(st.sampled_from(["float32", "float64", "complex64", "complex128", "int32", "int64", "bool"]),
       st.lists(st.integers(0, 3), max_size=3), st.integers(0, 2**32 - 1))
def test_dense_attrs_round_trip_bitwise(dtype, shape, seed):
    raw = np.random.default_rng(seed).integers(0, 256, size=int(np.prod(shape)) * np.dtype(dtype).itemsize,
                                               dtype=np.uint8)
    a = raw.view(dtype).reshape(shape)
    if a.dtype == bool:
        a = raw.astype(bool).reshape(shape)
    got = _attr_round_trip(a)
    assert got.dtype == a.dtype and got.shape == a.shape
    assert _bits_equal_up_to_nan_payload(np.ravel(a), np.ravel(got))


def _bits_equal_up_to_nan_payload(a: np.ndarray, b: np.ndarray) -> bool:
    """Text keeps every bit except a nan's sign and payload."""
    if a.dtype.kind == "c":
        a, b = a.view(a.real.dtype), b.view(b.real.dtype)
    if a.dtype.kind != "f":
        return bool(np.array_equal(a, b))
    nan = np.isnan(a)
    uint = f"u{a.dtype.itemsize}"
    return bool((nan == np.isnan(b)).all() and (a[~nan].view(uint) == b[~nan].view(uint)).all())


def test_import_ir_does_not_import_sympy():
    code = "import sys, ir; assert 'sympy' not in sys.modules, 'ir imported sympy'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unprintable_attribute_names_op_and_attribute():
    m = parse_module(_read("elementwise_chain"))
    m.funcs["f"].body.ops[0].attrs["bad"] = object()
    with pytest.raises(TypeError, match=r"mul: attribute 'bad': cannot print attribute value"):
        print_module(m)


# --- tools ---------------------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def _aot_opt(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "tools" / "aot_opt.py"), *args], input=stdin,
                          capture_output=True, text=True, cwd=ROOT)


def test_aot_opt_prints_generic_form_and_reports_errors():
    text = _read("kernel_reduce")
    out = _aot_opt("--generic", "-", stdin=text)
    assert out.returncode == 0, out.stderr
    assert '"yield"(%1) : (f32) -> ()' in out.stdout
    assert _round_trip(out.stdout) == text
    bad = _aot_opt(stdin=text.replace("mul %a, %b", "mul %a, %q"))
    assert bad.returncode == 1 and bad.stderr.startswith("<stdin>:11:20: use of undefined value %q")


def test_front_end_size_functions_round_trip():
    """aot.shapes prints integer division as `(a//b)`; registered, it parses back to itself."""
    functions = pytest.importorskip("aot.shapes.sympy_functions")
    from ir.parser import register_size_function

    register_size_function("FloorDiv", functions.FloorDiv)
    s0 = ir.symbols.size_symbol("s0")
    m = ir.Module("floordiv")
    t = ir.TensorType(ir.dtypes.float32, (functions.FloorDiv(s0, 2), 3))
    f, b = ir.new_func(m, "f", [t], ["x"])
    b.ret(b.neg(f.args[0]))
    text = print_module(m)
    assert "f32[(s0//2),3]" in text
    assert _round_trip(text) == text
    assert_same_module(m, parse_module(text))


def test_comments_are_ignored():
    text = _read("elementwise_chain")
    commented = text.replace("{\n", "{  # opens a scope\n", 1).replace("  func", "  # a comment line\n  func")
    assert _round_trip(commented) == text
