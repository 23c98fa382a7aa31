"""Loading precompiled object code into the process (for cached kernel families such as FFT).

runtime/jit.py compiles LLVM IR; this adds what a disk-cached family needs: load object bytes into
an MCJIT engine and resolve symbols. (To be merged into runtime/jit.py as `JitEngine.add_object`.)
"""
from __future__ import annotations

import logging
import threading

import llvmlite.binding as llvm

from .jit import JitEngine

log = logging.getLogger(__name__)
_lock = threading.Lock()


class ObjectEngine:
    """An MCJIT engine holding object files; code lives as long as this object."""

    def __init__(self):
        self._jit = JitEngine()

    def add_object(self, obj: bytes) -> None:
        with _lock:
            self._jit.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
            self._jit.engine.finalize_object()

    def address(self, name: str) -> int:
        return self._jit.address(name)

    def export(self, name: str) -> int:
        """Make `name` resolvable by code loaded into any engine of the process (compiled graphs
        call the FFT kernels as external symbols); returns its address."""
        addr = self.address(name)
        llvm.add_symbol(name, addr)
        return addr
