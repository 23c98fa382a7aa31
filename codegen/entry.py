"""Graph entry functions: one LLVM function per ir function, calling its kernels in order.

ABI (target-neutral; the JIT calls it directly, the shared-library and GPU wrappers build on it):

    int32_t NAME(void **data, int64_t *meta)

`data` holds the input data pointers, then the output data pointers. `meta` holds, for each input
then each output, its dims followed by its strides in elements (rank = the ir type's rank).
Outputs are allocated by the caller with the shapes the ir function's result types give: C-contiguous
for a JIT entry (whose code assumes it: every JIT call path makes fresh numpy outputs), any strides
for a library's (CodegenOptions.library).
Returns 0 on success, else an entry status code of ir/status.py (OUT_OF_MEMORY: an intermediate
buffer could not be allocated; INDEX_OUT_OF_RANGE: an index (take) is out of range;
NEGATIVE_POWER; ZERO_DIVISION). Intermediates are allocated by the target's Host (codegen/host.py)
and freed right after their last use (a view keeps its base alive); on failure all are freed and
the outputs are undefined. Kernel results that are returned are written straight into the output
buffers.

This module is the top of the graph layer: it imports the rule modules, which fill
graph_base.ENTRY_LOWERINGS, and walks a function's ops through the table. Nothing in the graph
layer imports it.
"""

from __future__ import annotations

import importlib

from llvmlite import ir as L

from ir.logger import get_logger
from ir.opdef import OPDEFS, MissingRule
from ir.structural import FFT_KINDS
from ir.symbols import is_static

from . import (
    graph_checks,  # noqa: F401  (fills ENTRY_LOWERINGS)
    graph_ops,  # noqa: F401  (fills ENTRY_LOWERINGS)
    row_groups,
)
from .graph_base import ENTRY_LOWERINGS, Desc, EntryCtx, contiguous_strides
from .host import host_class
from .llvm.builder import Builder
from .llvm.loops import i64
from .llvm.types import I32, I64, PTR
from .options import CodegenOptions, library_threads_symbol  # noqa: F401  (re-exported)
from .targets.base import Target

log = get_logger(__name__)


# rule modules loaded when a function needs an op none of the loaded ones lowers (start-up latency:
# together ~30 ms of imports, mostly the linalg kernels', that an elementwise program never needs)
ON_DEMAND = ("graph_scan", "graph_sorting", "graph_linalg_kernels", "graph_arrays", "graph_scatter", "graph_signal",
             "graph_updates", "graph_compaction")
ON_DEMAND += ("graph_linalg_eig",)  # np.linalg.eig, eigvals
ON_DEMAND += ("graph_select",)  # select_kth, partition, argpartition
ON_DEMAND += ("graph_histogram",)  # np.histogram's one-pass counts


def _load_rules(func) -> None:
    """Make sure ENTRY_LOWERINGS has the rules `func` needs: graph_ops' are imported above; the FFT
    rules only for functions with FFTs, imported here for start-up latency (they import codegen.fft,
    ~40-60 ms, which a process compiling no FFT never needs), and ON_DEMAND's for other ops."""
    names = {op.name for op in func.walk()}
    if any(n in FFT_KINDS or n == "kernel.fft" for n in names):
        from . import graph_fft_fused  # noqa: F401  (start-up latency, see above; imports graph_fft)
    if any(n not in ENTRY_LOWERINGS and n in OPDEFS and OPDEFS[n].infer is None  # a row, not structural
           and not OPDEFS[n].has("elementwise") and not OPDEFS[n].has("reduction") for n in names):
        for name in ON_DEMAND:
            importlib.import_module(f"{__package__}.{name}")


def emit_entry(module: L.Module, target: Target, func, options: CodegenOptions) -> L.Function:
    """Emit `i32 func.name(ptr data, ptr meta)` for an ir Func."""
    _load_rules(func)
    fn = L.Function(module, L.FunctionType(I32, [PTR, PTR]), name=func.name)
    fn.aot_lean = True  # host code: allocations, argument blocks and launches, no loops of its own
    data, meta = fn.args
    entry = fn.append_basic_block("entry")
    body = fn.append_basic_block("body")
    cleanup = fn.append_basic_block("cleanup")
    ab = Builder(entry)
    b = Builder(body)
    host = host_class(target)(module, target, options, fn, b, ab, cleanup)
    helpers = module.__dict__.setdefault("aot_helpers", {})  # module-wide helper functions
    ectx = EntryCtx(module, target, options, fn, b, ab, host, helpers=helpers)
    ret = func.return_op
    if ret is None:
        raise ValueError(f"function @{func.name} has no return")
    types = [a.type for a in func.args] + [v.type for v in ret.operands]
    # a JIT entry's caller allocates its outputs C-contiguous, and passes C-contiguous inputs where
    # the options say so: their strides are known
    n_in = len(func.args)
    contiguous = [i < len(options.contiguous_inputs) and bool(options.contiguous_inputs[i]) for i in range(n_in)]
    contiguous += [not options.library] * (len(types) - n_in)
    descs = _abi_descs(ectx, data, meta, types, contiguous)
    env = {id(a): d for a, d in zip(func.args, descs, strict=False)}
    outs = descs[len(func.args) :]
    dest = {}
    for k, v in enumerate(ret.operands):
        dest.setdefault(id(v), outs[k])
    written = set()
    ops = [op for op in func.body.ops if op.name != "return"]
    last_use = _last_uses(ops, ret)
    if not options.library:  # a C caller's output buffers may alias its inputs
        _stored_in_outputs(ops, dest, last_use)
    owned: dict[int, list] = {}  # op index -> the buffers it allocated
    groups = {g.start: g for g in row_groups.plan(ops)} if host.runs_row_groups else {}
    group, dead = None, []  # the row group being emitted; buffers to free once it has run
    for i, op in enumerate(ops):
        if i in groups:
            group = groups[i]
            host.begin_group()
            ectx.in_row_group = True
        rule = _rule_for(op)
        want = [dest.get(id(r)) for r in op.results]
        mark = host.n_buffers()
        results = rule(ectx, op, *[env[id(v)] for v in op.operands], out=want)
        owned[i] = host.buffers_since(mark)
        for r, d, w in zip(op.results, results, want, strict=True):
            env[id(r)] = d
            if w is not None and d is w:
                written.add(id(r))
        # free the buffers whose every alias is dead (cleanup frees the rest); in a row group,
        # once the group has run
        for j in [j for j, last in last_use.items() if last == i]:
            dead += owned.pop(j, [])
        if group is not None and i == group.stop - 1:
            rows = ectx.numel([ectx.dim(d) for d in group.shape[: group.lead]])
            host.end_group(rows, group.block_rows, "_".join(_group_about(ops[group.start : group.stop])))
            group, ectx.in_row_group = None, False
        if group is None:
            host.free(dead)
            dead = []
    copy = ENTRY_LOWERINGS["@copy"]
    done = set()
    for k, v in enumerate(ret.operands):
        if id(v) in written and id(v) not in done and dest[id(v)] is outs[k]:
            done.add(id(v))
            continue
        copy(ectx, env[id(v)], outs[k])
    b.branch(cleanup)
    ab.branch(body)
    host.finish()  # cleanup: free every intermediate, return the status
    return fn


