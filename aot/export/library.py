"""`aot.aot_compile`: an ExportedProgram -> NAME.so + NAME.h with the standalone C ABI.

Pipeline: the program's optimised ir -> the graph entry (codegen, internal ABI of
codegen/entry.py, symbol NAME__aot_entry) -> object code for the target -> the validating C
wrapper (runtime/abi_wrapper.py) -> `cc -shared` with a version script exporting only the ABI.
For a foreign target nothing is linked: NAME.o (the LLVM object), NAME_abi.c (the wrapper, C11
source for the target's C compiler) and NAME.h are written, and the .o path is returned.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ir.logger import get_logger
from ir.symbols import dim_str

from .cexpr import dim_to_c, to_c
from .dims import ExportError
from .guards import readable
from .program import ExportedProgram, export

log = get_logger(__name__)


def library_path(path, default_name: str) -> Path:
    """NAME.so from `path` (a .so path, or a directory to put DEFAULT_NAME.so in)."""
    if path is None:
        raise TypeError("aot_compile: path= is required (where to write NAME.so)")
    p = Path(os.fspath(path))
    if p.is_dir() or str(path).endswith(os.sep):
        return p / f"{default_name}.so"
    if p.suffix != ".so":
        raise ValueError(
            f"aot_compile: path must name a .so file (NAME.so) or an existing directory, got {path!r}"
        )
    return p


def aot_compile(
    fn_or_program,
    args=None,
    kwargs=None,
    *,
    dynamic_shapes=None,
    path,
    target: str = "host",
    options: dict | None = None,
) -> str:
    """Compile a function (traced on example `args`) or an ExportedProgram into a shared library.

    Writes NAME.so and NAME.h (NAME from the file name) and returns the .so path; for a target
    other than the host, writes NAME.o, NAME_abi.c and NAME.h and returns the .o path.
    options: {"num_threads": n} the library's default thread count for large kernels (default:
    this machine's cores); at run time AOT_NUM_THREADS (read when the library is loaded) or
    NAME_set_num_threads() replace it."""
    import aot
    from codegen import CodegenOptions, compile_object, lower_module
    from codegen.targets.foreign import is_host, resolve_target
    from runtime import default_num_threads
    from runtime.abi import check_c_name
    from runtime.shared_lib import write_library

    t0 = time.perf_counter()
    if isinstance(fn_or_program, ExportedProgram):
        if args is not None or dynamic_shapes is not None:
            raise TypeError(
                "aot_compile: args/dynamic_shapes belong to aot.export; pass an ExportedProgram alone"
            )
        program = fn_or_program
    else:
        if args is None:
            raise TypeError("aot_compile: example args are required to compile a function")
        program = export(fn_or_program, tuple(args), kwargs, dynamic_shapes=dynamic_shapes)
    lib = library_path(path, program.name)
    name = check_c_name(lib.name[: -len(".so")])
    _check_outputs(program)
    tgt = resolve_target(target)
    module = program.ir_module()
    func = module.funcs["main"]
    func.name = f"{name}__aot_entry"
    opts = dict(options or {})
    streaming = opts.pop("streaming_stores", True)
    if type(streaming) is not bool:
        raise TypeError(f"aot_compile: options['streaming_stores'] must be True or False, got {streaming!r}")
    cg = CodegenOptions(num_threads=int(opts.pop("num_threads", 0) or default_num_threads()), library=name,
                        streaming_stores=streaming)
    if opts:
        raise TypeError(f"aot_compile: unknown options {sorted(opts)}; known: ['num_threads', 'streaming_stores']")
    obj = compile_object(lower_module(module, tgt, cg), tgt, portable=True)
    spec = library_spec(program, module, name, func.name, tgt)
    host = is_host(tgt)
    files = write_library(spec, obj, lib.parent, link=host, version=aot.__version__,
                          extra_objects=_kernel_objects(func, tgt))
    log.info(
        "aot_compile: %s for %s in %.0f ms",
        lib.name if host else files.object.name,
        tgt.triple,
        1e3 * (time.perf_counter() - t0),
    )
    return str(files.library if host else files.object)


def aot_compile_async(fn_or_program, args=None, kwargs=None, *, dynamic_shapes=None, path,
                      target: str = "host", options: dict | None = None):
    """aot_compile on the compile pool (aot/compiler/watchdog.py): returns an aot.futures.Future
    completed with the library's path, or holding the error aot_compile raised."""
    from ..compiler import watchdog

    return watchdog.submit_background(aot_compile, fn_or_program, args, kwargs, dynamic_shapes=dynamic_shapes,
                                      path=path, target=target, options=options)


def _kernel_objects(func, tgt) -> dict[str, bytes]:
    """Object code of the kernel families the graph calls as external symbols (the FFT kernels,
    built for the library's target)."""
    from codegen.graph_fft_common import kernel_precisions

    from ..fft._native import kernel_object

    return {f"fft_{p}": kernel_object(p, tgt)[0] for p in sorted(kernel_precisions(func))}


def _check_outputs(program: ExportedProgram) -> None:
    kinds = {kind for kind, _ in program.traced.out_template}
    if kinds - {"graph"}:
        raise ExportError(
            f"{program.name} returns a Python constant; a library returns only arrays (drop the "
            "constant, or return it as an array computed from an input)"
        )
    if not program.output_specs:
        raise ExportError(f"{program.name} returns no arrays; nothing to compile")


def library_spec(program: ExportedProgram, module, name: str, entry: str, target):
    """The plain-data description (runtime.abi.LibrarySpec) of the compiled function."""
    from runtime.abi import LibrarySpec, SymbolSpec, TensorSpec

    func = module.funcs[entry] if entry in module.funcs else next(iter(module.funcs.values()))
    ins = tuple(  # the declared dims, so the wrapper binds every Dim and checks guards such as M == N
        TensorSpec(
            _c_arg_name(s.name),
            t.dtype.np_name,
            tuple(dim_to_c(d) for d in s.shape),
            tuple(dim_str(d) for d in s.shape),
        )
        for s, t in zip(program.input_specs, func.arg_types, strict=True)
    )
    outs = tuple(
        TensorSpec(
            s.name, t.dtype.np_name, tuple(dim_to_c(d) for d in t.shape), tuple(dim_str(d) for d in t.shape)
        )
        for s, t in zip(program.output_specs, func.result_types, strict=True)
    )
    syms = tuple(SymbolSpec(n, lo, hi) for n, (lo, hi) in program.range_constraints.items())
    guards = tuple((to_c(g), readable(g)) for g in module.guards)
    doc = (
        f"{program.name}: {(program._fn.__doc__ or '').strip().splitlines()[0]}"
        if program._fn.__doc__
        else ""
    )
    from codegen.kernels.parallel import MAX_THREADS
    from codegen.options import library_threads_symbol

    return LibrarySpec(name, entry, ins, outs, syms, guards, f"{target.triple} ({target.cpu})", doc,
                       threads_symbol=library_threads_symbol(name), max_threads=MAX_THREADS)


def _c_arg_name(label: str) -> str:
    return label.replace('"', "'").replace("\\", "/")
