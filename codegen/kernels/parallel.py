"""Parallel-for over a kernel's flat range on a persistent pool of pthreads, in generated code.

`void aot.parallel_for(ptr kernel, ptr args, i64 total, i64 nthreads, i64 align)`, emitted with the
pool it uses (module-internal globals): once per shared library (which links only libc/libpthread),
and once per process for the in-process JIT (`shared_pool_ir`, exported as
ir.abi_slots.SHARED_PARALLEL_FOR, which the JIT's graphs call: `shared_parallel_for`), so that a
process compiling many functions keeps one pool of workers, not one per function.

The range is cut into `nthreads` contiguous chunks rounded to `align` elements (a multiple of the
vector length, so rows split at vector boundaries); the cut depends only on `nthreads`, never on
which thread runs a chunk, so results are the same whoever runs them.

Pool protocol. A call makes sure nthreads-1 workers run (nthreads capped at MAX_THREADS): it starts
the missing ones, and all of them again after a fork (the pid is checked). It publishes the job,
then a `ticket` = (generation << 32 | claims) and wakes the workers (generation bump under a
mutex + condvar broadcast). Everyone, the caller included, claims chunks by compare-and-swap on
the ticket, so a thread still holding an old generation can never claim (or lose) a chunk of a
new job, and chunks that no worker picks up are run by the caller: a worker that failed to start
only costs speed. Up to MASK_CHUNKS chunks the claims are a set of chunk bits and participant p
(the caller 0, worker k k+1) takes chunk p while it is free: a job repeated on the same data finds
each chunk in the caches of the core that ran it last time (claimed in arrival order, a worker
that woke first took the caller's chunk as often as not: 64 rows of a complex64 FFT of 1024 on two
threads ran 52 us, 30 us with these claims, 44 us on one thread). More chunks: a claim counter.
The caller waits for `done` to reach the chunk count. Workers spin briefly on the generation (a
job that follows closely starts without a syscall), then sleep on the condvar. A call that finds
the pool busy (another thread is inside this parallel_for: in the JIT, any compiled function's)
runs its whole range on the calling thread.

One pool per process. Every module's parallel_for is exported as ir.abi_slots.POOL_ENTRY; a module
emitted with `delegates` (all but the FFT libraries) also has POOL_DELEGATE, a setter of a function
its parallel_for then hands each job to. runtime/pools.py sets it, so that compiled graphs, FFT
kernels and warm-start libraries loaded into one process share one set of workers.

Shutdown. Workers are joinable and their pthread_t are kept; `aot.pool.shutdown` sets `stop`, wakes
them and joins them. A shared library registers it in llvm.global_dtors (`parallel_for(...,
join_at_unload=True)`), so dlclose() never unmaps code that a worker still runs; it does nothing
when the pool never started or was started by another process (the parent of a fork). The JIT
never unloads code (its engine lives as long as the process), so it registers no destructor.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.abi_slots import POOL_DELEGATE, POOL_ENTRY, SHARED_PARALLEL_FOR

from ..llvm.builder import Builder, module_text
from ..llvm.loops import for_range, i64
from ..llvm.types import I32, I64, PTR, VOID
from ..llvm.unload import on_unload
from .common import KERNEL_TYPE

PARALLEL_FOR = "aot.parallel_for"
JOB = ("kern", "args", "total", "chunk", "nchunks")  # the job's fields (i64 globals; pointers as ints)
# How long a worker spins for the next job before it sleeps, in cycle-counter ticks (rdtsc on x86:
# ~0.3-0.5 ms at 2-3 GHz). A count of pause instructions measured nothing steady: `pause` takes 140
# cycles on Skylake-SP, 10 ns on this project's VM, where 4000 of them (39 us) let the worker of a
# two-pass FFT fall asleep between its passes whenever the caller's half ran that much longer; the
# caller then woke it with a syscall and ran most of the pass alone (fft 65536 complex128 on two
# threads: 340 us, 206 us spinning ~0.4 ms; tools/bench_fft.py).
SPIN_TICKS = 1_000_000
SPIN_ROUNDS = 100_000  # elsewhere (no pause instruction, no cycle counter user code may read): rounds
_SYNC = 64  # bytes reserved for a pthread mutex / condvar (40 / 48 on x86-64 glibc); zero = initialiser
SEQ = "seq_cst"
MASK_CHUNKS = 32  # jobs of up to this many chunks hand chunk p to participant p while it is free
MAX_THREADS = 256  # the pool's size limit (a larger nthreads is capped): workers' pthread_t slots
# Workers' stacks: kernels keep their large buffers on the heap (scratch), so glibc's default (8 MiB,
# from ulimit -s) only reserves address space: a process loading many libraries (each with a pool
# of its own) reserved GiBs of it
WORKER_STACK = 1 << 21
_ATTR = 64  # bytes reserved for a pthread_attr_t


def shared_parallel_for(module: L.Module) -> L.Function:
    """The JIT process's parallel_for, declared in `module` (runtime.jit.shared_pool defines it)."""
    fn = module.globals.get(SHARED_PARALLEL_FOR)
    if fn is None:
        fn = L.Function(module, L.FunctionType(VOID, [PTR, PTR, I64, I64, I64]), name=SHARED_PARALLEL_FOR)
    return fn


