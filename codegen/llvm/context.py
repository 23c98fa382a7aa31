"""LowerCtx: everything a lowering rule may use, passed explicitly (never ambient)."""

from __future__ import annotations

import functools

from llvmlite import ir as L

from ir.dtypes import DType
from ir.records import field, record

from ..targets.base import Target
from .types import I1, scalar_type, value_type


@record
class LowerCtx:
    """Lowering state for one function body.

    `vlen` is the lane count of the values being computed: 1 for the scalar paths, the target's
    vector length in the vectorised inner loop. Rules call `const`, `intrinsic` and `math` so that
    the same rule body serves scalars and vectors.
    """

    module: L.Module
    builder: L.IRBuilder
    target: Target
    vlen: int = 1
    _helpers: dict = field(default_factory=dict)
    error_slot: L.Value | None = None  # i64* that rules set to 1 on a numpy error (None: no path)
    # <vlen x i1> of the lanes a masked vector iteration computes (None: all): a masked-off lane
    # holds a made-up value (a masked load's zero), whose errors are not the program's
    lane_mask: L.Value | None = None

    # --- constants and types -----------------------------------------------------------------
    def ty(self, dt: DType) -> L.Type:
        return value_type(dt, self.vlen)

    def const(self, dt: DType, value) -> L.Constant:
        """`value` in dtype `dt` (real component for complex), splatted to vlen lanes."""
        return _const(scalar_type(dt), repr(value), value, self.vlen)

    def splat(self, c):
        if self.vlen == 1:
            return c
        if isinstance(c, L.Constant):
            return _splat(c, self.vlen)
        b = self.builder
        undef, zero, mask = _splat_parts(c.type, self.vlen)
        return b.shuffle_vector(b.insert_element(undef, c, zero), undef, mask)

    # --- declarations ------------------------------------------------------------------------
    def function(self, name: str, ret: L.Type, args: list[L.Type]) -> L.Function:
        """Declare (once) an external function."""
        fn = self.module.globals.get(name)
        if fn is None:
            fn = L.Function(self.module, L.FunctionType(ret, args), name=name)
        return fn

    def intrinsic(self, name: str, args: list, ret: L.Type | None = None):
        """Call `llvm.<name>` overloaded on the first argument's type (e.g. llvm.sqrt.v8f64)."""
        t = args[0].type
        suffix = _type_suffix(t)
        fn = self.function(f"llvm.{name}.{suffix}", ret or t, [a.type for a in args])
        return self.builder.call(fn, args)

    def helper(self, key, build):
        """A module-level helper function built once by `build(ctx) -> L.Function`."""
        fn = self._helpers.get(key)
        if fn is None:
            fn = self._helpers[key] = build(self)
        return fn

    def per_lane(self, fn: L.Function, args: list):
        """Apply a scalar function lane by lane (used where no vector variant exists)."""
        b = self.builder
        if not isinstance(args[0].type, L.VectorType):
            return b.call(fn, args)
        n = args[0].type.count
        out = L.Constant(L.VectorType(fn.function_type.return_type, n), L.Undefined)
        for i in range(n):
            k = L.Constant(L.IntType(32), i)
            r = b.call(fn, [b.extract_element(a, k) for a in args])
            out = b.insert_element(out, r, k)
        return out


# constants are values: one object per value (and lane count), whose text llvmlite formats once
@functools.lru_cache(maxsize=1024)
def _const(t: L.Type, text: str, value, vlen: int) -> L.Constant:
    """`value` (keyed by its repr too: 0.0 and -0.0 are equal keys otherwise) in scalar type t,
    splatted to vlen lanes."""
    if t is I1:
        c = L.Constant(t, int(bool(value)))
    elif isinstance(t, L.IntType):
        c = L.Constant(t, int(value))
    else:
        c = L.Constant(t, float(value))
    return c if vlen == 1 else _splat(c, vlen)


def _splat(c: L.Constant, vlen: int) -> L.Constant:
    key = (str(c.type), c.get_reference(), vlen)
    v = _SPLATS.get(key)
    if v is None:
        if len(_SPLATS) >= 4096:  # a bound for long-lived processes compiling many programs
            _SPLATS.clear()
        v = _SPLATS[key] = L.Constant(L.VectorType(c.type, vlen), [c] * vlen)
    return v


_SPLATS: dict = {}


@functools.lru_cache(maxsize=64)
def _splat_parts(t: L.Type, vlen: int):
    """undef <vlen x t>, i32 0 and the zero shuffle mask that broadcast a value."""
    return (L.Constant(L.VectorType(t, vlen), L.Undefined), L.Constant(L.IntType(32), 0),
            L.Constant(L.VectorType(L.IntType(32), vlen), [0] * vlen))


def declare(module: L.Module, name: str, ret: L.Type, args: list[L.Type]) -> L.Function:
    """The module's declaration of external function `name` (made on first use)."""
    fn = module.globals.get(name)
    return fn if fn is not None else L.Function(module, L.FunctionType(ret, args), name=name)


def _type_suffix(t: L.Type) -> str:
    if isinstance(t, L.VectorType):
        return f"v{t.count}{_type_suffix(t.element)}"
    if isinstance(t, L.IntType):
        return f"i{t.width}"
    return {"float": "f32", "double": "f64"}[str(t)]
