"""The kernel module's ABI facts that need no code generator: flags, symbol names, plan-block
fields, and which functions the plan interpreter calls (and which kernel group defines each).

aot.fft reads these on a disk-cache hit without importing llvmlite; module.py, passes.py,
real.py, planner.py and groups.py emit what they name.
"""
from __future__ import annotations

from .plan import CODELET_RADICES

FLAG_FORWARD, FLAG_LANES, FLAG_BLOCK = 1, 2, 4
SCRATCH_PER_LANE = 4  # scratch values of T per element per lane (two ping-pong complex buffers)
# With FLAG_BLOCK, neighbouring transforms (idist == 1) gather and scatter LANE_BLOCK lane groups
# at a time when n <= LANE_BLOCK_MAX_N: each row of a strided axis is then read as LANE_BLOCK
# cache lines in a row instead of one (a column of 128 points at a 256 KB stride: one line per
# row is latency-bound, hardware prefetchers do not cross pages). The scratch grows to match.
LANE_BLOCK, LANE_BLOCK_MAX_N = 4, 2048


def lane_block(n: int, idist: int, flags: int) -> int:
    """Lane groups per gather (the kernel's choice, written out for the callers' scratch)."""
    blocked = flags & FLAG_BLOCK and flags & FLAG_LANES and idist == 1 and n <= LANE_BLOCK_MAX_N
    return LANE_BLOCK if blocked else 1


def scratch_values(n: int, vlen: int, idist: int, flags: int) -> int:
    """Values of T the c2c entry needs in `scratch` for these flags (see module.py)."""
    if not flags & FLAG_LANES:
        return SCRATCH_PER_LANE * n
    return SCRATCH_PER_LANE * n * vlen * lane_block(n, idist, flags)


