"""Graph entry functions: one LLVM function per ir function, calling its kernels in order.

ABI (target-neutral; the JIT calls it directly, the shared-library and GPU wrappers build on it):

    int32_t NAME(void **data, int64_t *meta)

`data` holds the input data pointers, then the output data pointers. `meta` holds, for each input
then each output, its dims followed by its strides in elements (rank = the ir type's rank).
Outputs are allocated by the caller with the shapes the ir function's result types give.
Returns 0 on success, else a STATUS code: 1 when an intermediate buffer could not be allocated,
2 when an index (take) is out of range. Intermediates are malloc'ed and freed right after their
last use (a view keeps its base alive); on failure all are freed and the outputs are undefined.
Kernel results that are returned are written straight into the output buffers.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from llvmlite import ir as L

from ir.dtypes import DType
from ir.opdef import OPDEFS, MissingRule
from ir.symbols import is_static
from ir.types import TensorType

from .kernels.parallel import parallel_for
from .llvm.loops import alloca, i64
from .llvm.types import I32, I64, PTR
from .options import CodegenOptions, library_threads_symbol
from .targets.base import Target

log = logging.getLogger(__name__)


STATUS = {1: "out of memory allocating an intermediate buffer", 2: "index out of range",
          3: "Integers to negative integer powers are not allowed.", 4: "division by zero"}
STATUS_NEGATIVE_POWER, STATUS_ZERO_DIVISION = 3, 4


@dataclass
class Desc:
    """A tensor at run time: data pointer, dims and strides (in elements) as LLVM i64 values."""

    dtype: DType
    data: L.Value
    shape: list
    strides: list
    static_shape: tuple = ()

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass
class EntryCtx:
    module: L.Module
    target: Target
    options: CodegenOptions
    fn: L.Function
    builder: L.IRBuilder
    alloca_builder: L.IRBuilder
    fail_block: L.Block | None
    symbols: dict = field(default_factory=dict)
    temps: list = field(default_factory=list)  # stack slots holding malloc'ed pointers
    rc_slot: L.Value = None
    last_args: L.Value = None  # argument block of the latest kernel call (kernels may report into it)
    cleanup: L.Block = None
    helpers: dict = field(default_factory=dict)
    n_kernels: int = 0

    def kernel_name(self, what: str) -> str:
        self.n_kernels += 1
        return f"{self.fn.name}.{what}{self.n_kernels}"

    # --- dims ---------------------------------------------------------------------------------
    def dim(self, d) -> L.Value:
        return i64(d) if is_static(d) else emit_sym_expr(self, d)

    def numel(self, shape: list) -> L.Value:
        n = i64(1)
        for d in shape:
            n = self.builder.mul(n, d)
        return n

    def fail_if(self, cond, code: int) -> None:
        """Leave the entry with status `code` when `cond` holds (after freeing intermediates)."""
        b = self.builder
        bad = self.fn.append_basic_block(f"fail{code}")
        cont = self.fn.append_basic_block("ok")
        b.cbranch(cond, bad, cont)
        b.position_at_end(bad)
        b.store(L.Constant(I32, code), self.rc_slot)
        b.branch(self.cleanup)
        b.position_at_end(cont)

    # --- memory -------------------------------------------------------------------------------
    def alloc(self, ttype: TensorType) -> Desc:
        """A C-contiguous intermediate, freed when the entry returns."""
        b = self.builder
        shape = [self.dim(d) for d in ttype.shape]
        strides = contiguous_strides(b, shape)
        from .llvm.types import memory_type

        itemsize = memory_type(ttype.dtype).get_abi_size(_target_data(self))
        nbytes, overflow = self._checked_product(shape + [i64(itemsize)])
        # whole cache lines, 64-aligned (vector stores split across lines cost the FFT up to 40%)
        nbytes = b.and_(b.add(nbytes, i64(63)), i64(-64))
        nbytes = b.select(b.icmp_signed("==", nbytes, i64(0)), i64(64), nbytes)
        overflow = b.or_(overflow, b.icmp_signed("<", nbytes, i64(0)))
        nbytes = b.select(overflow, i64(-1), nbytes)  # aligned_alloc(SIZE_MAX) fails: an error
        aligned_alloc = _declare(self.module, "aligned_alloc", PTR, [I64, I64])
        p = b.call(aligned_alloc, [i64(64), nbytes])
        slot = alloca(self.alloca_builder, PTR)
        self.alloca_builder.store(L.Constant(PTR, None), slot)
        b.store(p, slot)
        self.temps.append(slot)
        self.fail_if(b.icmp_unsigned("==", p, L.Constant(PTR, None)), 1)
        return Desc(ttype.dtype, p, shape, strides, tuple(ttype.shape))

    def _checked_product(self, factors: list):
        """(product, i1 overflowed) with unsigned overflow checks (sizes are never negative)."""
        b = self.builder
        mul = _declare(
            self.module, "llvm.umul.with.overflow.i64", L.LiteralStructType([I64, L.IntType(1)]), [I64, I64]
        )
        acc, ovf = i64(1), L.Constant(L.IntType(1), 0)
        for f in factors:
            r = b.call(mul, [acc, f])
            acc = b.extract_value(r, 0)
            ovf = b.or_(ovf, b.extract_value(r, 1))
        ovf = b.or_(ovf, b.icmp_signed("<", acc, i64(0)))
        return acc, ovf

    # --- kernel calls -------------------------------------------------------------------------
    def call_kernel(self, kern: L.Function, slots: list, total: L.Value, align: int, work=None) -> None:
        """Store the argument block and run `kern` over [0, total), on threads when the work
        (elements touched; `total` unless given) reaches the parallel threshold."""
        b = self.builder
        arr = alloca(self.alloca_builder, I64, size=len(slots))
        for k, v in enumerate(slots):
            if isinstance(v.type, L.PointerType):
                v = b.ptrtoint(v, I64)
            b.store(v, b.gep(arr, [i64(k)], source_etype=I64))
        args = self.last_args = arr
        nt = self.num_threads()
        if nt is None:
            b.call(kern, [args, i64(0), total])
            return
        big = b.icmp_signed(
            ">=", work if work is not None else total, i64(max(self.options.parallel_threshold, 2 * align))
        )
        big = b.and_(big, b.icmp_signed(">=", total, i64(2 * align)))
        if not isinstance(nt, L.Constant):
            big = b.and_(big, b.icmp_signed(">", nt, i64(1)))
        with b.if_else(big) as (then, otherwise):
            with then:
                pfor = parallel_for(self.module, join_at_unload=bool(self.options.library))
                b.call(pfor, [kern, args, total, nt, i64(align)])
            with otherwise:
                b.call(kern, [args, i64(0), total])

    def num_threads(self) -> L.Value | None:
        """The thread count for parallel_for: a constant (JIT), the library's run-time setting
        (loaded at each call, so NAME_set_num_threads applies to the next kernel), or None when
        the code is serial."""
        if not self.options.library:
            nt = self.options.num_threads
            return i64(nt) if nt > 1 else None
        return self.builder.load_atomic(_threads_global(self.module, self.options), "monotonic", 8, typ=I64)


def _threads_global(module: L.Module, options: CodegenOptions) -> L.GlobalVariable:
    """The library's thread-count global (external: the C wrapper writes it), made once."""
    name = library_threads_symbol(options.library)
    g = module.globals.get(name)
    if g is None:
        g = L.GlobalVariable(module, I64, name=name)
        g.initializer = i64(max(1, options.num_threads))
        g.align = 8
    return g


