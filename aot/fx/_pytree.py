"""torch.fx's pytree module path: the implementation lives in aot._pytree, which the warm start of
aot.compile imports without the rest of aot.fx."""
from __future__ import annotations

from .._pytree import LeafSpec, TreeSpec, tree_flatten, tree_flatten_spec, tree_map, tree_unflatten

__all__ = ["TreeSpec", "LeafSpec", "tree_flatten", "tree_unflatten", "tree_map", "tree_flatten_spec"]
