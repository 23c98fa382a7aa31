"""Code generation targets: one file per target behind `base.Target`."""

from .base import Target, create_target_machine, emit_assembly, emit_object, optimize
from .cpu import host_target, jit_target, named_target

__all__ = [
    "Target",
    "create_target_machine",
    "emit_assembly",
    "emit_object",
    "host_target",
    "jit_target",
    "named_target",
    "optimize",
]
