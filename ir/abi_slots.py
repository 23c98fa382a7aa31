"""Argument blocks that Python packs and runtime's native helpers read, each laid out once.

A block is an array of 8-byte slots (int64; pointers as integers; doubles by their bits). Python
fills them (runtime/buffers.py: the call contexts of the array trampolines; aot/fft/_fast.py: the
FFT call thunks' blocks) and codegen/trampolines.py generates the LLVM IR that reads them, both
from the layouts below: a slot is named here and nowhere else by number.

Plain data, no dependencies: runtime, codegen and aot all import it.
"""
from __future__ import annotations

from .records import Record


class Slots(Record):
    """Named slots of a block: `layout.name` is the slot index of `name`; `len(layout)` slots."""

    __slots__ = ("names",)

    def __init__(self, names: tuple[str, ...]):
        assert len(set(names)) == len(names), names
        self.names = tuple(names)

    def __getattr__(self, name: str) -> int:
        try:
            return object.__getattribute__(self, "names").index(name)
        except (AttributeError, ValueError):
            raise AttributeError(name) from None

    def __len__(self) -> int:
        return len(self.names)

    def pack(self, **values) -> list[int]:
        """The block's slots in order (every slot must be given)."""
        return [values[n] for n in self.names]


class ObjectTable(Record):
    """A call context over objects (numpy arrays passed by id()): the `header` slots, then one
    record per object: its `fields` slots."""

    __slots__ = ("symbol", "header", "fields")

    def __init__(self, symbol: str, header: Slots, fields: Slots):
        self.symbol, self.header, self.fields = symbol, header, fields

    def pack(self, records: list[dict], **header) -> list[int]:
        out = self.header.pack(**header)
        for r in records:
            out += self.fields.pack(**r)
        return out


# The fields of numpy's array struct (PyArrayObject_fields) that the helpers read; their byte
# offsets are probed at run time (runtime.buffers.ARRAY_LAYOUT). nd and flags are int32, the others
# pointer-sized.
ARRAY_FIELDS = ("type", "data", "nd", "dims", "strides", "descr", "flags")
NPY_ARRAY_ALIGNED = 0x100
NPY_ARRAY_C_CONTIGUOUS = 0x1

# The call trampoline is a Python builtin (METH_FASTCALL): `PyObject *f(self, args, nargs)`, with
# `self` an int64 ndarray holding the context block below and `args` the nargs arrays. Header slots
# of every such helper: `py_long` (PyLong_FromLong, which makes fail's argument), `save_thread`/
# `restore_thread` (PyEval_SaveThread/RestoreThread: the GIL is released around the entry when it is
# not 0 and some argument has at least `gil_elements` elements).
PY_HEADER = ("py_long", "save_thread", "restore_thread", "gil_elements")

# aot_call_strided, the fast call of every signature (a static dim is a row with lo == hi): every
# object (inputs, then outputs) has a record. The records are followed by the call's plan:
# STRIDED_PLAN, then per object its numpy type number and, per dim, a STRIDED_DIM row. Inputs:
# checks type, descr, rank, alignment, every dim against its row (lo <= dim <= hi, and dim ==
# meta[same] when same >= 0: a dim of an earlier input, so equal sizes and static dims cost no
# Python) and strides (a multiple of itemsize; C-contiguous, numpy's flag, for a record whose
# `contiguous` is set: the entry was specialised on it), building data and meta (dims, strides in elements).
# Outputs: with `alloc` (nargs == n_inputs) made by `new_array` (numpy's PyArray_New) with dims
# meta[same] (same >= 0) or lo; else passed after the inputs (nargs == n_objects, allocated by the
# caller). Then entry(data, meta) with n_meta meta slots. Returns the outputs (the one output when
# `unwrap`, else a tuple), None when an argument is not what the context describes, or what
# `fail(rc)` returns (it raises: NULL) for a non-zero status.
STRIDED_CALL = ObjectTable(
    "aot_call_strided",
    Slots(("entry", "n_objects", "n_meta", "ndarray_type", "n_inputs", *PY_HEADER)),
    Slots(("descr", "rank", "itemsize", "contiguous")),
)
# C API the plan calls (outputs of at least `handler_bytes` bytes are made with numpy's memory
# handler `handler` current, when not 0: see BLOCK_CACHE), `call_fail` (PyObject_CallFunctionObjArgs), `incref`/`decref` (Py_IncRef,
# Py_DecRef), `tuple_new`/`tuple_set` (PyTuple_New, PyTuple_SetItem); `none` and `fail` are objects
# (id()), kept alive by the context's owner.
STRIDED_PLAN = Slots(("alloc", "new_array", "unwrap", "fail", "call_fail", "incref", "decref", "none",
                      "tuple_new", "tuple_set", *("set_handler", "handler", "handler_bytes")))
