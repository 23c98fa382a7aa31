"""`aot.aot_load`: open a library built by aot_compile (through cffi) as a numpy callable."""

from __future__ import annotations

import os


def aot_load(path: str | os.PathLike):
    """Load NAME.so and return a callable taking the arrays of its signature (in order) and
    returning its output (a tuple when there are several). Attributes: `signature`, `name`,
    `target`, `abi_version`, `output_shapes(*arrays)`. Bad inputs raise TypeError/ValueError with
    the library's own message."""
    from runtime.shared_lib import load_library

    return load_library(path)
