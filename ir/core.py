"""SSA structure: values with use lists, operations, blocks, regions, functions and modules."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .symbols import SymbolInfo
from .types import Type


class Value:
    """An SSA value. `uses` lists (operation, operand index) pairs that read it."""

    __slots__ = ("type", "uses", "name_hint")

    def __init__(self, type: Type, name_hint: str | None = None):
        self.type = type
        self.uses: list[tuple[Operation, int]] = []
        self.name_hint = name_hint

    @property
    def users(self) -> list[Operation]:
        seen: dict[int, Operation] = {}
        for op, _ in self.uses:
            seen.setdefault(id(op), op)
        return list(seen.values())

    def replace_all_uses_with(self, new: Value) -> None:
        if new is self:
            return
        for op, i in list(self.uses):
            op.set_operand(i, new)

    @property
    def owner(self):
        raise NotImplementedError


class OpResult(Value):
    __slots__ = ("op", "index")

    def __init__(self, type: Type, op: Operation, index: int):
        super().__init__(type)
        self.op = op
        self.index = index

    @property
    def owner(self) -> Operation:
        return self.op

    def __repr__(self) -> str:
        return f"<OpResult #{self.index} of {self.op.name} : {self.type}>"


class BlockArg(Value):
    __slots__ = ("block", "index")

    def __init__(self, type: Type, block: Block, index: int, name_hint: str | None = None):
        super().__init__(type, name_hint)
        self.block = block
        self.index = index

    @property
    def owner(self) -> Block:
        return self.block

    def __repr__(self) -> str:
        return f"<BlockArg #{self.index} : {self.type}>"


class Operation:
    """`%r = name(%a, %b) {attrs} : types` with optional regions. Build through ir.Builder."""

    __slots__ = ("name", "operands", "results", "attrs", "regions", "parent", "loc")

    def __init__(self, name: str, operands: list[Value], result_types: list[Type],
                 attrs: dict[str, Any] | None = None, regions: list[Region] | None = None,
                 loc: str | None = None):
        self.name = name
        self.operands: list[Value] = []
        self.attrs: dict[str, Any] = dict(attrs or {})
        self.results = [OpResult(t, self, i) for i, t in enumerate(result_types)]
        self.regions: list[Region] = []
        self.parent: Block | None = None
        self.loc = loc  # source location (file:line) of the code that produced the op
        for v in operands:
            self._append_operand(v)
        for r in regions or []:
            self.add_region(r)

    # --- operands and use lists -------------------------------------------------------------
    def _append_operand(self, v: Value) -> None:
        if not isinstance(v, Value):
            raise TypeError(f"operand of {self.name} must be an ir Value, got {type(v).__name__}")
        v.uses.append((self, len(self.operands)))
        self.operands.append(v)

    def set_operand(self, i: int, v: Value) -> None:
        old = self.operands[i]
        old.uses.remove((self, i))
        self.operands[i] = v
        v.uses.append((self, i))

    def drop_operands(self) -> None:
        for i, v in enumerate(self.operands):
            v.uses.remove((self, i))
        self.operands = []

    # --- results ----------------------------------------------------------------------------
    @property
    def result(self) -> OpResult:
        if len(self.results) != 1:
            raise ValueError(f"{self.name} has {len(self.results)} results, not one")
        return self.results[0]

    @property
    def result_types(self) -> list[Type]:
        return [r.type for r in self.results]

    def has_uses(self) -> bool:
        return any(r.uses for r in self.results)

    # --- regions ----------------------------------------------------------------------------
    def add_region(self, region: Region) -> Region:
        region.parent = self
        self.regions.append(region)
        return region

    def walk(self) -> Iterator[Operation]:
        """This op, then every op nested in its regions (pre-order)."""
        yield self
        for r in self.regions:
            for b in r.blocks:
                for op in list(b.ops):
                    yield from op.walk()

    # --- editing ----------------------------------------------------------------------------
    def erase(self) -> None:
        """Remove from the parent block. The results must have no remaining uses."""
        for r in self.results:
            if r.uses:
                raise ValueError(f"cannot erase {self.name}: result #{r.index} still has uses")
        for nested in list(self.walk())[1:]:
            nested.drop_operands()
        self.drop_operands()
        if self.parent is not None:
            self.parent.ops.remove(self)
            self.parent = None

    def replace_with(self, values: list[Value]) -> None:
        """Replace all uses of this op's results with `values`, then erase it."""
        if len(values) != len(self.results):
            raise ValueError(f"{self.name}: {len(self.results)} results replaced by {len(values)} values")
        for r, v in zip(self.results, values):
            r.replace_all_uses_with(v)
        self.erase()

    def __repr__(self) -> str:
        return f"<Operation {self.name} ({len(self.operands)} operands, {len(self.results)} results)>"