STRIDED_DIM = Slots(("lo", "hi", "same"))
DIM_MAX = 2**63 - 1  # hi of an unbounded dim

# void aot_fft_thunk_{kind}_{precision}(int64 *blk, obj src, obj dst): aot.fft's eager fast path.
# blk holds the kernel pointers and every argument, prepared once per cached case:
#   c2c: the c2c kernel; plan: plan header; twiddles; howmany, istride, idist, ostride, odist;
#   flags; scale (double); scratch;
#   real_pass: r2c's post pass / c2r's pre pass; h (half length); roots;
#   real_arg: r2c: the post pass's scale (double), c2r: the input's row distance;
#   src_offset, dst_offset: bytes added to the src and dst data pointers (one block per outer index
#   of a batch that does not merge); src_base, dst_base: when not 0, used in place of the arrays'
#   data pointers (a work buffer of the prepared call);
#   job, job_src, job_dst: a job block (int64 words) and the indices of its src and dst words.
# c2c: kernel(src -> dst); r2c: kernel(src -> dst), then the post pass on dst; c2r: the pre pass
# (src -> dst), then the kernel in place on dst; job: job[job_src] = src, job[job_dst] = dst, then
# c2c(job): a transform split over the pool's threads (its halves or four steps, codegen/fft/threads.py).
FFT_THUNK = Slots((
    "c2c", "plan", "twiddles", "howmany", "istride", "idist", "ostride", "odist", "flags", "scale", "scratch",
    "real_pass", "h", "roots", "real_arg", "src_offset", "dst_offset", "src_base", "dst_base",
    "job", "job_src", "job_dst",
))
FFT_THUNK_KINDS = ("c2c", "r2c", "c2r", "job")

# PyObject *aot_fft_call_{precision}(self, args, nargs): a METH_FASTCALL builtin, `self` an int64
# ndarray holding one public transform's table of prepared calls for one set of arguments (aot.fft's
# eager fast path without Python). FFT_CALL_HEADER: `ndarray_type`, `new_array` (numpy's
# PyArray_New), `none` (id(None)) and `incref` (Py_IncRef), `n_entries` in use, `hits` (counted
# here). Then FFT_CALL_ENTRIES records of FFT_CALL_RECORD's slots followed by `dims`, `strides`
# (bytes) and `out_dims`, FFT_CALL_DIMS slots each, and FFT_CALL_CALLS rows (thunk, block, reads
# the input) of thunk calls. The one argument must be an aligned ndarray (exact type) whose descr,
# rank, dims and strides equal an entry's; then the output (out_dims, typenum) is made, filled with
# the `size` real input values as complex ones when `convert` is their itemsize (4 or 8; 0: no
# conversion), and the entry's thunks run, with the GIL held: the entries' scratch is shared and
# their work is small. Anything else returns None.
FFT_CALL_HEADER = Slots(("ndarray_type", "new_array", "none", "incref", "n_entries", "hits"))
FFT_CALL_RECORD = Slots(("descr", "nd", "typenum", "out_nd", "n_calls", "convert", "size"))
FFT_CALL_ENTRIES, FFT_CALL_DIMS, FFT_CALL_CALLS = 16, 8, 16
FFT_CALL_ROW = len(FFT_CALL_RECORD) + 3 * FFT_CALL_DIMS + 3 * FFT_CALL_CALLS  # slots of one entry

