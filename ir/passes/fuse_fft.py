"""FFT fusion: an fft/rfft/irfft op absorbs its elementwise producer and consumer into a kernel.fft.

Runs after `fuse`, on kernel.elementwise ops. The FFT's first pass over memory copies its input into
a work buffer (casting and zero-padding) and its last pass copies the result out; a kernel.fft
evaluates the producer's body in the first (so the producer's array is never stored) and the
consumer's body in the last (so the transform's result is never stored). Code generation
(codegen/graph_fft_fused.py) never makes more passes than the unfused ops, so legality decides:

- prologue: the FFT's operand is the only result of a kernel.elementwise that nothing else reads
  (its shape is then the operand's);
- epilogue: the FFT's result is read once, by a kernel.elementwise over the result's shape (its
  other operands broadcast to that shape; none can depend on the FFT, which has no other reader).

A kernel.elementwise between two FFTs (`irfft(rfft(x) * H)`) becomes the second one's prologue: the
multiply runs in irfft's load, while rfft writes its result as usual.
"""
from __future__ import annotations

from ..core import Block, Func, Operation, OpResult, Region
from ..logger import INFO, get_logger
from ..opdef import lookup
from ..structural import FFT_KINDS
from ..types import ScalarType
from .base import Pass, register_pass
from .fuse_plan import same_shape

log = get_logger("aot.fusion")

KERNEL = "kernel.elementwise"


def fuse_fft_func(func: Func) -> int:
    """Fuse the FFTs of `func`'s body with their producers and consumers; returns how many kernel.fft
    ops were made."""
    ffts = [op for op in func.body.ops if op.name in FFT_KINDS]
    prologues = {fft: p for fft in ffts if (p := _prologue(fft)) is not None}
    taken = set(prologues.values())
    made = 0
    for fft in ffts:
        epilogue = _epilogue(fft, taken)
        if fft in prologues or epilogue is not None:
            _fuse(func, fft, prologues.get(fft), epilogue)
            made += 1
    return made


def _prologue(fft: Operation) -> Operation | None:
    x = fft.operands[0]
    p = x.op if isinstance(x, OpResult) else None
    if p is None or p.name != KERNEL or len(p.results) != 1 or p.parent is not fft.parent:
        return None
    if len(x.uses) != 1 or not same_shape(tuple(p.attrs["shape"]), tuple(x.type.shape)):
        return None
    return p


def _epilogue(fft: Operation, taken: set[Operation]) -> Operation | None:
    r = fft.results[0]
    if len(r.uses) != 1:
        return None
    c = r.uses[0][0]
    if c.name != KERNEL or c in taken or c.parent is not fft.parent:
        return None
    return c if same_shape(tuple(c.attrs["shape"]), tuple(r.type.shape)) else None


def _fuse(func: Func, fft: Operation, producer: Operation | None, consumer: Operation | None) -> None:
    """Replace fft (and its producer and consumer) by one kernel.fft at the consumer's place."""
    if producer is not None:
        ins, first = list(producer.operands), producer.regions.pop()
    else:
        ins, first = [fft.operands[0]], _identity(fft.operands[0].type.dtype)
    r = fft.results[0]
    if consumer is not None:
        extras = [v for v in consumer.operands if v is not r]
        last, outs = _result_first(consumer.regions.pop().block, consumer.operands.index(r)), consumer.results
    else:
        extras, last, outs = [], _identity(r.type.dtype), fft.results
    attrs = lookup("kernel.fft").full_attrs({
        **fft.attrs, "kind": fft.name, "shape": tuple(fft.operands[0].type.shape), "inputs": len(ins)})
    if fft.name != "fft":
        attrs.pop("inverse")  # an attribute of c2c transforms only (its default is False)
    kernel = Operation("kernel.fft", ins + extras, [v.type for v in outs], attrs, [first, last], loc=fft.loc)
    anchor = consumer if consumer is not None else fft
    func.body.insert_before(anchor, kernel)
    for old, new in zip(outs, kernel.results, strict=True):
        old.replace_all_uses_with(new)
    for op in (consumer, fft, producer):
        if op is not None:
            op.erase()
    _log(func, kernel, producer, consumer)


def _identity(dtype) -> Region:
    block = Block([ScalarType(dtype)])
    block.append(Operation("yield", [block.args[0]], []))
    return Region([block])


def _result_first(block: Block, index: int) -> Region:
    """`block`'s ops in a new block whose argument #index comes first (the FFT's result element)."""
    order = [index] + [k for k in range(len(block.args)) if k != index]
    new = Block([block.args[k].type for k in order])
    for k, arg in zip(order, new.args, strict=True):
        block.args[k].replace_all_uses_with(arg)
    for op in list(block.ops):
        op.parent = None
        new.append(op)
    block.ops = []
    return Region([new])


def _log(func: Func, kernel: Operation, producer: Operation | None, consumer: Operation | None) -> None:
    if not log.isEnabledFor(INFO):
        return

    def body(region: Region, present: bool) -> str:
        return "[" + ", ".join(op.name for op in region.block.ops if op.name != "yield") + "]" if present else "none"

    log.info("@%s: kernel.fft %s along axis %s: prologue %s, epilogue %s", func.name, kernel.attrs["kind"],
             kernel.attrs["axis"], body(kernel.regions[0], producer is not None),
             body(kernel.regions[1], consumer is not None))


@register_pass
class FuseFFT(Pass):
    """`fuse_fft`: FFTs absorb their elementwise producer and consumer (kernel.fft)."""

    name = "fuse_fft"

    def run_on_func(self, func: Func) -> bool:
        return fuse_fft_func(func) > 0
