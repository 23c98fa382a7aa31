"""Registry coverage: every op row is complete, its numpy names resolve, and ir.Builder infers the
reference's type when building it (tensors, and scalars inside kernel bodies for elementwise ops).

Facet coverage: each stage's table is derived from the rows, and a row that lacks a facet a stage
needs (a front-end name, an LLVM rule, a transcendental cost, a reduction record, later a VJP)
fails here unless it carries an explicit marker with its reason (OpDef.markers, ir.opdef.MARKERS).
No test lists ops by hand: they iterate the registry."""
from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import subprocess
import sys

import numpy as np
import pytest

import ir
from aot.ops import ALL_OPS, FACETS, NUMPY_NAMES
from ir import dtypes as D
from ir.opdef import COST_TRANSCENDENTAL, MARKERS, OPDEFS, OpDef, OpError
from ir.types import ScalarType, TensorType

from .op_samples import DTYPES, resolve_numpy, sample

FAMILY_TRAITS = {"elementwise", "reduction", "layout", "creation", "opaque_kernel", "check"}


@pytest.mark.parametrize("name", ALL_OPS)
def test_row_is_complete(name):
    d = OPDEFS[name]
    assert d.name == name
    assert callable(d.dtype_rule) and callable(d.shape_rule) and callable(d.reference)
    assert "pure" in d.traits and d.traits & FAMILY_TRAITS, f"{name}: traits {sorted(d.traits)}"
    assert d.arity is not None or d.min_arity >= 1
    for facet in FACETS:  # the transforms fill these; the slot must exist
        assert hasattr(d, facet)


def test_all_ops_are_the_registered_rows():
    """ALL_OPS is every row aot.ops defines (the dialect's structural ops are ir's own)."""
    structural = {n for n, d in OPDEFS.items() if d.infer is not None}
    assert len(set(ALL_OPS)) == len(ALL_OPS)
    assert set(ALL_OPS) == {n for n in OPDEFS if not n.startswith("test")} - structural


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
    with pytest.raises(TypeError, match="markers"):
        defunary("not_an_op", np.exp, accept="f", markers={"no_llvm": "typo"})
    with pytest.raises(TypeError, match="markers"):
        defunary("not_an_op", np.exp, accept="f", markers={"no_frontend_name": ""})  # a reason is required
    assert "not_an_op" not in OPDEFS

    def vjp(g, x, y):
        return g * y

    try:
        d = defunary("test_exp", np.exp, accept="if", result="inexact", vjp=vjp, libm="exp",
                     cost=COST_TRANSCENDENTAL, markers={"no_frontend_name": "a test row"})
        assert OPDEFS["test_exp"] is d and d.vjp is vjp and d.jvp is None and d.libm == "exp"
        assert d.cost == COST_TRANSCENDENTAL and d.markers == {"no_frontend_name": "a test row"}
    finally:
        OPDEFS.pop("test_exp", None)
        if "test_exp" in DEFINED:
            DEFINED.remove("test_exp")


def test_unread_facet_slots_are_gone():
    """Slots nothing reads are not kept as decoration (llvm, gpu, decomposition were removed)."""
    slots = set(OpDef.__slots__)
    assert set(FACETS) == {"vjp", "jvp", "batch"} and set(FACETS) <= slots
    assert not {"llvm", "gpu", "decomposition"} & slots


# --- facet coverage: each stage's facet on every row, or a reasoned marker -------------------------

def _translated(op: str) -> list[str]:
    """The row's numpy names that the front end translates (np.sin -> sin)."""
    from aot.frontend import TRANSLATIONS

    return [n for n in OPDEFS[op].numpy_names if _is_translated(resolve_numpy(n), TRANSLATIONS)]


def _is_translated(fn, table) -> bool:
    try:
        return fn in table
    except TypeError:
        return False


@pytest.mark.parametrize("name", ALL_OPS)
def test_frontend_reaches_every_row(name):
    """A numpy name of the row is translated, or the row says how it is reached instead."""
    marked = "no_frontend_name" in OPDEFS[name].markers
    if marked:
        assert not _translated(name), f"{name}: marked no_frontend_name but np.{_translated(name)} translates"
    else:
        assert _translated(name), f"{name}: no numpy name of {OPDEFS[name].numpy_names} is translated " \
                                  f"(add one to the row, or a no_frontend_name marker with the reason)"


def test_ufunc_table_is_built_from_the_rows():
    """Every elementwise row naming a ufunc is in the front end's table, mapped to that row; the
    entries not named by a row are the listed aliases."""
    from aot.frontend.numpy_ufuncs import UFUNC_CORE

    named = {}
    for op in ALL_OPS:
        for n in OPDEFS[op].numpy_names:
            u = getattr(np, n, None)
            if isinstance(u, np.ufunc) and OPDEFS[op].has("elementwise"):
                named[u] = op
    assert {u: UFUNC_CORE[u] for u in named} == named
    assert {u.__name__ for u in set(UFUNC_CORE) - set(named)} == {"fabs", "rint"}