# the in-process JIT's one thread pool (codegen/kernels/parallel.py's parallel_for, loaded once per
# process by runtime.jit.shared_pool and resolvable by every engine): compiled graphs call it by name
SHARED_PARALLEL_FOR = "aot_jit_parallel_for"
# Every module with a pool of its own (the JIT's, each FFT kernel library's, each warm-start library's)
# exports its parallel_for as POOL_ENTRY and `void POOL_DELEGATE(ptr)`, which sets a function its
# parallel_for then passes each job on to (none at load; the FFT libraries' have no setter).
# runtime/pools.py points every module that can delegate at one pool, an FFT library's once one is
# loaded, so the process runs one set of workers.
POOL_DELEGATE, POOL_ENTRY = "aot_pool_delegate", "aot_pool_parallel_for"

# Large outputs reuse freed blocks (runtime/blocks.py): the kernel zeroes every page a process maps
# fresh, and glibc maps each block of 32 MB or more fresh on every malloc, which costs as much as a
# large elementwise call itself. The arrays aot makes of at least the call builtins' `handler_bytes`
# (runtime/blocks.py's ALIGNED_BYTES: the handler's blocks start on a cache line, glibc's do not)
# are allocated with a numpy memory handler (NEP 49, `handler`: its capsule) made
# current only around their PyArray_New (`set_handler`: numpy's PyDataMem_SetHandler), so numpy's
# own arrays never see it; the array keeps the handler, whose free puts the block into a cache of
# at most BLOCK_ROWS blocks and `max_bytes` bytes (the oldest evicted first) and whose malloc takes
# the smallest cached block within a quarter of the size asked for.
# The handler's functions (codegen/block_cache.py) are emitted with each call builtin's module as
# `{module}_block_{name}` for name in BLOCK_FUNCTIONS: malloc, calloc, realloc and free with numpy's
# PyDataMemAllocator signatures (ctx: the BLOCK_CACHE block), and trim(ctx), which frees every
# cached block. The block: BLOCK_CACHE's slots (`lock`: a spin lock, 0 or 1; `clock`: the last
# stamp), then BLOCK_ROWS rows of BLOCK_ROW (`ptr` 0: an empty row).
BLOCK_CACHE = Slots(("lock", "min_bytes", "max_bytes", "cached_bytes", "clock"))
BLOCK_ROW = Slots(("ptr", "size", "stamp"))
BLOCK_ROWS = 16  # (8 while only blocks of 4 MB or more were kept: results of 1-4 MB, kept since,
# must not push the large blocks out of a loop that also makes several of them)
BLOCK_FUNCTIONS = ("malloc", "calloc", "realloc", "free", "trim")
PY_DATA_MEM_SET_HANDLER = 304  # the slot of PyDataMem_SetHandler in numpy's C API table (numpy >= 1.22)


def block_symbol(module: str, name: str) -> str:
    """The symbol of BLOCK_FUNCTIONS' `name` emitted with the module `module`."""
    return f"{module}_block_{name}"


# The process's blocks module (runtime helper "blocks", codegen/block_cache.py's blocks_ir): the
# BLOCK_FUNCTIONS under BLOCKS_MODULE, and the allocator of compiled graphs' intermediate buffers
# (JIT code only: libraries call aligned_alloc/free): `void *BUFFER_ALLOC(i64 size)` (64-byte
# aligned) and `void BUFFER_FREE(void *p, i64 size)`, which use the cache block at BLOCKS_CTX (a
# pointer; runtime/blocks.py sets it in every loaded copy) and aligned_alloc/free while it is null.
BLOCKS_MODULE = "aot_blocks"
BUFFER_ALLOC, BUFFER_FREE, BLOCKS_CTX = "aot_buffer_alloc", "aot_buffer_free", "aot_blocks_ctx"
