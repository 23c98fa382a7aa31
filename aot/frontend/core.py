"""One callable per core op, like torch.ops.aten.add: `ops.add(x, y)`, `ops.sum(x, axes=(0,))`.

Calling a CoreOp runs the op's numpy reference (through EagerEmitter, so results are checked against
the op's rules); graphs whose nodes target CoreOps therefore run eagerly as they are. On an operand
that names its emitter (`__aot_emitter__`: a traced array) the op is recorded there instead, so
that compiling such a graph captures the same ops. The name is
readable in generated code: repr(ops.add) == "ops.add".
"""
from __future__ import annotations

from typing import Any

from ir.opdef import OPDEFS, OpDef, lookup

from .emitter import EagerEmitter

_EAGER = EagerEmitter()


class CoreOp:
    __slots__ = ("name", "__name__", "__qualname__")

    def __init__(self, name: str):
        self.name = name
        self.__name__ = name
        self.__qualname__ = f"ops.{name}"

    @property
    def opdef(self) -> OpDef:
        return lookup(self.name)

    def __call__(self, *operands: Any, **attrs: Any):
        for x in operands:  # a traced operand: the op is recorded as it is (not its numpy reference)
            emitter = getattr(x, "__aot_emitter__", None)
            if emitter is not None:
                return emitter.emit(self.name, list(operands), attrs)
        return _EAGER.emit(self.name, operands, attrs)

    def __repr__(self) -> str:
        return f"ops.{self.name}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CoreOp) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("CoreOp", self.name))

    def __reduce__(self):
        return (CoreOp, (self.name,))


class _Namespace:
    """`ops.<name>` for every registered op (rows are loaded from aot.ops on first use)."""

    def __init__(self):
        self._cache: dict[str, CoreOp] = {}

    def __getattr__(self, name: str) -> CoreOp:
        if name.startswith("__"):
            raise AttributeError(name)
        return self[name]

    def __getitem__(self, name: str) -> CoreOp:
        op = self._cache.get(name)
        if op is None:
            import aot.ops  # noqa: F401  (registers the rows)

            if name not in OPDEFS:
                raise AttributeError(f"no core op named {name!r}")
            op = self._cache[name] = CoreOp(name)
        return op

    def __dir__(self):
        import aot.ops  # noqa: F401

        return sorted(OPDEFS)

    def __repr__(self) -> str:
        return "ops"


ops = _Namespace()
