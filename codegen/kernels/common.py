"""Shared pieces of kernel functions: the argument block layout and body emission.

Every kernel is `void @k(ptr %args, i64 %begin, i64 %end)` and computes the flat range
[begin, end) of its parallel iteration space, so the same function runs serially or on threads.
`args` points to i64 slots: the operands' data pointers, then the dims of the iteration shape,
then for each operand one stride (in elements) per iteration dim (0 on broadcast dims).
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType
from ir.opdef import may_raise
from ir.records import record
from ir.symbols import is_static

from ..llvm.builder import Builder, const_int
from ..llvm.context import LowerCtx
from ..llvm.loops import i64
from ..llvm.lowering import lower_op
from ..llvm.types import I64, PTR, VOID


@record(frozen=True)
class OperandInfo:
    """Static facts about one kernel operand: its dtype, which iteration dims it broadcasts on, and
    the strides (in elements, per iteration dim) that are known when the kernel is generated: an int,
    or None where the stride is read from the argument block at run time (`strides` None: all)."""

    dtype: DType
    bcast: tuple[bool, ...]
    strides: tuple | None = None

    def known_stride(self, k: int) -> int | None:
        """The stride along iteration dim k when it is a compile-time constant, else None."""
        if self.bcast[k]:
            return 0
        return None if self.strides is None else self.strides[k]


def operand_info(dtype: DType, bcast: tuple, strides: list) -> OperandInfo:
    """An operand's facts from its descriptor's strides (LLVM values, right-aligned to the kernel's
    dims): the constant ones are known."""
    lead = len(bcast) - len(strides)
    known = tuple(None if k < lead else const_int(strides[k - lead]) for k in range(len(bcast)))
    return OperandInfo(dtype, bcast, known if any(s is not None for s in known) else None)


def broadcast_flags(op_shape: tuple, kernel_shape: tuple) -> tuple[bool, ...]:
    """Per kernel dim: True where the operand (right-aligned, numpy rules) has stride 0."""
    lead = len(kernel_shape) - len(op_shape)
    out = []
    for k, d in enumerate(kernel_shape):
        if k < lead:
            out.append(True)
        else:
            od = op_shape[k - lead]
            out.append(is_static(od) and od == 1 and not (is_static(d) and d == 1))
    return tuple(out)


KERNEL_TYPE = L.FunctionType(VOID, [PTR, I64, I64])


def new_kernel(module: L.Module, name: str, lean: bool = False) -> tuple[L.Function, L.IRBuilder]:
    """A kernel function and a builder at its entry. `lean`: its loops are written out as the
    machine should run them (explicit vectors, own accumulators and unrolling), so LLVM's scalar and
    loop optimisations have nothing to add (targets.base.is_lean)."""
    fn = L.Function(module, KERNEL_TYPE, name=name)
    fn.aot_lean = lean
    fn.linkage = "internal"
    fn.args[0].add_attribute("noalias")
    b = Builder(fn.append_basic_block("entry"))
    return fn, b


class ArgBlock:
    """Reads the argument block of a kernel; static dims and known strides (broadcast ones, and
    those of OperandInfo.strides) are constants, and the code depending on them folds. `unread`:
    the slots it does not read (mark_unread tells the launch, which then does not store them)."""

    def __init__(self, b: L.IRBuilder, args, shape: tuple, infos: list[OperandInfo]):
        self.b, self.args, self.shape, self.infos = b, args, shape, infos
        n, r = len(infos), len(shape)
        self.unread: set[int] = set()
        self.ptrs = [b.inttoptr(self._slot(i), PTR, name=f"p{i}") for i in range(n)]
        self.dims = [self._dim(d, n + k) for k, d in enumerate(shape)]
        self.strides = [[self._stride(info, k, n + r + i * r + k) for k in range(r)]
                        for i, info in enumerate(infos)]

    def _dim(self, d, slot: int):
        if is_static(d):
            self.unread.add(slot)
            return i64(d)
        return self._slot(slot)

    def _stride(self, info: OperandInfo, k: int, slot: int):
        known = info.known_stride(k)
        if known is None:
            return self._slot(slot)
        self.unread.add(slot)
        return i64(known)

    def mark_unread(self, fn: L.Function) -> None:
        """Tell launches of kernel `fn` (Host.launch) which of its slots it never reads: an entry
        stores only the others (the static dims and known strides were a third of the
        per-sample-gradient entry's code)."""
        fn.aot_unread = frozenset(self.unread)

    def _slot(self, i: int):
        p = self.b.gep(self.args, [i64(i)], source_etype=I64)
        return self.b.load(p, typ=I64)


def arg_block_size(n_operands: int, rank: int) -> int:
    """Slots of an elementwise kernel's argument block (plus one error slot when it reports)."""
    return n_operands + rank + n_operands * rank


def reports_errors(block) -> bool:
    """Whether a kernel body can hit an error numpy raises for (an integer power with a negative
    exponent): its kernel then gets an error slot after the usual arguments."""
    return any(may_raise(op) for op in block.ops)


def emit_body(ctx: LowerCtx, block, values: list) -> list:
    """Lower the ops of a kernel body given its arguments' values; returns the yielded values."""
    env = {id(a): v for a, v in zip(block.args, values, strict=False)}
    for op in block.ops:
        if op is block.terminator:  # the body's yield
            return [env[id(v)] for v in op.operands]
        res = lower_op(ctx, op, [env[id(v)] for v in op.operands])
        env[id(op.results[0])] = res
    raise ValueError("kernel body does not end in yield")


def max_element_bits(block, dtypes: list[DType]) -> int:
    from ..llvm.types import element_bits

    bits = [element_bits(d) for d in dtypes]
    for op in block.ops:
        bits += [element_bits(r.type.dtype) for r in op.results]
        bits += [element_bits(v.type.dtype) for v in op.operands]
    return max([b for b in bits if b > 8] or [32])