def shared_pool_ir() -> str:
    """A module defining SHARED_PARALLEL_FOR: parallel_for and its pool behind an external name."""
    module = L.Module(name="aot_shared_pool")
    inner = parallel_for(module)
    fn = shared_parallel_for(module)
    b = Builder(fn.append_basic_block("entry"))
    b.call(inner, list(fn.args))
    b.ret_void()
    return module_text(module)


def parallel_for(module: L.Module, join_at_unload: bool = False, delegates: bool = True) -> L.Function:
    """The module's parallel_for (emitted with its pool on first use). join_at_unload: register
    the pool's shutdown as a module destructor (shared libraries, which may be dlclose()d).
    `delegates`: whether it can pass its jobs on to another module's pool (ir.abi_slots.POOL_DELEGATE);
    the FFT kernel libraries' cannot (their jobs always run on their own pool, which the other
    modules' jobs then run on: runtime/pools.py). Every pool is exported as POOL_ENTRY."""
    fn = module.globals.get(PARALLEL_FOR)
    if fn is not None:
        return fn
    pool = _Pool(module)
    if join_at_unload:
        on_unload(module, pool.shutdown)
    fn = L.Function(module, L.FunctionType(VOID, [PTR, PTR, I64, I64, I64]), name=PARALLEL_FOR)
    fn.linkage = "internal"
    kern, args, total, nthreads, align = fn.args
    b = Builder(fn.append_basic_block("entry"))
    _export_entry(module, fn)
    if delegates:
        delegate = b.load(_delegate(module), typ=PTR)
        with b.if_then(b.icmp_unsigned("!=", delegate, L.Constant(PTR, None)), likely=False):
            b.call(as_callee(delegate, fn.function_type), list(fn.args))  # the process's pool
            b.ret_void()
    nthreads = _clamp(b, nthreads, 1, MAX_THREADS)  # the count may come from the environment
    # chunk = ceil(total / nthreads) rounded up to a multiple of align
    chunk = b.sdiv(b.sub(b.add(total, nthreads), i64(1)), nthreads)
    chunk = b.mul(b.sdiv(b.sub(b.add(chunk, align), i64(1)), align), align)
    nchunks = b.sdiv(b.sub(b.add(total, chunk), i64(1)), chunk)
    claimed = b.cmpxchg(pool.busy, L.Constant(I32, 0), L.Constant(I32, 1), "acquire", "monotonic")
    with b.if_else(b.extract_value(claimed, 1)) as (then, otherwise):
        with then:
            b.call(pool.ensure_started, [nthreads])
            for name, v in zip(JOB[:4], [b.ptrtoint(kern, I64), b.ptrtoint(args, I64), total, chunk]):
                b.store(v, pool.job[name])
            b.store_atomic(nchunks, pool.job["nchunks"], "monotonic", 8)  # stragglers may read it
            b.store_atomic(i64(0), pool.done, SEQ, 8)
            b.call(pool.lock, [pool.mutex])
            gen = b.add(b.load_atomic(pool.gen, SEQ, 8, typ=I64), i64(1))
            b.store_atomic(b.shl(gen, i64(32)), pool.ticket, SEQ, 8)
            b.store_atomic(gen, pool.gen, SEQ, 8)
            b.call(pool.broadcast, [pool.cond])
            b.call(pool.unlock, [pool.mutex])
            b.call(pool.run_chunks, [gen, i64(0)])  # the caller is participant 0
            _spin_until(b, pool, lambda: b.icmp_signed(">=", b.load_atomic(pool.done, SEQ, 8, typ=I64), nchunks))
            b.store_atomic(L.Constant(I32, 0), pool.busy, "release", 4)
        with otherwise:  # another thread is using this module's pool: run here
            b.call(as_callee(kern, KERNEL_TYPE), [args, i64(0), total])
    b.ret_void()
    return fn


