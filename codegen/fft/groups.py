"""The kernel module of one precision cut into groups, each its own small module, so that aot.fft
builds, caches and loads only what its plans need (the whole module takes seconds at O3).

Groups (names.group_of):
    ("core",)              the c2c entry, the pass entry and the real passes: module.py's
                           interpreters, calling every pass through the import table
    ("radix", r, forward)  the codelet passes of radix r in one direction, every layout
    ("generic", forward)   the generic odd-radix passes
    ("planner",)           the run-time planner (planner.py), calling c2c through the table
    ("fourstep",)          the passes of four-step and two-halves transforms (fourstep.py), with
                           their own lane interpreters, calling the passes and the c2c entry
                           through the table (out of the core: only long transforms need them)
    ("threads",)           one long transform's passes, its four steps or halves, and batches,
                           shared by a pool of threads (threads.py), calling the pass, c2c and
                           fourstep entries through the table

A group's module exports what it defines and `names.imports_symbol(p)`, an array of pointers in
the order of `names.imports_of`, which the loader fills with the addresses of those symbols as it
loads the groups that define them; a call through an empty slot traps. The core also exports
`names.vlen_symbol(p)` (its SIMD lanes), so that a loader need not derive them.
"""
from __future__ import annotations

from llvmlite import ir as L

from ..kernels.parallel import as_callee
from ..llvm.builder import Builder
from .fourstep import (
    COLUMNS_TYPE,
    TRANSPOSE_TYPE,
    UNZIP_TYPE,
    combine2_type,
    emit_four_step_passes,
    rows_t_type,
)
from .layouts import I64, PTR, i64, layouts_of
from .module import _Emitter
from .names import (
    columns_name,
    combine_name,
    entry_name,
    group_of,
    imports_of,
    imports_symbol,
    pass_entry_name,
    pass_keys,
    pass_name,
    rows_name,
    transpose_name,
    unzip_name,
    vlen_symbol,
)
from .passes import emit_keyed_pass
from .planner import emit_planner
from .real import emit_c2r_pre, emit_r2c_post
from .threads import (
    PASS_ENTRY_TYPE,
    emit_c2c_split,
    emit_four_step,
    emit_halves,
    emit_planes,
    emit_real_shared,
    emit_shared,
)

_PASS_ARGS = [I64, I64, PTR, PTR, PTR, I64, I64, I64]  # passes.py's signature; generic passes add (cs, ip)


def emit_group(precision: str, vlen: int, group: tuple, triple: str = "", data_layout: str = "") -> L.Module:
    """The module of `group` for `precision` and `vlen` lanes (triple/data_layout: as emit_module)."""
    if precision not in ("f32", "f64"):
        raise ValueError(f"FFT kernels: precision must be 'f32' or 'f64', got {precision!r}")
    mod = L.Module(name=f"aot_fft_{precision}_{'_'.join(map(str, group))}")
    mod.triple, mod.data_layout = triple, data_layout
    ft = L.FloatType() if precision == "f32" else L.DoubleType()
    vlen = max(2, vlen)
    kind = group[0]
    if kind == "core":
        _emit_core(mod, precision, ft, vlen)
    elif kind in ("radix", "generic"):
        _emit_passes(mod, ft, vlen, group)
    elif kind == "fourstep":
        imports = _Imports(mod, precision, group, vlen)
        em = _Emitter(mod, ft, vlen, passes=_pass_stubs(imports))
        emit_four_step_passes(em, precision, imports.stub(entry_name(precision), _c2c_type(ft)))
    elif kind == "planner":
        imports = _Imports(mod, precision, group, vlen)
        emit_planner(mod, precision, ft, vlen, imports.stub(entry_name(precision), _c2c_type(ft)))
    elif kind == "threads":
        imports = _Imports(mod, precision, group, vlen)
        emit_shared(mod, precision, vlen, imports.stub(pass_entry_name(precision), PASS_ENTRY_TYPE))
        emit_real_shared(mod, precision, vlen)
        c2c = imports.stub(entry_name(precision), _c2c_type(ft))
        emit_c2c_split(mod, precision, vlen, c2c)
        emit_four_step(mod, precision, vlen, {
            "columns": imports.stub(columns_name(precision), COLUMNS_TYPE), "c2c": c2c,
            "rows_t": imports.stub(rows_name(precision), rows_t_type(ft)),
            "transpose": imports.stub(transpose_name(precision), TRANSPOSE_TYPE)})
        emit_planes(mod, precision, c2c)
        emit_halves(mod, precision, vlen, {
            "c2c": c2c, "unzip": imports.stub(unzip_name(precision), UNZIP_TYPE),
            "combine": imports.stub(combine_name(precision), combine2_type(ft))})
    else:
        raise ValueError(f"FFT kernels: unknown group {group!r}")
    return mod


