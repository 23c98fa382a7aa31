"""The code generator's IRBuilder: llvmlite's, folding what it can decide while it builds.

LLVM's own C++ IRBuilder folds constant operands as it goes (its ConstantFolder); llvmlite's
writes every instruction. Kernels are written once for any size and stride, and most of those are
constants in a given graph (static dims, the strides of buffers the entry allocates), so the
unfolded text held long chains of `mul i64 %k, 1` / `add i64 0, ...`, tests of constant
strides and code for paths that never run (a 256-element block loop on a row of 10). Every such
instruction cost Python time to build and print, and LLVM time to parse and delete again: the
per-sample-gradient graph's module was half dead code.

`Builder` folds integer arithmetic, comparisons, selects and casts of constants (two's-complement
wrapping, as LLVM folds them; never a division by zero or the one overflowing sdiv), and the
identities x+0, x*1, x*0, x&0, x|0 and the like. Control flow on a constant condition takes the
branch: `cbranch` becomes `br`, and `if_then` / `if_else` emit the branch that runs inline and the
other into a block no edge reaches. `prune_unreachable` deletes such blocks (and their phi
incomings) before the module is printed. Float arithmetic is never folded here (rounding, NaNs
and signed zeros are LLVM's business).
"""
from __future__ import annotations

import contextlib

from llvmlite import ir as L


def const_int(v) -> int | None:
    """The value of an integer (or i1) scalar constant, else None."""
    if type(v) is L.Constant and isinstance(v.type, L.IntType):
        c = v.constant
        if c is None:
            return 0
        if isinstance(c, (int, bool)):
            return int(c)
    return None


def _wrap(typ: L.IntType, value: int) -> L.Constant:
    """`value` as a constant of `typ`, wrapped to its width (signed; i1 as 0/1)."""
    w = typ.width
    value &= (1 << w) - 1
    if w > 1 and value >> (w - 1):
        value -= 1 << w
    return L.Constant(typ, value)


def _unsigned(typ: L.IntType, value: int) -> int:
    return value & ((1 << typ.width) - 1)


def _signed(typ: L.IntType, value: int) -> int:
    w = typ.width
    value &= (1 << w) - 1
    return value - (1 << w) if w > 1 and value >> (w - 1) else value


def _all_ones(typ: L.IntType, value: int) -> bool:
    return _unsigned(typ, value) == (1 << typ.width) - 1


_SIGNED_CMP = {"==": int.__eq__, "!=": int.__ne__, "<": int.__lt__, "<=": int.__le__, ">": int.__gt__,
               ">=": int.__ge__}


