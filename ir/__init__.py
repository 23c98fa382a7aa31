"""ir: the typed SSA dialect of aot (types, ops, builder, verifier, text form, passes, interpreter).

Importing `ir` does not import sympy (loaded when the first symbolic dim is made) nor llvmlite.
"""
from . import dtypes, structural  # noqa: F401  (structural registers return/yield/kernel ops)
from .builder import Builder, new_func
from .core import Block, BlockArg, Func, Module, Operation, OpResult, Region, Value
from .dtypes import DType
from .opdef import OPDEFS, REQUIRED, MissingRule, OpDef, OpError, lookup, register
from .parser import parse_module
from .printer import print_module
from .symbols import SymbolInfo
from .types import IndexType, ScalarType, TensorType
from .verifier import VerifyError, verify

__all__ = [
    "Block", "BlockArg", "Builder", "DType", "Func", "IndexType", "MissingRule", "Module", "OPDEFS",
    "OpDef", "OpError", "OpResult", "Operation", "REQUIRED", "Region", "ScalarType", "SymbolInfo",
    "TensorType", "Value", "dtypes", "lookup", "new_func", "parse_module", "print_module", "register",
    "VerifyError", "verify",
]
