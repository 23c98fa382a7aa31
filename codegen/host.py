"""The host side of a graph entry function: what it does around its kernels, behind `Host`.

An entry function (codegen/entry.py) is host code that calls kernels. What the host does around
the calls depends on the target, so it sits behind `Host`, chosen by the target's kind
(`HOSTS[target.kind]`, see targets/kinds.py). The host covers:

- the status slot (`set_status`, returned at `finish`);
- the entry's buffers (`alloc`, `free`, all freed at `finish`);
- kernel launches (`launch`, `read_arg` for the kernels' error slots) and the split count of
  reductions cut into parallel chunks (`split_ways`);
- read-only tables the kernels read, e.g. FFT plans, twiddles, Bluestein chirps (`constant`);
- scratch memory a kernel takes per chunk of its range (`scratch`, `free_scratch`);
- FFT plans built at run time: a cache slot per call site, given back when a library is unloaded
  (`plan_slot`), and host calls into the FFT kernel module's planner (`call_planner`);
- the names of the module-level objects an entry owns (`symbol`: kernels, tables, slots).
- profiled entries (`options.profile`, aot.profile): the CPU host times each launch and the
  whole entry into counters a `ProfileLayout` (codegen/options.py) describes (codegen/host_profile.py).

The CPU host (`CpuHost`) keeps the status in a stack slot, allocates with aligned_alloc, bakes
tables into the module as internal constants, and runs kernels on the calling thread or on the
module's thread pool (kernels/parallel.py). A GPU host would allocate device memory, upload the
tables, launch the kernels and read a device status word back, reusing the same per-element and
per-transform kernel bodies.

Kernels are `void k(ptr args, i64 begin, i64 end)` over a flat range (kernels/common.py); a launch
stores the argument block and runs [0, total). Kernels report errors into slots of their argument
block (`Launch.read`).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from ir.abi_slots import BUFFER_ALLOC, BUFFER_FREE
from ir.records import record

from .host_profile import ProfiledLaunches
from .kernels.common import new_kernel
from .kernels.parallel import parallel_for, shared_parallel_for
from .llvm.builder import Builder, const_int, emit_if
from .llvm.context import declare
from .llvm.loops import alloca, for_range, i64
from .llvm.types import I8, I32, I64, PTR, VOID
from .llvm.unload import on_unload
from .options import CodegenOptions, library_threads_symbol
from .targets.base import Target


@record
class Launch:
    """A kernel call that ran: its argument block, readable after the call."""

    host: Host
    args: L.Value

    def read(self, k: int) -> L.Value:
        """Slot k (i64) of the argument block, as the kernel left it (its error slots)."""
        return self.host.read_arg(self, k)


class Host:
    """What an entry function does on the host. One per entry function; `builder` is the entry's
    builder (its position is where host code goes), `alloca_builder` its entry block (stack slots),
    `cleanup` the block every exit goes through (`finish` fills it)."""

    loop_skeletons: tuple = ()  # the Target.loop_skeleton values whose kernels this host can launch
    describes_kernels = False  # whether `symbol` appends what a kernel computes to its name

    def __init__(self, module: L.Module, target: Target, options: CodegenOptions, fn: L.Function,
                 builder: L.IRBuilder, alloca_builder: L.IRBuilder, cleanup: L.Block):
        self.module, self.target, self.options, self.fn = module, target, options, fn
        self.builder, self.alloca_builder, self.cleanup = builder, alloca_builder, cleanup
        self.n_symbols = 0
        self.descriptions: dict[str, str] = {}  # symbol -> the `about` it was named with

    # --- names ----------------------------------------------------------------------------------
    def symbol(self, what: str, about: str = "") -> str:
        """A fresh module-level name for something this entry owns (a kernel, a table, a slot):
        `ENTRY.{what}{k}`, one count per entry so that names never collide; hosts that describe
        their kernels (`describes_kernels`) append what it computes, `ENTRY.{what}{k}.{about}`
        (`about` reduced to letters, digits and "_", at most MAX_ABOUT characters), the name a
        profiler or `nm` shows."""
        self.n_symbols += 1
        name = f"{self.fn.name}.{what}{self.n_symbols}"
        about = _symbol_text(about) if self.describes_kernels else ""
        if about:
            name = f"{name}.{about}"
            self.descriptions[name] = about
        return name

    # --- status ---------------------------------------------------------------------------------
    def set_status(self, code: int) -> None:
        """Record status `code` (ir/status.py) at the builder's position; the caller then branches
        to `cleanup`."""
        raise NotImplementedError

    # --- memory ---------------------------------------------------------------------------------
    def alloc(self, nbytes: L.Value, overflow: L.Value) -> tuple[L.Value, L.Value]:
        """A buffer of `nbytes` (its size computation overflowed when the i1 `overflow` holds),
        freed by `free` or at `finish`; returns (pointer, i1 allocation failed)."""
        raise NotImplementedError

    def n_buffers(self) -> int:
        """How many buffers `alloc` made so far (their handles: `buffers_since`)."""
        raise NotImplementedError

    def buffers_since(self, mark: int) -> list:
        raise NotImplementedError

    def free(self, buffers: list) -> None:
        """Free these buffers now (each still freed once at `finish` if this point is not reached)."""
        raise NotImplementedError

    # --- kernels --------------------------------------------------------------------------------
    def launch(self, kern: L.Function, slots: list, total: L.Value, align: int, work=None) -> Launch:
        """Run kernel `kern` over [0, total) with the argument block `slots` (i64 values or
        pointers); `align`: chunks of a split range are multiples of it; `work`: the elements
        the call touches (`total` unless given), which decides whether it is worth splitting."""
        raise NotImplementedError

    def one_call(self, total: L.Value, align: int, work=None) -> bool:
        """Whether `launch(kern, slots, total, align, work)` is known, before the kernel is built,
        to call it once over [0, total) on the calling thread: the kernel is then built for that
        range alone (no partial rows at either end)."""
        return False

    def read_arg(self, launch: Launch, k: int) -> L.Value:
        raise NotImplementedError

    # --- row groups (codegen/row_groups.py) ----------------------------------------------------
    runs_row_groups = False  # whether begin_group/end_group may be used

    # whether the entry may call the FFT kernels' four-step and halves drivers
    # (codegen/graph_fft_split.py)
    calls_fft_threads = False

    def begin_group(self) -> None:
        """Defer the launches that follow until `end_group` (they must read no error slots)."""
        raise NotImplementedError

    def end_group(self, rows: L.Value, block_rows: int, about: str = "") -> None:
        """Run the deferred launches as one launch over `rows`: each kernel's range is `rows`
        times a whole number of its units; block by block of `block_rows` rows, every kernel runs
        on the block's rows, in the order they were launched."""
        raise NotImplementedError

    def split_ways(self) -> int:
        """How many parallel chunks the histogram, scan, selection and compaction kernels cut their
        work into (fixed when the code is built); 1: never."""
        raise NotImplementedError

    def reduce_chunks(self) -> int:
        """How many chunks a split reduction cuts its outermost reduced axis into, each reduced
        into its own partial (any thread takes any chunk); 1: never. A constant, not the thread
        count: a reduction's summation order, hence its result, is one for every thread count."""
        raise NotImplementedError

    # --- what kernels read and use ----------------------------------------------------------------
    def constant(self, what: str, arr: np.ndarray) -> L.Value:
        """A read-only table the kernels read (`arr`'s bytes, C order), named after `what`; returns
        its address as the kernels see it."""
        raise NotImplementedError

    def scratch(self, b: L.IRBuilder, nbytes: int) -> tuple[L.Value, L.Value]:
        """`nbytes` of scratch memory for one chunk of a kernel, emitted by the kernel's builder
        `b`: (pointer, i1 failed); the chunk gives it back with `free_scratch`."""
        raise NotImplementedError

    def free_scratch(self, b: L.IRBuilder, p: L.Value) -> None:
        raise NotImplementedError

    # --- plans built at run time --------------------------------------------------------------------
    def plan_slot(self, release: str, what: str = "fft_plan") -> L.Value:
        """The plan cache slot of one call site (16 zeroed bytes: a spin lock and a plan, as the
        planner's `get` uses them, codegen/fft/planner.py); `release` (void(ptr)) gives a plan's
        reference back, which a library does for the slot's plan when it is unloaded."""
        raise NotImplementedError

    def call_planner(self, name: str, ret: L.Type, argtypes: list, args: list) -> L.Value:
        """Call `name`, a host-side entry of an FFT kernel module's planner (plan get / release, the
        real passes' root table), at the builder's position; returns its result."""
        raise NotImplementedError

    # --- the end ------------------------------------------------------------------------------
    def finish(self) -> None:
        """Fill `cleanup`: release what is left and return the status."""
        raise NotImplementedError


