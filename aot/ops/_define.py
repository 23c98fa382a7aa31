"""Helpers that turn one row into a registered OpDef, with the default rules of its family.

`defop` is the general form; `defunary`, `defbinary` and `defreduce` derive the dtype rule (numpy 2
promotion followed by a kind map), the shape rule (same shape, broadcast, reduced) and the traits.
The stages' facts (`cost`, `libm`, `raises`, `markers`) and the transforms' facets (vjp, jvp,
batch) pass through as keywords, so adding one to a row is one keyword; the families' batching rule
is their default (an elementwise op or a reduction batches the same way whatever it computes).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ir import dtypes as D
from ir.dtypes import DType
from ir.opdef import MARKERS, OPDEFS, REQUIRED, OpDef, OpError, broadcast_shapes, register

from ._shapes import check_axes, reduced_shape
from ._transforms import elementwise_batch, reduction_batch

FACETS = ("vjp", "jvp", "batch")  # the transforms' slots (ir.opdef.OpDef)
DEFINED: list[str] = []  # op names in definition order (exposed as aot.ops.ALL_OPS)

KIND_NAMES = {"b": "bool", "i": "int", "f": "float", "c": "complex"}

# result kind maps applied after promotion: numpy's loops depend only on the promoted dtype
RESULT_MAPS: dict[str, Callable[[DType], DType]] = {
    "same": lambda d: d,
    "inexact": lambda d: D.float64 if d.kind in "bi" else d,  # int/bool compute in f64
    "real": lambda d: d.real_dtype,
    "bool": lambda d: D.bool_,
    "complex": lambda d: d.complex_dtype,
}


@functools.lru_cache(maxsize=None)
def promote(*dts: DType) -> DType:
    return D.promote(*dts)


def fmt_dtypes(dts: Iterable[DType]) -> str:
    return ", ".join(str(d) for d in dts)


def check_kind(op: str, dts: list[DType], dt: DType, accept: str) -> None:
    if dt.kind not in accept:
        want = "/".join(KIND_NAMES[k] for k in accept)
        raise OpError(f"{op}: not defined for dtype(s) ({fmt_dtypes(dts)}); expected {want} operands")


def kind_rule(op: str, accept: str, result: str = "same") -> Callable[..., DType]:
    """dtype rule: promote the operands (numpy 2), require a kind in `accept`, map by `result`."""
    to_result = RESULT_MAPS[result]

    def rule(dtypes: list[DType], **_: Any) -> DType:
        dt = promote(*dtypes)
        check_kind(op, dtypes, dt, accept)
        return to_result(dt)

    rule.__name__ = rule.__qualname__ = f"_{op}_dtype"
    rule.accept, rule.result = accept, result  # introspectable by lowerings
    return rule


def broadcast_rule(op: str) -> Callable[..., tuple]:
    def rule(shapes: list[tuple], **_: Any) -> tuple:
        return broadcast_shapes(*shapes, op=op)

    rule.__name__ = rule.__qualname__ = f"_{op}_shape"
    return rule


def _same_shape(shapes: list[tuple], **_: Any) -> tuple:
    return tuple(shapes[0])


def _returns_array(fn: Callable[..., Any], num_results: int = 1) -> Callable[..., Any]:
    """numpy returns scalars for 0-d results; the reference contract is an ndarray (a tuple of
    `num_results` ndarrays for a multi-result op)."""

    @functools.wraps(fn)
    def ref(*args: Any, **attrs: Any) -> Any:
        out = fn(*args, **attrs)
        return np.asarray(out) if num_results == 1 else tuple(np.asarray(r) for r in out)

    return ref


def _first_line(ref: Callable[..., Any]) -> str:
    if isinstance(ref, np.ufunc):
        return f"numpy.{ref.__name__}"
    return (ref.__doc__ or "").strip().split("\n")[0]


def defop(name: str, *, arity: int | None, dtype_rule: Callable[..., Any], shape_rule: Callable[..., Any],
          ref: Callable[..., Any], attrs: dict[str, Any] | None = None, traits: Iterable[str] = (),
          numpy_names: Iterable[str] = (), min_arity: int = 0, doc: str = "",
          raises: Callable[..., bool] | None = None, cost: int = 1, libm: str | None = None,
          markers: dict[str, str] | None = None, num_results: int = 1, **facets: Any) -> OpDef:
    """Register one op. `ref(*arrays, **attrs)` is its numpy meaning; facets go to their OpDef slots.

    cost: recomputation cost in adds (ir.opdef.COST_*); libm: the C math function computing the
    real floating case; markers: {marker: reason} for a facet the row deliberately lacks;
    num_results > 1: the rules and the reference return one dtype / shape / array per result."""
    unknown = set(facets) - set(FACETS)
    if unknown:
        raise TypeError(f"defop({name!r}): unknown facet(s) {sorted(unknown)}; expected some of {FACETS}")
    bad = set(markers or {}) - set(MARKERS)
    if bad or not all(isinstance(r, str) and r for r in (markers or {}).values()):
        raise TypeError(f"defop({name!r}): markers must map some of {sorted(MARKERS)} to a reason, "
                        f"got {markers}")
    opdef = OpDef(name, arity, dtype_rule=dtype_rule, shape_rule=shape_rule,
                  reference=_returns_array(ref, num_results),
                  attrs=dict(attrs or {}), traits=frozenset(traits) | {"pure"}, min_arity=min_arity,
                  num_results=num_results,
                  numpy_names=tuple(numpy_names), doc=doc or _first_line(ref), raises=raises,
                  cost=cost, libm=libm, markers=dict(markers or {}), **facets)
    register(opdef)
    DEFINED.append(name)
    return opdef


def _default_numpy_names(ref: Callable[..., Any], numpy_names: Iterable[str] | None) -> tuple[str, ...]:
    if numpy_names is not None:
        return tuple(numpy_names)
    return (ref.__name__,) if isinstance(ref, np.ufunc) else ()


def defunary(name: str, ref: Callable[..., Any], *, accept: str, result: str = "same",
             numpy_names: Iterable[str] | None = None, traits: Iterable[str] = (),
             attrs: dict[str, Any] | None = None, dtype_rule: Callable[..., Any] | None = None,
             **facets: Any) -> OpDef:
    """An elementwise op of one operand: same shape; dtype from `accept`/`result` unless given."""
    facets.setdefault("batch", elementwise_batch(name))
    return defop(name, arity=1, dtype_rule=dtype_rule or kind_rule(name, accept, result),
                 shape_rule=_same_shape, ref=ref, attrs=attrs,
                 traits={"elementwise", "unary", *traits},
                 numpy_names=_default_numpy_names(ref, numpy_names), **facets)


def defbinary(name: str, ref: Callable[..., Any], *, accept: str, result: str = "same",
              numpy_names: Iterable[str] | None = None, traits: Iterable[str] = (), **facets: Any) -> OpDef:
    """An elementwise op of two operands: numpy broadcasting; mixed dtypes promote as numpy does."""
    facets.setdefault("batch", elementwise_batch(name))
    return defop(name, arity=2, dtype_rule=kind_rule(name, accept, result), shape_rule=broadcast_rule(name),
                 ref=ref, traits={"elementwise", "binary", *traits},
                 numpy_names=_default_numpy_names(ref, numpy_names), **facets)


def defreduce(name: str, ref: Callable[..., Any], *, dtype_rule: Callable[..., Any], nonempty: bool = False,
              numpy_names: Iterable[str] = (), traits: Iterable[str] = (), **facets: Any) -> OpDef:
    """A reduction over `axes` (normalised, unique, possibly empty) with `keepdims`.

    nonempty: the reduction has no identity (max, min), so a reduced axis of static size 0 is an error.
    """

    def shape_rule(shapes: list[tuple], *, axes: tuple, keepdims: bool) -> tuple:
        shape = tuple(shapes[0])
        axes = check_axes(name, axes, len(shape))
        if nonempty and any(shape[a] == 0 for a in axes):
            raise OpError(f"{name}: reduction over an axis of size 0 has no identity (shape {shape})")
        return reduced_shape(shape, axes, bool(keepdims))

    shape_rule.__name__ = shape_rule.__qualname__ = f"_{name}_shape"
    facets.setdefault("batch", reduction_batch(name))
    return defop(name, arity=1, dtype_rule=dtype_rule, shape_rule=shape_rule, ref=ref,
                 attrs={"axes": REQUIRED, "keepdims": False}, traits={"reduction", *traits},
                 numpy_names=numpy_names, **facets)


def constant_value(v: Any) -> np.ndarray | None:
    """The value of `v` when a `constant` op produces it (None otherwise)."""
    owner = getattr(v, "owner", None)
    if getattr(owner, "name", None) != "constant":
        return None
    return np.asarray(owner.attrs["value"])


def check_dtype_attr(op: str, dtype: Any, what: str = "dtype") -> DType:
    if not isinstance(dtype, DType):
        raise OpError(f"{op}: attribute {what!r} must be an ir DType, got {dtype!r}")
    return dtype


def within_rules(name: str, ref: Callable[..., Any]) -> Callable[..., Any]:
    """`ref` refusing what row `name`'s dtype and shape rules refuse (TypeError, ValueError), for rows
    whose numpy computation would cast or broadcast what the row does not define (a kernel's operands)."""
    @functools.wraps(ref)
    def checked(*arrays: Any, **attrs: Any) -> Any:
        d = OPDEFS[name]
        try:
            d.dtype_rule([D.from_numpy(np.asarray(a).dtype) for a in arrays], **attrs)
        except OpError as e:
            raise TypeError(str(e)) from None
        try:
            d.shape_rule([np.shape(a) for a in arrays], **attrs)
        except OpError as e:
            raise ValueError(str(e)) from None
        return ref(*arrays, **attrs)

    return checked