def _target_data(ectx: EntryCtx):
    from .targets.base import create_target_machine

    return create_target_machine(ectx.target).target_data


def contiguous_strides(b: L.IRBuilder, shape: list) -> list:
    strides = [i64(1)] * len(shape)
    acc = i64(1)
    for k in range(len(shape) - 1, -1, -1):
        strides[k] = acc
        acc = b.mul(acc, shape[k])
    return strides


def _declare(module: L.Module, name: str, ret, args) -> L.Function:
    fn = module.globals.get(name)
    return fn if fn is not None else L.Function(module, L.FunctionType(ret, args), name=name)


def emit_sym_expr(ectx: EntryCtx, expr) -> L.Value:
    """A sympy size expression over the input-dim symbols as i64 arithmetic."""
    from ir.symbols import sympy

    sp = sympy()
    b = ectx.builder
    if expr.is_Integer:
        return i64(int(expr))
    if expr.is_Symbol:
        try:
            return ectx.symbols[expr.name]
        except KeyError:
            raise ValueError(
                f"size symbol {expr.name} is not a dim of any input of @{ectx.fn.name}"
            ) from None
    if isinstance(expr, sp.floor):  # floor(n/d): numerator and denominator are integer expressions
        num, den = sp.together(expr.args[0]).as_numer_denom()
        return floor_divide(ectx, emit_sym_expr(ectx, num), emit_sym_expr(ectx, den))[0]
    args = [emit_sym_expr(ectx, a) for a in expr.args]
    if isinstance(expr, sp.Add):
        return _fold(b.add, args)
    if isinstance(expr, sp.Mul):
        return _fold(b.mul, args)
    if isinstance(expr, sp.Pow) and expr.exp.is_Integer and int(expr.exp) >= 0:
        return _fold(b.mul, [args[0]] * int(expr.exp)) if int(expr.exp) else i64(1)
    if isinstance(expr, sp.Max):
        return _fold(lambda x, y: b.select(b.icmp_signed(">", x, y), x, y), args)
    if isinstance(expr, sp.Min):
        return _fold(lambda x, y: b.select(b.icmp_signed("<", x, y), x, y), args)
    if isinstance(expr, sp.Mod):
        return floor_divide(ectx, *args)[1]
    if type(expr).__name__ == "FloorDiv":
        return floor_divide(ectx, *args)[0]
    raise ValueError(f"cannot emit size expression {expr} ({type(expr).__name__}); the front end "
                     "specialises what ir.symbols.int_emittable rejects")


