"""The graph layer's base: run-time tensors (Desc), the per-entry context (EntryCtx) and the
ENTRY_LOWERINGS table that rule modules fill.

The graph layer imports one way: this module (no other graph module) <- the rule modules
(graph_ops, split_reduce, graph_fft_common, graph_fft_dynamic, graph_fft, graph_fft_fused) <- the
driver, codegen/entry.py, which imports the rule modules to fill the table and emits entry
functions. Host work (status, buffers, kernel launches, the kernels' tables and scratch, run-time
plans) goes through `EntryCtx.host`, chosen by the target (codegen/host.py); the rules only
compute descriptors, sizes and kernel arguments, and emit the kernels' bodies.

A rule is `fn(ectx, op, *descs, out=list[Desc | None]) -> list[Desc]`: `out[k]` is where the
caller wants result k (an entry output), or None.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir import status
from ir.dtypes import DType
from ir.records import field, record
from ir.symbols import is_static
from ir.types import TensorType

from .host import Host, Launch
from .llvm import sizes
from .llvm.builder import const_int
from .llvm.context import declare
from .llvm.loops import i64
from .llvm.sizes import emit_size
from .llvm.types import I64, memory_type
from .options import CodegenOptions
from .targets.base import Target, create_target_machine


@record
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


@record
class EntryCtx:
    """One entry function being emitted: where code goes (`builder`; `alloca_builder` for stack
    slots), its host interface, the run-time values of the input-dim symbols, and the module-wide
    helper functions (`helpers`, keyed by what they compute)."""

    module: L.Module
    target: Target
    options: CodegenOptions
    fn: L.Function
    builder: L.IRBuilder
    alloca_builder: L.IRBuilder
    host: Host
    symbols: dict = field(default_factory=dict)
    helpers: dict = field(default_factory=dict)
    in_row_group: bool = False  # launches are deferred to a row group (codegen/row_groups.py)

    def kernel_name(self, what: str, *about) -> str:
        """A fresh name for a kernel of this entry (counted with the host's tables and slots):
        `what` the kind of kernel, `about` what it computes (`describe`'s parts: op names,
        dtypes, a `body_summary`), which the host may append for profilers and nm (Host.symbol)."""
        return self.host.symbol(what, describe(*about))

    def description(self, kern: L.Function) -> str:
        """The `about` that kernel `kern` was named with (for a kernel that drives it)."""
        return self.host.descriptions.get(kern.name, "")

    # --- dims ---------------------------------------------------------------------------------
    def dim(self, d) -> L.Value:
        return i64(d) if is_static(d) else emit_sym_expr(self, d)

    def numel(self, shape: list) -> L.Value:
        n = i64(1)
        for d in shape:
            n = self.builder.mul(n, d)
        return n

    def itemsize(self, dtype: DType) -> int:
        """Bytes of one element of `dtype` in memory on the target."""
        return memory_type(dtype).get_abi_size(create_target_machine(self.target).target_data)

    # --- status -------------------------------------------------------------------------------
    def fail_if(self, cond, code: int) -> None:
        """Leave the entry with status `code` (ir/status.py) when `cond` holds (after freeing
        intermediates)."""
        b = self.builder
        bad = self.fn.append_basic_block(f"fail{code}")
        cont = self.fn.append_basic_block("ok")
        b.cbranch(cond, bad, cont)
        b.position_at_end(bad)
        self.host.set_status(code)
        b.branch(self.host.cleanup)
        b.position_at_end(cont)

    def fail_on_flag(self, launch: Launch, k: int, code: int) -> None:
        """Leave with status `code` when the kernel set slot k of its argument block (non-zero)."""
        self.fail_if(self.builder.icmp_signed("!=", launch.read(k), i64(0)), code)

    # --- memory -------------------------------------------------------------------------------
    def alloc(self, ttype: TensorType) -> Desc:
        """A C-contiguous intermediate, freed when the entry returns (or when the driver sees its
        last use)."""
        b = self.builder
        shape = [self.dim(d) for d in ttype.shape]
        strides = contiguous_strides(b, shape)
        nbytes, overflow = self._checked_product(shape + [i64(self.itemsize(ttype.dtype))])
        p, failed = self.host.alloc(nbytes, overflow)
        self.fail_if(failed, status.OUT_OF_MEMORY)
        return Desc(ttype.dtype, p, shape, strides, tuple(ttype.shape))

    def _checked_product(self, factors: list):
        """(product, i1 overflowed) with unsigned overflow checks (sizes are never negative)."""
        b = self.builder
        mul = declare(
            self.module, "llvm.umul.with.overflow.i64", L.LiteralStructType([I64, L.IntType(1)]), [I64, I64]
        )
        acc, ovf = i64(1), L.Constant(L.IntType(1), 0)
        for f in factors:
            x, y = const_int(acc), const_int(f)
            if x is not None and y is not None:  # static sizes: the product and its check fold
                p = (x % 2**64) * (y % 2**64)
                acc, ovf = i64(p % 2**64), b.or_(ovf, L.Constant(L.IntType(1), int(p >= 2**64)))
                continue
            r = b.call(mul, [acc, f])
            acc = b.extract_value(r, 0)
            ovf = b.or_(ovf, b.extract_value(r, 1))
        ovf = b.or_(ovf, b.icmp_signed("<", acc, i64(0)))
        return acc, ovf

    # --- kernel calls -------------------------------------------------------------------------
    def call_kernel(self, kern: L.Function, slots: list, total: L.Value, align: int, work=None) -> Launch:
        """Run `kern` over [0, total) with argument block `slots` (see Host.launch: on threads
        when the work, elements touched, `total` unless given, reaches the parallel threshold)."""
        return self.host.launch(kern, slots, total, align, work)


def contiguous_strides(b: L.IRBuilder, shape: list) -> list:
    strides = [i64(1)] * len(shape)
    acc = i64(1)
    for k in range(len(shape) - 1, -1, -1):
        strides[k] = acc
        acc = b.mul(acc, shape[k])
    return strides


# --- size expressions -----------------------------------------------------------------------------
def emit_sym_expr(ectx: EntryCtx, expr) -> L.Value:
    """A sympy size expression over the input-dim symbols as i64 arithmetic (codegen/llvm/sizes.py,
    the LLVM emitter of ir.size_render); a zero divisor leaves the entry with status ZERO_DIVISION."""
    return emit_size(ectx.builder, expr, ectx.symbols, _on_zero_division(ectx), where=f"@{ectx.fn.name}")


def floor_divide(ectx: EntryCtx, n: L.Value, d: L.Value) -> tuple[L.Value, L.Value]:
    """Python's (n // d, n % d) on i64 (codegen/llvm/sizes.py); a zero divisor leaves the entry with
    status ZERO_DIVISION (sdiv would trap: SIGFPE), as Python raises."""
    return sizes.floor_divide(ectx.builder, n, d, _on_zero_division(ectx))


def _on_zero_division(ectx: EntryCtx):
    return lambda bad: ectx.fail_if(bad, status.ZERO_DIVISION)


# --- kernel descriptions (kernel_name's `about`) ----------------------------------------------------
BODY_OPS_SHOWN = 6  # op names a body's summary lists at most (the rest are counted) ...
BODY_SUMMARY_CHARS = 40  # ... within this many characters
_QUIET_OPS = frozenset({"yield", "constant"})  # every body has them: they say nothing


def describe(*parts) -> str:
    """`parts` (strings, dtypes, ints; empty ones skipped) joined by "_": "sum_f64"."""
    return "_".join(str(p) for p in parts if p is not None and str(p) != "")


def body_summary(block) -> str:
    """The op names of a scalar body in order, each once, as many as fit BODY_OPS_SHOWN and
    BODY_SUMMARY_CHARS, and a count of the rest: "sin_neg_exp_mul_add_div",
    "add_mul_sub_exp_log_tanh_2more"; "copy" for a body that only passes its argument on."""
    names = list(dict.fromkeys(op.name for op in block.walk() if op.name not in _QUIET_OPS))
    if not names:
        return "copy"
    shown = names[:1]
    for name in names[1:BODY_OPS_SHOWN]:
        if len(describe(*shown, name)) > BODY_SUMMARY_CHARS:
            break
        shown.append(name)
    rest = len(names) - len(shown)
    return describe(*shown, f"{rest}more" if rest else "")


def reduction_summary(kind: str, block) -> str:
    """A reduction's description: its kind, and what its body computes first: "sum", "max_of_mul"."""
    body = body_summary(block)
    return kind if body == "copy" else f"{kind}_of_{body}"


# --- the table ------------------------------------------------------------------------------------
# op name -> fn(ectx, op, *descs, out=list[Desc|None]) -> list[Desc]; "@elementwise", "@reduction"
# and "@copy" are the generic rows (ops without their own rule, and copies into outputs)
ENTRY_LOWERINGS: dict = {}


def entry_rule(*names: str):
    def deco(fn):
        for n in names:
            ENTRY_LOWERINGS[n] = fn
        return fn

    return deco
