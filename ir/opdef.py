"""The op registry. Each op is defined once (see aot/ops/): every stage looks its facets up here.

An OpDef holds what the dialect itself needs (arity, attributes, dtype rule, symbolic shape rule,
numpy reference, traits) and the facts later stages key on: the numpy names the front end
translates, the recomputation cost fusion weighs, the C math function codegen calls, whether an
instance can raise, and slots for the transforms (VJP, JVP, batching). `ir` only stores the later
facets; tests/ops/test_registry.py checks that every row has each facet a stage needs, or a marker
saying why not, so that an op is added by writing one row.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .dtypes import DType
from .records import field, record
from .symbols import dims_equal, is_static, norm_dim
from .types import ScalarType, TensorType, Type


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


# recomputation costs (OpDef.cost), relative to an add
COST_CHEAP = 1
COST_DIVISION = 3  # a division or square root
COST_TRANSCENDENTAL = 8  # a libm/libmvec call

# reasons a row may lack a facet a stage needs (OpDef.markers keys)
MARKERS = {
    "no_frontend_name": "no numpy callable translates to it (the front end builds it otherwise)",
    "not_differentiable": "the op has no derivative (comparisons, predicates, integer ops)",
    "no_operands": "the op has no operands: the transforms emit it as it is (nothing to differentiate or batch)",
}


class OpError(ValueError):
    """A rule rejected its operands or attributes; the message names the op and what was expected."""


class MissingRule(NotImplementedError):
    def __init__(self, stage: str, op: str):
        super().__init__(f"op {op!r} has no {stage} rule")
        self.stage, self.op = stage, op


@record(slots=True)
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
    # the transforms' rules (reverse/forward derivative, vmap), filled by the rows when the transforms
    # land; `ir` only stores them
    vjp: Any = None
    jvp: Any = None
    batch: Any = None
    numpy_names: tuple[str, ...] = ()  # numpy callables (dotted below numpy) the front end maps here
    doc: str = ""
    # cost of recomputing one scalar instance inside a fused loop, in adds (COST_*): fusion inlines
    # a value into several kernels only while its cone is cheap
    cost: int = 1
    # the C math library function (scalar libm, vector libmvec) computing the real floating case;
    # codegen lowers rows that name one through a single rule
    libm: str | None = None
    # facet -> why this row has none (see MARKERS); the registry tests accept a marked gap only
    markers: dict[str, str] = field(default_factory=dict)
    # (op) -> bool: whether this instance can hit an error numpy raises (an out-of-bounds index, an
    # integer power with a negative exponent); None: never. DCE keeps such ops, fusion keeps them
    # where an error path exists.
    raises: Callable[..., bool] | None = None

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


def may_raise(op: Any) -> bool:
    """Whether computing `op` can raise an error that numpy raises (its row's `raises` rule)."""
    d = OPDEFS.get(op.name)
    return d is not None and d.raises is not None and bool(d.raises(op))


def lookup(name: str) -> OpDef:
    try:
        return OPDEFS[name]
    except KeyError:
        pass
    from . import load_dialect  # `import ir.opdef` alone has not registered the structural ops

    load_dialect()
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
