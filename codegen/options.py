"""What a caller chooses about code generation: plain data, importable without llvmlite (the JIT's
disk-cache hits need it for their keys, not the code generator)."""

from __future__ import annotations

from ir.records import record


@record(frozen=True)
class CodegenOptions:
    """num_threads: workers for large kernels (1: serial). parallel_threshold: elements of work
    below which a kernel runs on the calling thread. library: the name of the shared library
    being built ("" in the JIT); then the thread count is read at run time from the i64 global
    `library_threads_symbol(library)` (initialised to num_threads, set by the C wrapper from
    AOT_NUM_THREADS and NAME_set_num_threads), and the pool's workers are joined when the
    library is unloaded. Build-time choices (e.g. split reductions' chunk count) keep num_threads,
    so results do not depend on the run-time count. profile: the entry times each kernel launch
    and itself into the counters of a ProfileLayout (JIT entries on the CPU host only, aot.profile).
    contiguous_inputs: per argument of the entry, whether its caller passes it C-contiguous (the
    code then reads no strides of it, and its kernels specialise: runtime.ArgSpec.contiguous makes
    every JIT call path keep the promise); a JIT entry's outputs are C-contiguous always.
    streaming_stores: elementwise kernels whose arrays exceed the caches store with non-temporal
    hints (codegen/kernels/streaming.py; False: never, e.g. to compare)."""

    num_threads: int = 1
    parallel_threshold: int = 65536
    library: str = ""
    profile: bool = False
    contiguous_inputs: tuple = ()
    streaming_stores: bool = True


def library_threads_symbol(library: str) -> str:
    """The library's thread-count global (defined by codegen, written by runtime/abi_wrapper.py)."""
    return f"{library}__aot_num_threads"


def profile_symbol(entry: str) -> str:
    """The profile counters' global of entry function `entry` (options.profile)."""
    return f"{entry}.profile"


@record(frozen=True)
class ProfileLayout:
    """Where a profiled entry's counters are: the i64 array global `symbol` of entry function
    `entry`, holding the entry's nanoseconds and calls (slots 0, 1), then for launch site k (in
    the order the entry's code launches them, each site once however often it runs) its
    nanoseconds and calls (2 + 2k, 3 + 2k). `labels[k]`: the LLVM name of the kernel site k launches."""

    entry: str
    labels: tuple[str, ...] = ()

    @property
    def symbol(self) -> str:
        return profile_symbol(self.entry)

    @property
    def size(self) -> int:
        """i64 slots of the global."""
        return 2 + 2 * len(self.labels)

    def to_json(self) -> str:
        import json

        return json.dumps({"entry": self.entry, "labels": list(self.labels)})

    @classmethod
    def from_json(cls, text: str) -> ProfileLayout:
        import json

        d = json.loads(text)
        return cls(str(d["entry"]), tuple(str(x) for x in d["labels"]))
