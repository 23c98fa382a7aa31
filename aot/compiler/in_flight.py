"""The compiles of one CompiledFunction running in the background (background.py), kept apart so
that aot.compile's import (a warm start) does not import the compile pool, futures and watchdog."""
from __future__ import annotations

import numpy as np


def check_flag(value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"aot.compile: options['async_compile'] must be True or False, got {value!r}")
    return bool(value)


class InFlight:
    """One CompiledFunction's compiles running on the pool: signature -> Future of the entry."""

    def __init__(self):
        self._jobs: dict = {}
        self.generation = 0  # advanced by forget(): compiles started before install nothing
        self.error: BaseException | None = None  # a failed capture's: why every call runs eagerly

    def __len__(self) -> int:
        return len(self._jobs)

    def get(self, sig):  # -> aot.futures.Future | None
        return self._jobs.get(sig)

    def signatures(self) -> list:
        return list(self._jobs)

    def add(self, sig, job) -> None:
        self._jobs[sig] = job

    def remove(self, sig, job) -> None:
        if self._jobs.get(sig) is job:
            del self._jobs[sig]

    def forget(self) -> None:
        self._jobs.clear()
        self.generation += 1
        self.error = None
