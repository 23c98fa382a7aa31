"""Named passes and the pass pipeline.

`run_pipeline(module, "canonicalize,fold,cse,dce")` runs the named passes in order. With
`verify_each=True` (the tests turn it on) the module is verified after every pass, and the error
names the pass that broke it. When the `aot.ir` logger is enabled at INFO (AOT_LOGS=ir), the printed
IR after every pass is logged there. The registry and manager live in base.py, which the pass
modules import; importing them here registers them.
"""
from __future__ import annotations

from . import canonicalize, cse, dce, fold, fuse, fuse_fft  # noqa: F401  (register the passes)
from .base import DEFAULT_PIPELINE, PASSES, Pass, PassManager, register_pass, run_pipeline


__all__ = ["DEFAULT_PIPELINE", "PASSES", "Pass", "PassManager", "register_pass", "run_pipeline"]
