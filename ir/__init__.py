"""ir: the typed SSA dialect of aot (types, ops, builder, verifier, text form, passes, interpreter).

Importing `ir` does not import sympy (loaded when the first symbolic dim is made) nor llvmlite.
"""
import importlib

from . import dtypes, structural  # noqa: F401  (structural registers return/yield/kernel ops)
from .core import Block, BlockArg, Func, Module, Operation, OpResult, Region, Value
from .dtypes import DType
from .opdef import OPDEFS, REQUIRED, MissingRule, OpDef, OpError, lookup, register
from .symbols import SymbolInfo
from .types import IndexType, ScalarType, TensorType

# loaded on first use: the runtime imports ir's plain-data modules (status codes, ABI slots) on a
# warm first call, which needs neither the text form nor the builder (~15 ms of imports)
_LAZY = {"Builder": "builder", "new_func": "builder", "parse_module": "parser", "print_module": "printer",
         "VerifyError": "verifier", "verify": "verifier"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'ir' has no attribute {name!r}")

__all__ = [
    "Block", "BlockArg", "Builder", "DType", "Func", "IndexType", "MissingRule", "Module", "OPDEFS",
    "OpDef", "OpError", "OpResult", "Operation", "REQUIRED", "Region", "ScalarType", "SymbolInfo",
    "TensorType", "Value", "dtypes", "lookup", "new_func", "parse_module", "print_module", "register",
    "VerifyError", "verify",
]
