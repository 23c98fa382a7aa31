"""The core ops of the dialect, one row each, registered into ir.OPDEFS when this package is imported.

Families: elementwise, reduce, layout, creation, linalg, fft. `ALL_OPS` lists the names defined here
in definition order; every stage's tests iterate it. Importing this package loads numpy only.

Adding an elementwise op is its row: the front end's ufunc table is built from `numpy_names`, fusion
reads `cost`, codegen lowers a row naming `libm=` through one rule (other rows add a rule in
codegen/llvm/rules_*.py), and tests/ops/test_registry.py fails for a facet a stage lacks unless
the row's `markers` say why. The numpy functions a row names (np.sum, np.fft.rfft, np.amax) are
translated by the front-end function registered against the op (`@translates("sum")`,
aot/frontend/registry.py); a numpy name without a translation fails the same tests. A reduction
kind is a record in ir/reductions.py, its row in reduce.py and its combine in
codegen/kernels/reduce.py.
"""
from __future__ import annotations

from ir.opdef import OPDEFS

# imported for their registration side effects, in the order ALL_OPS lists them
from . import elementwise, reduce, layout, creation, linalg, fft, checks  # noqa: F401, I001
from . import scan  # noqa: F401
from . import sorting  # noqa: F401
from . import scatter, signal, arrays, number_theory, exponents  # noqa: F401  (the everyday numpy rows)
from . import linalg_kernels  # noqa: F401  (numpy.linalg factorisations)
from . import linalg_eig  # noqa: F401  (numpy.linalg.eig, eigvals)
from . import selection_ops  # noqa: F401  (order statistics and partitions without a full sort)
from . import histogram  # noqa: F401  (np.histogram's counts in one pass)
from . import compaction  # noqa: F401  (values[mask] cut or padded to size=: the size= functions)
from . import updates  # noqa: F401  (in-place assignment as values)
from ._define import DEFINED, FACETS

ALL_OPS: list[str] = list(DEFINED)
# numpy callable name (dotted below numpy: "fft.rfft") -> op; the tracer resolves these to objects.
# fft.ifft maps to fft with inverse=True.
NUMPY_NAMES: dict[str, str] = {np_name: op for op in ALL_OPS for np_name in OPDEFS[op].numpy_names}

__all__ = ["ALL_OPS", "FACETS", "NUMPY_NAMES"]
