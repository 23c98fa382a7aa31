"""The large-block cache's native side (ir.abi_slots.BLOCK_CACHE): a numpy memory handler's
functions, the blocks module (those functions, and compiled graphs' buffer allocator over the same
cache), and the pooled PyArray_New call the array trampoline makes its large outputs with.

The functions take the cache block as `ctx` (numpy's handler context; the blocks module's
BLOCKS_CTX), so every copy (the JIT's, each warm-started library's, aot.fft's call thunks') works
on the one block runtime/blocks.py made for the process; which copy the handler points at does not
matter. numpy calls the handler with the GIL held, but compiled entries allocate and free their
buffers without it: the block's spin lock guards the rows. Every block is 64-byte aligned (a
cached block may become a graph's buffer); a block that is not (numpy realloc'ed it) is not kept.
"""
from __future__ import annotations

from llvmlite import ir as L

from ir import abi_slots as S

from .kernels.parallel import as_callee
from .llvm.builder import Builder, module_text
from .llvm.loops import alloca, for_range, while_loop
from .llvm.types import I64, PTR, VOID

LOCK_SPINS = 1 << 20  # tries of the cache's lock before a call goes around the cache (~10 ms)


def add_block_functions(mod, module: str) -> None:
    """BLOCK_FUNCTIONS of `module` (ir.abi_slots.block_symbol) in the llvmlite module `mod`."""
    libc = {"aligned_alloc": (PTR, [I64, I64]), "calloc": (PTR, [I64, I64]), "realloc": (PTR, [PTR, I64]),
            "free": (VOID, [PTR])}
    c_fn = {n: mod.globals.get(n) or L.Function(mod, L.FunctionType(r, a), name=n) for n, (r, a) in libc.items()}
    signatures = {"malloc": (PTR, [PTR, I64]), "calloc": (PTR, [PTR, I64, I64]), "realloc": (PTR, [PTR, PTR, I64]),
                  "free": (VOID, [PTR, PTR, I64]), "trim": (VOID, [PTR])}
    fns = {n: L.Function(mod, L.FunctionType(r, a), name=S.block_symbol(module, n)) for n, (r, a) in signatures.items()}
    _passthrough(fns["calloc"], c_fn["calloc"])
    _passthrough(fns["realloc"], c_fn["realloc"])
    _malloc(fns["malloc"], c_fn)
    _free(fns["free"], c_fn)
    _trim(fns["trim"], c_fn)


def blocks_ir() -> str:
    """The process's blocks module (ir.abi_slots.BLOCKS_MODULE): the handler's functions, the
    context pointer BLOCKS_CTX and the buffer allocator of compiled graphs."""
    mod = L.Module(name=S.BLOCKS_MODULE)
    add_block_functions(mod, S.BLOCKS_MODULE)
    ctx = L.GlobalVariable(mod, PTR, name=S.BLOCKS_CTX)
    ctx.initializer = L.Constant(PTR, None)
    ctx.align = 8
    fns = {n: mod.globals[S.block_symbol(S.BLOCKS_MODULE, n)] for n in ("malloc", "free")}
    alloc = L.Function(mod, L.FunctionType(PTR, [I64]), name=S.BUFFER_ALLOC)
    release = L.Function(mod, L.FunctionType(VOID, [PTR, I64]), name=S.BUFFER_FREE)
    for fn, cached, plain in ((alloc, fns["malloc"], "aligned_alloc"), (release, fns["free"], "free")):
        b = Builder(fn.append_basic_block("entry"))
        c = b.load(ctx, typ=PTR)  # (set once, before any call can use it)
        off, on = fn.append_basic_block("off"), fn.append_basic_block("on")
        b.cbranch(b.icmp_unsigned("==", c, L.Constant(PTR, None)), off, on)
        for block, callee, args in ((off, mod.globals[plain], [L.Constant(I64, 64), *fn.args] if fn is alloc
                                     else [fn.args[0]]), (on, cached, [c, *fn.args])):
            b.position_at_end(block)
            r = b.call(callee, args)
            if fn is alloc:
                b.ret(r)
            else:
                b.ret_void()
    return module_text(mod)


