"""`aot.aot_load`: open a library built by aot_compile (through cffi) as a numpy callable."""

from __future__ import annotations

import os


def aot_load(path: str | os.PathLike):
    """Load NAME.so and return a callable taking the arrays of its signature (in order) and
    returning its output (a tuple when there are several). Attributes: `signature`, `name`,
    `target`, `abi_version`, `output_shapes(*arrays)`.

    Inputs take any strides; arrays the library cannot read as they are (non-native byte order,
    unaligned, strides that are not whole elements) are copied first, with the same values, as
    numpy's ufuncs do; Python sequences and scalars are converted to the signature's dtype where
    numpy's same_kind rule allows. Bad inputs raise TypeError/ValueError with the library's own
    message (masked arrays: TypeError, their mask would be lost); an intermediate that cannot be
    allocated raises MemoryError. A file that is not a complete library for this machine (e.g.
    truncated) raises runtime.shared_lib.InvalidLibraryError, an OSError, before it is mapped.

    Libraries pickle by value: the .so bytes travel in the pickle (read when it is pickled), so it
    loads in another process or on another machine of the same kind without the file. Unpickling
    checks the bytes' SHA-256, writes them to a private temporary file (kept until the process
    exits) and loads that like aot_load, ELF checks first; a corrupt pickle raises
    InvalidLibraryError."""
    from runtime.shared_lib import load_library

    return load_library(path)
