"""Regenerate tests/golden/ir/*.air from their sources (tests/ir/golden_sources.py).

    python tools/update_golden.py            # rewrite changed files, print a unified diff of each
    python tools/update_golden.py --check    # only report; exit 1 if any file would change

Review the printed diff before committing: a golden change is a change of the textual IR.
"""
from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOLDEN_DIR = ROOT / "tests" / "golden" / "ir"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="report differences without writing")
    ap.add_argument("names", nargs="*", help="golden names to regenerate (default: all)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from tests.ir import golden_sources  # the sources live next to the tests that check them

    names = args.names or sorted(golden_sources.GOLDEN)
    unknown = set(names) - set(golden_sources.GOLDEN)
    if unknown:
        ap.error(f"unknown golden name(s) {sorted(unknown)}; "
                 f"expected some of {sorted(golden_sources.GOLDEN)}")
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    changed = 0
    for name in names:
        path = GOLDEN_DIR / f"{name}.air"
        new = golden_sources.render(name)
        old = path.read_text() if path.exists() else ""
        if new == old:
            continue
        changed += 1
        rel = path.relative_to(ROOT)
        diff = difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{rel}", f"b/{rel}")
        sys.stdout.writelines(diff)
        if not args.check:
            path.write_text(new)
    stale = sorted(p.name for p in GOLDEN_DIR.glob("*.air") if p.stem not in golden_sources.GOLDEN)
    for s in stale:
        print(f"stale golden file without a source: {GOLDEN_DIR.relative_to(ROOT) / s}")
    verb = "differ" if args.check else "updated"
    print(f"{changed} of {len(names)} golden file(s) {verb}", file=sys.stderr)
    return 1 if (args.check and changed) or stale else 0


if __name__ == "__main__":
    sys.exit(main())
