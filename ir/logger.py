"""Loggers that import `logging` on first use.

`logging` (with traceback, string and its handlers' machinery) costs ~3 ms to import, a fifth of a
warm start's budget, and a warm start logs nothing. Modules on that path take their logger from
here: `log = get_logger(__name__)` behaves as `logging.getLogger(__name__)` and imports logging the
first time one of its methods is used.

Plain Python, no dependencies: every package of aot imports it.
"""
from __future__ import annotations

import sys

# aot.logs's "progress" artifact: any step that can take more than about a second announces itself
# there (named here, the package every other imports, so that announcing needs no import of aot)
PROGRESS = "aot.progress"
INFO = 20  # logging.INFO, for isEnabledFor without the import
DEBUG = 10
WARNING = 30


class LazyLogger:
    """`logging.getLogger(name)`, made when first used. While nothing has imported `logging`, no
    logger can have a handler or a level below WARNING, so debug and info records go nowhere:
    those calls return without importing it."""

    __slots__ = ("_logger", "name")

    def __init__(self, name: str):
        self.name = name
        self._logger = None

    def _real(self):
        if self._logger is None:
            import logging

            self._logger = logging.getLogger(self.name)
        return self._logger

    def __getattr__(self, attr: str):
        return getattr(self._real(), attr)

    def debug(self, *args, **kwargs) -> None:
        if self._logger is not None or "logging" in sys.modules:
            self._real().debug(*args, **kwargs)

    def info(self, *args, **kwargs) -> None:
        if self._logger is not None or "logging" in sys.modules:
            self._real().info(*args, **kwargs)

    def isEnabledFor(self, level: int) -> bool:  # noqa: N802 - logging.Logger's name
        if self._logger is None and "logging" not in sys.modules:
            return level >= WARNING
        return self._real().isEnabledFor(level)

    def __repr__(self) -> str:
        return f"<LazyLogger {self.name}>"


def get_logger(name: str) -> LazyLogger:
    return LazyLogger(name)