def floor_divide(ectx: EntryCtx, n: L.Value, d: L.Value) -> tuple[L.Value, L.Value]:
    """Python's (n // d, n % d) on i64: the remainder takes the divisor's sign. A zero divisor
    leaves the entry with STATUS_ZERO_DIVISION (sdiv would trap: SIGFPE), as Python raises."""
    b = ectx.builder
    ectx.fail_if(b.icmp_signed("==", d, i64(0)), STATUS_ZERO_DIVISION)
    minus_one = b.icmp_signed("==", d, i64(-1))  # INT64_MIN // -1 traps too; n // -1 is -n
    safe = b.select(minus_one, i64(1), d)
    q, r = b.sdiv(n, safe), b.srem(n, safe)
    fix = b.and_(b.icmp_signed("!=", r, i64(0)), b.icmp_signed("<", b.xor(r, safe), i64(0)))
    q, r = b.sub(q, b.zext(fix, I64)), b.select(fix, b.add(r, safe), r)
    return b.select(minus_one, b.sub(i64(0), n), q), b.select(minus_one, i64(0), r)


def _fold(f, args):
    out = args[0]
    for a in args[1:]:
        out = f(out, a)
    return out


# op name -> fn(ectx, op, *descs, out=list[Desc|None]) -> list[Desc]
ENTRY_LOWERINGS: dict = {}


def entry_rule(*names: str):
    def deco(fn):
        for n in names:
            ENTRY_LOWERINGS[n] = fn
        return fn

    return deco


