"""`Parameter`: an ndarray a Module owns as trainable state (torch.nn.Parameter's role)."""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Parameter"]


class Parameter(np.ndarray):
    """An ndarray subclass registered by `Module.__setattr__` as a parameter.

    It shares memory with `data` (like torch's Parameter) and is updated in place
    (`p[...] = new_values`). Arithmetic on it returns plain ndarrays, as torch returns Tensors.
    """

    requires_grad: bool

    def __new__(cls, data: Any = None, requires_grad: bool = True) -> Parameter:
        arr = np.empty(0) if data is None else np.asarray(data)
        obj = arr.view(cls)
        obj.requires_grad = requires_grad
        return obj

    def __array_finalize__(self, obj: Any) -> None:
        self.requires_grad = getattr(obj, "requires_grad", True)

    def __array_wrap__(self, arr: np.ndarray, context: Any = None, return_scalar: bool = False) -> Any:
        out = arr.view(np.ndarray)
        return out[()] if return_scalar else out

    def __repr__(self) -> str:
        return "Parameter containing:\n" + repr(self.view(np.ndarray))

    def __reduce__(self) -> Any:
        return (Parameter, (self.view(np.ndarray).copy(), self.requires_grad))
