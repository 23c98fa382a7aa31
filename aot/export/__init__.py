"""Ahead-of-time compilation: `aot.export`, `aot.Dim`, `aot.ExportedProgram`, `aot.aot_compile`,
`aot.aot_compile_async`, `aot.aot_load` (torch.export / AOTInductor's contract; shared libraries
with a standalone C ABI).

`aot.export` is both this package and the function: the module is callable, so `aot.export(fn,
args)` works however `aot.export` was first reached (attribute or `import aot.export`).
Tracing and code generation load on first use, so `aot_load` in a deployed process imports
neither sympy nor llvmlite.

Shapes and guards (as torch.export with a ShapeEnv): dynamic dims are symbols named after their
Dim (`N`); user code sees them as SymInts, and each shape decision (`if x.shape[0] % 2 == 0`,
`x.reshape(2, -1)`, `x[1:] + y`) that the declared ranges do not imply is taken from the example
sizes and recorded as a guard. Guards that a runtime check can enforce -- relations between
Dims (`N - 1 == M`), divisibility (`N % 2 == 0`), exclusions (`N != 7`) -- go to
`ExportedProgram.guards`, checked by `.module()` and by the library built from the program. A
guard that pins a Dim to one size (`N == 5`) is an ExportError suggesting to make the dim static;
one that only moves a Dim's bounds (`N > 3` with min=1) is an ExportError suggesting the range
the code needs (`aot.Dim("N", min=4)`), like torch.export: the declared range is the contract
the header and `range_constraints` state. Details: aot/export/guards.py.
"""

from __future__ import annotations

import importlib
import sys
import types

from .dims import Dim, ExportError

_LAZY = {
    "export": "program",
    "ExportedProgram": "program",
    "InputSpec": "program",
    "OutputSpec": "program",
    "aot_compile": "library",
    "aot_compile_async": "library",
    "aot_load": "load",
}

__all__ = ["Dim", "ExportError", "ExportedProgram", "InputSpec", "OutputSpec", "aot_compile", "aot_compile_async",
           "aot_load", "export"]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _CallableModule(types.ModuleType):
    def __call__(self, fn, args, kwargs=None, *, dynamic_shapes=None):
        return self.__getattr__("export")(fn, args, kwargs, dynamic_shapes=dynamic_shapes)


sys.modules[__name__].__class__ = _CallableModule
