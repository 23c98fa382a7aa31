"""numpy's C API table, read through its capsule (what the native helpers call in numpy)."""
from __future__ import annotations

import ctypes
import functools

import numpy as np


@functools.cache
def numpy_api_table() -> int | None:
    """The address of numpy's C API table (the `_ARRAY_API` capsule's pointer), verified by its
    PyArray_Type slot; None when it cannot be read."""
    try:
        try:
            from numpy._core import _multiarray_umath as umath
        except ImportError:  # numpy 1.x
            from numpy.core import _multiarray_umath as umath
        capsule = ctypes.py_object(umath._ARRAY_API)
        get_name = ctypes.pythonapi.PyCapsule_GetName
        get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
        get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        table = get_pointer(capsule, get_name(capsule))
    except (AttributeError, ImportError, ValueError, TypeError, OSError):
        return None
    if not table or ctypes.c_void_p.from_address(table + 2 * 8).value != id(np.ndarray):  # PyArray_Type
        return None
    return table