SCRATCH_CACHE_MAX_BYTES = 64 << 20  # CpuHost.scratch keeps a call site's buffer up to this size


class CpuHost(ProfiledLaunches, Host):
    """The CPU host: status in a stack slot, aligned_alloc'ed buffers in stack slots (null until
    allocated, so cleanup frees exactly the live ones), kernels on the calling thread or, when the
    work reaches the parallel threshold, on the module's pthread pool; tables are internal
    constants, kernel scratch is a cached buffer per call site (or aligned_alloc'ed by chunks that
    run beside the one holding it), plan slots are internal globals."""

    # the kernels' loop skeleton this host launches: `void k(args, begin, end)` walking rows of
    # SIMD vectors with one masked tail, any sub-range on any thread (kernels/elementwise.py)
    loop_skeletons = ("vector_rows",)
    describes_kernels = True  # readable names in perf and nm: "main.ew3.sin_neg_exp_mul"

    def __init__(self, *args):
        super().__init__(*args)
        self.rc_slot = alloca(self.alloca_builder, I32)
        self.alloca_builder.store(L.Constant(I32, 0), self.rc_slot)
        self.slots: list = []  # stack slots holding the malloc'ed pointers
        self._sizes: dict = {}  # id(slot) -> the stack slot of its buffer's size (bytes)
        if self.options.library:
            _threads_global(self.module, self.options)  # the wrapper sets it even when no kernel is threaded
        self._free = declare(self.module, "free", L.VoidType(), [PTR])
        # JIT code allocates its buffers through the process's blocks module (runtime/blocks.py:
        # a large buffer reuses a block a call freed instead of pages the kernel must zero again);
        # a library, which runs without Python, through the C library
        self._pooled = not self.options.library
        self._scratch_sites: dict = {}  # id(scratch pointer) -> its call site's (cache, busy flag)

    def set_status(self, code: int) -> None:
        self.builder.store(L.Constant(I32, code), self.rc_slot)

    def alloc(self, nbytes: L.Value, overflow: L.Value) -> tuple[L.Value, L.Value]:
        b = self.builder
        # whole cache lines, 64-aligned (vector stores split across lines cost the FFT up to 40%)
        nbytes = b.and_(b.add(nbytes, i64(63)), i64(-64))
        nbytes = b.select(b.icmp_signed("==", nbytes, i64(0)), i64(64), nbytes)
        overflow = b.or_(overflow, b.icmp_signed("<", nbytes, i64(0)))
        nbytes = b.select(overflow, i64(-1), nbytes)  # aligned_alloc(SIZE_MAX) fails: an error
        if self._pooled:
            p = b.call(declare(self.module, BUFFER_ALLOC, PTR, [I64]), [nbytes])
        else:
            p = b.call(declare(self.module, "aligned_alloc", PTR, [I64, I64]), [i64(64), nbytes])
        slot, size = alloca(self.alloca_builder, PTR), alloca(self.alloca_builder, I64)
        self.alloca_builder.store(L.Constant(PTR, None), slot)
        self.alloca_builder.store(i64(0), size)
        b.store(p, slot)
        b.store(nbytes, size)
        self.slots.append(slot)
        self._sizes[id(slot)] = size
        return p, b.icmp_unsigned("==", p, L.Constant(PTR, None))

    def _release(self, b: L.IRBuilder, slot) -> None:
        """Free the buffer in `slot` (null: nothing)."""
        p = b.load(slot, typ=PTR)
        if self._pooled:
            size = b.load(self._sizes[id(slot)], typ=I64)
            b.call(declare(self.module, BUFFER_FREE, VOID, [PTR, I64]), [p, size])
        else:
            b.call(self._free, [p])

    def n_buffers(self) -> int:
        return len(self.slots)

    def buffers_since(self, mark: int) -> list:
        return self.slots[mark:]

    def free(self, buffers: list) -> None:
        b = self.builder
        for slot in buffers:  # the slot is reset: cleanup frees the rest
            self._release(b, slot)
            b.store(L.Constant(PTR, None), slot)

    def launch(self, kern: L.Function, slots: list, total: L.Value, align: int, work=None) -> Launch:
        b = self.builder
        arr = alloca(self.alloca_builder, I64, size=len(slots))
        unread = getattr(kern, "aot_unread", ())  # slots the kernel folded to constants
        for k, v in enumerate(slots):
            if k in unread:
                continue
            if isinstance(v.type, L.PointerType):
                v = b.ptrtoint(v, I64)
            b.store(v, b.gep(arr, [i64(k)], source_etype=I64))
        if self._group is not None:
            self._group.append((kern, arr, total, work if work is not None else total))
            return Launch(self, arr)
        self._timed_launch(kern, arr, total, align, work)
        return Launch(self, arr)

    def _timed_launch(self, kern: L.Function, arr: L.Value, total: L.Value, align: int, work) -> None:
        t0 = self._profile_clock() if self._profiling() else None
        self._run_kernel(kern, arr, total, align, work)
        if t0 is not None:  # parallel_for has joined its workers: the launch's whole time
            self._profile_add(self._profile_site(kern), t0)

    runs_row_groups = True
    _group: list | None = None  # the deferred launches: (kernel, argument block, total, work)

    def begin_group(self) -> None:
        assert self._group is None, "row groups do not nest"
        self._group = []

    def end_group(self, rows: L.Value, block_rows: int, about: str = "") -> None:
        b, members = self.builder, self._group
        self._group = None
        # the group's argument block: per kernel, its argument block's address and units per row
        garr = alloca(self.alloca_builder, I64, size=2 * len(members))
        empty = b.icmp_signed("==", rows, i64(0))
        for k, (_, arr, total, _) in enumerate(members):
            units = b.select(empty, i64(0), b.sdiv(total, b.select(empty, i64(1), rows)))
            b.store(b.ptrtoint(arr, I64), b.gep(garr, [i64(2 * k)], source_etype=I64))
            b.store(units, b.gep(garr, [i64(2 * k + 1)], source_etype=I64))
        work = members[0][3]
        for m in members[1:]:
            work = b.add(work, m[3])
        wrapper = _row_group_kernel(self.module, self.symbol("rows", about), [m[0] for m in members],
                                    block_rows)
        self._timed_launch(wrapper, garr, rows, 1, work)

    def _threshold(self, align: int) -> int:
        """The work from which a launch is split across threads."""
        return max(self.options.parallel_threshold, 2 * align)

    def one_call(self, total: L.Value, align: int, work=None) -> bool:
        # _run_kernel's choice where it is known now: serial code, or too little work to split
        if self._group is not None:
            return False
        if not self.options.library and self.options.num_threads <= 1:
            return True
        t, w = const_int(total), const_int(work if work is not None else total)
        return (w is not None and w < self._threshold(align)) or (t is not None and t < 2 * align)

    def _run_kernel(self, kern: L.Function, arr: L.Value, total: L.Value, align: int, work) -> None:
        """Call `kern` over [0, total) on this thread, or on the pool when the work is large."""
        b = self.builder
        nt = self.num_threads()
        if nt is None:
            b.call(kern, [arr, i64(0), total])
            return
        big = b.icmp_signed(">=", work if work is not None else total, i64(self._threshold(align)))
        big = b.and_(big, b.icmp_signed(">=", total, i64(2 * align)))
        if not isinstance(nt, L.Constant):
            big = b.and_(big, b.icmp_signed(">", nt, i64(1)))
        def threads():
            # a library has a pool of its own; the JIT's graphs share the process's one
            pfor = (parallel_for(self.module, join_at_unload=True) if self.options.library
                    else shared_parallel_for(self.module))
            b.call(pfor, [kern, arr, total, nt, i64(align)])

        emit_if(b, big, threads, lambda: b.call(kern, [arr, i64(0), total]))

    def read_arg(self, launch: Launch, k: int) -> L.Value:
        b = self.builder
        return b.load(b.gep(launch.args, [i64(k)], source_etype=I64), typ=I64)

    def split_ways(self) -> int:
        return self.options.num_threads  # the build-time count (a library's run-time one may differ)

    calls_fft_threads = True  # the JIT resolves the threads group; a library links the whole module

    def reduce_chunks(self) -> int:
        return REDUCE_CHUNKS

    def constant(self, what: str, arr: np.ndarray) -> L.Value:
        raw = np.ascontiguousarray(arr).tobytes() or b"\0"  # a global needs a non-empty type
        t = L.ArrayType(I8, len(raw))
        g = L.GlobalVariable(self.module, t, name=self.symbol(what))
        g.global_constant = True
        g.linkage = "internal"
        g.align = 64  # cache-line aligned, as the entry's buffers (`alloc`)
        g.initializer = L.Constant(t, bytearray(raw))
        return g

    def scratch(self, b: L.IRBuilder, nbytes: int) -> tuple[L.Value, L.Value]:
        """A one-buffer cache per call site: the chunk that claims it (an atomic flag) reuses the
        buffer an earlier call allocated, any other chunk running at the same time mallocs its own.
        A fresh buffer of megabytes is mapped anew by malloc at every call and faults in page by
        page (an FFT of 2^20 complex128 spent half its time there). Buffers over
        SCRATCH_CACHE_MAX_BYTES are not kept: the memory a process holds between calls stays
        bounded per call site."""
        size = -(-nbytes // 64) * 64  # whole cache lines, 64-aligned: see codegen/fft/module.py
        aligned_alloc = declare(self.module, "aligned_alloc", PTR, [I64, I64])
        if size > SCRATCH_CACHE_MAX_BYTES:  # not kept between calls: malloc'ed by each chunk
            p = b.call(aligned_alloc, [i64(64), i64(size)])
            return p, b.icmp_unsigned("==", p, L.Constant(PTR, None))
        cached = self._internal_global(PTR, "scratch_cache")
        busy = self._internal_global(I32, "scratch_busy")
        null = L.Constant(PTR, None)
        claimed = b.extract_value(b.cmpxchg(busy, L.Constant(I32, 0), L.Constant(I32, 1), "acquire", "monotonic"), 1)
        with b.if_else(claimed) as (mine, other):
            with mine:
                with b.if_then(b.icmp_unsigned("==", b.load(cached, typ=PTR), null)):
                    b.store(b.call(aligned_alloc, [i64(64), i64(size)]), cached)  # kept for later calls
                p_mine, from_mine = b.load(cached, typ=PTR), b.block
            with other:
                p_other, from_other = b.call(aligned_alloc, [i64(64), i64(size)]), b.block
        p = b.phi(PTR)
        p.add_incoming(p_mine, from_mine)
        p.add_incoming(p_other, from_other)
        failed = b.icmp_unsigned("==", p, null)
        with b.if_then(b.and_(claimed, failed)):
            b.store_atomic(L.Constant(I32, 0), busy, "release", 4)
        self._scratch_sites[id(p)] = (cached, busy)
        if self.options.library:  # a library may be unloaded: its cached buffer goes with it
            on_unload(self.module, self._scratch_cleanup(cached))
        return p, failed

    def free_scratch(self, b: L.IRBuilder, p: L.Value) -> None:
        if id(p) not in self._scratch_sites:  # a buffer too big to keep
            b.call(self._free, [p])
            return
        cached, busy = self._scratch_sites[id(p)]
        with b.if_else(b.icmp_unsigned("==", p, b.load(cached, typ=PTR))) as (mine, other):
            with mine:  # only the claimant holds the cached buffer: give the claim back
                b.store_atomic(L.Constant(I32, 0), busy, "release", 4)
            with other:
                b.call(self._free, [p])

    def _internal_global(self, ty: L.Type, what: str) -> L.GlobalVariable:
        """A zero-initialised module-internal global of `ty`."""
        g = L.GlobalVariable(self.module, ty, name=self.symbol(what))
        g.linkage = "internal"
        g.initializer = L.Constant(ty, None)
        return g

    def _scratch_cleanup(self, cached: L.GlobalVariable) -> L.Function:
        """void(): free a call site's cached scratch buffer."""
        fn = L.Function(self.module, L.FunctionType(VOID, []), name=self.symbol("scratch_free"))
        fn.linkage = "internal"
        b = Builder(fn.append_basic_block("entry"))
        b.call(self._free, [b.load(cached, typ=PTR)])
        b.ret_void()
        return fn

    def plan_slot(self, release: str, what: str = "fft_plan") -> L.Value:
        slot = self._internal_global(L.ArrayType(I64, 2), f"{what}_slot")
        if self.options.library:  # the JIT never unloads code: its slots live as long as the process
            on_unload(self.module, self._slot_cleanup(slot, release, what))
        return slot

    def _slot_cleanup(self, slot: L.GlobalVariable, release: str, what: str) -> L.Function:
        """void(): take the slot's plan out and give its reference back."""
        fn = L.Function(self.module, L.FunctionType(VOID, []), name=self.symbol(f"{what}_free"))
        fn.linkage = "internal"
        b = Builder(fn.append_basic_block("entry"))
        plan_slot = b.gep(slot, [i64(0), i64(1)], source_etype=slot.value_type)
        plan = b.atomic_rmw("xchg", plan_slot, i64(0), "acq_rel")
        b.call(declare(self.module, release, VOID, [PTR]), [b.inttoptr(plan, PTR)])
        b.ret_void()
        return fn

    def call_planner(self, name: str, ret: L.Type, argtypes: list, args: list) -> L.Value:
        return self.builder.call(declare(self.module, name, ret, argtypes), args)

    def num_threads(self) -> L.Value | None:
        """The thread count for parallel_for: a constant (JIT), the library's run-time setting
        (loaded at each call, so NAME_set_num_threads applies to the next kernel), or None when
        the code is serial."""
        if not self.options.library:
            nt = self.options.num_threads
            return i64(nt) if nt > 1 else None
        return self.builder.load_atomic(_threads_global(self.module, self.options), "monotonic", 8, typ=I64)

    def finish(self) -> None:
        cb = Builder(self.cleanup)
        for slot in self.slots:  # free every intermediate (slots start null)
            self._release(cb, slot)
        if self._profiling():
            self._finish_profile(cb)
        cb.ret(cb.load(self.rc_slot, typ=I32))


class KernelsHost(CpuHost):
    """The host of the NVIDIA target while only its kernels are built (codegen/ptx.py): it records
    each launch (the kernel and its argument block's size) for the PTX's kernel entries, and
    refuses what the GPU cannot do yet. Its entry function is discarded."""

    describes_kernels = False  # the PTX keeps its names as they were (tests/golden/ptx)
    profiles = False  # no clock or counters on the GPU yet: options.profile is refused
    runs_row_groups = False  # each kernel is its own PTX entry
    calls_fft_threads = False

    def launch(self, kern: L.Function, slots: list, total: L.Value, align: int, work=None) -> Launch:
        self.module.__dict__.setdefault("aot_gpu_kernels", []).append((kern, len(slots)))
        b = self.builder
        arr = L.Constant(PTR, None)  # the entry is discarded: its launches need no argument block
        b.call(kern, [arr, i64(0), total])
        return Launch(self, arr)

    def one_call(self, total: L.Value, align: int, work=None) -> bool:
        return False  # each kernel is a PTX entry over a grid: any sub-range

    def read_arg(self, launch: Launch, k: int) -> L.Value:
        return i64(0)

    def split_ways(self) -> int:
        return 1

    def reduce_chunks(self) -> int:
        return 1

    def num_threads(self):
        return None

    def scratch(self, b: L.IRBuilder, nbytes: int):
        raise NotImplementedError("the NVIDIA target: kernels that take scratch memory are not built for the GPU yet")

    def plan_slot(self, release: str, what: str = "fft_plan"):
        raise NotImplementedError("the NVIDIA target: FFT plans are not built for the GPU yet")

    def call_planner(self, name, ret, argtypes, args):
        raise NotImplementedError("the NVIDIA target: FFT plans are not built for the GPU yet")


def _row_group_kernel(module: L.Module, name: str, kernels: list, block_rows: int) -> L.Function:
    """`void g(args, rb, re)` over rows: for each block [s, e) of `block_rows` rows of [rb, re),
    kernel k runs over [s * u_k, e * u_k) with its argument block (args: pairs of its address and
    its units per row u_k)."""
    fn, b = new_kernel(module, name, lean=True)
    args, rb, re = fn.args
    slots = [b.load(b.gep(args, [i64(j)], source_etype=I64), typ=I64) for j in range(2 * len(kernels))]
    n_blocks = b.sdiv(b.add(b.sub(re, rb), i64(block_rows - 1)), i64(block_rows))
    with for_range(b, i64(0), n_blocks, name="blk") as blk:
        s = b.add(rb, b.mul(blk, i64(block_rows)))
        e = b.add(s, i64(block_rows))
        e = b.select(b.icmp_signed("<", re, e), re, e)
        for k, kern in enumerate(kernels):
            arr, units = b.inttoptr(slots[2 * k], PTR), slots[2 * k + 1]
            b.call(kern, [arr, b.mul(s, units), b.mul(e, units)])
    b.ret_void()
    return fn


# chunks of a split reduction (CpuHost.reduce_chunks): enough to balance 2-16 threads within ~10%
REDUCE_CHUNKS = 64
MAX_ABOUT = 64  # characters of a kernel's description in its symbol


def _symbol_text(about: str) -> str:
    """`about` as symbol text valid in LLVM, ELF and perf maps: letters, digits and "_" only."""
    text = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in about)
    return "_".join(p for p in text.split("_") if p)[:MAX_ABOUT].rstrip("_")


# target kind -> its Host (targets/kinds.py)
HOSTS: dict[str, type[Host]] = {"cpu": CpuHost, "nvptx": KernelsHost}


def host_class(target: Target) -> type[Host]:
    """The Host of `target`'s kind; NotImplementedError when codegen has none, or when it cannot
    launch kernels of the target's loop skeleton."""
    cls = HOSTS.get(target.kind)
    if cls is None:
        raise NotImplementedError(
            f"target {target.name!r}: no host interface for target kind {target.kind!r} "
            "(codegen/host.py HOSTS)"
        )
    if target.loop_skeleton not in cls.loop_skeletons:
        raise NotImplementedError(
            f"target {target.name!r}: the {target.kind} host launches {list(cls.loop_skeletons)} kernels, "
            f"not {target.loop_skeleton!r}"
        )
    return cls


def _threads_global(module: L.Module, options: CodegenOptions) -> L.GlobalVariable:
    """The library's thread-count global (external: the C wrapper writes it), made once."""
    name = library_threads_symbol(options.library)
    g = module.globals.get(name)
    if g is None:
        g = L.GlobalVariable(module, I64, name=name)
        g.initializer = i64(max(1, options.num_threads))
        g.align = 8
    return g
