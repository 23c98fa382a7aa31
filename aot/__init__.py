"""aot: compile numpy programs to native code (JIT, shared libraries with a C ABI, PTX).

The public API mirrors PyTorch 2 with numpy arrays in place of tensors. Submodules load on first
use so that `import aot` stays cheap (no sympy, no llvmlite until they are needed).
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

_SUBMODULES = {"fx", "nn", "fft", "func", "futures", "cuda", "compiler", "ops", "export", "logs", "cli",
               "profiling"}
# public callables -> (module, attribute); resolved lazily
_LAZY = {
    "compile": ("aot.compiler", "compile"),
    "profile": ("aot.profiling", "profile"),
    "explain": ("aot.compiler", "explain"),
    "export": ("aot.export", "export"),
    "Dim": ("aot.export", "Dim"),
    "ExportedProgram": ("aot.export", "ExportedProgram"),
    "aot_compile": ("aot.export", "aot_compile"),
    "aot_compile_async": ("aot.export", "aot_compile_async"),
    "aot_load": ("aot.export", "aot_load"),
    "make_fx": ("aot.fx.experimental.proxy_tensor", "make_fx"),
}


def _configure_logs() -> None:
    import os

    if os.environ.get("AOT_LOGS"):
        from .logs import configure

        configure()


_configure_logs()


def __getattr__(name: str):
    if name in _LAZY:
        mod, attr = _LAZY[name]
        value = getattr(importlib.import_module(mod), attr)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"aot.{name}")
    raise AttributeError(f"module 'aot' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _SUBMODULES | set(_LAZY))