class Block:
    __slots__ = ("args", "ops", "parent")

    def __init__(self, arg_types: list[Type] = (), arg_names: list[str | None] | None = None):
        names = list(arg_names) if arg_names is not None else [None] * len(arg_types)
        self.args = [BlockArg(t, self, i, n) for i, (t, n) in enumerate(zip(arg_types, names))]
        self.ops: list[Operation] = []
        self.parent: Region | Func | None = None

    def add_arg(self, type: Type, name_hint: str | None = None) -> BlockArg:
        a = BlockArg(type, self, len(self.args), name_hint)
        self.args.append(a)
        return a

    def append(self, op: Operation) -> Operation:
        return self.insert(len(self.ops), op)

    def insert(self, index: int, op: Operation) -> Operation:
        if op.parent is not None:
            raise ValueError(f"{op.name} already belongs to a block")
        op.parent = self
        self.ops.insert(index, op)
        return op

    def insert_before(self, anchor: Operation, op: Operation) -> Operation:
        return self.insert(self.ops.index(anchor), op)

    @property
    def terminator(self) -> Operation | None:
        return self.ops[-1] if self.ops else None

    def walk(self) -> Iterator[Operation]:
        for op in list(self.ops):
            yield from op.walk()


class Region:
    __slots__ = ("blocks", "parent")

    def __init__(self, blocks: list[Block] | None = None):
        self.blocks: list[Block] = []
        self.parent: Operation | None = None
        for b in blocks or []:
            self.add_block(b)

    def add_block(self, b: Block) -> Block:
        b.parent = self
        self.blocks.append(b)
        return b

    @property
    def block(self) -> Block:
        return self.blocks[0]


class Func:
    """`func @name(%x: f32[s0]) -> f32[s0] { ... return %y : f32[s0] }`."""

    __slots__ = ("name", "body", "result_types", "parent", "arg_names")

    def __init__(self, name: str, arg_types: list[Type], result_types: list[Type] | None = None,
                 arg_names: list[str | None] | None = None):
        self.name = name
        self.body = Block(arg_types, arg_names)
        self.body.parent = self
        self.result_types: list[Type] = list(result_types or [])
        self.parent: Module | None = None

    @property
    def args(self) -> list[BlockArg]:
        return self.body.args

    @property
    def arg_types(self) -> list[Type]:
        return [a.type for a in self.body.args]

    def walk(self) -> Iterator[Operation]:
        return self.body.walk()

    @property
    def return_op(self) -> Operation | None:
        t = self.body.terminator
        return t if t is not None and t.name == "return" else None

    def __repr__(self) -> str:
        return f"<Func @{self.name}>"


class Module:
    """Top level: declared size symbols, guards (sympy booleans over them) and functions."""

    __slots__ = ("name", "symbols", "guards", "funcs")

    def __init__(self, name: str = "main"):
        self.name = name
        self.symbols: dict[str, SymbolInfo] = {}
        self.guards: list[Any] = []
        self.funcs: dict[str, Func] = {}

    def add_func(self, f: Func) -> Func:
        if f.name in self.funcs:
            raise ValueError(f"function @{f.name} already defined in module @{self.name}")
        f.parent = self
        self.funcs[f.name] = f
        return f

    def declare_symbol(self, info: SymbolInfo) -> SymbolInfo:
        self.symbols[info.name] = info
        return info

    def walk(self) -> Iterator[Operation]:
        for f in self.funcs.values():
            yield from f.walk()

    def __repr__(self) -> str:
        return f"<Module @{self.name}: {list(self.funcs)}>"
