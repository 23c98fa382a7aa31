"""Where translated numpy calls go: the `Emitter` protocol and its eager and IR implementations.

The front end (numpy_*.py, indexing.py, methods.py) turns one numpy call into calls of
`emitter.emit(op, operands, attrs)` with core ops only. What a value *is* belongs to the emitter:
numpy arrays (EagerEmitter), ir Values (IRBuilderEmitter), fx Proxies (the tracer's emitter). The
front end only reads a value's abstract type through `abstract_of`: `.dtype` (an ir DType) and
`.shape` (a tuple of ints or sympy dims).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ir import dtypes as irdt
from ir.builder import Builder, new_func
from ir.core import Func, Module, Value
from ir.dtypes import DType
from ir.logger import get_logger
from ir.opdef import infer_result_types, lookup
from ir.records import record
from ir.types import TensorType

log = get_logger(__name__)


@runtime_checkable
class Emitter(Protocol):
    """Receives core ops. Two methods, so that a new backend (fx recording, ...) is small (a third,
    optional: `assign(target, new)` rebinds a mutable array to a new value, for in-place updates).

    emit: apply core op `op` (a key of ir.OPDEFS) to `operands` (values of this emitter) with
        attributes `attrs` (plain Python data: ints, tuples, DTypes, scalars, numpy arrays);
        returns one value, or a tuple for multi-result ops.
    is_value: whether `x` is a tensor value of this emitter. Anything else the front end meets
        (Python scalars, numpy arrays that are not values here, lists) is a constant it
        materialises with `constant` ops.
    """

    def emit(self, op: str, operands: Sequence[Any], attrs: Mapping[str, Any]) -> Any: ...

    def is_value(self, x: Any) -> bool: ...


@record(frozen=True, slots=True)
class Abstract:
    """The abstract type of a value: what the front end may look at."""

    dtype: DType
    shape: tuple

    @property
    def ndim(self) -> int:
        return len(self.shape)


def abstract_of(value: Any) -> Abstract:
    """dtype and shape of a numpy array/scalar, an ir Value, or anything with `.dtype`/`.shape`."""
    if isinstance(value, Value):
        t = value.type
        return Abstract(t.dtype, tuple(t.shape))
    if isinstance(value, Abstract):
        return value
    own = getattr(type(value), "__aot_abstract__", None)
    if own is not None:  # tracer values whose user-visible .shape differs (SymInts)
        return own(value)
    dt, shape = getattr(value, "dtype", None), getattr(value, "shape", None)
    if dt is None or shape is None:
        raise TypeError(f"expected an array-like value with .dtype and .shape, got {type(value).__name__}")
    return Abstract(dt if isinstance(dt, DType) else irdt.from_numpy(dt), tuple(shape))


class EagerEmitter:
    """Runs each core op's numpy reference at once; values are numpy arrays.

    With `check=True` (the default) every result is compared with the type the op's dtype and
    shape rules infer, so eager execution and the IR cannot disagree silently.
    """

    def __init__(self, check: bool = True):
        self.check = check

    def is_value(self, x: Any) -> bool:
        return isinstance(x, (np.ndarray, np.generic))

    def assign(self, target: Any, new: Any) -> None:
        """An in-place update (aot/frontend/assignment.py): numpy's own."""
        np.copyto(target, new, casting="unsafe")

    def emit(self, op: str, operands: Sequence[Any], attrs: Mapping[str, Any]) -> Any:
        d = lookup(op)
        full = d.full_attrs(dict(attrs))
        arrays = [np.asarray(x) for x in operands]
        if d.reference is None:
            raise NotImplementedError(f"op {op!r} has no numpy reference")
        out = d.reference(*arrays, **full)
        results = tuple(np.asarray(r) for r in out) if d.num_results > 1 else (np.asarray(out),)
        if self.check:
            operand_types = [TensorType(irdt.from_numpy(a.dtype), a.shape) for a in arrays]
            types = infer_result_types(op, operand_types, full)
            for r, t in zip(results, types):
                got = TensorType(irdt.from_numpy(r.dtype), r.shape)
                if got != t:
                    raise RuntimeError(f"{op}{dict(full)}: reference returned {got}, its rules infer {t}")
        return results if d.num_results > 1 else results[0]


class IRBuilderEmitter:
    """Builds ir ops through an ir.Builder; values are ir Values (types inferred by the rules)."""

    def __init__(self, builder: Builder):
        self.builder = builder

    def is_value(self, x: Any) -> bool:
        return isinstance(x, Value)

    def emit(self, op: str, operands: Sequence[Any], attrs: Mapping[str, Any]) -> Any:
        return self.builder.op(op, *operands, **dict(attrs))


def build_func(body: Callable[..., Any], arg_types: Sequence[TensorType], name: str = "main",
               arg_names: Sequence[str] | None = None) -> tuple[Module, Func]:
    """Lower `body(emitter, *args)` (which calls front-end translations) to an ir function.

    `body` returns one value or a tuple of values; they become the function's results.
    """
    module = Module(name)
    func, b = new_func(module, name, list(arg_types), list(arg_names) if arg_names else None)
    em = IRBuilderEmitter(b)
    out = body(em, *func.args)
    outs = out if isinstance(out, tuple) else (out,)
    b.ret(*(_as_value(em, o) for o in outs))
    return module, func


def _as_value(em: IRBuilderEmitter, x: Any) -> Value:
    if isinstance(x, Value):
        return x
    from .operands import to_value  # a constant result (e.g. the function returns x.shape[0])

    return to_value(em, x)
