"""The `aot` command line (also `python -m aot`).

    aot compile FILE.py:FUNC --arg "f64[N,3]" --arg "f32[]" [--dynamic N=1..4096] -o DIR
    aot inspect LIB.so
    aot show FILE.py:FUNC --arg ... --stage graph|ir|llvm|asm|ptx [--format text|dot|svg|png] [-o FILE]
    aot bench LIB.so --arg "f64[1000,3]" [--repeat 100]

Argument specs are `DTYPE[DIMS]` with DTYPE one of bool, i32, i64, f32, f64, c64, c128 (or the
numpy names) and DIMS integers or size names; a name is a dynamic dim (range from --dynamic,
default 1..inf), and equal names are equal sizes.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
import time
from pathlib import Path

import numpy as np

_SPEC = re.compile(r"^\s*([A-Za-z0-9_]+)\s*\[([^\]]*)\]\s*$")


class CliError(Exception):
    """A user error: printed as `aot: error: ...` with exit code 2."""


# --- argument parsing helpers ----------------------------------------------------------------------
def parse_arg_spec(text: str) -> tuple[np.dtype, list]:
    """`f64[N,3]` -> (float64, ["N", 3])."""
    from runtime.abi import SHORT_TO_NUMPY

    m = _SPEC.match(text)
    if m is None:
        raise CliError(f"--arg {text!r}: expected DTYPE[DIMS] such as 'f64[N,3]' or 'f32[]'")
    dt_name, dims_text = m.groups()
    try:
        dtype = np.dtype(SHORT_TO_NUMPY.get(dt_name, dt_name))
    except TypeError:
        raise CliError(
            f"--arg {text!r}: unknown dtype {dt_name!r}; expected one of {sorted(SHORT_TO_NUMPY)}"
        ) from None
    if dtype.name not in SHORT_TO_NUMPY.values():
        raise CliError(
            f"--arg {text!r}: dtype {dtype} is not supported; expected one of {sorted(SHORT_TO_NUMPY)}"
        )
    dims = []
    for d in filter(None, (p.strip() for p in dims_text.split(","))):
        if d.isdigit():
            dims.append(int(d))
        elif d.isidentifier():
            dims.append(d)
        else:
            raise CliError(f"--arg {text!r}: dim {d!r} must be a non-negative integer or a name")
    return dtype, dims


def parse_dynamic(items: list[str]) -> dict[str, tuple[int, int | None]]:
    """`N=1..4096`, `N=2..`, `N=..64` -> {N: (lo, hi)}."""
    out = {}
    for item in items:
        m = re.fullmatch(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(\d*)\s*\.\.\s*(\d*)\s*", item)
        if m is None:
            raise CliError(
                f"--dynamic {item!r}: expected NAME=MIN..MAX (e.g. N=1..4096; either bound may be omitted)"
            )
        name, lo, hi = m.groups()
        lo_v, hi_v = int(lo) if lo else 1, int(hi) if hi else None
        if hi_v is not None and hi_v < lo_v:
            raise CliError(f"--dynamic {item!r}: MAX is below MIN")
        out[name] = (lo_v, hi_v)
    return out


def example_inputs(specs: list[str], dynamic: dict):
    """Example arrays for the specs (dynamic dims at a size inside their range) + dynamic_shapes."""
    from aot.export import Dim

    parsed = [parse_arg_spec(s) for s in specs]
    names = {d for _, dims in parsed for d in dims if isinstance(d, str)}
    unknown = set(dynamic) - names
    if unknown:
        raise CliError(f"--dynamic names {sorted(unknown)} do not appear in any --arg")
    dim_objs = {n: Dim(n, min=dynamic.get(n, (1, None))[0], max=dynamic.get(n, (1, None))[1]) for n in names}
    arrays, shapes = [], []
    rng = np.random.default_rng(0)
    for dtype, dims in parsed:
        shape = tuple(d if isinstance(d, int) else _example_size(dim_objs[d]) for d in dims)
        arrays.append(_random(rng, dtype, shape))
        shapes.append({k: dim_objs[d] for k, d in enumerate(dims) if isinstance(d, str)} or None)
    return tuple(arrays), (tuple(shapes) if names else None)


def _example_size(d) -> int:
    return max(d.min, min(8, d.max if d.max is not None else 8))


def _random(rng, dtype: np.dtype, shape: tuple) -> np.ndarray:
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(-50, 50, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.random(shape) + 1j * rng.random(shape)).astype(dtype)
    return rng.random(shape).astype(dtype)


def load_function(ref: str):
    """`path/to/file.py:func` -> the function object."""
    file, sep, func = ref.rpartition(":")
    if not sep or not file or not func:
        raise CliError(f"{ref!r}: expected FILE.py:FUNC")
    path = Path(file)
    if not path.is_file():
        raise CliError(f"{file}: no such file")
    spec = importlib.util.spec_from_file_location(f"_aot_cli_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent.resolve()))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    obj = module
    for part in func.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise CliError(f"{file} has no function {func!r}")
    if not callable(obj):
        raise CliError(f"{ref} is not callable")
    return obj


# --- commands ----------------------------------------------------------------------------------------
def cmd_compile(ns) -> int:
    import aot

    fn = load_function(ns.function)
    args, shapes = example_inputs(ns.arg, parse_dynamic(ns.dynamic))
    name = ns.name or ns.function.rpartition(":")[2].split(".")[-1]
    out = Path(ns.output)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    path = aot.aot_compile(
        fn,
        args,
        dynamic_shapes=shapes,
        path=out / f"{name}.so",
        target=ns.target,
        options={"num_threads": ns.threads} if ns.threads else None,
    )
    written = sorted(str(p) for p in out.glob(f"{name}*") if p.suffix in (".so", ".h", ".o", ".c"))
    print(f"compiled {ns.function} -> {path} ({1e3 * (time.perf_counter() - t0):.0f} ms)")
    for p in written:
        print(f"  {p}")
    return 0


def cmd_inspect(ns) -> int:
    from runtime.elf import read_header
    from runtime.shared_lib import load_library, needed_libraries

    path = Path(ns.library)
    if not path.is_file():
        raise CliError(f"{path}: no such file")
    hdr = read_header(path.read_bytes()[:64])
    if hdr.type != "shared object":
        return _inspect_object(path, hdr)
    lib = load_library(path)
    print(f"library:     {path}")
    print(f"function:    {lib.name}")
    print(f"signature:   {lib.signature}")
    print(f"abi version: {lib.abi_version}")
    print(f"target:      {lib.target}")
    print(f"elf:         {hdr.bits}-bit {hdr.type}, {hdr.machine}")
    print(f"needed:      {', '.join(needed_libraries(path))}")
    glibc = _newest_glibc(path)
    if glibc:
        print(f"glibc:       >= {glibc}")
    return 0


def _newest_glibc(path: Path) -> str:
    """The newest GLIBC_x.y symbol version the library needs ('' when none)."""
    from runtime.elf import read_version_needs

    versions = [tuple(int(p) for p in v.removeprefix("GLIBC_").split("."))
                for vs in read_version_needs(path).values() for v in vs if v.startswith("GLIBC_")]
    return ".".join(map(str, max(versions))) if versions else ""


def _inspect_object(path: Path, hdr) -> int:
    """An object file for another target cannot be loaded here: report its ELF header, and the
    signature and target recorded in the NAME.h written next to it."""
    print(f"object:      {path}")
    print(f"elf:         {hdr.bits}-bit {hdr.type}, {hdr.machine}")
    header = path.with_suffix(".h")
    if header.is_file():
        for line in header.read_text().splitlines():
            for key in ("Signature:", "Target:"):
                if line.startswith(f" * {key}"):
                    print(f"{key.lower():<12} {line.split(key, 1)[1].strip()}")
    return 0


PICTURE_STAGES = ("graph", "ir")  # the stages `aot show --format dot|svg|png` can draw
FORMATS = ("text", "dot", "svg", "png")


def cmd_show(ns) -> int:
    import aot
    from codegen import CodegenOptions, compile_assembly, lower_module, optimize_ir
    from codegen.targets.foreign import resolve_target
    from ir.printer import print_module

    _check_show_format(ns)
    fn = load_function(ns.function)
    args, shapes = example_inputs(ns.arg, parse_dynamic(ns.dynamic))
    program = aot.export(fn, args, dynamic_shapes=shapes)
    if ns.stage == "graph":
        if ns.format != "text":
            from aot.fx.passes.graph_drawer import FxGraphDrawer

            return _emit_picture(FxGraphDrawer(program.graph_module, program.name).get_dot_graph(), ns)
        return _emit_text(str(program), ns)
    module = program.ir_module()
    if ns.stage == "ir":
        if ns.format != "text":
            from ir.picture import module_to_dot

            return _emit_picture(module_to_dot(module), ns)
        return _emit_text(print_module(module), ns)
    if ns.stage == "ptx":  # the kernels for an NVIDIA GPU (--target cuda:sm_XX; "host" means sm_80)
        from codegen.ptx import compile_ptx

        return _emit_text(compile_ptx(module, "cuda" if ns.target == "host" else ns.target).text, ns)
    target = resolve_target(ns.target)
    llmod = lower_module(module, target, CodegenOptions(num_threads=ns.threads or 1))
    text = optimize_ir(llmod, target) if ns.stage == "llvm" else compile_assembly(llmod, target)
    return _emit_text(str(text), ns)


def _check_show_format(ns) -> None:
    """Refuse what cannot be shown before tracing anything."""
    if ns.format != "text" and ns.stage not in PICTURE_STAGES:
        raise CliError(f"--format {ns.format} draws a picture of --stage graph or --stage ir only; "
                       f"--stage {ns.stage} prints text (drop --format or use --format text)")
    if ns.format == "png" and ns.output is None:
        raise CliError("--format png is binary and is not written to the terminal: give -o FILE.png")


def _emit_text(text: str, ns) -> int:
    """Print `text` as `print` does, or write the same to -o FILE."""
    if ns.output is None:
        print(text)
    else:
        Path(ns.output).write_text(text + "\n")
    return 0


def _emit_picture(dot, ns) -> int:
    """The DOT text (--format dot) or the picture Graphviz renders from it, to stdout or -o FILE."""
    data = dot.to_string().encode() if ns.format == "dot" else dot.create(format=ns.format)
    if ns.output is None:  # dot and svg are text (png was refused before)
        sys.stdout.write(data.decode())
        sys.stdout.flush()
    else:
        Path(ns.output).write_bytes(data)
    return 0


def cmd_bench(ns) -> int:
    from runtime.shared_lib import load_library

    lib = load_library(ns.library)
    args, _ = example_inputs(ns.arg, parse_dynamic(ns.dynamic))
    lib(*args)  # warm up (and check the arguments)
    times = []
    for _ in range(ns.repeat):
        t0 = time.perf_counter()
        lib(*args)
        times.append(time.perf_counter() - t0)
    times.sort()
    print(
        f"{lib.name}{lib.signature}: median {1e6 * times[len(times) // 2]:.1f} us, "
        f"min {1e6 * times[0]:.1f} us over {ns.repeat} calls (through aot_load)"
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="aot",
        description="Compile numpy functions ahead of time to shared "
        "libraries with a C ABI, and inspect them.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add_fn_args(sp):
        sp.add_argument("function", metavar="FILE.py:FUNC", help="the numpy function to compile")
        sp.add_argument(
            "--arg",
            action="append",
            default=[],
            metavar="SPEC",
            help='one per argument, in order: DTYPE[DIMS], e.g. "f64[N,3]" or "f32[]"',
        )
        sp.add_argument(
            "--dynamic",
            action="append",
            default=[],
            metavar="NAME=MIN..MAX",
            help="range of a named dim (default 1..unbounded)",
        )
        sp.add_argument(
            "--target",
            default="host",
            help="host (default), x86-64, x86-64-v2/v3/v4, or an LLVM triple[:cpu]; cuda:sm_XX with --stage ptx",
        )
        sp.add_argument(
            "--threads", type=int, default=0, help="threads for large kernels (default: all cores)"
        )

    c = sub.add_parser(
        "compile",
        help="build NAME.so and NAME.h",
        description="Trace FUNC on example inputs "
        "built from --arg and write NAME.so + NAME.h (NAME.o + NAME_abi.c for a foreign target).",
    )
    add_fn_args(c)
    c.add_argument("-o", "--output", required=True, metavar="DIR", help="output directory")
    c.add_argument("--name", help="library/function name (default: FUNC)")
    c.set_defaults(run=cmd_compile)

    i = sub.add_parser(
        "inspect",
        help="print a library's signature, ABI version and target",
        description="Load LIB.so and print its signature, ABI version, target and NEEDED libraries.",
    )
    i.add_argument("library", metavar="LIB.so")
    i.set_defaults(run=cmd_inspect)

    s = sub.add_parser(
        "show",
        help="print one pipeline stage",
        description="Print the captured graph, the "
        "optimised ir, the optimised LLVM IR, the assembly or the PTX (--target cuda:sm_XX) of FUNC; "
        "the graph and the ir also as pictures (--format dot|svg|png).",
    )
    add_fn_args(s)
    s.add_argument(
        "--stage", choices=("graph", "ir", "llvm", "asm", "ptx"), default="ir", help="stage to print"
    )
    s.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="text (default); for --stage graph or ir also a picture: dot (Graphviz's source), svg or png "
        "(rendered by Graphviz's dot program; png needs -o)",
    )
    s.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    s.set_defaults(run=cmd_show)

    b = sub.add_parser(
        "bench",
        help="time a library call",
        description="Call LIB.so (through aot_load) on "
        "random inputs built from --arg and print the median time.",
    )
    b.add_argument("library", metavar="LIB.so")
    b.add_argument("--arg", action="append", default=[], metavar="SPEC", help="as for compile (static dims)")
    b.add_argument("--dynamic", action="append", default=[], metavar="NAME=MIN..MAX")
    b.add_argument("--repeat", type=int, default=100)
    b.set_defaults(run=cmd_bench)

    k = sub.add_parser(
        "prebuild",
        help="build the runtime's helpers and the FFT kernels ahead of first use",
        description="Build the native code every process would otherwise compile on first use: the "
        "runtime's helpers for this CPU and numpy, and every FFT kernel group of both precisions for "
        "named targets (default: this CPU model), into aot's prebuilt directory (AOT_PREBUILT, default "
        "runtime/prebuilt). make runs it. Skips what is up to date.",
    )
    k.add_argument("--target", action="append", default=[], metavar="NAME",
                   help="FFT kernels for: host (default: this CPU model) or x86-64-v2/v3/v4 (any CPU of "
                   "that level, scheduled for this one); repeatable")
    k.add_argument("--dir", metavar="DIR", help="where to write (default: the directory aot reads)")
    k.add_argument("--force", action="store_true", help="rebuild even what is up to date")
    k.set_defaults(run=cmd_prebuild)
    return p


def cmd_prebuild(ns) -> int:
    from .prebuild import build

    r = build(ns.dir, ns.target or None, force=ns.force)
    fft = r["fft"]
    what = "up to date" if fft["skipped"] else f"{fft['groups']} built"
    print(f"aot prebuild: {r['root']}: runtime helpers {r['helpers']} built; FFT kernels "
          f"({', '.join(fft['targets'])}) {what}; {r['seconds']:.1f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    ns = parser.parse_args(argv)
    from .logs import configure

    configure("progress")  # long first-time work (a large compile, FFT kernels) says so on stderr
    try:
        return ns.run(ns)
    except CliError as e:
        print(f"aot {ns.command}: error: {e}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, OSError, RuntimeError) as e:
        print(f"aot {ns.command}: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
