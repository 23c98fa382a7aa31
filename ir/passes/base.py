"""The pass registry and the pass manager (the pass modules import this; ir.passes imports them).

`run_pipeline(module, "canonicalize,fold,cse,dce")` runs the named passes in order. With
`verify_each=True` (the tests turn it on) the module is verified after every pass, and the error
names the pass that broke it. When the `aot.ir` logger is enabled at INFO (AOT_LOGS=ir), the printed
IR after every pass is logged there.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from ..core import Func, Module
from ..logger import INFO, get_logger
from ..verifier import VerifyError, verify

log = get_logger(__name__)
ir_log = get_logger("aot.ir")


class Pass:
    """A named transformation of a module. Subclasses set `name` and override `run_on_func` or `run`."""

    name: str = ""

    def run(self, module: Module) -> bool:
        """Transform `module` in place; True iff anything changed."""
        changed = False
        for f in list(module.funcs.values()):
            changed |= bool(self.run_on_func(f))
        return changed

    def run_on_func(self, func: Func) -> bool:
        raise NotImplementedError(f"pass {self.name!r} implements neither run nor run_on_func")


PASSES: dict[str, Callable[[], Pass]] = {}


def register_pass(cls: type[Pass]) -> type[Pass]:
    """Class decorator: make a pass available to pipelines under `cls.name`."""
    if not cls.name or cls.name in PASSES:
        raise ValueError(f"pass {cls.__name__} needs a unique name, got {cls.name!r}")
    PASSES[cls.name] = cls
    return cls


# Read top to bottom: simplify, fold what became constant, simplify what folding exposed, share equal
# subexpressions, then drop everything no longer used.
DEFAULT_PIPELINE: tuple[str, ...] = ("canonicalize", "fold", "canonicalize", "cse", "dce")


class PassManager:
    """An ordered list of passes: names from PASSES (or a comma-separated string of them), or Pass objects."""

    def __init__(self, pipeline: str | Sequence[str | Pass] = DEFAULT_PIPELINE, verify_each: bool = False):
        if isinstance(pipeline, str):
            pipeline = [n.strip() for n in pipeline.split(",") if n.strip()]
        items = list(pipeline)
        unknown = [n for n in items if isinstance(n, str) and n not in PASSES]
        if unknown:
            raise ValueError(f"unknown pass(es) {unknown} in pipeline {items}; known: {sorted(PASSES)}")
        self.passes = [PASSES[n]() if isinstance(n, str) else n for n in items]
        self.verify_each = verify_each

    def run(self, module: Module) -> Module:
        for p in self.passes:
            start = time.perf_counter()
            changed = p.run(module)
            log.debug("pass %s: %s in %.2f ms", p.name, "changed" if changed else "no change",
                      1e3 * (time.perf_counter() - start))
            if self.verify_each:
                try:
                    verify(module)
                except VerifyError as e:
                    raise VerifyError(e.op, f"after pass {p.name!r}: {e.msg}") from e
            if ir_log.isEnabledFor(INFO):
                from ..printer import print_module

                ir_log.info("IR after %s:\n%s", p.name, print_module(module))
        return module


def run_pipeline(module: Module, pipeline: str | Sequence[str | Pass] = DEFAULT_PIPELINE,
                 verify_each: bool = False) -> Module:
    """Run the comma-separated (or listed) passes on `module` in place; returns it."""
    return PassManager(pipeline, verify_each).run(module)