def emit_entry(module: L.Module, target: Target, func, options: CodegenOptions) -> L.Function:
    """Emit `i32 func.name(ptr data, ptr meta)` for an ir Func."""
    from . import graph_fft, graph_fft_fused, graph_ops  # noqa: F401  (fill ENTRY_LOWERINGS)

    fn = L.Function(module, L.FunctionType(I32, [PTR, PTR]), name=func.name)
    data, meta = fn.args
    entry = fn.append_basic_block("entry")
    body = fn.append_basic_block("body")
    cleanup = fn.append_basic_block("cleanup")
    ab = L.IRBuilder(entry)
    b = L.IRBuilder(body)
    ectx = EntryCtx(module, target, options, fn, b, ab, None)
    ectx.cleanup = cleanup
    ectx.rc_slot = alloca(ab, I32)
    ab.store(L.Constant(I32, 0), ectx.rc_slot)
    ectx.helpers = module.__dict__.setdefault("aot_helpers", {})  # module-wide helper functions
    if options.library:
        _threads_global(module, options)  # the wrapper sets it even when no kernel is threaded
    ret = func.return_op
    if ret is None:
        raise ValueError(f"function @{func.name} has no return")
    types = [a.type for a in func.args] + [v.type for v in ret.operands]
    descs = _abi_descs(ectx, data, meta, types)
    env = {id(a): d for a, d in zip(func.args, descs, strict=False)}
    outs = descs[len(func.args) :]
    dest = {}
    for k, v in enumerate(ret.operands):
        dest.setdefault(id(v), outs[k])
    written = set()
    ops = [op for op in func.body.ops if op.name != "return"]
    last_use = _last_uses(ops, ret)
    owned: dict[int, list] = {}  # op index -> the stack slots of buffers it allocated
    free = _declare(module, "free", L.VoidType(), [PTR])
    for i, op in enumerate(ops):
        rule = _rule_for(op)
        want = [dest.get(id(r)) for r in op.results]
        n_temps = len(ectx.temps)
        results = rule(ectx, op, *[env[id(v)] for v in op.operands], out=want)
        owned[i] = ectx.temps[n_temps:]
        for r, d, w in zip(op.results, results, want, strict=True):
            env[id(r)] = d
            if w is not None and d is w:
                written.add(id(r))
        # free the buffers whose every alias is dead (slots are reset: cleanup frees the rest)
        for j in [j for j, last in last_use.items() if last == i]:
            for slot in owned.pop(j, []):
                b.call(free, [b.load(slot, typ=PTR)])
                b.store(L.Constant(PTR, None), slot)
    copy = ENTRY_LOWERINGS["@copy"]
    done = set()
    for k, v in enumerate(ret.operands):
        if id(v) in written and id(v) not in done and dest[id(v)] is outs[k]:
            done.add(id(v))
            continue
        copy(ectx, env[id(v)], outs[k])
    b.branch(cleanup)
    ab.branch(body)
    # cleanup: free every intermediate (slots start null), return the status
    cb = L.IRBuilder(cleanup)
    for slot in ectx.temps:
        cb.call(free, [cb.load(slot, typ=PTR)])
    cb.ret(cb.load(ectx.rc_slot, typ=I32))
    return fn


# ops whose result is a view of (aliases) their operand's memory
VIEW_OPS = frozenset({"broadcast_to", "transpose", "expand_dims", "squeeze", "slice", "flip", "reshape"})


def _rule_for(op):
    rule = ENTRY_LOWERINGS.get(op.name)
    if rule is not None:
        return rule
    d = OPDEFS.get(op.name)
    if d is not None and d.has("elementwise"):
        return ENTRY_LOWERINGS["@elementwise"]
    if d is not None and d.has("reduction"):
        return ENTRY_LOWERINGS["@reduction"]
    raise MissingRule("llvm", op.name)


def _last_uses(ops: list, ret) -> dict[int, int]:
    """For each op index: the index of the last op reading its results or any view of them
    (len(ops) when a return value aliases them: those live until the end)."""
    producer: dict[int, set[int]] = {}  # value id -> op indices whose buffers it may alias
    last: dict[int, int] = {}
    for i, op in enumerate(ops):
        for v in op.operands:
            for j in producer.get(id(v), ()):
                last[j] = i
        alias = {i}
        if op.name in VIEW_OPS:
            for v in op.operands:
                alias |= producer.get(id(v), set())
        for r in op.results:
            producer[id(r)] = alias
        last.setdefault(i, i)
    for v in ret.operands:
        for j in producer.get(id(v), ()):
            last[j] = len(ops)
    return last


def _abi_descs(ectx: EntryCtx, data, meta, types: list) -> list[Desc]:
    b = ectx.alloca_builder
    out, pos = [], 0
    for i, t in enumerate(types):
        p = b.load(b.gep(data, [i64(i)], source_etype=PTR), typ=PTR, name=f"arg{i}")
        vals = [b.load(b.gep(meta, [i64(pos + k)], source_etype=I64), typ=I64) for k in range(2 * t.rank)]
        pos += 2 * t.rank
        shape = []
        for k, d in enumerate(t.shape):
            if is_static(d):
                shape.append(i64(d))
            else:
                if d.is_Symbol:
                    ectx.symbols.setdefault(d.name, vals[k])
                shape.append(vals[k])
        out.append(Desc(t.dtype, p, shape, vals[t.rank :], tuple(t.shape)))
    return out
