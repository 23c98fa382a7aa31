"""ENTRY_LOWERINGS row of kernel.fft (ir/structural.py): an FFT whose elementwise producer runs in the
pass that fills the transform's work buffer and whose elementwise consumer runs in the pass that
writes its result out, so neither the producer's array nor the transform's result is stored.

graph_fft.py's fft/rfft/irfft rules do the work: they take the input as a `Prologue` and the output
as an `Epilogue`, which evaluate their scalar bodies per element through the same descriptor views
(axis moved last, truncated) that the plain copies use. Around graph_fft's one-call c2c (`_direct`:
a rank <= 2 array of the result's dtype, no padding or Bluestein, read and written through strides):
a prologue is evaluated into a contiguous complex array that the call transforms straight into the
output (rather than into a work buffer transformed in place and copied out), and an epilogue reads
the call's result from a temporary. A prologue computing transcendental functions along an axis
other than the last is also evaluated in the input's own layout first (vectorised) and then
copied as an array (measured: the strided scalar load was slower than the two passes).
"""
from __future__ import annotations

from ir.core import Block, Operation
from ir.dtypes import DType
from ir.opdef import COST_TRANSCENDENTAL as TRANSCENDENTAL
from ir.passes.fuse_plan import recompute_cost
from ir.records import record
from ir.structural import inner_fft
from ir.symbols import is_static
from ir.types import ScalarType, TensorType

from . import graph_fft  # noqa: F401  (its fft/rfft/irfft rules do the transforms: ENTRY_LOWERINGS[fft.name])
from .fft import use_bluestein
from .graph_base import ENTRY_LOWERINGS, Desc, EntryCtx, entry_rule
from .graph_ops import run_elementwise
from .llvm.loops import i64


@record
class Prologue:
    """The transform's input, never stored: `block` maps one scalar of each of `ins` (aligned to the
    input's shape, see `_align`) to the input element."""

    block: Block
    ins: list[Desc]
    dtype: DType
    static_shape: tuple

    @property
    def rank(self) -> int:
        return len(self.static_shape)

    def store(self, ectx: EntryCtx, view, dst: Desc) -> None:
        """dst[...] = the input seen through `view` (a Desc -> Desc view), cast to dst's dtype."""
        body = _body(self.block, [d.dtype for d in self.ins], result=dst.dtype)
        run_elementwise(ectx, dst.static_shape, body, [view(d) for d in self.ins], [dst])


@record
class Epilogue:
    """The kernel's results `outs`, computed from the transform's result: `block` maps its element
    (converted to `dtype`, the transform's result dtype) and one scalar of each of `extras`
    (aligned to the result's shape) to one element of each output."""

    block: Block
    extras: list[Desc]
    outs: list[Desc]
    dtype: DType
    static_shape: tuple

    @property
    def rank(self) -> int:
        return len(self.static_shape)

    def store(self, ectx: EntryCtx, res: Desc, view) -> None:
        """outs = body(res, extras), res already laid out as `view` lays out the outputs."""
        outs = [view(o) for o in self.outs]
        body = _body(self.block, [res.dtype] + [d.dtype for d in self.extras], first=self.dtype)
        run_elementwise(ectx, outs[0].static_shape, body, [res] + [view(d) for d in self.extras], outs)


@entry_rule("kernel.fft")
def _kernel_fft(ectx: EntryCtx, op, *ins, out):
    fft = inner_fft(op)
    k = op.attrs["inputs"]
    xt, rt = fft.operands[0].type, fft.results[0].type
    prologue, epilogue = op.regions[0].block, op.regions[1].block
    x = ins[0] if k == 1 and _is_identity(prologue) else Prologue(
        prologue, [_align(ectx, d, xt.shape) for d in ins[:k]], xt.dtype, tuple(xt.shape))
    one = _one_call(fft)
    if isinstance(x, Prologue) and (one or _math_across_rows(x, fft)):
        x = _materialise(ectx, x, rt.dtype if one else x.dtype)
    outs = [o if o is not None else ectx.alloc(r.type) for r, o in zip(op.results, out, strict=True)]
    o = outs[0] if _is_identity(epilogue) else Epilogue(
        epilogue, [_align(ectx, d, rt.shape) for d in ins[k:]], outs, rt.dtype, tuple(rt.shape))
    rule = ENTRY_LOWERINGS[fft.name]
    if one and x.dtype == rt.dtype and isinstance(o, Epilogue):
        res = ectx.alloc(rt)
        rule(ectx, fft, x, out=[res])
        o.store(ectx, res, lambda d: d)
        return outs
    rule(ectx, fft, x, out=[o])
    return outs


