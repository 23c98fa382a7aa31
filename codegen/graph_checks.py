"""ENTRY_LOWERINGS rows of the run-time checks (aot/ops/checks.py): `require` reads its 0-d
condition and leaves the entry with the row's status when it is false; its value passes through
as a view (no copy)."""

from __future__ import annotations

from ir import status

from .graph_base import Desc, EntryCtx, entry_rule
from .llvm.context import LowerCtx
from .llvm.loops import load_scalar

_CODES = {s.name: s.code for s in status.ENTRY}


@entry_rule("require")
def _require(ectx: EntryCtx, op, x: Desc, ok: Desc, out):
    b = ectx.builder
    held = load_scalar(LowerCtx(ectx.module, b, ectx.target), ok.dtype, ok.data)
    ectx.fail_if(b.not_(held), _CODES[op.attrs["status"]])
    return [x]
