"""Work a shared library must do when it is unloaded (dlclose) or the process exits.

One destructor per module, `aot.unload`, registered once in llvm.global_dtors; each user adds a
call to its own cleanup function (join the thread pool, free cached FFT plans). The JIT never
unloads code, so it registers nothing.
"""

from __future__ import annotations

from llvmlite import ir as L

from .builder import Builder
from .types import I32, PTR, VOID

UNLOAD = "aot.unload"


def on_unload(module: L.Module, cleanup: L.Function) -> None:
    """Call `cleanup` (void()) when the library is unloaded, after the cleanups added before it."""
    fn = module.globals.get(UNLOAD)
    if fn is None:
        fn = L.Function(module, L.FunctionType(VOID, []), name=UNLOAD)
        fn.linkage = "internal"
        Builder(fn.append_basic_block("entry")).ret_void()
        entry_t = L.LiteralStructType([I32, PTR, PTR])
        entry = L.Constant(entry_t, [L.Constant(I32, 65535), fn, L.Constant(PTR, None)])
        dtors = L.GlobalVariable(module, L.ArrayType(entry_t, 1), name="llvm.global_dtors")
        dtors.linkage = "appending"
        dtors.initializer = L.Constant(L.ArrayType(entry_t, 1), [entry])
    b = Builder()
    b.position_before(fn.entry_basic_block.terminator)
    b.call(cleanup, [])
