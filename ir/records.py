"""Value records: classes whose equality, hash and repr come from their `__slots__`, in order.

The classes a warm start imports (argument specs, tree specs, guard specs, ELF headers, ABI slot
layouts) were dataclasses; making one costs 0.2-0.4 ms at import (dataclasses generates its
methods with exec), a third of a warm first call's budget across them. A record writes its own
`__init__` and gets the rest from here. Treat records as immutable: they are compared, hashed and
used as keys by value.

Plain Python, no dependencies: every package of aot imports it.
"""
from __future__ import annotations


class Record:
    """Equality, hash and repr over the fields named by the class's `__slots__`."""

    __slots__ = ()

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self._values() == other._values()

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._values()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({inner})"

    def __getstate__(self):
        return self._values()

    def __setstate__(self, state) -> None:
        for name, value in zip(self.__slots__, state, strict=True):
            object.__setattr__(self, name, value)

    def replace(self, **changes):
        """A copy with `changes` (as dataclasses.replace)."""
        new = object.__new__(type(self))
        for name in self.__slots__:
            object.__setattr__(new, name, changes.pop(name, getattr(self, name)))
        if changes:
            raise TypeError(f"{type(self).__name__} has no field(s) {sorted(changes)}")
        return new