def _delegate(module: L.Module) -> L.GlobalVariable:
    """The module's delegate (internal, null) and its exported setter `void POOL_DELEGATE(ptr)`
    (weak: a library linked from several objects with a pool each keeps one)."""
    g = _global(module, "aot.pool.delegate", PTR)
    setter = L.Function(module, L.FunctionType(VOID, [PTR]), name=POOL_DELEGATE)
    setter.linkage = "weak"
    b = Builder(setter.append_basic_block("entry"))
    b.store(setter.args[0], g)
    b.ret_void()
    return g


def _export_entry(module: L.Module, pfor: L.Function) -> None:
    """`pfor` under the exported name POOL_ENTRY (weak, as the setter), for the modules that
    delegate to this one's pool."""
    entry = L.Function(module, pfor.function_type, name=POOL_ENTRY)
    entry.linkage = "weak"
    b = Builder(entry.append_basic_block("entry"))
    b.call(pfor, list(entry.args))
    b.ret_void()


class _Pool:
    """The module's pool state (internal globals) and its helper functions."""

    def __init__(self, module: L.Module):
        self.module = module
        self.busy = _global(module, "aot.pool.busy", I32)
        self.started = _global(module, "aot.pool.started", I32)
        self.pid = _global(module, "aot.pool.pid", I32)
        self.gen = _global(module, "aot.pool.gen", I64)
        self.ticket = _global(module, "aot.pool.ticket", I64)
        self.done = _global(module, "aot.pool.done", I64)
        self.stop = _global(module, "aot.pool.stop", I32)  # 1: workers exit (shutdown)
        self.nworkers = _global(module, "aot.pool.nworkers", I64)  # started by this process
        self.failed = _global(module, "aot.pool.failed", I32)  # a pthread_create failed: start no more
        self.tids = _global(module, "aot.pool.tids", L.ArrayType(I64, MAX_THREADS))
        self.job = {name: _global(module, f"aot.pool.{name}", I64) for name in JOB}
        self.mutex = _global(module, "aot.pool.mutex", L.ArrayType(L.IntType(8), _SYNC), align=64)
        self.cond = _global(module, "aot.pool.cond", L.ArrayType(L.IntType(8), _SYNC), align=64)
        self.lock = _declare(module, "pthread_mutex_lock", I32, [PTR])
        self.unlock = _declare(module, "pthread_mutex_unlock", I32, [PTR])
        self.broadcast = _declare(module, "pthread_cond_broadcast", I32, [PTR])
        self.wait = _declare(module, "pthread_cond_wait", I32, [PTR, PTR])
        self.yield_ = _declare(module, "sched_yield", I32, [])
        x86 = (module.triple or "").startswith(("x86_64", "i386", "i686"))
        self.pause = _declare(module, "llvm.x86.sse2.pause", VOID, []) if x86 else None
        self.ticks = _declare(module, "llvm.readcyclecounter", I64, []) if x86 else None  # rdtsc
        self.run_chunks = self._emit_run_chunks()
        self.worker = self._emit_worker()
        self.ensure_started = self._emit_ensure_started()
        self.shutdown = self._emit_shutdown()

    def _emit_run_chunks(self) -> L.Function:
        """`void run_chunks(i64 gen, i64 p)`: claim and run chunks of generation `gen` until none is
        left, as participant `p` (the caller 0, workers 1...): chunk p first when it is free."""
        fn = _function(self.module, "aot.pool.run_chunks", VOID, [I64, I64])
        gen, p = fn.args
        b = Builder(fn.append_basic_block("entry"))
        loop, claim, run, out = (fn.append_basic_block(n) for n in ("loop", "claim", "run", "out"))
        b.branch(loop)
        b.position_at_end(loop)
        t = b.load_atomic(self.ticket, SEQ, 8, typ=I64)
        low = b.and_(t, i64(0xFFFFFFFF))
        same = b.icmp_unsigned("==", b.lshr(t, i64(32)), b.and_(gen, i64(0xFFFFFFFF)))
        nchunks = b.load_atomic(self.job["nchunks"], "monotonic", 8, typ=I64)  # may race: used if `same`
        chunk, new, left = self._next_chunk(b, t, low, nchunks, p)
        b.cbranch(b.and_(same, left), claim, out)
        b.position_at_end(claim)
        got = b.cmpxchg(self.ticket, t, new, SEQ, SEQ)
        b.cbranch(b.extract_value(got, 1), run, loop)
        b.position_at_end(run)
        kern, args, total, size = (b.load(self.job[name], typ=I64) for name in JOB[:4])
        kern, args = b.inttoptr(kern, PTR), b.inttoptr(args, PTR)
        lo = b.mul(chunk, size)
        hi = b.add(lo, size)
        hi = b.select(b.icmp_signed("<", total, hi), total, hi)
        b.call(as_callee(kern, KERNEL_TYPE), [args, lo, hi])
        b.atomic_rmw("add", self.done, i64(1), SEQ)
        b.branch(loop)
        b.position_at_end(out)
        b.ret_void()
        return fn

    def _next_chunk(self, b: L.IRBuilder, t, low, nchunks, p):
        """(chunk to claim, ticket claiming it, i1 a chunk is left) for participant p. Up to
        MASK_CHUNKS chunks the ticket's low word is the set of claimed chunks and p takes chunk p
        while it is free, else the lowest free one; more chunks: it counts the chunks claimed."""
        cttz = _declare(self.module, "llvm.cttz.i64", I64, [I64, L.IntType(1)])
        in_mask = b.icmp_signed("<=", nchunks, i64(MASK_CHUNKS))
        all_ = b.sub(b.shl(i64(1), b.select(in_mask, nchunks, i64(0))), i64(1))
        free = b.and_(b.xor(low, i64(-1)), all_)
        mine = b.and_(b.icmp_signed("<", p, nchunks), b.trunc(b.lshr(free, b.and_(p, i64(63))), L.IntType(1)))
        bit = b.select(mine, p, b.call(cttz, [free, L.Constant(L.IntType(1), 0)]))
        chunk = b.select(in_mask, bit, low)
        new = b.select(in_mask, b.or_(t, b.shl(i64(1), bit)), b.add(t, i64(1)))
        left = b.select(in_mask, b.icmp_unsigned("!=", free, i64(0)), b.icmp_signed("<", low, nchunks))
        return chunk, new, left

    def _emit_worker(self) -> L.Function:
        """`ptr worker(ptr gen0)`: until `stop`, wait for a generation after the last one seen and
        run its chunks (a stop seen while waiting runs the latest job's chunks first: none left)."""
        fn = _function(self.module, "aot.pool.worker", PTR, [PTR])
        b = Builder(fn.append_basic_block("entry"))
        arg = b.ptrtoint(fn.args[0], I64)  # (generation seen at its start << 8) | its participant number
        first, me = b.lshr(arg, i64(8)), b.and_(arg, i64(0xFF))
        entry = b.block
        outer, exit_ = fn.append_basic_block("wait"), fn.append_basic_block("exit")
        b.branch(outer)
        b.position_at_end(outer)
        seen = b.phi(I64, name="seen")
        seen.add_incoming(first, entry)
        listen = fn.append_basic_block("listen")
        b.cbranch(self._stopping(b), exit_, listen)
        b.position_at_end(listen)
        fresh = _spin_until(
            b, self, lambda: b.icmp_unsigned("!=", b.load_atomic(self.gen, SEQ, 8, typ=I64), seen), limited=True
        )
        sleep, work = fn.append_basic_block("sleep"), fn.append_basic_block("work")
        b.cbranch(fresh, work, sleep)
        b.position_at_end(sleep)
        b.call(self.lock, [self.mutex])
        check, wait, woke = (fn.append_basic_block(n) for n in ("check", "condwait", "woke"))
        b.branch(check)
        b.position_at_end(check)
        news = b.icmp_unsigned("!=", b.load_atomic(self.gen, SEQ, 8, typ=I64), seen)
        b.cbranch(b.or_(news, self._stopping(b)), woke, wait)
        b.position_at_end(wait)
        b.call(self.wait, [self.cond, self.mutex])
        b.branch(check)
        b.position_at_end(woke)
        b.call(self.unlock, [self.mutex])
        b.branch(work)
        b.position_at_end(work)
        gen = b.load_atomic(self.gen, SEQ, 8, typ=I64)
        b.call(self.run_chunks, [gen, me])
        seen.add_incoming(gen, b.block)
        b.branch(outer)
        b.position_at_end(exit_)
        b.ret(L.Constant(PTR, None))
        return fn

    def _stopping(self, b: L.IRBuilder):
        return b.icmp_signed("!=", b.load_atomic(self.stop, SEQ, 4, typ=I32), L.Constant(I32, 0))

    def _ours(self, b: L.IRBuilder, pid):
        """i1: the pool was started, by this process (after a fork the workers are the parent's)."""
        return b.and_(
            b.icmp_signed("==", b.load(self.started, typ=I32), L.Constant(I32, 1)),
            b.icmp_signed("==", b.load(self.pid, typ=I32), pid),
        )

    def _emit_ensure_started(self) -> L.Function:
        """`void ensure_started(i64 nthreads)`: make nthreads-1 workers run (called by the pool's
        owner only). The pool's memory is copied by fork but its threads are not: a new pid
        starts from no workers. After a failed pthread_create no more are tried (the caller runs
        the chunks nobody claims)."""
        fn = _function(self.module, "aot.pool.ensure_started", VOID, [I64])
        (nthreads,) = fn.args
        b = Builder(fn.append_basic_block("entry"))
        getpid = _declare(self.module, "getpid", I32, [])
        create = _declare(self.module, "pthread_create", I32, [PTR, PTR, PTR, PTR])
        attr = b.alloca(L.ArrayType(L.IntType(8), _ATTR))  # pthread_attr_t (56 bytes on x86-64 glibc)
        b.call(_declare(self.module, "pthread_attr_init", I32, [PTR]), [attr])
        b.call(_declare(self.module, "pthread_attr_setstacksize", I32, [PTR, I64]), [attr, i64(WORKER_STACK)])
        pid = b.call(getpid, [])
        with b.if_then(b.not_(self._ours(b, pid))):
            zero = L.Constant(L.ArrayType(L.IntType(8), _SYNC), None)
            b.store(zero, self.mutex)
            b.store(zero, self.cond)
            b.store(pid, self.pid)
            for g, ty in ((self.nworkers, I64), (self.failed, I32), (self.stop, I32)):
                b.store(L.Constant(ty, 0), g)
            b.store(L.Constant(I32, 1), self.started)
        gen = b.shl(b.load_atomic(self.gen, SEQ, 8, typ=I64), i64(8))  # the workers' argument: | their number
        head, body, done = (fn.append_basic_block(n) for n in ("t.head", "t.body", "t.done"))
        b.branch(head)
        b.position_at_end(head)
        n = b.load(self.nworkers, typ=I64)
        more = b.icmp_signed("<", b.add(n, i64(1)), nthreads)
        ok = b.icmp_signed("==", b.load(self.failed, typ=I32), L.Constant(I32, 0))
        b.cbranch(b.and_(more, ok), body, done)
        b.position_at_end(body)
        slot = b.gep(self.tids, [i64(0), n], source_etype=self.tids.value_type)
        rc = b.call(create, [slot, attr, self.worker, b.inttoptr(b.or_(gen, b.add(n, i64(1))), PTR)])
        started = b.icmp_signed("==", rc, L.Constant(I32, 0))
        b.store(b.select(started, b.add(n, i64(1)), n), self.nworkers)
        b.store(b.zext(b.not_(started), I32), self.failed)
        b.branch(head)
        b.position_at_end(done)
        b.call(_declare(self.module, "pthread_attr_destroy", I32, [PTR]), [attr])
        b.ret_void()
        return fn

    def _emit_shutdown(self) -> L.Function:
        """`void shutdown()`: stop and join this process's workers (a no-op when there are none);
        the pool starts afresh if used again."""
        fn = _function(self.module, "aot.pool.shutdown", VOID, [])
        b = Builder(fn.append_basic_block("entry"))
        join = _declare(self.module, "pthread_join", I32, [I64, PTR])
        pid = b.call(_declare(self.module, "getpid", I32, []), [])
        with b.if_then(self._ours(b, pid)):
            b.call(self.lock, [self.mutex])  # a worker between its check and its wait gets the wakeup
            b.store_atomic(L.Constant(I32, 1), self.stop, SEQ, 4)
            b.call(self.broadcast, [self.cond])
            b.call(self.unlock, [self.mutex])
            with for_range(b, i64(0), b.load(self.nworkers, typ=I64), name="w") as k:
                tid = b.load(b.gep(self.tids, [i64(0), k], source_etype=self.tids.value_type), typ=I64)
                b.call(join, [tid, L.Constant(PTR, None)])
            b.store(i64(0), self.nworkers)
            b.store(L.Constant(I32, 0), self.started)
        b.ret_void()
        return fn


