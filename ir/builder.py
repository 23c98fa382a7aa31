"""Builder: an insertion point plus one method per registered op (`b.add(x, y)`, `b.op("add", x, y)`)."""
from __future__ import annotations

from typing import Any

from .core import Block, Func, Module, Operation, Region, Value
from .opdef import OPDEFS, infer_result_types, lookup
from .types import Type


class Builder:
    def __init__(self, block: Block | None = None, index: int | None = None, loc: str | None = None):
        self.block = block
        self.index = index  # None: append at the end
        self.loc = loc  # source location attached to created ops

    # --- insertion point ----------------------------------------------------------------------
    @classmethod
    def at_end(cls, block: Block) -> Builder:
        return cls(block)

    @classmethod
    def before(cls, op: Operation) -> Builder:
        assert op.parent is not None, "op is not in a block"
        return cls(op.parent, op.parent.ops.index(op))

    @classmethod
    def after(cls, op: Operation) -> Builder:
        assert op.parent is not None, "op is not in a block"
        return cls(op.parent, op.parent.ops.index(op) + 1)

    def insert(self, op: Operation) -> Operation:
        if self.block is None:
            raise ValueError("builder has no insertion block")
        if self.index is None:
            self.block.append(op)
        else:
            self.block.insert(self.index, op)
            self.index += 1
        return op

    # --- creation -----------------------------------------------------------------------------
    def create(self, name: str, operands: list[Value], attrs: dict[str, Any] | None = None,
               regions: list[Region] | None = None, result_types: list[Type] | None = None) -> Operation:
        """Create and insert an op; result types are inferred from the registry unless given."""
        d = lookup(name)
        attrs = d.full_attrs(dict(attrs or {}))
        if result_types is None:
            result_types = infer_result_types(name, [v.type for v in operands], attrs, regions)
        op = Operation(name, list(operands), list(result_types), attrs, regions, loc=self.loc)
        return self.insert(op)

    def op(self, name: str, *operands: Value, **attrs: Any):
        """Create `name` and return its result (or the tuple of results)."""
        op = self.create(name, list(operands), attrs)
        return op.results[0] if len(op.results) == 1 else tuple(op.results)

    def __getattr__(self, attr: str):
        name = attr.rstrip("_").replace("__", ".")
        if name in OPDEFS:
            return lambda *operands, **attrs: self.op(name, *operands, **attrs)
        raise AttributeError(f"Builder has no op or attribute {attr!r}")

    def ret(self, *values: Value) -> Operation:
        """Terminate a function body; sets the function's result types."""
        op = self.create("return", list(values), {}, result_types=[])
        parent = self.block.parent if self.block is not None else None
        if isinstance(parent, Func):
            parent.result_types = [v.type for v in values]
        return op

    def yield_(self, *values: Value) -> Operation:
        return self.create("yield", list(values), {}, result_types=[])


def new_func(module: Module, name: str, arg_types: list[Type],
             arg_names: list[str | None] | None = None) -> tuple[Func, Builder]:
    """Add an empty function to `module` and return it with a builder at its end."""
    f = module.add_func(Func(name, arg_types, arg_names=arg_names))
    return f, Builder(f.body)