def _passthrough(fn, c_fn) -> None:
    """fn(ctx, *args) = c_fn(*args): blocks of any size come from and go back to libc."""
    b = Builder(fn.append_basic_block("entry"))
    b.ret(b.call(c_fn, list(fn.args[1:])))


class _Block:
    """The cache block `ctx` in the function being built with `b`: its slots and rows."""

    def __init__(self, b, ctx):
        self.b, self.ctx = b, ctx

    def ptr(self, index):
        index = index if isinstance(index, L.Value) else L.Constant(I64, index)
        return self.b.gep(self.ctx, [index], source_etype=I64)

    def get(self, index, typ=None):
        return self.b.load(self.ptr(index), typ=typ or I64)

    def put(self, index, value) -> None:
        self.b.store(value, self.ptr(index))

    def row(self, r, field: str):  # the slot index of row r's field
        return self.b.add(L.Constant(I64, len(S.BLOCK_CACHE)),
                          self.b.add(self.b.mul(r, L.Constant(I64, len(S.BLOCK_ROW))),
                                     L.Constant(I64, getattr(S.BLOCK_ROW, field))))

    def lock(self, fn, busy) -> None:
        """Take the spin lock, or after LOCK_SPINS failed tries go to block `busy` (the caller's
        path around the cache: a lock left held by a thread that no longer exists, as in a child
        after fork, costs that wait, never a hang)."""
        b = self.b
        entry = b.block
        spin, again, held = (fn.append_basic_block(n) for n in ("spin", "spin_again", "held"))
        b.branch(spin)
        b.position_at_end(spin)
        tries = b.phi(I64, "tries")
        tries.add_incoming(L.Constant(I64, 0), entry)
        pair = b.cmpxchg(self.ptr(S.BLOCK_CACHE.lock), L.Constant(I64, 0), L.Constant(I64, 1),
                         "acquire", "monotonic")
        b.cbranch(b.extract_value(pair, 1), held, again)
        b.position_at_end(again)
        more = b.add(tries, L.Constant(I64, 1))
        tries.add_incoming(more, again)
        b.cbranch(b.icmp_signed("<", more, L.Constant(I64, LOCK_SPINS)), spin, busy)
        b.position_at_end(held)

    def unlock(self) -> None:
        self.b.atomic_rmw("xchg", self.ptr(S.BLOCK_CACHE.lock), L.Constant(I64, 0), "release")

    def take(self, r) -> None:
        """Empty row r (its block is the caller's now)."""
        cached = S.BLOCK_CACHE.cached_bytes
        self.put(cached, self.b.sub(self.get(cached), self.get(self.row(r, "size"))))
        self.put(self.row(r, "ptr"), L.Constant(I64, 0))


def _fresh(b, c_fn, size):
    """A new block from libc, 64-byte aligned (a cached block may serve a compiled graph's buffer,
    whose vector stores must not split cache lines). glibc takes any size (a size that overflowed,
    SIZE_MAX, fails as it should: no rounding here to wrap it to 0)."""
    return b.call(c_fn["aligned_alloc"], [L.Constant(I64, 64), size])


