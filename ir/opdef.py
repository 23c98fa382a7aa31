"""The op registry. Each op is defined once (see aot/ops/): every stage looks its facets up here.

An OpDef holds what the dialect itself needs (arity, attributes, dtype rule, symbolic shape rule,
numpy reference, traits) and slots for the facets of later stages (VJP, JVP, batching, CPU and GPU
lowering, decomposition). `ir` never interprets the later facets; it only stores them, so that an
op is added by writing one row.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .dtypes import DType
from .symbols import dims_equal, is_static, norm_dim
from .types import ScalarType, TensorType, Type


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


class OpError(ValueError):
    """A rule rejected its operands or attributes; the message names the op and what was expected."""


class MissingRule(NotImplementedError):
    def __init__(self, stage: str, op: str):
        super().__init__(f"op {op!r} has no {stage} rule")
        self.stage, self.op = stage, op


@dataclass(slots=True)
class OpDef:
    name: str
    arity: int | None  # None: variadic (at least `min_arity`)
    dtype_rule: Callable[..., Any] | None = None  # (dtypes: list[DType], **attrs) -> DType | tuple
    shape_rule: Callable[..., Any] | None = None  # (shapes: list[tuple], **attrs) -> shape | tuple
    reference: Callable[..., Any] | None = None  # numpy implementation: (*arrays, **attrs)
    attrs: dict[str, Any] = field(default_factory=dict)  # name -> default (REQUIRED: must be given)
    traits: frozenset[str] = frozenset()
    num_results: int = 1
    min_arity: int = 0
    # structural ops compute their own result types and checks
    infer: Callable[..., list[Type]] | None = None  # (operand_types, attrs, regions) -> result types
    verify: Callable[..., None] | None = None  # (op) -> None, raises OpError
    # facets of later stages, filled by the op's row; `ir` only stores them
    vjp: Any = None
    jvp: Any = None
    batch: Any = None
    llvm: Any = None
    gpu: Any = None
    decomposition: Any = None
    numpy_names: tuple[str, ...] = ()
    doc: str = ""

    def has(self, trait: str) -> bool:
        return trait in self.traits

    def full_attrs(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """Attributes with defaults filled in; unknown or missing ones raise OpError."""
        unknown = set(attrs) - set(self.attrs)
        if unknown:
            raise OpError(f"{self.name}: unknown attribute(s) {sorted(unknown)}; expected {sorted(self.attrs)}")
        out = {}
        for k, default in self.attrs.items():
            if k in attrs:
                out[k] = attrs[k]
            elif default is REQUIRED:
                raise OpError(f"{self.name}: missing required attribute {k!r}")
            else:
                out[k] = default
        return out

    def check_arity(self, n: int) -> None:
        if self.arity is None:
            if n < self.min_arity:
                raise OpError(f"{self.name}: expected at least {self.min_arity} operands, got {n}")
        elif n != self.arity:
            raise OpError(f"{self.name}: expected {self.arity} operand(s), got {n}")


OPDEFS: dict[str, OpDef] = {}


def register(opdef: OpDef) -> OpDef:
    if opdef.name in OPDEFS:
        raise ValueError(f"op {opdef.name!r} is defined twice")
    OPDEFS[opdef.name] = opdef
    return opdef


def lookup(name: str) -> OpDef:
    try:
        return OPDEFS[name]
    except KeyError:
        raise OpError(f"unknown op {name!r}") from None


def infer_result_types(name: str, operand_types: list[Type], attrs: dict[str, Any],
                       regions: list | None = None) -> list[Type]:
    """Result types of `name` applied to operands of these types; OpError names what is wrong."""
    d = lookup(name)
    d.check_arity(len(operand_types))
    attrs = d.full_attrs(attrs)
    if d.infer is not None:
        return list(d.infer(operand_types, attrs, regions or []))
    if d.dtype_rule is None or d.shape_rule is None:
        raise OpError(f"{name}: has no dtype/shape rule and no infer hook")
    dts = [t.dtype for t in operand_types]
    dtype = d.dtype_rule(dts, **attrs)
    scalar = bool(operand_types) and all(isinstance(t, ScalarType) for t in operand_types)
    if scalar and d.has("elementwise"):
        outs = dtype if d.num_results > 1 else (dtype,)
        return [ScalarType(o) for o in outs]
    for i, t in enumerate(operand_types):
        if not isinstance(t, TensorType):
            raise OpError(f"{name}: operand #{i} must be a tensor, got {t}")
    shape = d.shape_rule([t.shape for t in operand_types], **attrs)
    if d.num_results > 1:
        return [TensorType(dt, s) for dt, s in zip(dtype, shape)]
    return [TensorType(dtype, shape)]


# --- reusable rules ------------------------------------------------------------------------------

def broadcast_shapes(*shapes: tuple, op: str = "broadcast") -> tuple:
    """numpy broadcasting of (possibly symbolic) shapes. Unequal symbolic dims are an error:
    the front end must have decided them (with a guard) before building the IR."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        dim: Any = 1
        for s in shapes:
            k = i - (rank - len(s))
            if k < 0:
                continue
            d = norm_dim(s[k])
            if is_static(d) and d == 1:
                continue
            if is_static(dim) and dim == 1:
                dim = d
            elif not dims_equal(dim, d):
                raise OpError(f"{op}: shapes {' and '.join(_fmt_shape(x) for x in shapes)} "
                              f"cannot be broadcast (dim {i}: {dim} vs {d})")
        out.append(dim)
    return tuple(out)


def _fmt_shape(s: tuple) -> str:
    return "(" + ", ".join(str(d) for d in s) + ")"


def same_dtype(dtypes: list[DType], **_) -> DType:
    first = dtypes[0]
    for d in dtypes[1:]:
        if d != first:
            raise OpError(f"operands must share one dtype, got {[str(x) for x in dtypes]}")
    return first


def same_shape(shapes: list[tuple], **_) -> tuple:
    return shapes[0]


def normalize_axis(axis: int, rank: int, op: str = "op") -> int:
    if not -rank <= axis < max(rank, 1) or (rank == 0 and axis not in (0, -1)):
        raise OpError(f"{op}: axis {axis} is out of bounds for rank {rank}")
    return axis % rank if rank else 0
