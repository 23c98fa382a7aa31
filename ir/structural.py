"""Structural ops of the dialect: return, yield and the region-carrying fused kernels.

kernel.elementwise(%in...) {shape}: one loop nest over `shape`; each operand broadcasts to it
(numpy rules, right-aligned). Its region has one block with a scalar argument per operand and ends
in `yield` of the scalar results; results are tensors of `shape` with the yielded dtypes.

kernel.reduce(%in...) {shape, axes, kind, keepdims, dtype}: iterate `shape`, compute the region's
yielded scalar per element and combine over `axes` with `kind` (a key of ir.reductions.REDUCTIONS:
sum, prod, max, min, any, all, argmax, argmin); the result has the reduced shape and `dtype`. The
body of a kind with `body_in_result_dtype` (sum, prod) yields the result dtype (cast in the body
where numpy accumulates wider); the others' bodies yield the operand dtype (any/all test against
zero themselves: a cast of complex to bool first would keep only the real part).
"""
from __future__ import annotations

from .core import Operation, Value
from .dtypes import DType
from .opdef import REQUIRED, OpDef, OpError, broadcast_shapes, infer_result_types, register
from .reductions import REDUCTIONS
from .symbols import dims_equal
from .types import ScalarType, TensorType

REDUCE_KINDS = tuple(REDUCTIONS)  # the kinds kernel.reduce accepts: one record each in ir/reductions.py
FFT_KINDS = ("fft", "rfft", "irfft")


def _no_results(operand_types, attrs, regions):
    return []


def _kernel_body_checks(op, name: str) -> list:
    if len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
        raise OpError(f"{name}: expected one region with one block")
    return _body_checks(name, op.regions[0].block, op.operands, op.attrs["shape"])


def _body_checks(name: str, block, operands, shape, lead: tuple = ()) -> list:
    """Check a scalar body reading `operands` broadcast to `shape` (after `lead` leading scalar
    arguments of these dtypes); returns the types it yields."""
    if len(block.args) != len(lead) + len(operands):
        extra = f" (after {len(lead)} leading)" if lead else ""
        raise OpError(f"{name}: body has {len(block.args)} arguments for {len(operands)} operands{extra}")
    want = list(lead) + [v.type.dtype for v in operands]
    for i, (a, dt) in enumerate(zip(block.args, want)):
        if not isinstance(a.type, ScalarType) or a.type.dtype != dt:
            raise OpError(f"{name}: body argument #{i} is {a.type}, expected scalar {dt}")
    for i, v in enumerate(operands):
        if not isinstance(v.type, TensorType):
            raise OpError(f"{name}: operand #{i} must be a tensor, got {v.type}")
        out = broadcast_shapes(v.type.shape, shape, op=name)
        if len(out) != len(shape) or not all(dims_equal(a, b) for a, b in zip(out, shape)):
            raise OpError(f"{name}: operand #{i} of type {v.type} does not broadcast to shape {shape}")
    term = block.terminator
    if term is None or term.name != "yield":
        raise OpError(f"{name}: body must end in yield")
    return [v.type for v in term.operands]


def _elementwise_infer(operand_types, attrs, regions):
    if not regions:
        raise OpError("kernel.elementwise: needs its body region to infer result types")
    term = regions[0].block.terminator
    if term is None or term.name != "yield":
        raise OpError("kernel.elementwise: body must end in yield")
    return [TensorType(v.type.dtype, attrs["shape"]) for v in term.operands]


def _elementwise_verify(op):
    yielded = _kernel_body_checks(op, "kernel.elementwise")
    if len(yielded) != len(op.results):
        raise OpError(f"kernel.elementwise: yields {len(yielded)} values for {len(op.results)} results")
    for i, (t, r) in enumerate(zip(yielded, op.results)):
        if r.type != TensorType(t.dtype, op.attrs["shape"]):
            raise OpError(f"kernel.elementwise: result #{i} is {r.type}, expected {t.dtype} of shape "
                          f"{op.attrs['shape']}")


def reduced_shape(shape: tuple, axes: tuple, keepdims: bool) -> tuple:
    axes = {a % len(shape) for a in axes} if shape else set()
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _reduce_infer(operand_types, attrs, regions):
    if attrs["kind"] not in REDUCE_KINDS:
        raise OpError(f"kernel.reduce: kind must be one of {REDUCE_KINDS}, got {attrs['kind']!r}")
    dt = attrs["dtype"]
    if not isinstance(dt, DType):
        raise OpError(f"kernel.reduce: dtype attribute must be a DType, got {dt!r}")
    return [TensorType(dt, reduced_shape(tuple(attrs["shape"]), tuple(attrs["axes"]), attrs["keepdims"]))]


