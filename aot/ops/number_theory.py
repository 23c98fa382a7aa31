"""Integer ufuncs without a C math library function: gcd and lcm (lowered in
codegen/llvm/rules_number.py with numpy's npy_gcd/npy_lcm: Euclid's algorithm on the absolute
values, as unsigned integers). numpy has no bool, float or complex loop for them."""
from __future__ import annotations

import numpy as np

from ir.opdef import COST_DIVISION

from ._define import defbinary

# a loop of divisions: costly to recompute in several fused kernels
for _name, _fn in [("gcd", np.gcd), ("lcm", np.lcm)]:
    defbinary(_name, _fn, accept="i", traits={"commutative"}, cost=8 * COST_DIVISION,
              markers={"not_differentiable": "an integer function"})
