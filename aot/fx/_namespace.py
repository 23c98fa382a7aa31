"""Unique, readable Python identifiers for nodes and generated-code globals."""
from __future__ import annotations

import builtins
import keyword
import re

_ILLEGAL_CHARS = re.compile(r"[^0-9a-zA-Z_]+")
_NUMBERED = re.compile(r"(.*)_(\d+)$")
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")
# names the generated code relies on; a node called `numpy` would shadow the module
_RESERVED = frozenset({"self", "numpy", "np", "inf", "nan", "operator", "math", "builtins", "aot",
                       "fx_pytree", "pytree"})
_ILLEGAL_NAMES = frozenset(keyword.kwlist) | frozenset(dir(builtins)) | _RESERVED


def snake_case(s: str) -> str:
    return _CAMEL.sub(r"_\1", s).lower()


def sanitize(candidate: str) -> str:
    name = _ILLEGAL_CHARS.sub("_", candidate).strip("_") or "_unnamed"
    return f"_{name}" if name[0].isdigit() else name


class Namespace:
    """Hands out identifiers that are unique, legal and do not shadow builtins or reserved names.

    A repeated base gets `_1`, `_2`, ... suffixes, like torch.fx (`add`, `add_1`, `add_2`).
    """

    def __init__(self, used: set[str] | None = None) -> None:
        self._used: set[str] = set(used or ())
        self._next_suffix: dict[str, int] = {}

    def create_name(self, candidate: str) -> str:
        candidate = sanitize(candidate)
        if candidate not in self._used and candidate not in _ILLEGAL_NAMES:
            self._used.add(candidate)
            return candidate
        match = _NUMBERED.match(candidate)
        base = match.group(1) if match else candidate
        num = self._next_suffix.get(base, 1)
        while f"{base}_{num}" in self._used or f"{base}_{num}" in _ILLEGAL_NAMES:
            num += 1
        self._next_suffix[base] = num + 1
        name = f"{base}_{num}"
        self._used.add(name)
        return name

    def copy(self) -> Namespace:
        ns = Namespace(self._used)
        ns._next_suffix = dict(self._next_suffix)
        return ns
