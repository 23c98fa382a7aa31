"""`python -m aot`: the aot command line (see aot.cli)."""

from __future__ import annotations

import sys

from aot.cli import main

if __name__ == "__main__":
    sys.exit(main())
