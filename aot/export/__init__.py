"""Ahead-of-time compilation: `aot.export`, `aot.Dim`, `aot.ExportedProgram`, `aot.aot_compile`,
`aot.aot_load` (torch.export / AOTInductor's contract; shared libraries with a standalone C ABI).

`aot.export` is both this package and the function: the module is callable, so `aot.export(fn,
args)` works however `aot.export` was first reached (attribute or `import aot.export`).
Tracing and code generation load on first use, so `aot_load` in a deployed process imports
neither sympy nor llvmlite.
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
    "aot_load": "load",
}

__all__ = ["Dim", "ExportError", "ExportedProgram", "InputSpec", "OutputSpec", "aot_compile", "aot_load", "export"]


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