def _row_translation(op: str, np_name: str):
    """How the front end reaches `op` from np.<np_name>: ("ufunc", op) through the ufunc table built
    from the rows, ("function", translation) through a translation registered against the row, or
    None."""
    from aot.frontend.numpy_ufuncs import UFUNC_CORE
    from aot.frontend.registry import ROW_TRANSLATIONS

    func = resolve_numpy(np_name)
    if isinstance(func, np.ufunc) and UFUNC_CORE.get(func) == op:
        return "ufunc", op
    fn = ROW_TRANSLATIONS.get(op, {}).get(np_name)
    return None if fn is None else ("function", fn)


@pytest.mark.parametrize("name", [n for n in ALL_OPS if OPDEFS[n].numpy_names])
def test_every_numpy_name_of_a_row_is_translated_through_the_row(name):
    """Each numpy callable a row names translates to that row: through the ufunc table or a function
    translation registered against the op (registry.translates), never by a hand-listed
    decomposition; a row that is reached otherwise says so with a marker."""
    from aot.frontend import TRANSLATIONS

    d = OPDEFS[name]
    if "no_frontend_name" in d.markers:
        pytest.skip(f"{name}: {d.markers['no_frontend_name']}")
    for np_name in d.numpy_names:
        func = resolve_numpy(np_name)
        how = _row_translation(name, np_name)
        assert how is not None, (f"{name}: np.{np_name} has no translation registered against the row "
                                 f"(ufunc table or @translates({name!r}))")
        assert _is_translated(func, TRANSLATIONS), f"{name}: np.{np_name} is not in TRANSLATIONS"
        if how[0] == "function":
            assert TRANSLATIONS[func] is how[1], f"{name}: np.{np_name} translates by {TRANSLATIONS[func]}"


def test_function_table_is_keyed_by_rows():
    """Every entry of the row-keyed function table names an op that exists and a numpy name that op's
    row lists, and resolves to a numpy callable that TRANSLATIONS maps to that translation."""
    from aot.frontend import TRANSLATIONS
    from aot.frontend.registry import ROW_TRANSLATIONS

    assert ROW_TRANSLATIONS, "no function translation registers against a row"
    for op, by_name in ROW_TRANSLATIONS.items():
        assert op in OPDEFS and op in ALL_OPS, f"function table entry for unknown op {op!r}"
        for np_name, fn in by_name.items():
            assert np_name in OPDEFS[op].numpy_names, f"{op}: np.{np_name} is not one of its row's names"
            func = resolve_numpy(np_name)
            assert callable(func) and not (isinstance(func, np.ufunc) and OPDEFS[op].has("elementwise")), \
                f"{op}: np.{np_name} is an elementwise ufunc (the ufunc table translates it)"
            assert TRANSLATIONS[func] is fn, f"{op}: np.{np_name} translates by {TRANSLATIONS[func]}"


def test_translation_table_is_derived():
    """TRANSLATIONS is the ufunc table, the row-keyed functions and the decompositions, with no
    callable in two of them; a hand-listed decomposition is never a callable a row names."""
    from aot.frontend import TRANSLATIONS
    from aot.frontend.numpy_api import DECOMPOSITIONS, MODULES, ROW_FUNCTIONS, UFUNCS

    tables = {"ufuncs": UFUNCS, "row functions": ROW_FUNCTIONS, "decompositions": DECOMPOSITIONS}
    for (a, ta), (b, tb) in itertools.combinations(tables.items(), 2):
        assert not set(ta) & set(tb), f"in both {a} and {b}: {set(ta) & set(tb)}"
    assert set(TRANSLATIONS) == set(UFUNCS) | set(ROW_FUNCTIONS) | set(DECOMPOSITIONS)
    row_named = {resolve_numpy(n): op for n, op in NUMPY_NAMES.items()}
    for m in MODULES:
        for func in m.DECOMPOSITIONS:
            assert func not in row_named, (f"{m.__name__}.DECOMPOSITIONS lists {func.__name__}, which the "
                                           f"{row_named[func]} row names: register it with @translates")
            assert not isinstance(func, np.ufunc), f"{m.__name__}.DECOMPOSITIONS lists the ufunc {func}"


def test_translates_checks_the_row():
    """A translation registers only against an existing row, for names the row lists, once."""
    from aot.frontend.registry import ROW_TRANSLATIONS, translates

    before = {op: dict(t) for op, t in ROW_TRANSLATIONS.items()}
    op = next(iter(ROW_TRANSLATIONS))
    with pytest.raises(KeyError, match="no op row"):
        translates("not_an_op")
    with pytest.raises(ValueError, match="numpy_names"):
        translates(op, "not_a_numpy_name")
    with pytest.raises(ValueError, match="translated twice"):
        translates(op)(lambda em, *a: None)
    assert {op: dict(t) for op, t in ROW_TRANSLATIONS.items()} == before


@pytest.mark.parametrize("name", [n for n in ALL_OPS if OPDEFS[n].has("elementwise")])
def test_elementwise_rows_have_an_llvm_rule(name):
    from codegen.llvm.lowering import rule_for

    assert rule_for(name) is not None, f"{name}: no rule in codegen.llvm LOWERINGS and no libm= on its row"


