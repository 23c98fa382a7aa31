"""Types of the dialect: tensors whose dims are ints or sympy expressions, and scalars (kernel bodies)."""
from __future__ import annotations

from typing import Any

from .dtypes import DType
from .records import record
from .symbols import dim_str, is_static, norm_dim


@record(frozen=True, slots=True)
class TensorType:
    """`f32[s0,128]`: an element type and a shape; dims are Python ints or sympy expressions."""

    dtype: DType
    shape: tuple[Any, ...]

    def __post_init__(self):
        if not isinstance(self.dtype, DType):
            raise TypeError(f"TensorType dtype must be an ir DType, got {self.dtype!r}")
        object.__setattr__(self, "shape", tuple(norm_dim(d) for d in self.shape))
        for d in self.shape:
            if isinstance(d, int) and d < 0:
                raise ValueError(f"negative dimension {d} in tensor type")

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return all(is_static(d) for d in self.shape)

    @property
    def free_symbols(self) -> set:
        out: set = set()
        for d in self.shape:
            if not is_static(d):
                out |= d.free_symbols
        return out

    def numel(self):
        n: Any = 1
        for d in self.shape:
            n = n * d
        return norm_dim(n)

    def with_dtype(self, dtype: DType) -> TensorType:
        return TensorType(dtype, self.shape)

    def with_shape(self, shape) -> TensorType:
        return TensorType(self.dtype, tuple(shape))

    def __str__(self) -> str:
        return f"{self.dtype.name}[{','.join(dim_str(d) for d in self.shape)}]"


@record(frozen=True, slots=True)
class ScalarType:
    """`f32`: one element, the type of values inside fused kernel bodies."""

    dtype: DType

    @property
    def shape(self) -> tuple:
        return ()

    @property
    def rank(self) -> int:
        return 0

    def with_dtype(self, dtype: DType) -> ScalarType:
        return ScalarType(dtype)

    def __str__(self) -> str:
        return self.dtype.name


@record(frozen=True, slots=True)
class IndexType:
    """`index`: a 64-bit loop index or size (used by kernel bodies and the loop level)."""

    @property
    def shape(self) -> tuple:
        return ()

    def __str__(self) -> str:
        return "index"


Type = TensorType | ScalarType | IndexType
