"""The verifier: structural invariants of the SSA graph plus every op's registry rules, re-run.

`verify(module_or_func)` raises VerifyError naming the first op that breaks a rule and what was
expected. It checks, per op: the op is registered; arity; attributes (unknown / missing); result
types equal to what the registry infers (dtype and symbolic shape rules, or the op's `infer`
hook); the op's own `verify` hook; operands defined before use in a dominating, visible scope of
the same function (bodies of ops with the "kernel" or "isolated" trait see only their own block
arguments and values defined inside); use lists (every use recorded once, no stale uses); and
terminators (a function body ends in `return` of the declared result types, kernel bodies end in
`yield`, terminators appear nowhere else).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .core import Block, BlockArg, Func, Module, Operation, OpResult, Region, Value
from .opdef import OPDEFS, OpError, infer_result_types
from .symbols import dims_equal
from .types import ScalarType, TensorType

ISOLATED_TRAITS = frozenset({"kernel", "isolated"})


class VerifyError(ValueError):
    """`op` (None for function-level problems) breaks an invariant described by `msg`."""

    def __init__(self, op: Operation | None, msg: str):
        self.op = op
        self.msg = msg
        where = f"{describe_op(op)}{_func_suffix(op)}: " if op is not None else ""
        super().__init__(f"{where}{msg}")


# --- readable op descriptions (also used by the interpreter's errors) -------------------------------

def _attr_str(v: Any) -> str:
    if isinstance(v, np.ndarray):
        if v.size <= 4:
            return f"array({v.tolist()}, dtype={v.dtype})"
        return f"array<{v.dtype}{list(v.shape)}>"
    return str(v)


def describe_op(op: Operation) -> str:
    """`add(f32[3], f32[3]) {k = v} -> (f32[3])` plus the source location when known."""
    operands = ", ".join(str(v.type) for v in op.operands)
    attrs = ", ".join(f"{k} = {_attr_str(v)}" for k, v in sorted(op.attrs.items()))
    attrs = f" {{{attrs}}}" if attrs else ""
    results = ", ".join(str(r.type) for r in op.results)
    loc = f" at {op.loc}" if op.loc else ""
    return f"'{op.name}({operands}){attrs} -> ({results})'{loc}"


def enclosing_func(obj: Operation | Block | Region | Value | None) -> Func | None:
    """The function containing an op, block, region or value (None when detached)."""
    if isinstance(obj, OpResult):
        obj = obj.op
    elif isinstance(obj, BlockArg):
        obj = obj.block
    while obj is not None and not isinstance(obj, Func):
        obj = obj.parent
    return obj


def _func_suffix(op: Operation) -> str:
    f = enclosing_func(op)
    return f" in @{f.name}" if f is not None else ""


# --- entry point ---------------------------------------------------------------------------------

def verify(target: Module | Func) -> None:
    """Check `target`; raise VerifyError on the first problem. Returns None when valid."""
    if isinstance(target, Module):
        for name, f in target.funcs.items():
            if f.name != name:
                raise VerifyError(None, f"module @{target.name} lists function @{f.name} under {name!r}")
            _FuncVerifier(f).run()
    elif isinstance(target, Func):
        _FuncVerifier(target).run()
    else:
        raise TypeError(f"verify expects an ir Module or Func, got {type(target).__name__}")


def types_equal(a, b) -> bool:
    """Type equality that compares symbolic dims mathematically rather than by expression tree."""
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return (a.dtype == b.dtype and len(a.shape) == len(b.shape)
                and all(dims_equal(x, y) for x, y in zip(a.shape, b.shape)))
    return a == b


def _is_isolated(op: Operation) -> bool:
    d = OPDEFS.get(op.name)
    return d is not None and bool(d.traits & ISOLATED_TRAITS)


def _scalar_in_kernel_body(op: Operation, have, inferred) -> bool:
    """Kernel bodies compute on scalars: an op without operands there (a constant) has a ScalarType
    result where its rules, which see no operand to tell them, give a rank-0 tensor."""
    region = op.parent.parent if op.parent is not None else None
    return (isinstance(have, ScalarType) and isinstance(inferred, TensorType) and inferred.shape == ()
            and have.dtype == inferred.dtype and isinstance(region, Region) and region.parent is not None
            and _is_isolated(region.parent))


def _is_terminator(op: Operation) -> bool:
    d = OPDEFS.get(op.name)
    return d is not None and d.has("terminator")


class _FuncVerifier:
    def __init__(self, func: Func):
        self.func = func
        self.live_ops: set[int] = set()

    def run(self) -> None:
        f = self.func
        if f.body.parent is not f:
            raise VerifyError(None, f"body block of @{f.name} does not point back to its function")
        self.live_ops = {id(op) for op in f.walk()}
        self._check_block(f.body, visible=set(), terminator="return")
        ret = f.body.terminator
        got = [v.type for v in ret.operands]
        if len(got) != len(f.result_types) or not all(map(types_equal, got, f.result_types)):
            raise VerifyError(ret, f"returns ({', '.join(map(str, got))}), but @{f.name} declares "
                                   f"({', '.join(map(str, f.result_types))})")

    # --- blocks and scopes -----------------------------------------------------------------------
    def _check_block(self, block: Block, visible: set[int], terminator: str | None) -> None:
        for i, a in enumerate(block.args):
            if a.block is not block or a.index != i:
                raise VerifyError(None, f"block argument #{i} of @{self.func.name} has a wrong back-pointer")
            self._check_uses(a)
            visible.add(id(a))
        for op in block.ops:
            if op.parent is not block:
                raise VerifyError(op, "its parent pointer does not name the block that holds it")
            if _is_terminator(op) and op is not block.ops[-1]:
                raise VerifyError(op, f"terminator in the middle of a block of the {self._owner(block)}; "
                                      "terminators must be the last op")
            self._check_op(op, visible)
            visible.update(id(r) for r in op.results)
        self._check_terminator(block, terminator)

    def _owner(self, block: Block) -> str:
        return f"function @{self.func.name}" if isinstance(block.parent, Func) else "region"

    def _check_terminator(self, block: Block, expected: str | None) -> None:
        owner = self._owner(block)
        want = f"'{expected}'" if expected else "a terminator"
        last = block.terminator
        if last is None:
            raise VerifyError(None, f"empty block in the {owner}; expected it to end in {want}")
        if not _is_terminator(last):
            raise VerifyError(last, f"the {owner} body must end in {want}")
        if expected is not None and last.name != expected:
            raise VerifyError(last, f"the {owner} body must end in '{expected}', not '{last.name}'")

    # --- one op ----------------------------------------------------------------------------------
    def _check_op(self, op: Operation, visible: set[int]) -> None:
        d = OPDEFS.get(op.name)
        if d is None:
            raise VerifyError(op, f"unknown op {op.name!r} (not in the op registry; is aot.ops imported?)")
        for i, v in enumerate(op.operands):
            if id(v) not in visible:
                raise VerifyError(op, f"operand #{i} {self._why_invisible(op, v)}")
            if v.uses.count((op, i)) != 1:
                raise VerifyError(op, f"operand #{i} records this use {v.uses.count((op, i))} times in its "
                                      "use list; expected exactly once")
        try:
            d.check_arity(len(op.operands))
            d.full_attrs(op.attrs)
            inferred = infer_result_types(op.name, [v.type for v in op.operands], op.attrs, op.regions)
        except (OpError, TypeError, ValueError) as e:  # rules may trip over malformed attributes
            raise VerifyError(op, f"rejected by its registry rules: {e}") from None
        self._check_results(op, inferred)
        for ri, region in enumerate(op.regions):
            self._check_region(op, ri, region, visible)
        if d.verify is not None:
            try:
                d.verify(op)
            except (OpError, TypeError, ValueError) as e:
                raise VerifyError(op, f"fails its verify hook: {e}") from None

    def _check_results(self, op: Operation, inferred: list) -> None:
        if len(inferred) != len(op.results):
            raise VerifyError(op, f"has {len(op.results)} result(s), the registry infers {len(inferred)}")
        for i, (r, t) in enumerate(zip(op.results, inferred)):
            if r.op is not op or r.index != i:
                raise VerifyError(op, f"result #{i} has a wrong back-pointer")
            if not types_equal(r.type, t) and not _scalar_in_kernel_body(op, r.type, t):
                raise VerifyError(op, f"result #{i} has type {r.type}, but its dtype/shape rules give {t}")
            self._check_uses(r)

    def _check_region(self, op: Operation, ri: int, region: Region, visible: set[int]) -> None:
        if region.parent is not op:
            raise VerifyError(op, f"region #{ri} does not point back to its op")
        isolated = _is_isolated(op)
        for block in region.blocks:
            if block.parent is not region:
                raise VerifyError(op, f"a block of region #{ri} does not point back to its region")
            inner = set() if isolated else set(visible)
            self._check_block(block, inner, terminator="yield" if isolated else None)
        if isolated and len(region.blocks) != 1:
            raise VerifyError(op, f"region #{ri} has {len(region.blocks)} blocks; kernel bodies have one")

    def _check_uses(self, v: Value) -> None:
        seen: set[tuple[int, int]] = set()
        for user, i in v.uses:
            key = (id(user), i)
            if key in seen:
                raise VerifyError(user, f"operand #{i} is recorded twice in the use list of its value")
            seen.add(key)
            if id(user) not in self.live_ops:
                home = enclosing_func(user)
                if home is not None and home is not self.func:
                    raise VerifyError(user, f"operand #{i} ({v.type}) is defined in another function "
                                            f"@{self.func.name}")
                raise VerifyError(user, f"stale use: {v!r} lists this op as a user, but it is not in "
                                        f"@{self.func.name} (erased or detached without dropping operands)")
            if i >= len(user.operands) or user.operands[i] is not v:
                raise VerifyError(user, f"stale use: {v!r} lists operand #{i} of this op, which now reads "
                                        "another value")

    # --- diagnostics -------------------------------------------------------------------------------
    def _why_invisible(self, op: Operation, v: Value) -> str:
        home = enclosing_func(v)
        if home is None:
            return f"({v.type}) is defined by an op that is not in any function (erased or detached)"
        if home is not self.func:
            return f"({v.type}) is defined in another function @{home.name}"
        def_block = v.op.parent if isinstance(v, OpResult) else v.block
        if def_block is op.parent and isinstance(v, OpResult):
            return f"({v.type}) is used before its definition by '{v.op.name}'"
        container = op.parent
        while container is not None:
            owner = container.parent.parent if isinstance(container.parent, Region) else None
            if owner is not None and _is_isolated(owner):
                return (f"({v.type}) is defined outside the body of '{owner.name}'; kernel bodies may use "
                        "only their block arguments and values defined inside")
            container = owner.parent if owner is not None else None
        return f"({v.type}) does not dominate this use (defined in a region that does not enclose it)"
