"""`ShapeProp`: run a GraphModule on example inputs and record each value's shape and dtype."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..interpreter import Interpreter
from ..node import Node, map_aggregate

__all__ = ["ShapeProp", "TensorMetadata"]


class TensorMetadata(NamedTuple):
    """torch's TensorMetadata fields, for numpy arrays (strides in elements, as torch counts them)."""

    shape: tuple[int, ...]
    dtype: np.dtype
    requires_grad: bool
    stride: tuple[int, ...]
    memory_format: str | None  # "C" or "F" when contiguous that way, else None
    is_quantized: bool
    qparams: dict[str, Any]


def _extract_tensor_metadata(value: Any) -> TensorMetadata:
    arr = np.asarray(value)
    itemsize = arr.dtype.itemsize or 1
    strides = tuple(s // itemsize for s in arr.strides)
    layout = "C" if arr.flags.c_contiguous else "F" if arr.flags.f_contiguous else None
    return TensorMetadata(arr.shape, arr.dtype, bool(getattr(value, "requires_grad", False)), strides,
                          layout, False, {})


class ShapeProp(Interpreter):
    """After `propagate(*args)`, `node.meta['tensor_meta']` holds the TensorMetadata of each array
    value (nested like the value for tuples/lists) and `node.meta['type']` its Python type."""

    def run_node(self, n: Node) -> Any:
        result = super().run_node(n)
        found = False

        def extract(obj: Any) -> Any:
            nonlocal found
            if isinstance(obj, (np.ndarray, np.generic)):
                found = True
                return _extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, extract)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args: Any) -> Any:
        """Run the module on `args`, filling in the metadata; returns its result."""
        return self.run(*args)
