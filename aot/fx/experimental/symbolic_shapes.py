"""aot.fx.experimental.symbolic_shapes: torch's symbolic-shape API over numpy shapes.

The implementation lives in `aot.shapes` (env, sym_node, guards, constraints, value_ranges,
dim_constraints); this module is the public, torch-named surface. Importing it imports sympy.
"""
from __future__ import annotations

from aot.shapes.api import (
    canonicalize_bool_expr,
    constrain_range,
    constrain_unify,
    definitely_false,
    definitely_true,
    expect_true,
    free_symbols,
    free_unbacked_symbols,
    fx_placeholder_vals,
    guard_bool,
    guard_float,
    guard_int,
    guard_size_oblivious,
    has_free_symbols,
    has_free_unbacked_symbols,
    hint_int,
    is_concrete_bool,
    is_concrete_float,
    is_concrete_int,
    is_symbolic,
    statically_known_true,
    sym_eq,
)
from aot.shapes.constraints import (
    ConstantSource,
    Constraint,
    ConstraintViolationError,
    DimDynamic,
    EqualityConstraint,
    GuardOnDataDependentSymNode,
    LocalSource,
    RelaxedUnspecConstraint,
    Source,
    StatelessSymbolicContext,
    StrictMinMaxConstraint,
    SymbolicContext,
    TensorProperty,
    TensorPropertySource,
)
from aot.shapes.dim_constraints import DimConstraints
from aot.shapes.env import ShapeEnv
from aot.shapes.guards import ShapeGuard, compile_guard_checker
from aot.shapes.sym_node import (
    SymBool,
    SymFloat,
    SymInt,
    SymNode,
    sym_float,
    sym_int,
    sym_ite,
    sym_max,
    sym_min,
    sym_not,
)
from aot.shapes.sympy_functions import FloorDiv
from aot.shapes.value_ranges import ValueRanges, bound_sympy

__all__ = [
    "ConstantSource", "Constraint", "ConstraintViolationError", "DimConstraints", "DimDynamic",
    "EqualityConstraint", "FloorDiv", "GuardOnDataDependentSymNode", "compile_guard_checker", "LocalSource",
    "RelaxedUnspecConstraint", "ShapeEnv", "ShapeGuard", "Source", "StatelessSymbolicContext",
    "StrictMinMaxConstraint", "SymBool", "SymFloat", "SymInt", "SymNode", "SymbolicContext",
    "TensorProperty", "TensorPropertySource", "ValueRanges", "bound_sympy", "canonicalize_bool_expr",
    "constrain_range", "constrain_unify", "definitely_false", "definitely_true", "expect_true",
    "free_symbols", "free_unbacked_symbols", "fx_placeholder_vals", "guard_bool", "guard_float", "guard_int",
    "guard_size_oblivious", "has_free_symbols", "has_free_unbacked_symbols", "hint_int", "is_concrete_bool",
    "is_concrete_float", "is_concrete_int", "is_symbolic", "statically_known_true", "sym_eq", "sym_float",
    "sym_int", "sym_ite", "sym_max", "sym_min", "sym_not",
]
