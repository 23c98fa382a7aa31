"""FFT kernels generated as LLVM IR (pocketfft's structure): plans are data, code is per precision.

`plan.make_cplan(n, dtype)` factorises n and computes the twiddle tables; `module.emit_module`
emits the radix passes, the plan interpreter and the C-ABI entries (module.py, real.py), and the
same planning in native code for lengths known only at run time (planner.py); groups.py cuts
the same code into groups that aot.fft builds and loads only when a plan needs them. names.py
holds the ABI facts (flags, symbols): importing it, plan.py or this package needs no llvmlite
(the emitters load on first use).
"""
from __future__ import annotations

import importlib

from .names import FLAG_FORWARD, FLAG_LANES, SCRATCH_PER_LANE, c2r_name, entry_name, pass_entry_name, r2c_name
from .plan import (
    CPlan,
    PlanError,
    bluestein_chirp,
    bluestein_size,
    factorize,
    good_size,
    make_cplan,
    use_bluestein,
)

_LAZY = {"emit_module": "module", "emit_group": "groups"}

__all__ = ["FLAG_FORWARD", "FLAG_LANES", "SCRATCH_PER_LANE", "CPlan", "PlanError", "bluestein_chirp", "bluestein_size",
           "c2r_name", "emit_group", "emit_module", "entry_name", "factorize", "good_size", "make_cplan",
           "pass_entry_name", "r2c_name", "use_bluestein"]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'codegen.fft' has no attribute {name!r}")
