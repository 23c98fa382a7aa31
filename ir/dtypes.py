"""The seven element types of the dialect, their numpy mapping and numpy 2 (NEP 50) promotion."""
from __future__ import annotations

import numpy as np

from .records import record


@record(frozen=True, slots=True)
class DType:
    """An element type. Instances are interned: compare with `is` or `==`."""

    name: str  # textual form in the IR: bool, i32, i64, f32, f64, c64, c128
    np_name: str  # numpy name: bool, int32, ...
    kind: str  # numpy kind letter: b, i, f, c
    bits: int

    @property
    def numpy(self) -> np.dtype:
        return np.dtype(self.np_name)

    @property
    def itemsize(self) -> int:
        return max(1, self.bits // 8)

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    @property
    def is_int(self) -> bool:
        return self.kind == "i"

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def is_inexact(self) -> bool:
        return self.kind in "fc"

    @property
    def real_dtype(self) -> DType:
        """f32 for c64, f64 for c128, itself otherwise."""
        return {"c64": float32, "c128": float64}.get(self.name, self)

    @property
    def complex_dtype(self) -> DType:
        """The complex type holding this one: c64 for f32/c64, c128 otherwise."""
        return complex64 if self.name in ("f32", "c64") else complex128

    def __repr__(self) -> str:
        return f"ir.{self.np_name}"

    def __str__(self) -> str:
        return self.name


bool_ = DType("bool", "bool", "b", 8)
int32 = DType("i32", "int32", "i", 32)
int64 = DType("i64", "int64", "i", 64)
float32 = DType("f32", "float32", "f", 32)
float64 = DType("f64", "float64", "f", 64)
complex64 = DType("c64", "complex64", "c", 64)
complex128 = DType("c128", "complex128", "c", 128)

ALL_DTYPES: tuple[DType, ...] = (bool_, int32, int64, float32, float64, complex64, complex128)
INTS = (int32, int64)
FLOATS = (float32, float64)
COMPLEX = (complex64, complex128)
INEXACT = FLOATS + COMPLEX
NUMERIC = INTS + INEXACT

_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NP = {d.np_name: d for d in ALL_DTYPES}


class UnsupportedDTypeError(TypeError):
    pass


def by_name(name: str) -> DType:
    """The DType spelled `name` in the IR text (also accepts numpy names)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        pass
    try:
        return _BY_NP[name]
    except KeyError:
        raise UnsupportedDTypeError(f"unknown dtype {name!r}; expected one of {sorted(_BY_NAME)}") from None


def from_numpy(dt) -> DType:
    """The DType of a numpy dtype (or anything np.dtype accepts); TypeError when unsupported."""
    if isinstance(dt, DType):
        return dt
    npdt = np.dtype(dt)
    try:
        return _BY_NP[npdt.name]
    except KeyError:
        raise UnsupportedDTypeError(
            f"dtype {npdt} is not supported; expected one of {[d.np_name for d in ALL_DTYPES]}"
        ) from None


def promote(*dtypes: DType) -> DType:
    """numpy 2 promotion of array dtypes (np.result_type over dtypes)."""
    return from_numpy(np.result_type(*(d.numpy for d in dtypes)))


def result_type(*args) -> DType:
    """numpy 2 result type of DTypes and Python scalars (which are weak, NEP 50)."""
    conv = []
    for a in args:
        if isinstance(a, DType):
            conv.append(a.numpy)
        elif isinstance(a, (bool, int, float, complex)):
            conv.append(a)
        else:
            conv.append(np.dtype(a))
    return from_numpy(np.result_type(*conv))