def whole_lines(values: int) -> int:
    """`values` of T rounded up to whole 64-byte cache lines (of the largest T, complex128's 16)."""
    return -(-values // 16) * 16


# Values of T after each thread's scratch region before the next one's (4 KB of float32, 8 KB of
# float64): the hardware prefetchers streaming to the end of one thread's buffers run on into the
# rest of the page, which with regions back to back is the start of another thread's region, being
# written by another core, so lines travel between the cores on every pass. Two threads, batches of
# 1024-point transforms (alternating processes): complex64 (256, 1024) 155-160 -> 110-120 us,
# complex128 (1024, 1024) 1385-1430 -> 1050-1150 us; fftn 128^3 10.4-12.7 -> 8.3-10.3 ms.
REGION_GAP = 1024


def thread_region(values: int) -> int:
    """Values of T from one thread's scratch region to the next: `values` in whole cache lines, then
    REGION_GAP."""
    return whole_lines(values) + REGION_GAP


def four_step_scratch(m1: int, m2: int, square: bool, vlen: int) -> tuple[int, int]:
    """(work values, values per thread) of a four-step transform's scratch (threads.py): the work
    array (none for a square split), then the distance between the threads' regions (thread_region)."""
    region = max(scratch_values(m1, vlen, 1, FLAG_LANES | FLAG_BLOCK), scratch_values(m2, vlen, m2, 0))
    return (0 if square else whole_lines(2 * m1 * m2)), thread_region(region)


def halves_scratch(h: int, vlen: int) -> int:
    """Values of T a half of a two-halves transform needs (threads.py: two of them)."""
    return thread_region(scratch_values(h, vlen, 1, 0))


# aot_fft_plan_job_{p}'s job block (planner.py), int64 words: aot_fft_plan_chunk_{p}'s arguments first;
# `scale` holds a double's bits, `pool` a parallel_for (ir.abi_slots.POOL_ENTRY) or 0
PLAN_JOB = ("plan", "src", "dst", "istride", "idist", "ostride", "odist", "flags", "scale", "status", "howmany",
            "nthreads", "pool", "chunk")
# aot_fft_c2c_split_{p}'s job block (threads.py), int64 words; `scale` holds a double's bits
C2C_JOB = ("hdr", "tw", "src", "dst", "howmany", "istride", "idist", "ostride", "odist", "flags", "scale",
           "scratch", "scratch_values", "tasks", "tsrc", "tdst", "nthreads")
# aot_fft_four_step_{p}'s job block (threads.py), int64 words; `scale` holds a double's bits
FOUR_STEP_JOB = ("hdr1", "tw1", "hdr2", "tw2", "src", "dst", "work", "wa", "wb", "m1", "m2", "flags", "scale",
                 "scratch", "region", "nthreads")
# aot_fft_halves_{p}'s job block (threads.py), int64 words; `scale` holds a double's bits
HALVES_JOB = ("hdr", "tw", "src", "dst", "h", "lo", "hi", "shift", "flags", "scale", "scratch", "region", "nthreads")
# aot_fft_planes_{p}'s job block (threads.py), int64 words; the scales hold doubles' bits
PLANES_JOB = ("hdr_rows", "tw_rows", "hdr_cols", "tw_cols", "src", "dst", "planes", "sdist", "ddist", "n1", "n2",
              "flags_rows", "flags_cols", "scale_rows", "scale_cols", "scratch", "region", "nthreads")
# the run-time planner's plan block (planner.py), int64 words
FIELD_N, FIELD_BLUE, FIELD_REFS, FIELD_N2, FIELD_HDR, FIELD_TW, FIELD_CHIRP, FIELD_KERN = range(8)
# the layouts of a pass (layouts.py's `name`): scalar, wide, lanes, split work buffers
SCALAR, WIDE, LANES, SPLIT = "s", "w", "v", "p"


def entry_name(precision: str) -> str:
    return f"aot_fft_c2c_{precision}"


def pass_entry_name(precision: str) -> str:
    return f"aot_fft_pass_{precision}"


def split_name(precision: str) -> str:
    return f"aot_fft_c2c_split_{precision}"


def columns_name(precision: str) -> str:
    return f"aot_fft_columns_tw_{precision}"


def combine_name(precision: str) -> str:
    return f"aot_fft_combine2_{precision}"


def planes_name(precision: str) -> str:
    return f"aot_fft_planes_{precision}"


def unzip_name(precision: str) -> str:
    return f"aot_fft_unzip2_{precision}"


def halves_name(precision: str) -> str:
    return f"aot_fft_halves_{precision}"


def rows_name(precision: str) -> str:
    return f"aot_fft_rows_t_{precision}"


def transpose_name(precision: str) -> str:
    return f"aot_fft_transpose_{precision}"


def four_step_name(precision: str) -> str:
    return f"aot_fft_four_step_{precision}"


def shared_name(precision: str) -> str:
    return f"aot_fft_shared_{precision}"


def r2c_name(precision: str) -> str:
    return f"aot_fft_r2c_post_{precision}"


def c2r_name(precision: str) -> str:
    return f"aot_fft_c2r_pre_{precision}"


def plan_names(precision: str) -> dict[str, str]:
    return {w: f"aot_fft_plan_{w}_{precision}" for w in ("make", "exec", "get", "release", "roots", "chunk", "job")}


def pass_name(radix: int | str, forward: bool, src: str, dst: str | None = None) -> str:
    """The symbol of a pass reading layout `src` and writing `dst` (default: the same)."""
    conv = "" if dst is None or dst == src else dst
    return f"aot_fft_pass{radix}_{'f' if forward else 'b'}_{src}{conv}"


def split_radices(vlen: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(radices with Split passes, radices that can end a Split plan: multiples of VLEN); none
    at all when no radix is a multiple of VLEN."""
    last = tuple(r for r in CODELET_RADICES if r % vlen == 0)
    return (CODELET_RADICES if last else ()), last


def pass_keys(forward: bool, vlen: int) -> list[tuple]:
    """Every pass the plan interpreter of one direction may call, as (radix or "g", src, dst):
    codelet passes in the wide and lanes layouts, the generic pass in all three, and the Split
    passes (first "wp", middle "pp", last "pw")."""
    keys = [(r, lay, lay) for lay in (WIDE, LANES) for r in CODELET_RADICES]
    keys += [("g", lay, lay) for lay in (SCALAR, WIDE, LANES)]
    some, last = split_radices(vlen)
    keys += [(r, src, dst) for r in some for src, dst in ((WIDE, SPLIT), (SPLIT, SPLIT))]
    keys += [(r, SPLIT, WIDE) for r in last]
    return keys


def group_of(radix: int | str, forward: bool) -> tuple:
    """The kernel group that defines the passes of `radix` in one direction (groups.py)."""
    return ("generic", forward) if radix == "g" else ("radix", radix, forward)


def group_name(group: tuple) -> str:
    return "_".join(str(int(p) if isinstance(p, bool) else p) for p in group)


def imports_of(group: tuple, precision: str, vlen: int) -> list[tuple[str, tuple]]:
    """(symbol, defining group) of what a group's module calls through its import table, in slot
    order: the loader fills slot i with the address of symbol i once its group is loaded."""
    passes = [(pass_name(r, fw, s, d), group_of(r, fw)) for fw in (True, False) for r, s, d in pass_keys(fw, vlen)]
    if group == ("core",):
        return passes
    if group == ("fourstep",):
        return passes + [(entry_name(precision), ("core",))]
    if group == ("planner",):
        return [(entry_name(precision), ("core",))]
    if group == ("threads",):
        return [(pass_entry_name(precision), ("core",)), (entry_name(precision), ("core",)),
                *((name(precision), ("fourstep",)) for name in (columns_name, transpose_name, rows_name, combine_name,
                                                               unzip_name))]
    return []


def imports_symbol(precision: str) -> str:
    return f"aot_fft_imports_{precision}"


def vlen_symbol(precision: str) -> str:
    return f"aot_fft_vlen_{precision}"