def _reduce_verify(op):
    yielded = _kernel_body_checks(op, "kernel.reduce")
    if len(yielded) != 1:
        raise OpError(f"kernel.reduce: body must yield exactly one value, got {len(yielded)}")
    rank = len(op.attrs["shape"])
    for a in op.attrs["axes"]:
        if not -rank <= a < rank:
            raise OpError(f"kernel.reduce: axis {a} out of bounds for rank {rank}")


def fft_attrs(attrs: dict) -> dict:
    """The attributes of the fft-family op that a kernel.fft with attributes `attrs` runs."""
    out = {"axis": attrs["axis"], "n": attrs.get("n"), "norm": attrs.get("norm", "backward")}
    if attrs["kind"] == "fft":
        out["inverse"] = attrs.get("inverse", False)
    return out


def _yields(region, what: str) -> list:
    if len(region.blocks) != 1:
        raise OpError(f"kernel.fft: the {what} must have one block")
    term = region.block.terminator
    if term is None or term.name != "yield":
        raise OpError(f"kernel.fft: the {what} must end in yield")
    return [v.type for v in term.operands]


def _fft_types(attrs, regions) -> tuple[TensorType, TensorType]:
    """(input, result) types of the transform a kernel.fft runs."""
    if attrs["kind"] not in FFT_KINDS:
        raise OpError(f"kernel.fft: kind must be one of {FFT_KINDS}, got {attrs['kind']!r}")
    if attrs["kind"] != "fft" and attrs.get("inverse", False):
        raise OpError(f"kernel.fft: inverse is only an attribute of kind 'fft', not {attrs['kind']!r}")
    if len(regions) != 2:
        raise OpError(f"kernel.fft: expected two regions (prologue, epilogue), got {len(regions)}")
    made = _yields(regions[0], "prologue")
    if len(made) != 1:
        raise OpError(f"kernel.fft: the prologue must yield one value, got {len(made)}")
    x = TensorType(made[0].dtype, tuple(attrs["shape"]))
    (r,) = infer_result_types(attrs["kind"], [x], fft_attrs(attrs))
    return x, r


def _fft_infer(operand_types, attrs, regions):
    _, r = _fft_types(attrs, regions)
    return [TensorType(t.dtype, r.shape) for t in _yields(regions[1], "epilogue")]


def _fft_verify(op):
    k = op.attrs["inputs"]
    if not isinstance(k, int) or not 0 <= k <= len(op.operands):
        raise OpError(f"kernel.fft: inputs must be an int in [0, {len(op.operands)}], got {k!r}")
    _, r = _fft_types(op.attrs, op.regions)
    _body_checks("kernel.fft prologue", op.regions[0].block, op.operands[:k], op.attrs["shape"])
    if not _body_checks("kernel.fft epilogue", op.regions[1].block, op.operands[k:], r.shape, lead=(r.dtype,)):
        raise OpError("kernel.fft: the epilogue yields nothing")  # result types: checked against _fft_infer


def inner_fft(op) -> Operation:
    """The fft/rfft/irfft op that kernel.fft `op` runs, detached: its operand is a placeholder value
    of the transform's input type (code generators and the interpreter run it on the prologue's
    values)."""
    x, r = _fft_types(op.attrs, op.regions)
    return Operation(op.attrs["kind"], [Value(x)], [r], fft_attrs(op.attrs), loc=op.loc)


def _return_verify(op):
    f = op.parent.parent if op.parent is not None else None
    if f is not None and hasattr(f, "result_types"):
        got = [v.type for v in op.operands]
        if got != list(f.result_types):
            raise OpError(f"return: returns {[str(t) for t in got]}, function @{f.name} declares "
                          f"{[str(t) for t in f.result_types]}")


register(OpDef("return", None, infer=_no_results, verify=_return_verify, traits=frozenset({"terminator"}),
               num_results=0))
register(OpDef("yield", None, infer=_no_results, traits=frozenset({"terminator"}), num_results=0))
register(OpDef("kernel.elementwise", None, attrs={"shape": REQUIRED}, infer=_elementwise_infer,
               verify=_elementwise_verify, traits=frozenset({"kernel", "elementwise_kernel"}), min_arity=0))
register(OpDef("kernel.reduce", None, min_arity=0, infer=_reduce_infer, verify=_reduce_verify,
               attrs={"shape": REQUIRED, "axes": REQUIRED, "kind": REQUIRED, "keepdims": False,
                      "dtype": REQUIRED},
               traits=frozenset({"kernel", "reduction_kernel"})))
register(OpDef("kernel.fft", None, min_arity=0, infer=_fft_infer, verify=_fft_verify,
               attrs={"kind": REQUIRED, "axis": REQUIRED, "n": None, "norm": "backward", "inverse": False,
                      "shape": REQUIRED, "inputs": REQUIRED},
               traits=frozenset({"kernel", "fft_kernel"})))
