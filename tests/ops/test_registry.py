"""Registry coverage: every op row is complete, its numpy names resolve, and ir.Builder infers the
reference's type when building it (tensors, and scalars inside kernel bodies for elementwise ops)."""
from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest

import ir
from aot.ops import ALL_OPS, FACETS, NUMPY_NAMES
from ir import dtypes as D
from ir.opdef import OPDEFS, OpError
from ir.types import ScalarType, TensorType

from .op_samples import DTYPES, resolve_numpy, sample

FAMILY_TRAITS = {"elementwise", "reduction", "layout", "creation", "opaque_kernel"}


@pytest.mark.parametrize("name", ALL_OPS)
def test_row_is_complete(name):
    d = OPDEFS[name]
    assert d.name == name
    assert callable(d.dtype_rule) and callable(d.shape_rule) and callable(d.reference)
    assert "pure" in d.traits and d.traits & FAMILY_TRAITS, f"{name}: traits {sorted(d.traits)}"
    assert d.arity is not None or d.min_arity >= 1
    for facet in FACETS:  # later stages fill these; the slot must exist
        assert hasattr(d, facet)


def test_all_core_ops_present():
    core = """neg abs sign exp expm1 log log1p sin cos tan tanh arcsin arccos arctan sinh cosh sqrt rsqrt
    square reciprocal sigmoid erf floor ceil round isnan isinf isfinite logical_not real imag conj cast
    add sub mul div floordiv mod pow maximum minimum arctan2 eq ne lt le gt ge logical_and logical_or
    logical_xor complex where clip sum prod max min argmax argmin any all broadcast_to reshape transpose
    expand_dims squeeze slice flip concatenate stack pad take constant full full_like iota matmul fft
    rfft irfft""".split()
    assert sorted(core) == sorted(ALL_OPS)
    assert len(set(ALL_OPS)) == len(ALL_OPS)


def test_numpy_names_resolve_and_are_unique():
    seen: dict[str, str] = {}
    for name in ALL_OPS:
        for np_name in OPDEFS[name].numpy_names:
            assert callable(resolve_numpy(np_name)), f"{name}: np.{np_name} is not callable"
            assert np_name not in seen, f"np.{np_name} maps to both {seen[np_name]} and {name}"
            seen[np_name] = name
    assert seen == NUMPY_NAMES
    assert seen["true_divide"] == seen["divide"] == "div"
    assert seen["fft.ifft"] == "fft" and seen["add"] == "add" and seen["amax"] == "max"


def test_facets_pass_through_as_keywords():
    from aot.ops._define import DEFINED, defunary

    with pytest.raises(TypeError, match="unknown facet"):
        defunary("not_an_op", np.exp, accept="f", lowering=lambda: None)
    assert "not_an_op" not in OPDEFS

    def vjp(g, x, y):
        return g * y

    try:
        d = defunary("test_exp", np.exp, accept="if", result="inexact", vjp=vjp, llvm="llvm.exp")
        assert OPDEFS["test_exp"] is d and d.vjp is vjp and d.llvm == "llvm.exp" and d.jvp is None
    finally:
        OPDEFS.pop("test_exp", None)
        DEFINED.remove("test_exp")


def test_import_is_cheap():
    code = "import sys, aot.ops; assert 'sympy' not in sys.modules and 'llvmlite' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def _first_valid_dtypes(name):
    d, s = OPDEFS[name], sample(name)
    attrs = d.full_attrs({**s.attrs, **s.attr_variants[-1]})
    prefer = (D.float64, D.float32, D.int64, D.complex128, D.bool_, D.int32, D.complex64)
    for dts in itertools.product(prefer, repeat=len(s.shapes)):
        try:
            d.dtype_rule(list(dts), **attrs)
            return list(dts), attrs
        except OpError:
            continue
    raise AssertionError(f"{name}: no valid dtypes")


@pytest.mark.parametrize("name", ALL_OPS)
def test_builder_infers_reference_type(name):
    s = sample(name)
    dts, attrs = _first_valid_dtypes(name)
    ref = OPDEFS[name].reference(*s.arrays(dts), **attrs)
    assert isinstance(ref, np.ndarray)
    f, b = ir.new_func(ir.Module(), "f", [TensorType(dt, shp) for dt, shp in zip(dts, s.shapes)])
    out = b.op(name, *f.args, **attrs)
    assert out.type == TensorType(D.from_numpy(ref.dtype), ref.shape)


@pytest.mark.parametrize("name", [n for n in ALL_OPS if OPDEFS[n].has("elementwise")])
def test_elementwise_ops_accept_scalars(name):
    dts, attrs = _first_valid_dtypes(name)
    f, b = ir.new_func(ir.Module(), "body", [ScalarType(dt) for dt in dts])
    out = b.op(name, *f.args, **attrs)
    assert out.type == ScalarType(OPDEFS[name].dtype_rule(dts, **attrs))


def test_builder_rejects_with_op_name():
    f, b = ir.new_func(ir.Module(), "f", [TensorType(D.bool_, (3,)), TensorType(D.float32, (4,))])
    with pytest.raises(OpError, match="^sin:"):
        b.sin(f.args[0])
    with pytest.raises(OpError, match="add: shapes"):
        b.add(*f.args)
    assert all(isinstance(d, ir.DType) for d in DTYPES)