def _malloc(fn, c_fn) -> None:
    """malloc(ctx, size): below min_bytes, libc's; else the smallest cached block of size..size +
    size/4 bytes, else libc's."""
    ctx, size = fn.args
    b = Builder(fn.append_basic_block("entry"))
    blk = _Block(b, ctx)
    best = alloca(b, I64, name="best")
    b.store(L.Constant(I64, -1), best)
    fresh, look = fn.append_basic_block("fresh"), fn.append_basic_block("look")
    b.cbranch(b.icmp_unsigned("<", size, blk.get(S.BLOCK_CACHE.min_bytes)), fresh, look)
    b.position_at_end(fresh)  # a small block, or the lock not taken
    b.ret(_fresh(b, c_fn, size))
    b.position_at_end(look)
    blk.lock(fn, fresh)
    most = b.add(size, b.lshr(size, L.Constant(I64, 2)))
    with for_range(b, L.Constant(I64, 0), L.Constant(I64, S.BLOCK_ROWS), name="r", unroll=False) as r:
        have = blk.get(blk.row(r, "size"))
        fits = b.and_(b.icmp_unsigned("!=", blk.get(blk.row(r, "ptr")), L.Constant(I64, 0)),
                      b.and_(b.icmp_unsigned("<=", size, have), b.icmp_unsigned("<=", have, most)))
        k = b.load(best, typ=I64)
        smaller = b.or_(b.icmp_signed("<", k, L.Constant(I64, 0)),
                        b.icmp_unsigned("<", have, blk.get(blk.row(b.select(b.icmp_signed("<", k, L.Constant(I64, 0)),
                                                                            L.Constant(I64, 0), k), "size"))))
        b.store(b.select(b.and_(fits, smaller), r, k), best)
    k = b.load(best, typ=I64)
    hit, miss = fn.append_basic_block("hit"), fn.append_basic_block("miss")
    b.cbranch(b.icmp_signed(">=", k, L.Constant(I64, 0)), hit, miss)
    b.position_at_end(hit)
    p = blk.get(blk.row(k, "ptr"), PTR)
    blk.take(k)
    blk.unlock()
    b.ret(p)
    b.position_at_end(miss)
    blk.unlock()
    b.ret(_fresh(b, c_fn, size))


def _free(fn, c_fn) -> None:
    """free(ctx, p, size): a 64-byte aligned block of min_bytes..max_bytes into an empty row,
    evicting the oldest rows first while the cache would exceed max_bytes, and while it has no
    empty row the oldest of the rows no larger than this block (none: this block goes back to
    libc; a loop making many results of 1-4 MB must not push out a large block each time); else
    libc's free."""
    ctx, p, size = fn.args
    b = Builder(fn.append_basic_block("entry"))
    blk = _Block(b, ctx)
    zero, rows = L.Constant(I64, 0), L.Constant(I64, S.BLOCK_ROWS)
    C = S.BLOCK_CACHE
    empty, oldest, smaller = (alloca(b, I64, name=n) for n in ("empty", "oldest", "smaller"))
    keep, plain = fn.append_basic_block("keep"), fn.append_basic_block("plain")
    addr = b.ptrtoint(p, I64)  # (a block numpy realloc'ed is not 64-byte aligned: not kept)
    kept = b.and_(b.and_(b.icmp_unsigned("!=", addr, zero), b.icmp_unsigned("==", b.and_(addr, L.Constant(I64, 63)), zero)),
                  b.and_(b.icmp_unsigned(">=", size, blk.get(C.min_bytes)),
                         b.icmp_unsigned("<=", size, blk.get(C.max_bytes))))
    b.cbranch(kept, keep, plain)
    b.position_at_end(plain)
    b.call(c_fn["free"], [p])
    b.ret_void()

    def older_of(best, r, eligible):  # row r if it is eligible and older than row `best` (or -1)
        o = b.load(best, typ=I64)
        o_stamp = blk.get(blk.row(b.select(b.icmp_signed("<", o, zero), zero, o), "stamp"))
        older = b.or_(b.icmp_signed("<", o, zero), b.icmp_unsigned("<", blk.get(blk.row(r, "stamp")), o_stamp))
        b.store(b.select(b.and_(eligible, older), r, o), best)

    def scan():  # empty: an empty row; oldest: the oldest occupied row; smaller: the oldest of those
        for slot in (empty, oldest, smaller):  # no larger than `size` (each -1: none)
            b.store(L.Constant(I64, -1), slot)
        with for_range(b, zero, rows, name="r", unroll=False) as r:
            used = b.icmp_unsigned("!=", blk.get(blk.row(r, "ptr")), zero)
            b.store(b.select(used, b.load(empty, typ=I64), r), empty)
            older_of(oldest, r, used)
            older_of(smaller, r, b.and_(used, b.icmp_unsigned("<=", blk.get(blk.row(r, "size")), size)))

    def over():
        return b.icmp_unsigned(">", b.add(blk.get(C.cached_bytes), size), blk.get(C.max_bytes))

    def short():  # no room for `size` more bytes, or no empty row
        return b.or_(over(), b.icmp_signed("<", b.load(empty, typ=I64), zero))

    b.position_at_end(keep)
    blk.lock(fn, plain)
    scan()
    with while_loop(b, short, name="evict"):  # (size <= max_bytes: it ends, at worst with every row empty)
        o = b.select(over(), b.load(oldest, typ=I64), b.load(smaller, typ=I64))
        with b.if_then(b.icmp_signed("<", o, zero)):  # every row holds a larger block: keep them
            blk.unlock()
            b.call(c_fn["free"], [p])
            b.ret_void()
        b.call(c_fn["free"], [blk.get(blk.row(o, "ptr"), PTR)])
        blk.take(o)
        scan()
    e = b.load(empty, typ=I64)
    stamp = b.add(blk.get(C.clock), L.Constant(I64, 1))
    blk.put(C.clock, stamp)
    blk.put(blk.row(e, "ptr"), b.ptrtoint(p, I64))
    blk.put(blk.row(e, "size"), size)
    blk.put(blk.row(e, "stamp"), stamp)
    blk.put(C.cached_bytes, b.add(blk.get(C.cached_bytes), size))
    blk.unlock()
    b.ret_void()


