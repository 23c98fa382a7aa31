"""Graph passes (torch.fx.passes)."""
from __future__ import annotations

from . import shape_prop  # noqa: F401
