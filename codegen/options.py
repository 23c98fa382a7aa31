"""What a caller chooses about code generation: plain data, importable without llvmlite (the JIT's
disk-cache hits need it for their keys, not the code generator)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CodegenOptions:
    """num_threads: workers for large kernels (1: serial). parallel_threshold: elements of work
    below which a kernel runs on the calling thread. library: the name of the shared library
    being built ("" in the JIT); then the thread count is read at run time from the i64 global
    `library_threads_symbol(library)` (initialised to num_threads, set by the C wrapper from
    AOT_NUM_THREADS and NAME_set_num_threads), and the pool's workers are joined when the
    library is unloaded. Build-time choices (e.g. split reductions' chunk count) keep num_threads,
    so results do not depend on the run-time count."""

    num_threads: int = 1
    parallel_threshold: int = 65536
    library: str = ""


def library_threads_symbol(library: str) -> str:
    """The library's thread-count global (defined by codegen, written by runtime/abi_wrapper.py)."""
    return f"{library}__aot_num_threads"
