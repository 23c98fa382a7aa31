"""Immutable list and dict used for `Node.args`/`Node.kwargs`.

Node arguments are shared between a node and the user lists of its inputs, so in-place mutation
would silently desynchronise `Node.users`; these containers make that an error instead.
"""
from __future__ import annotations

from typing import Any

__all__ = ["immutable_list", "immutable_dict"]

_LIST_MUTATORS = ("__delitem__", "__iadd__", "__imul__", "__setitem__", "append", "clear", "extend",
                  "insert", "pop", "remove", "reverse", "sort")
_DICT_MUTATORS = ("__delitem__", "__ior__", "__setitem__", "clear", "pop", "popitem", "setdefault", "update")


def _immutable(self: Any, *args: Any, **kwargs: Any) -> None:
    raise TypeError(f"'{type(self).__name__}' object is immutable; build a new one and assign it "
                    "to Node.args / Node.kwargs instead")


class immutable_list(list):  # noqa: N801 - torch.fx's public name
    """A list that refuses mutation (hashable, so it may be a dict key)."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self))

    def __reduce__(self):
        return (immutable_list, (tuple(self),))


class immutable_dict(dict):  # noqa: N801 - torch.fx's public name
    """A dict that refuses mutation (hashable, so it may be a dict key)."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))

    def __reduce__(self):
        return (immutable_dict, (tuple(self.items()),))


for _name in _LIST_MUTATORS:
    setattr(immutable_list, _name, _immutable)
for _name in _DICT_MUTATORS:
    setattr(immutable_dict, _name, _immutable)
