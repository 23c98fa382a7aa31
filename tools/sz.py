#!/usr/bin/env python3
"""Lines per module, largest first; exits non-zero when a module exceeds the budget (tinygrad's sz.py)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("aot", "ir", "codegen", "runtime", "tools")


def count(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip() and not line.lstrip().startswith("#"))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--budget", type=int, default=1000, help="lines of code allowed per module")
    p.add_argument("--top", type=int, default=25)
    args = p.parse_args(argv)
    rows = sorted(((count(f), f.relative_to(ROOT)) for pkg in PACKAGES for f in (ROOT / pkg).rglob("*.py")),
                  reverse=True)
    for n, f in rows[: args.top]:
        print(f"{n:6d}  {f}")
    total = sum(n for n, _ in rows)
    print(f"{total:6d}  total in {len(rows)} modules")
    over = [(n, f) for n, f in rows if n > args.budget]
    for n, f in over:
        print(f"over budget ({args.budget}): {f} has {n} lines", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
