"""Graph passes (torch.fx.passes): ShapeProp, and FxGraphDrawer (graph pictures, loaded on first use)."""
from __future__ import annotations

import importlib

from . import shape_prop

__all__ = ["FxGraphDrawer", "graph_drawer", "shape_prop"]


def __getattr__(name: str):
    # the drawer and its DOT builder are not needed to trace or compile: `import aot.fx` stays as cheap
    if name == "graph_drawer":
        return importlib.import_module(f"{__name__}.graph_drawer")
    if name == "FxGraphDrawer":
        return importlib.import_module(f"{__name__}.graph_drawer").FxGraphDrawer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
