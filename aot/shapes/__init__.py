"""Symbolic shapes: the ShapeEnv, Sym* numbers, guards and dim constraints.

The public names are re-exported by `aot.fx.experimental.symbolic_shapes` (torch's module path).
This package's __init__ imports nothing, so `aot.shapes.sym_node` can be imported without sympy.
"""