def _c2c_type(ft: L.Type) -> L.FunctionType:
    """module.py's c2c entry, called through a group's import table."""
    return L.FunctionType(L.VoidType(), [PTR, PTR, PTR, PTR, I64, I64, I64, I64, I64, L.IntType(32), ft, PTR])


def _pass_stubs(imports: _Imports):
    """module.py's `passes` argument: every pass through the import table."""

    def stub(r, forward, src, dst):
        extra = [PTR, I64] if r == "g" else []
        return imports.stub(pass_name(r, forward, src, dst), L.FunctionType(L.VoidType(), _PASS_ARGS + extra))

    return stub


def _emit_core(mod: L.Module, precision: str, ft: L.Type, vlen: int) -> None:
    em = _Emitter(mod, ft, vlen, passes=_pass_stubs(_Imports(mod, precision, ("core",), vlen)))
    em.emit_entry(precision)
    em.emit_pass_entry(precision)
    emit_r2c_post(mod, precision, ft, vlen)
    emit_c2r_pre(mod, precision, ft, vlen)
    lanes = L.GlobalVariable(mod, I64, name=vlen_symbol(precision))
    lanes.initializer, lanes.global_constant = i64(vlen), True


def _emit_passes(mod: L.Module, ft: L.Type, vlen: int, group: tuple) -> None:
    forward = group[-1]
    layouts = layouts_of(ft, vlen)
    for r, src, dst in pass_keys(forward, vlen):
        if group_of(r, forward) == group:
            emit_keyed_pass(mod, r, forward, src, dst, layouts).linkage = "external"


class _Imports:
    """The import table of a group's module and the internal stubs that call through it."""

    def __init__(self, mod: L.Module, precision: str, group: tuple, vlen: int):
        self.mod = mod
        self.slots = {sym: i for i, (sym, _) in enumerate(imports_of(group, precision, vlen))}
        ty = L.ArrayType(PTR, len(self.slots))
        self.table = L.GlobalVariable(mod, ty, name=imports_symbol(precision))
        self.table.initializer = L.Constant(ty, None)
        self.trap = L.Function(mod, L.FunctionType(L.VoidType(), []), name="llvm.trap")

    def stub(self, symbol: str, fnty: L.FunctionType) -> L.Function:
        """An internal function of type `fnty` that calls the table's `symbol` (inlined by LLVM:
        a call through a pointer, as module.py's Split passes already are)."""
        fn = L.Function(self.mod, fnty, name=f"{symbol}.import")
        fn.linkage = "internal"
        b = Builder(fn.append_basic_block("entry"))
        slot = b.gep(self.table, [i64(0), i64(self.slots[symbol])], source_etype=self.table.value_type)
        target = b.load(slot, typ=PTR)
        with b.if_then(b.icmp_unsigned("==", target, L.Constant(PTR, None)), likely=False):
            b.call(self.trap, [])  # a group the loader did not load: stop here, not at address 0
            b.unreachable()
        result = b.call(as_callee(target, fnty), fn.args)
        if isinstance(fnty.return_type, L.VoidType):
            b.ret_void()
        else:
            b.ret(result)
        return fn
