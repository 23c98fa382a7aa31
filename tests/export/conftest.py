"""Libraries shared by the export tests: built once per session (each costs LLVM + one cc run)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from . import funcs

needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")


def _build(tmp, name, fn, args, dynamic_shapes=None):
    import aot

    return aot.aot_compile(fn, args, dynamic_shapes=dynamic_shapes, path=tmp / f"{name}.so")


@pytest.fixture(scope="session")
def libs(tmp_path_factory):
    """name -> .so path for: elementwise (static f32), reduction, matmul (dynamic), weights."""
    import aot

    if shutil.which("cc") is None:
        pytest.skip("needs a system C compiler (cc)")
    tmp = tmp_path_factory.mktemp("libs")
    N, K, M = aot.Dim("N", min=1, max=4096), aot.Dim("K", min=1), aot.Dim("M", min=1, max=64)
    BIG = aot.Dim("N", min=1, max=1 << 20)  # large enough for kernels to run on the thread pool
    rng = np.random.default_rng(0)
    return {
        "elementwise_static": _build(
            tmp, "elementwise_static", funcs.elementwise, funcs.elementwise_inputs(5, np.float32)
        ),
        "elementwise_dyn": _build(
            tmp, "elementwise_dyn", funcs.elementwise, funcs.elementwise_inputs(5), {"x": {0: BIG}, "y": {0: BIG}}
        ),
        "reduction": _build(tmp, "reduction", funcs.reduction, (rng.random((6, 4)),), {"x": {0: N, 1: M}}),
        "matmul": _build(
            tmp,
            "matmul",
            funcs.matmul,
            (rng.random((5, 7)), rng.random((7, 3))),
            {"a": {0: N, 1: K}, "b": {0: K}},
        ),
        "with_weights": _build(tmp, "with_weights", funcs.with_weights, (rng.random((2, 4)),), {"x": {0: N}}),
    }
