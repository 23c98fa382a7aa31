"""Run-time checks: `require(x, ok, status=NAME)` is x when the 0-d bool `ok` holds, and otherwise
fails with the entry status NAME of ir/status.py, which carries numpy's error (the max of an empty
selection, an all-NaN slice of np.nanargmax, weights of np.average that sum to zero). The value
passes through as a view of x (codegen/graph_checks.py), so the check runs before any reader."""
from __future__ import annotations

import builtins

import numpy as np

from ir import status
from ir.dtypes import DType
from ir.opdef import REQUIRED, OpError

from ._define import constant_value, defop
from ._transforms import emit

_STATUSES = {s.name: s for s in status.ENTRY}


def _entry_status(op: str, name) -> status.EntryStatus:
    if name not in _STATUSES:
        raise OpError(f"{op}: status must name an entry status of ir/status.py, got {name!r}")
    return _STATUSES[name]


def _require_dtype(dtypes: list[DType], *, status) -> DType:
    _entry_status("require", status)
    if not dtypes[1].is_bool:
        raise OpError(f"require: the condition must be bool, got {dtypes[1]}")
    return dtypes[0]


def _require_shape(shapes: list[tuple], *, status) -> tuple:
    if tuple(shapes[1]) != ():
        raise OpError(f"require: the condition must be 0-d, got shape {tuple(shapes[1])}")
    return tuple(shapes[0])


def _require_reference(x, ok, *, status):
    """x when `ok` holds, else numpy's error for the status."""
    if np.asarray(ok).dtype != np.bool_ or np.ndim(ok):
        raise TypeError(f"require: the condition must be a 0-d bool, got {np.asarray(ok).dtype}{np.shape(ok)}")
    if not bool(ok):
        s = _entry_status("require", status)
        cls = np.linalg.LinAlgError if s.python_error == "LinAlgError" else getattr(builtins, s.python_error)
        raise cls(s.message)
    return x


def _require_raises(op) -> bool:
    ok = constant_value(op.operands[1])
    return ok is None or not bool(np.all(ok))


def _require_batch(vals, dims, *, status):
    """A batched condition holds when it holds for every example (one failure fails the call)."""
    (x, ok), (dx, dk) = vals, dims
    if dk is not None:
        ok = emit("all", ok, axes=(0,), keepdims=False)
    return emit("require", x, ok, status=status), dx


defop("require", arity=2, dtype_rule=_require_dtype, shape_rule=_require_shape, ref=_require_reference,
      attrs={"status": REQUIRED}, traits={"view", "opaque_kernel"}, raises=_require_raises,
      markers={"no_frontend_name": "decompositions that numpy checks at run time emit it (an empty "
                                   "selection's max, np.nanargmax, np.average)"},
      # the derivative passes through the data operand (the forward value already ran the check)
      vjp=lambda g, x, ok, *, out, status: (g, None), jvp=lambda ts, x, ok, *, out, status: ts[0],
      batch=_require_batch)
