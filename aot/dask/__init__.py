"""aot.compile'd functions called with dask.array arguments: dask arrays out, native code per chunk.

The function is captured once per argument signature (dtypes, shapes, chunks) on stand-ins of the
arrays' full shapes, so sizes and constants in the graph are the whole arrays' (a mean divides by
the full length). The graph is then lowered onto dask.array (lower.py):

- elementwise and broadcasting ops fuse into regions (regions.py), each one compiled function run
  by one blockwise task per chunk;
- a reduction (sum, prod, max, min, any, all) fuses with the region feeding it into the chunk step
  of a dask.array.reduction, whose combine and aggregate steps are compiled too; mean, var and std
  are those reductions and elementwise ops; argmax/argmin compile a (value, index) pair per chunk
  and a combine of the pairs (blocks.arg_combine);
- an FFT along an axis that is a single chunk is part of its region's blockwise task (other axes:
  a ValueError naming the axis and the rechunk to do);
- transposes, reshapes, slices, flips, broadcasts and new or squeezed axes are dask's own
  operations; any other op is refused with an UnsupportedError naming it and its source line.

Output dtypes and shapes are aot's (the captured graph's), given to dask as `meta`: no function
runs on empty arrays. Every region is compiled on the caller's side, for each pattern of chunk
sizes the arrays have (symbolic sizes serve every chunk of 2 or more; 0 and 1 are their own), so
that the tasks carry native code (aot.compiler.shipping) and workers do not compile.
"""
from __future__ import annotations


def is_dask_array(x) -> bool:
    """Without importing dask (a process that never made a dask array has not imported it)."""
    t = type(x)
    return t.__name__ == "Array" and t.__module__.startswith("dask.array")


def any_dask(leaves) -> bool:
    return any(is_dask_array(x) for x in leaves)


def call(cf, args: tuple, kwargs: dict):
    """CompiledFunction `cf` called with dask arrays among its arguments."""
    from .lower import plan_for

    return plan_for(cf, args, kwargs).run(args, kwargs)
