"""aot-opt: read IR text, optionally run passes, print the result (an xdsl-opt / mlir-opt for aot).

    python tools/aot_opt.py demo.air
    python tools/aot_opt.py --passes canonicalize,cse,dce demo.air -o out.air
    cat demo.air | python tools/aot_opt.py --generic --verify -

Exit status: 0 on success, 1 on a parse, verification or pass error (reported on stderr as
`file:line:col: message`), 2 on bad usage.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path


def _load_module_text(path: str) -> str:
    return sys.stdin.read() if path == "-" else Path(path).read_text()


def _run_passes(module, passes: str, verify_each: bool):
    try:
        passes_pkg = importlib.import_module("ir.passes")
    except ImportError as e:
        raise SystemExit(f"aot-opt: --passes needs ir.passes, which cannot be imported ({e})") from None
    return passes_pkg.run_pipeline(module, passes, verify_each=verify_each)


def _verify(module) -> None:
    try:
        verifier = importlib.import_module("ir.verifier")
    except ImportError as e:
        raise SystemExit(f"aot-opt: --verify needs ir.verifier, which cannot be imported ({e})") from None
    verifier.verify(module)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="aot-opt", description=__doc__.split("\n")[0])
    ap.add_argument("input", nargs="?", default="-", help="IR text file (.air); '-' or nothing reads stdin")
    ap.add_argument("--passes", default="", help="comma-separated pass pipeline, e.g. canonicalize,cse,dce")
    ap.add_argument("--generic", action="store_true", help="print every op in the generic form")
    ap.add_argument("--verify", action="store_true",
                    help="verify the module after parsing and after each pass")
    ap.add_argument("-o", "--output", default="-", help="output file ('-': stdout)")
    args = ap.parse_args(argv)

    import aot.ops  # noqa: F401  (the parser checks op names and types against the registry)
    from ir.parser import ParseError, parse_module
    from ir.printer import print_module

    name = "<stdin>" if args.input == "-" else args.input
    try:
        text = _load_module_text(args.input)
    except OSError as e:
        print(f"aot-opt: cannot read {name}: {e.strerror}", file=sys.stderr)
        return 1
    try:
        module = parse_module(text)
        if args.verify:
            _verify(module)
        if args.passes:
            module = _run_passes(module, args.passes, args.verify)
    except ParseError as e:
        print(f"{name}:{e}", file=sys.stderr)
        return 1
    except ValueError as e:  # VerifyError, OpError and unknown pass names are ValueErrors
        print(f"{name}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    out = print_module(module, generic=args.generic)
    if args.output == "-":
        sys.stdout.write(out)
    else:
        Path(args.output).write_text(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
