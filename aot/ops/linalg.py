"""matmul with numpy's semantics: 1-D operands are promoted (and the added dim removed), batch dims
broadcast, dtypes promote (bool @ bool is bool, as in numpy)."""
from __future__ import annotations

import numpy as np

from ir.opdef import OpError, broadcast_shapes
from ir.symbols import dims_equal

from ._define import kind_rule, defop


def _matmul_shape(shapes: list[tuple]) -> tuple:
    a, b = (tuple(s) for s in shapes)
    if not a or not b:
        raise OpError(f"matmul: operands must have rank >= 1, got shapes {a} and {b}")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if not dims_equal(a2[-1], b2[-2]):
        raise OpError(f"matmul: contracted dims differ: {a2[-1]} (of {a}) vs {b2[-2]} (of {b})")
    batch = broadcast_shapes(a2[:-2], b2[:-2], op="matmul")
    return batch + a2[-2:-1] * (len(a) > 1) + b2[-1:] * (len(b) > 1)


defop("matmul", arity=2, dtype_rule=kind_rule("matmul", "bifc"), shape_rule=_matmul_shape, ref=np.matmul,
      traits={"contraction", "opaque_kernel"}, numpy_names=("matmul",))
