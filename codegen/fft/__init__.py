"""FFT kernels generated as LLVM IR (pocketfft's structure): plans are data, code is per precision.

`plan.make_cplan(n, dtype)` factorises n and computes the twiddle tables; `module.emit_module`
emits the radix passes, the plan interpreter and the C-ABI entries (module.py, real.py), and the
same planning in native code for lengths known only at run time (planner.py).
"""
from __future__ import annotations

from .module import FLAG_FORWARD, FLAG_LANES, SCRATCH_PER_LANE, emit_module, entry_name, pass_entry_name
from .plan import CPlan, PlanError, bluestein_chirp, factorize, good_size, make_cplan, use_bluestein
from .real import c2r_name, r2c_name

__all__ = ["FLAG_FORWARD", "FLAG_LANES", "SCRATCH_PER_LANE", "CPlan", "PlanError", "bluestein_chirp", "c2r_name",
           "emit_module", "entry_name", "factorize", "good_size", "make_cplan", "pass_entry_name", "r2c_name",
           "use_bluestein"]
