"""AOT_LOGS: switch on debug output of pipeline stages through `logging`.

AOT_LOGS is a comma-separated list of artifact names (graph, ir, llvm, asm, ptx, guards,
recompiles, ...) or "all". Each artifact logs through the logger `aot.<artifact>` at INFO level.
"""
from __future__ import annotations

import logging
import os

ARTIFACTS = ("graph", "ir", "llvm", "asm", "ptx", "guards", "recompiles", "fusion", "cache", "fft")
# artifact loggers live under "aot." so that one handler on "aot" prints them all
_handler: logging.Handler | None = None


def enabled_artifacts(spec: str | None = None) -> set[str]:
    spec = os.environ.get("AOT_LOGS", "") if spec is None else spec
    names = {s.strip().lstrip("+") for s in spec.split(",") if s.strip()}
    if "all" in names:
        return set(ARTIFACTS)
    return names


def artifact_logger(name: str) -> logging.Logger:
    """The logger for one artifact, switched on when AOT_LOGS names it."""
    log = logging.getLogger(f"aot.{name}")
    if name in enabled_artifacts():
        _enable(name)
    return log


def is_enabled(name: str) -> bool:
    return artifact_logger(name).isEnabledFor(logging.INFO)


def _ensure_handler() -> None:
    global _handler
    if _handler is None:
        _handler = logging.StreamHandler()
        _handler.setFormatter(logging.Formatter("[%(name)s] %(message)s"))
        root = logging.getLogger("aot")
        root.addHandler(_handler)
        root.propagate = False


def configure(spec: str | None = None) -> set[str]:
    """Switch on every artifact that AOT_LOGS (or `spec`) names; called once by `import aot`."""
    names = enabled_artifacts(spec)
    for name in names:
        _enable(name)
    return names


def _enable(name: str) -> None:
    _ensure_handler()
    logging.getLogger(f"aot.{name}").setLevel(logging.INFO)