def _group_about(ops: list) -> list[str]:
    """A row group's description: its kernels' kinds (red/ew), e.g. red_ew_red_ew."""
    return ["red" if op.name == "kernel.reduce" else "ew" for op in ops]


def _rule_for(op):
    rule = ENTRY_LOWERINGS.get(op.name)
    if rule is not None:
        return rule
    d = OPDEFS.get(op.name)
    if d is not None and d.has("elementwise"):
        return ENTRY_LOWERINGS["@elementwise"]
    if d is not None and d.has("reduction"):
        return ENTRY_LOWERINGS["@reduction"]
    raise MissingRule("llvm", op.name)


def _stored_in_outputs(ops: list, dest: dict, last_use: dict) -> None:
    """Give an intermediate the output buffer of the elementwise kernel that reads it last, when
    that kernel reads it at the index it writes (same type, no view between): softmax's stored
    exp(x - m) lives in the output that exp / sum overwrites in place. No intermediate is allocated,
    and no fresh pages are touched at each call (a 16 MB intermediate that malloc maps anew for
    every call costs 4k page faults, 4x the softmax itself). JIT entries only: their outputs are
    fresh arrays that alias nothing."""
    taken: set[int] = set()  # outputs given to an intermediate already
    for i, op in enumerate(ops):
        if len(op.results) != 1 or id(op.results[0]) in dest or not _elementwise_kernel(op):
            continue
        v = op.results[0]
        k = last_use.get(i, i)
        if k <= i or k >= len(ops) or any(_is_view(u) for u in v.users):
            continue
        last = ops[k]
        if not _elementwise_kernel(last):  # a gather, sort, ... reads other elements than it writes
            continue
        r = last.results[0] if len(last.results) == 1 else None
        d = dest.get(id(r)) if r is not None else None
        if d is None or id(d) in taken or r.type != v.type or v not in last.operands:
            continue
        dest[id(v)] = d
        taken.add(id(d))


def _is_view(op) -> bool:
    d = OPDEFS.get(op.name)
    return d is not None and d.has("view")


def _elementwise_kernel(op) -> bool:
    """An op whose kernel writes element i of its result from element i of same-shape operands."""
    if op.name == "kernel.elementwise":
        return True
    d = OPDEFS.get(op.name)
    return d is not None and d.has("elementwise") and op.name not in ENTRY_LOWERINGS


def _last_uses(ops: list, ret) -> dict[int, int]:
    """For each op index: the index of the last op reading its results or any view of them
    (len(ops) when a return value aliases them: those live until the end)."""
    producer: dict[int, set[int]] = {}  # value id -> op indices whose buffers it may alias
    last: dict[int, int] = {}
    for i, op in enumerate(ops):
        for v in op.operands:
            for j in producer.get(id(v), ()):
                last[j] = i
        alias = {i}
        if _is_view(op):  # the result aliases its operand
            for v in op.operands:
                alias |= producer.get(id(v), set())
        for r in op.results:
            producer[id(r)] = alias
        last.setdefault(i, i)
    for v in ret.operands:
        for j in producer.get(id(v), ()):
            last[j] = len(ops)
    return last


def _abi_descs(ectx: EntryCtx, data, meta, types: list, contiguous: list[bool]) -> list[Desc]:
    """The entry's arguments: data pointers, dims (static ones as constants) and strides from
    `meta`, or C-contiguous strides computed from the dims where `contiguous`."""
    b = ectx.alloca_builder
    out, pos = [], 0
    for i, t in enumerate(types):
        p = b.load(b.gep(data, [i64(i)], source_etype=PTR), typ=PTR, name=f"arg{i}")
        vals = [b.load(b.gep(meta, [i64(pos + k)], source_etype=I64), typ=I64) for k in range(2 * t.rank)]
        pos += 2 * t.rank
        shape = []
        for k, d in enumerate(t.shape):
            if is_static(d):
                shape.append(i64(d))
            else:
                if d.is_Symbol:
                    ectx.symbols.setdefault(d.name, vals[k])
                shape.append(vals[k])
        strides = contiguous_strides(b, shape) if contiguous[i] else vals[t.rank :]
        out.append(Desc(t.dtype, p, shape, strides, tuple(t.shape)))
    return out
