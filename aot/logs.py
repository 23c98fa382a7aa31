"""AOT_LOGS: switch on debug output of pipeline stages through `logging`.

AOT_LOGS is a comma-separated list of artifact names (graph, ir, llvm, asm, ptx, guards,
recompiles, ...) or "all". Each artifact logs through the logger `aot.<artifact>` at INFO level.

`aot.progress` is the one artifact that is not debug output: any step that can take more than about
a second (a large compile, building the FFT kernels, linking a library) announces itself there at
INFO before it starts. It goes through `logging` like everything else (`logging.basicConfig(
level=logging.INFO)` shows it); the CLI switches it on, and so does AOT_LOGS=progress.
"""
from __future__ import annotations

import os

from ir.logger import INFO, PROGRESS, LazyLogger, get_logger  # noqa: F401 (PROGRESS: aot.logs.PROGRESS)

ARTIFACTS = ("graph", "ir", "llvm", "asm", "ptx", "guards", "recompiles", "fusion", "cache", "fft", "progress")
# artifact loggers live under "aot." so that one handler on "aot" prints them all
_handler = None  # a logging.Handler (logging is imported when an artifact is switched on)


def enabled_artifacts(spec: str | None = None) -> set[str]:
    spec = os.environ.get("AOT_LOGS", "") if spec is None else spec
    names = {s.strip().lstrip("+") for s in spec.split(",") if s.strip()}
    if "all" in names:
        return set(ARTIFACTS)
    return names


def artifact_logger(name: str) -> LazyLogger:
    """The logger for one artifact, switched on when AOT_LOGS names it."""
    if name in enabled_artifacts():
        _enable(name)
    return get_logger(f"aot.{name}")


def is_enabled(name: str) -> bool:
    return artifact_logger(name).isEnabledFor(INFO)


def _ensure_handler() -> None:
    import logging

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
    import logging

    _ensure_handler()
    logging.getLogger(f"aot.{name}").setLevel(logging.INFO)