def _clamp(b: L.IRBuilder, v, lo: int, hi: int):
    v = b.select(b.icmp_signed("<", v, i64(lo)), i64(lo), v)
    return b.select(b.icmp_signed(">", v, i64(hi)), i64(hi), v)


def _spin_until(b: L.IRBuilder, pool: _Pool, cond, limited: bool = False):
    """Loop until cond() holds (pausing; yielding the CPU every 64 rounds when not `limited`).
    `limited`: gives up after SPIN_TICKS of the cycle counter (x86), else SPIN_ROUNDS rounds;
    returns the i1 "cond held"."""
    fn = b.function
    head, body, done = (fn.append_basic_block(n) for n in ("spin.head", "spin.body", "spin.done"))
    start = b.call(pool.ticks, []) if limited and pool.ticks is not None else None
    pre = b.block
    b.branch(head)
    b.position_at_end(head)
    k = b.phi(I64, name="spins")
    k.add_incoming(i64(0), pre)
    ok = cond()
    if not limited:
        more = b.not_(ok)
    elif start is not None:  # (unsigned: a counter read lower on another core ends the spin)
        more = b.and_(b.not_(ok), b.icmp_unsigned("<", b.sub(b.call(pool.ticks, []), start), i64(SPIN_TICKS)))
    else:
        more = b.and_(b.not_(ok), b.icmp_signed("<", k, i64(SPIN_ROUNDS)))
    b.cbranch(more, body, done)
    b.position_at_end(body)
    if pool.pause is not None:
        b.call(pool.pause, [])
    if not limited:
        with b.if_then(b.icmp_signed("==", b.and_(k, i64(63)), i64(63))):
            b.call(pool.yield_, [])
    k.add_incoming(b.add(k, i64(1)), b.block)
    b.branch(head)
    b.position_at_end(done)
    return ok


def _global(module: L.Module, name: str, ty, align: int = 8) -> L.GlobalVariable:
    g = L.GlobalVariable(module, ty, name=name)
    g.linkage = "internal"
    g.initializer = L.Constant(ty, None)
    g.align = align
    return g


def _function(module: L.Module, name: str, ret, args) -> L.Function:
    fn = L.Function(module, L.FunctionType(ret, args), name=name)
    fn.linkage = "internal"
    return fn


def as_callee(ptr, ftype: L.FunctionType):
    """Make a pointer value callable by llvmlite (opaque pointers: the callee type is explicit)."""
    return _Indirect(ptr, ftype)


class _Indirect:
    """A function pointer as llvmlite's CallInstr expects a callee: `function_type` + reference."""

    def __init__(self, value, ftype: L.FunctionType):
        self.value, self.function_type, self.type = value, ftype, value.type

    def get_reference(self) -> str:
        return self.value.get_reference()


def _declare(module: L.Module, name: str, ret, args) -> L.Function:
    fn = module.globals.get(name)
    return fn if fn is not None else L.Function(module, L.FunctionType(ret, args), name=name)
