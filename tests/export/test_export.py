"""aot.export: ExportedProgram contents, .module(), dynamic_shapes forms and their errors."""

from __future__ import annotations

import numpy as np
import pytest

import aot
from aot.export import ExportError

from . import funcs


def test_program_specs_and_module():
    x, y = funcs.elementwise_inputs(6)
    N = aot.Dim("N", min=2, max=100)
    ep = aot.export(funcs.elementwise, (x, y), dynamic_shapes={"x": {0: N}, "y": (N, None)})
    assert isinstance(ep, aot.ExportedProgram)
    assert [str(s) for s in ep.input_specs] == ["x: f64[N,3]", "y: f64[N,3]"]
    assert [str(s) for s in ep.output_specs] == ["out: f64[N,3]"]
    assert ep.range_constraints == {"N": (2, 100)}
    assert ep.guards == []
    assert any(n.op == "call_function" for n in ep.graph.nodes)
    run = ep.module()
    x2, y2 = funcs.elementwise_inputs(9)
    np.testing.assert_allclose(run(x2, y2), funcs.elementwise(x2, y2), rtol=1e-12)
    with pytest.raises(ValueError, match="outside the range of N"):
        run(np.ones((200, 3)), np.ones((200, 3)))
    with pytest.raises(TypeError, match="dtype"):
        run(x2.astype(np.float32), y2)


def test_static_export_and_frozen_weights():
    x = np.random.default_rng(0).random((2, 4))
    ep = aot.export(funcs.with_weights, (x,))
    assert ep.range_constraints == {}
    assert [str(s) for s in ep.input_specs] == ["x: f64[2,4]"]  # the global W is a constant, not an input
    np.testing.assert_allclose(ep.module()(x), funcs.with_weights(x), rtol=1e-12)
    with pytest.raises(ValueError, match=r"x.shape\[0\] is 3, expected 2"):
        ep.module()(np.ones((3, 4)))


def test_ranges_decide_what_they_imply():
    # max over axis 0 needs N != 0: a range starting at 1 implies it, so N stays dynamic
    ep = aot.export(funcs.reduction, (np.ones((3, 4)),), dynamic_shapes={"x": {0: aot.Dim("N")}})
    assert [str(s) for s in ep.output_specs] == ["out0: f64[N]", "out1: f64[4]", "out2: f64[]"]


def test_dim_that_cannot_stay_dynamic_suggests_fix():
    # more on guards (recorded, checked, refused) in test_export_guards.py
    x = np.ones((4, 3))
    with pytest.raises(ExportError, match=r"specialised to 4 by the guard .*test_export.py.*make x.shape\[0\] static"):
        aot.export(lambda x, y: x + y, (x, np.ones((4, 3))), dynamic_shapes=({0: aot.Dim("A")}, None))
    with pytest.raises(ExportError, match=r"the guard N > 3 \(at .*test_export.py.*aot.Dim\('N', min=4\)"):
        aot.export(lambda x: x * 2 if x.shape[0] > 3 else x, (x,), dynamic_shapes={"x": {0: aot.Dim("N")}})


def test_dynamic_shapes_errors():
    x = np.ones((5, 3))
    with pytest.raises(ExportError, match="outside the range"):
        aot.export(funcs.reduction, (x,), dynamic_shapes={"x": {0: aot.Dim("N", max=4)}})
    with pytest.raises(ExportError, match="unknown argument"):
        aot.export(funcs.reduction, (x,), dynamic_shapes={"z": {0: aot.Dim("N")}})
    with pytest.raises(ExportError, match="out of range"):
        aot.export(funcs.reduction, (x,), dynamic_shapes={"x": {2: aot.Dim("N")}})
    with pytest.raises(ExportError, match="share Dim 'N' but differ"):
        N = aot.Dim("N")
        aot.export(funcs.matmul, (np.ones((5, 4)), np.ones((4, 2))), dynamic_shapes={"a": (N, N), "b": None})
    with pytest.raises(ValueError, match="min must be >= 1"):
        aot.Dim("N", min=0)
    with pytest.raises(ValueError, match="max"):
        aot.Dim("N", min=5, max=2)
    with pytest.raises(TypeError, match="tuple"):
        aot.export(funcs.reduction, [x])


def test_aot_compile_copies_passthrough_and_rejects_constants_and_bad_paths(tmp_path):
    x = np.arange(3.0)
    aot.aot_compile(lambda x: (x, x + 1), (x,), path=tmp_path / "p.so")
    same, plus = aot.aot_load(tmp_path / "p.so")(x)
    np.testing.assert_array_equal(same, x)
    np.testing.assert_array_equal(plus, x + 1)
    assert not np.shares_memory(same, x)
    with pytest.raises(ExportError, match="returns a Python constant"):
        aot.aot_compile(lambda x: (x + 1, 2.0), (x,), path=tmp_path / "c.so")
    with pytest.raises(ValueError, match="C identifier"):
        aot.aot_compile(lambda x: x + 1, (x,), path=tmp_path / "1bad-name.so")
    with pytest.raises(ValueError, match=r"\.so"):
        aot.aot_compile(lambda x: x + 1, (x,), path=tmp_path / "name.dll")
