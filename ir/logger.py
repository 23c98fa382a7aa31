"""Loggers that import `logging` on first use.

`logging` (with traceback, string and its handlers' machinery) costs ~3 ms to import, a fifth of a
warm start's budget, and a warm start logs nothing. Modules on that path take their logger from
here: `log = get_logger(__name__)` behaves as `logging.getLogger(__name__)` and imports logging the
first time one of its methods is used.

Plain Python, no dependencies: every package of aot imports it.
"""
from __future__ import annotations

import sys

INFO = 20  # logging.INFO, for isEnabledFor without the import
DEBUG = 10
WARNING = 30


class LazyLogger:
    """`logging.getLogger(name)`, made when first used. While nothing has imported `logging`, no
    logger can have a handler or a level below WARNING, so debug and info records go nowhere:
    those calls return without importing it."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __getattr__(self, attr: str):
        import logging

        return getattr(logging.getLogger(self.name), attr)

    def debug(self, *args, **kwargs) -> None:
        if "logging" in sys.modules:
            sys.modules["logging"].getLogger(self.name).debug(*args, **kwargs)

    def info(self, *args, **kwargs) -> None:
        if "logging" in sys.modules:
            sys.modules["logging"].getLogger(self.name).info(*args, **kwargs)

    def isEnabledFor(self, level: int) -> bool:  # noqa: N802 - logging.Logger's name
        if "logging" not in sys.modules:
            return level >= WARNING
        return sys.modules["logging"].getLogger(self.name).isEnabledFor(level)

    def __repr__(self) -> str:
        return f"<LazyLogger {self.name}>"


def get_logger(name: str) -> LazyLogger:
    return LazyLogger(name)