def _one_call(fft: Operation) -> bool:
    """Whether graph_fft's c2c rule transforms an array of the result's dtype and of the input's
    shape in one kernel call (its `_direct`)."""
    shape = fft.operands[0].type.shape
    axis = fft.attrs["axis"] % len(shape)
    n = shape[axis] if fft.attrs["n"] is None else fft.attrs["n"]
    return (fft.name == "fft" and len(shape) <= 2 and is_static(n) and is_static(shape[axis])
            and shape[axis] == n and not use_bluestein(int(n)))


def _math_across_rows(x: Prologue, fft: Operation) -> bool:
    """Whether the load would evaluate transcendental functions (exp, sin, ...) across the input's
    rows: along an axis other than the last, its reads are strided and the body runs on scalars,
    several times slower than a vectorised loop over the input's own layout followed by the copy."""
    return (fft.attrs["axis"] % x.rank != x.rank - 1
            and any(recompute_cost(op) >= TRANSCENDENTAL for op in x.block.ops))


def _materialise(ectx: EntryCtx, x: Prologue, dtype: DType) -> Desc:
    t = ectx.alloc(TensorType(dtype, x.static_shape))
    x.store(ectx, lambda d: d, t)
    return t


def _align(ectx: EntryCtx, d: Desc, shape: tuple) -> Desc:
    """d at the rank of a kernel `shape` it broadcasts to (numpy's right-aligned rules): leading dims
    added, and every size-1 dim given stride 0, so that views offsetting or slicing along it stay
    in bounds (run_elementwise still sees the static 1 and broadcasts it)."""
    lead = len(shape) - d.rank
    static = (1,) * lead + tuple(d.static_shape)
    one = [is_static(s) and s == 1 for s in static]
    strides = [i64(0)] * lead + list(d.strides)
    return Desc(d.dtype, d.data, [i64(1)] * lead + list(d.shape),
                [i64(0) if one[k] else s for k, s in enumerate(strides)], static)


def _is_identity(block: Block) -> bool:
    """A body that yields its only argument (no producer, or no consumer)."""
    return (len(block.args) == 1 and len(block.ops) == 1
            and list(block.terminator.operands) == [block.args[0]])


def _body(block: Block, dtypes: list, first: DType | None = None, result: DType | None = None) -> Block:
    """A copy of scalar body `block` on arguments of `dtypes`: its first argument converted to
    `first` before it, its one yielded value converted to `result` after it."""
    new = Block([ScalarType(dt) for dt in dtypes])
    args = list(new.args)
    if first is not None:
        args[0] = _convert(new, args[0], first)
    env = dict(zip(block.args, args, strict=True))
    for op in block.ops[:-1]:
        copy = Operation(op.name, [env[v] for v in op.operands], [r.type for r in op.results], dict(op.attrs))
        new.append(copy)
        env.update(zip(op.results, copy.results, strict=True))
    ys = [env[v] for v in block.terminator.operands]
    if result is not None:
        ys = [_convert(new, y, result) for y in ys]
    new.append(Operation("yield", ys, []))
    return new


def _convert(block: Block, v, dtype: DType):
    """v as `dtype`: a complex value into a real one keeps its real part (as the FFT copies do)."""
    src = v.type.dtype
    if src == dtype:
        return v
    if src.is_complex and not dtype.is_complex:
        op = Operation("real", [v], [ScalarType(dtype)])
    else:
        op = Operation("cast", [v], [ScalarType(dtype)], {"dtype": dtype})
    return block.append(op).results[0]