@pytest.mark.parametrize("name", [n for n in ALL_OPS if OPDEFS[n].libm])
def test_libm_rows(name):
    """A row's C math function exists in libm (double and float) and costs as a transcendental."""
    d = OPDEFS[name]
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    assert hasattr(libm, d.libm) and hasattr(libm, d.libm + "f"), f"{name}: libm has no {d.libm}"
    assert d.cost >= COST_TRANSCENDENTAL, f"{name}: calls {d.libm} but costs {d.cost} (COST_TRANSCENDENTAL)"
    assert d.has("elementwise")


def test_costs_are_positive_ints():
    """Fusion weighs every row by its cost; approximations of real functions cost as libm calls."""
    for name in ALL_OPS:
        d = OPDEFS[name]
        assert isinstance(d.cost, int) and d.cost >= 1, f"{name}: cost {d.cost!r}"
        if d.has("transcendental"):
            assert d.cost >= COST_TRANSCENDENTAL, f"{name}: transcendental but costs {d.cost}"


def test_reduction_rows_have_records():
    """The reduction rows are the records' kinds, and each row's dtype rule and empty-axis rule are
    its record's."""
    from ir.reductions import REDUCTIONS

    rows = {n for n in ALL_OPS if OPDEFS[n].has("reduction")}
    assert rows == set(REDUCTIONS)
    for name, kind in REDUCTIONS.items():
        d = OPDEFS[name]
        assert d.has("index_reduction") == kind.index, name
        for dt in DTYPES:
            assert d.dtype_rule([dt]) == kind.result(dt), f"{name}({dt})"
        attrs = {"axis": 0} if kind.index else {"axes": (0,)}
        if kind.has_identity:
            d.shape_rule([(0, 3)], keepdims=False, **attrs)
        else:
            with pytest.raises(OpError):
                d.shape_rule([(0, 3)], keepdims=False, **attrs)


def test_every_reduction_kind_has_a_codegen_rule():
    """codegen combines every record: COMBINE for the value kinds, `better` (an order) for the
    index kinds; the vector and split paths cover the flagged kinds."""
    from codegen.kernels.reduce import _VECTOR_KINDS, COMBINE
    from codegen.split_reduce import SPLIT_KINDS
    from ir.reductions import REDUCTIONS

    for name, kind in REDUCTIONS.items():
        assert kind.identity in ("zero", "one", "lowest", "highest"), name
        if kind.index:
            assert kind.order in (">", "<") and not kind.vectorisable and not kind.splittable, name
        else:
            assert name in COMBINE, f"reduction kind {name}: no combine rule in codegen/kernels/reduce.py"
    assert set(COMBINE) <= set(REDUCTIONS)
    assert _VECTOR_KINDS == {k for k, r in REDUCTIONS.items() if r.vectorisable}
    assert set(SPLIT_KINDS) == {k for k, r in REDUCTIONS.items() if r.splittable}


def test_markers_are_known_and_reasoned():
    for name in ALL_OPS:
        for marker, reason in OPDEFS[name].markers.items():
            assert marker in MARKERS, f"{name}: unknown marker {marker!r}"
            assert isinstance(reason, str) and len(reason) > 10, f"{name}: marker {marker!r} needs a reason"


@pytest.mark.parametrize("facet", FACETS)
def test_transform_facets(facet):
    """The transforms (aot/func) read vjp/jvp/batch: every row has each rule, or for derivatives a
    not_differentiable marker, or (an op without operands, which no transform asks) no_operands."""
    have = {n for n in ALL_OPS if getattr(OPDEFS[n], facet) is not None}
    exempt = {n for n in ALL_OPS if "no_operands" in OPDEFS[n].markers
              or (facet != "batch" and "not_differentiable" in OPDEFS[n].markers)}
    missing = [n for n in ALL_OPS if n not in have and n not in exempt]
    assert not missing, f"rows without a {facet} rule or marker: {missing}"
    for n in exempt & have:  # a marker says the rule is absent on purpose: not both
        assert "not_differentiable" not in OPDEFS[n].markers or facet == "batch", n


def test_no_operands_marker_only_on_rows_without_operands():
    for n in ALL_OPS:
        if "no_operands" in OPDEFS[n].markers:
            assert OPDEFS[n].arity == 0, n


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
    refs = ref if OPDEFS[name].num_results > 1 else (ref,)  # a multi-result op returns a tuple
    assert len(refs) == OPDEFS[name].num_results and all(isinstance(r, np.ndarray) for r in refs)
    f, b = ir.new_func(ir.Module(), "f", [TensorType(dt, shp) for dt, shp in zip(dts, s.shapes)])
    out = b.op(name, *f.args, **attrs)
    outs = out if OPDEFS[name].num_results > 1 else (out,)
    assert [o.type for o in outs] == [TensorType(D.from_numpy(r.dtype), r.shape) for r in refs]


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