class Builder(L.IRBuilder):
    """llvmlite.ir.IRBuilder folding integer constants and constant branches (module docstring)."""

    # --- integer arithmetic --------------------------------------------------------------------
    def add(self, lhs, rhs, name="", flags=()):
        a, b = const_int(lhs), const_int(rhs)
        if a is not None and b is not None:
            return _wrap(lhs.type, a + b)
        if b == 0:
            return lhs
        if a == 0:
            return rhs
        return super().add(lhs, rhs, name=name, flags=flags)

    def sub(self, lhs, rhs, name="", flags=()):
        a, b = const_int(lhs), const_int(rhs)
        if a is not None and b is not None:
            return _wrap(lhs.type, a - b)
        if b == 0:
            return lhs
        if lhs is rhs and isinstance(lhs.type, L.IntType):
            return L.Constant(lhs.type, 0)
        return super().sub(lhs, rhs, name=name, flags=flags)

    def mul(self, lhs, rhs, name="", flags=()):
        a, b = const_int(lhs), const_int(rhs)
        if a is not None and b is not None:
            return _wrap(lhs.type, a * b)
        if a == 0 or b == 0:
            return L.Constant(lhs.type, 0)
        if b == 1:
            return lhs
        if a == 1:
            return rhs
        return super().mul(lhs, rhs, name=name, flags=flags)

    def sdiv(self, lhs, rhs, name="", flags=()):
        a, b = const_int(lhs), const_int(rhs)
        if b == 1:
            return lhs
        if a is not None and b is not None and b != 0:
            sa, sb = _signed(lhs.type, a), _signed(lhs.type, b)
            if not (sb == -1 and sa == -(1 << (lhs.type.width - 1))):  # the one overflowing quotient
                q = abs(sa) // abs(sb)
                return _wrap(lhs.type, q if (sa < 0) == (sb < 0) else -q)  # C: toward zero
        return super().sdiv(lhs, rhs, name=name, flags=flags)

    def srem(self, lhs, rhs, name="", flags=()):
        a, b = const_int(lhs), const_int(rhs)
        if b is not None and _signed(rhs.type, b) in (1, -1):
            return L.Constant(lhs.type, 0)
        if a is not None and b is not None and b != 0:
            sa, sb = _signed(lhs.type, a), _signed(lhs.type, b)
            r = abs(sa) % abs(sb)
            return _wrap(lhs.type, -r if sa < 0 else r)  # C: the dividend's sign
        return super().srem(lhs, rhs, name=name, flags=flags)

    def udiv(self, lhs, rhs, name="", flags=()):
        a, b = const_int(lhs), const_int(rhs)
        if b == 1:
            return lhs
        if a is not None and b is not None and b != 0:
            return _wrap(lhs.type, _unsigned(lhs.type, a) // _unsigned(lhs.type, b))
        return super().udiv(lhs, rhs, name=name, flags=flags)

    def urem(self, lhs, rhs, name="", flags=()):
        a, b = const_int(lhs), const_int(rhs)
        if b == 1:
            return L.Constant(lhs.type, 0)
        if a is not None and b is not None and b != 0:
            return _wrap(lhs.type, _unsigned(lhs.type, a) % _unsigned(lhs.type, b))
        return super().urem(lhs, rhs, name=name, flags=flags)

    def and_(self, lhs, rhs, name="", flags=()):
        a, b = const_int(lhs), const_int(rhs)
        if a is not None and b is not None:
            return _wrap(lhs.type, a & b)
        if a == 0 or b == 0:
            return L.Constant(lhs.type, 0)
        if b is not None and _all_ones(rhs.type, b):
            return lhs
        if a is not None and _all_ones(lhs.type, a):
            return rhs
        if lhs is rhs:
            return lhs
        return super().and_(lhs, rhs, name=name, flags=flags)

    def or_(self, lhs, rhs, name="", flags=()):
        a, b = const_int(lhs), const_int(rhs)
        if a is not None and b is not None:
            return _wrap(lhs.type, a | b)
        if b == 0:
            return lhs
        if a == 0:
            return rhs
        if b is not None and _all_ones(rhs.type, b):
            return rhs
        if a is not None and _all_ones(lhs.type, a):
            return lhs
        if lhs is rhs:
            return lhs
        return super().or_(lhs, rhs, name=name, flags=flags)

    def xor(self, lhs, rhs, name="", flags=()):
        a, b = const_int(lhs), const_int(rhs)
        if a is not None and b is not None:
            return _wrap(lhs.type, a ^ b)
        if b == 0:
            return lhs
        if a == 0:
            return rhs
        return super().xor(lhs, rhs, name=name, flags=flags)

    def shl(self, lhs, rhs, name="", flags=()):
        a, b = const_int(lhs), const_int(rhs)
        if b == 0:
            return lhs
        if a is not None and b is not None and 0 <= b < lhs.type.width:
            return _wrap(lhs.type, a << b)
        return super().shl(lhs, rhs, name=name, flags=flags)

    def lshr(self, lhs, rhs, name="", flags=()):
        a, b = const_int(lhs), const_int(rhs)
        if b == 0:
            return lhs
        if a is not None and b is not None and 0 <= b < lhs.type.width:
            return _wrap(lhs.type, _unsigned(lhs.type, a) >> b)
        return super().lshr(lhs, rhs, name=name, flags=flags)

    def ashr(self, lhs, rhs, name="", flags=()):
        a, b = const_int(lhs), const_int(rhs)
        if b == 0:
            return lhs
        if a is not None and b is not None and 0 <= b < lhs.type.width:
            return _wrap(lhs.type, _signed(lhs.type, a) >> b)
        return super().ashr(lhs, rhs, name=name, flags=flags)

    # --- comparisons and selects ---------------------------------------------------------------
    def icmp_signed(self, cmpop, lhs, rhs, name=""):
        a, b = const_int(lhs), const_int(rhs)
        if a is not None and b is not None:
            t = lhs.type
            return L.Constant(L.IntType(1), int(_SIGNED_CMP[cmpop](_signed(t, a), _signed(t, b))))
        if lhs is rhs and isinstance(lhs.type, L.IntType):
            return L.Constant(L.IntType(1), int(cmpop in ("==", "<=", ">=")))
        return super().icmp_signed(cmpop, lhs, rhs, name=name)

    def icmp_unsigned(self, cmpop, lhs, rhs, name=""):
        a, b = const_int(lhs), const_int(rhs)
        if a is not None and b is not None:
            t = lhs.type
            return L.Constant(L.IntType(1), int(_SIGNED_CMP[cmpop](_unsigned(t, a), _unsigned(t, b))))
        if lhs is rhs and isinstance(lhs.type, L.IntType):
            return L.Constant(L.IntType(1), int(cmpop in ("==", "<=", ">=")))
        return super().icmp_unsigned(cmpop, lhs, rhs, name=name)

    def select(self, cond, lhs, rhs, name="", flags=()):
        c = const_int(cond)
        if c is not None:
            return lhs if c else rhs
        if lhs is rhs:
            return lhs
        return super().select(cond, lhs, rhs, name=name, flags=flags)

    # --- casts ---------------------------------------------------------------------------------
    def zext(self, value, typ, name=""):
        a = const_int(value)
        if a is not None and isinstance(typ, L.IntType):
            return _wrap(typ, _unsigned(value.type, a))
        return super().zext(value, typ, name=name)

    def sext(self, value, typ, name=""):
        a = const_int(value)
        if a is not None and isinstance(typ, L.IntType):
            return _wrap(typ, _signed(value.type, a))
        return super().sext(value, typ, name=name)

    def trunc(self, value, typ, name=""):
        a = const_int(value)
        if a is not None and isinstance(typ, L.IntType):
            return _wrap(typ, a)
        return super().trunc(value, typ, name=name)

    # --- control flow --------------------------------------------------------------------------
    def cbranch(self, cond, truebr, falsebr):
        c = const_int(cond)
        if c is not None:
            return self.branch(truebr if c else falsebr)
        return super().cbranch(cond, truebr, falsebr)

    @contextlib.contextmanager
    def if_then(self, pred, likely=None):
        c = const_int(pred)
        if c is None:
            with super().if_then(pred, likely=likely) as end:
                yield end
            return
        with (self._inline() if c else self._dead()):
            yield None

    @contextlib.contextmanager
    def if_else(self, pred, likely=None):
        c = const_int(pred)
        if c is None:
            with super().if_else(pred, likely=likely) as pair:
                yield pair
            return
        taken, skipped = self._inline(), self._dead()
        yield (taken, skipped) if c else (skipped, taken)

    def _inline(self):
        return inline_code(self)

    def _dead(self):
        return dead_code(self)


@contextlib.contextmanager
def inline_code(b: L.IRBuilder):
    """Code that always runs, emitted in place; when it ends its block (a return, a branch out),
    what follows goes to a block no edge reaches."""
    yield None
    if b.block.is_terminated:
        b.position_at_end(b.append_basic_block("dead"))


@contextlib.contextmanager
def dead_code(b: L.IRBuilder):
    """Code that never runs: emitted into a block no edge reaches (pruned before printing), then
    the builder is back where it was."""
    block, anchor = b._block, b._anchor
    b.position_at_end(b.append_basic_block("dead"))
    yield None
    if not b.block.is_terminated:  # valid IR even before pruning
        b.unreachable()
    b._block, b._anchor = block, anchor


def emit_if(b: L.IRBuilder, cond, then, otherwise=None) -> None:
    """then() emits the code run where the i1 `cond` holds, otherwise() (if given) the code run
    where it does not. A constant `cond` runs only the live side's Python: what a dead side would
    have generated (kernels, buffers, copies) is never built."""
    c = const_int(cond)
    if c is not None:
        live = then if c else otherwise
        if live is not None:
            with inline_code(b):
                live()
        return
    with b.if_else(cond) as (yes, no):
        with yes:
            then()
        with no:
            if otherwise is not None:
                otherwise()


def is_const(v, value: int) -> bool:
    """Whether `v` is the integer constant `value`."""
    return const_int(v) == value


def successors(block: L.Block) -> list:
    term = block.terminator
    if term is None:
        return []
    out = [op for op in term.operands if isinstance(op, L.Block)]
    if isinstance(term, L.SwitchInstr):
        out += [term.default] + [blk for _, blk in term.cases]
    elif hasattr(term, "destinations"):
        out += list(term.destinations)
    return out


def prune_unreachable(fn: L.Function) -> None:
    """Delete the blocks of `fn` no path from its entry reaches, and the phi incomings of edges
    that are gone (from deleted blocks, or from branches folded to their other target)."""
    if not fn.blocks:
        return
    preds: dict[int, set[int]] = {id(fn.blocks[0]): set()}
    work = [fn.blocks[0]]
    while work:
        blk = work.pop()
        for s in successors(blk):
            if id(s) not in preds:
                preds[id(s)] = set()
                work.append(s)
            preds[id(s)].add(id(blk))
    if len(preds) < len(fn.blocks):
        fn.blocks = [blk for blk in fn.blocks if id(blk) in preds]
    for blk in fn.blocks:
        into = preds[id(blk)]
        for ins in blk.instructions:
            if not isinstance(ins, L.PhiInstr):  # phis lead a block
                break
            if any(id(src) not in into for _, src in ins.incomings):
                ins.incomings = [(v, src) for v, src in ins.incomings if id(src) in into]


def prune_module(module: L.Module) -> None:
    """prune_unreachable on every function defined in `module`, then inline_single_calls."""
    for fn in module.functions:
        if fn.blocks:
            prune_unreachable(fn)
    inline_single_calls(module)


def inline_single_calls(module: L.Module) -> None:
    """Mark `alwaysinline` the lean internal functions (kernels) that one direct call uses and
    nothing else (their launch runs them on the calling thread only): the lean pipeline
    (targets.base.LEAN_PASSES) has no cost-model inliner, and inlined, a kernel's loop sees the
    entry's constants (its range) and hoists what is invariant across its calls, as LLVM's
    inliner does for the last call of a static function."""
    calls: dict[int, int] = {}
    other: set[int] = set()
    for fn in module.functions:
        for blk in fn.blocks:
            for ins in blk.instructions:
                ops = [v for v, _ in ins.incomings] if isinstance(ins, L.PhiInstr) else ins.operands
                for k, op in enumerate(ops):
                    if isinstance(op, L.Function):
                        if k == 0 and isinstance(ins, L.CallInstr):
                            calls[id(op)] = calls.get(id(op), 0) + 1
                        else:
                            other.add(id(op))
    for fn in module.functions:
        if (fn.blocks and getattr(fn, "aot_lean", False) and fn.linkage == "internal"
                and calls.get(id(fn)) == 1 and id(fn) not in other and "noinline" not in fn.attributes):
            fn.attributes.add("alwaysinline")


def module_text(module) -> str:
    """The LLVM IR text of `module` (an llvmlite module, its unreachable blocks pruned first; or
    text already)."""
    if isinstance(module, str):
        return module
    prune_module(module)
    _exports_last(module)
    return str(module)


def _exports_last(module) -> None:
    """Emit the pool's exported entry points (ir.abi_slots.POOL_DELEGATE, POOL_ENTRY) after every
    other function: an FFT library's code is then laid out as it was before they existed."""
    from ir.abi_slots import POOL_DELEGATE, POOL_ENTRY

    for name in (POOL_DELEGATE, POOL_ENTRY):
        if name in module.globals:
            module.globals[name] = module.globals.pop(name)