def _trim(fn, c_fn) -> None:
    """trim(ctx): every cached block back to libc."""
    (ctx,) = fn.args
    b = Builder(fn.append_basic_block("entry"))
    blk = _Block(b, ctx)
    busy = fn.append_basic_block("busy")
    blk.lock(fn, busy)
    zero = L.Constant(I64, 0)
    with (for_range(b, zero, L.Constant(I64, S.BLOCK_ROWS), name="r", unroll=False) as r,
          b.if_then(b.icmp_unsigned("!=", blk.get(blk.row(r, "ptr")), zero))):
        b.call(c_fn["free"], [blk.get(blk.row(r, "ptr"), PTR)])
        blk.take(r)
    blk.unlock()
    b.ret_void()
    b.position_at_end(busy)
    b.ret_void()


def new_array(b, fn, callee, args, nbytes, set_handler, handler, handler_bytes, decref):
    """numpy's PyArray_New(*args) through `callee`, with the memory handler `handler` (a capsule's
    address; 0: none) current when the array holds at least `handler_bytes` bytes: set with
    `set_handler` (PyDataMem_SetHandler) before and put back after, dropping the references it
    returns (`decref`: Py_DecRef). The array, or NULL with an exception set."""
    null = L.Constant(PTR, None)
    swap = L.FunctionType(PTR, [PTR])
    drop = L.FunctionType(VOID, [PTR])
    plain, pooled, made = (fn.append_basic_block(x) for x in ("plain_new", "pooled_new", "new_made"))
    big = b.and_(b.icmp_unsigned("!=", handler, L.Constant(I64, 0)), b.icmp_signed(">=", nbytes, handler_bytes))
    b.cbranch(big, pooled, plain)
    b.position_at_end(plain)
    a_plain = b.call(callee, args)
    plain_end = b.block
    b.branch(made)
    b.position_at_end(pooled)
    old = b.call(as_callee(set_handler, swap), [b.inttoptr(handler, PTR)])
    unset, swapped = fn.append_basic_block("handler_unset"), fn.append_basic_block("handler_set")
    b.cbranch(b.icmp_unsigned("==", old, null), unset, swapped)
    b.position_at_end(swapped)
    a_pooled = b.call(callee, args)
    back = b.call(as_callee(set_handler, swap), [old])
    b.call(as_callee(decref, drop), [old])
    restored, lost = fn.append_basic_block("handler_back"), fn.append_basic_block("handler_lost")
    b.cbranch(b.icmp_unsigned("==", back, null), lost, restored)
    b.position_at_end(lost)  # putting the old handler back raised (no memory): drop the array, raise
    with b.if_then(b.icmp_unsigned("!=", a_pooled, null)):
        b.call(as_callee(decref, drop), [a_pooled])
    b.branch(unset)
    b.position_at_end(restored)
    b.call(as_callee(decref, drop), [back])
    b.branch(made)
    b.position_at_end(unset)  # SetHandler raised: so does the call
    b.branch(made)
    b.position_at_end(made)
    a = b.phi(PTR, "new")
    a.add_incoming(a_plain, plain_end)
    a.add_incoming(a_pooled, restored)
    a.add_incoming(null, unset)
    return a
