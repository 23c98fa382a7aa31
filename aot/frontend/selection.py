"""x[mask] for a traced boolean mask: a selection whose length is only known when the code runs.

numpy returns the selected elements as a new array; its length depends on the data, so traced
code cannot hold it. What programs mostly do with it is reduce it (`x[x > 0].sum()`,
`x[m].mean()`, `np.max(x[m])`), and a reduction of a selection is the same reduction of x with
numpy's own `where=` mask (numpy/_core/_methods.py computes mean and var with where= the same way).
So `MaskedSelection` keeps (x, mask) and implements the reductions, and elementwise ufuncs and
operators on selections of one mask (`(x[m] ** 2).sum()`), through that rewrite; anything else
that would need the selection's length raises UnsupportedError naming the construct and the
alternative.

A mask with fewer dims than x selects along the leading dims (rows for a 2-D x and a 1-D mask):
the selection's first axis stands for the mask's dims, its other axes are x's remaining ones.
max/min of a selection that selected nothing fail at run time with numpy's ValueError (the
`require` op); mean of one is nan, as numpy's (which also warns).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ir import dtypes as irdt

from . import numpy_reductions as red
from .emitter import Emitter, abstract_of
from .numpy_shape import expand_dims
from .numpy_ufuncs import apply_ufunc, emit
from .operands import UnsupportedError, cast, is_python_scalar, normalize_axes

_NoValue = np._NoValue
_ALTERNATIVE = ("use a reduction of it (x[m].sum(), .mean(), .max(), ...), np.where(m, x, fill) to keep "
                "the shape, or np.count_nonzero(m) for its length")


def data_dependent(what: str) -> UnsupportedError:
    return UnsupportedError(f"{what} has a data-dependent shape (known only when the compiled code runs) and "
                            f"is not supported in traced code; {_ALTERNATIVE}")


class MaskedSelection:
    """x[mask] with `mask` a traced bool array of x's leading dims (see the module docstring)."""

    def __init__(self, em: Emitter, x: Any, mask: Any):
        self.em, self.x, self.mask = em, x, mask
        self.k = abstract_of(mask).ndim  # x's dims the selection's first axis stands for

    # --- what it is ------------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return 1 + abstract_of(self.x).ndim - self.k

    @property
    def dtype(self) -> np.dtype:
        return abstract_of(self.x).dtype.numpy

    def __len__(self):
        raise data_dependent("len(x[mask])")

    def __getattr__(self, name: str):
        if name.startswith("__"):  # protocol lookups (hasattr) must see an AttributeError
            raise AttributeError(name)
        raise data_dependent(f"x[mask].{name}")

    def __repr__(self) -> str:
        return f"<traced selection x[mask] of {self.dtype}, {self.ndim}-d>"

    def _mask_for(self, x: Any):
        """The mask broadcast over x's trailing dims (x has the selected array's shape)."""
        n = abstract_of(x).ndim
        m = expand_dims(self.em, self.mask, tuple(range(self.k, n))) if n > self.k else self.mask
        return red.where_mask(self.em, m, x, "reduction")

    def _axes(self, axis: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(x's axes to reduce, the selection's axes reduced) for a reduction over `axis` of the
        selection; the selection's axis 0 must be among them (else the result has its length)."""
        sel = normalize_axes(axis, self.ndim)
        if 0 not in sel:
            raise data_dependent(f"a reduction of x[mask] over axis {axis} (not over the selection's axis 0)")
        return tuple(range(self.k)) + tuple(self.k + a - 1 for a in sel if a), sel

    def _finish(self, r: Any, sel_axes: tuple[int, ...], keepdims: Any):
        """keepdims=True: one unit dim per reduced selection axis (the mask's dims count as one)."""
        if keepdims is _NoValue or not keepdims:
            return r
        return expand_dims(self.em, r, sel_axes)

    # --- reductions -------------------------------------------------------------------------------
    def _reduce(self, fn, axis: Any, keepdims: Any, **kwargs):
        axes, sel = self._axes(axis)
        r = fn(self.em, self.x, axis=axes, where=self._mask_for(self.x), **kwargs)
        return self._finish(r, sel, keepdims)

    def sum(self, axis=None, dtype=None, out=None, keepdims=_NoValue, initial=_NoValue, where=_NoValue):
        self._plain("sum", out, where)
        return self._reduce(red.np_sum, axis, keepdims, dtype=dtype, initial=initial)

    def prod(self, axis=None, dtype=None, out=None, keepdims=_NoValue, initial=_NoValue, where=_NoValue):
        self._plain("prod", out, where)
        return self._reduce(red.np_prod, axis, keepdims, dtype=dtype, initial=initial)

    def mean(self, axis=None, dtype=None, out=None, keepdims=_NoValue, *, where=_NoValue):
        self._plain("mean", out, where)
        return self._reduce(red.np_mean, axis, keepdims, dtype=dtype)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=_NoValue, *, where=_NoValue, mean=_NoValue,
            correction=_NoValue):
        self._plain("var", out, where)
        return self._reduce(red.np_var, axis, keepdims, dtype=dtype, ddof=ddof, correction=correction)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=_NoValue, *, where=_NoValue, mean=_NoValue,
            correction=_NoValue):
        self._plain("std", out, where)
        return self._reduce(red.np_std, axis, keepdims, dtype=dtype, ddof=ddof, correction=correction)

    def any(self, axis=None, out=None, keepdims=_NoValue, *, where=_NoValue):
        self._plain("any", out, where)
        return self._reduce(red.np_any, axis, keepdims)

    def all(self, axis=None, out=None, keepdims=_NoValue, *, where=_NoValue):
        self._plain("all", out, where)
        return self._reduce(red.np_all, axis, keepdims)

    def max(self, axis=None, out=None, keepdims=_NoValue, initial=_NoValue, where=_NoValue):
        self._plain("max", out, where)
        return self._extremum(red.np_max, "maximum", axis, keepdims, initial)

    def min(self, axis=None, out=None, keepdims=_NoValue, initial=_NoValue, where=_NoValue):
        self._plain("min", out, where)
        return self._extremum(red.np_min, "minimum", axis, keepdims, initial)

    def _extremum(self, fn, ufunc: str, axis: Any, keepdims: Any, initial: Any):
        """With no `initial`, numpy raises for an empty selection: the masked-out elements take the
        dtype's extreme (which never wins), and a run-time check requires one selected element."""
        if initial is not _NoValue:
            return self._reduce(fn, axis, keepdims, initial=initial)
        r = self._reduce(fn, axis, keepdims, initial=_losing_extreme(self.dtype, ufunc))
        some = red.reduce(self.em, "any", self.mask, tuple(range(self.k)), False)
        return emit(self.em, "require", r, some, status="EMPTY_MAXIMUM" if ufunc == "maximum" else "EMPTY_MINIMUM")

    def argmax(self, *args, **kwargs):
        raise data_dependent("x[mask].argmax() (an index into the selection)")

    def argmin(self, *args, **kwargs):
        raise data_dependent("x[mask].argmin() (an index into the selection)")

    @staticmethod
    def _plain(fname: str, out: Any, where: Any) -> None:
        if out is not None:
            raise UnsupportedError(f"x[mask].{fname}: the `out` argument is not supported in traced code")
        if where is not _NoValue and where is not True:
            raise UnsupportedError(f"x[mask].{fname}: a `where` mask on a selection is not supported; combine "
                                   f"the masks instead: x[m & w].{fname}()")

    # --- numpy protocols ----------------------------------------------------------------------------
    def __array_function__(self, func, types, args, kwargs):
        name = getattr(func, "__name__", "")
        method = _FUNCTIONS.get(name)
        if method is None or not args or args[0] is not self:
            raise data_dependent(f"np.{name}(x[mask])")
        return getattr(self, method)(*args[1:], **kwargs)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or ufunc.nout != 1 or kwargs.get("out") is not None:
            raise data_dependent(f"np.{ufunc.__name__}.{method}(x[mask])" if method != "__call__"
                                 else f"np.{ufunc.__name__}(x[mask], out=...)")
        return self._elementwise(ufunc, inputs, kwargs)

    def _elementwise(self, ufunc, inputs: tuple, kwargs: dict):
        """ufunc on selections of this mask and scalars: the selection of ufunc on the arrays."""
        operands = []
        for v in inputs:
            if isinstance(v, MaskedSelection):
                if v.mask is not self.mask:
                    raise data_dependent("an operation on selections of different masks")
                operands.append(v.x)
            elif is_python_scalar(v) or (isinstance(v, np.generic)) or (isinstance(v, np.ndarray) and v.ndim == 0):
                operands.append(v)
            else:
                raise data_dependent(f"np.{ufunc.__name__} of x[mask] and an array")
        return MaskedSelection(self.em, apply_ufunc(self.em, ufunc, *operands, **kwargs), self.mask)

    def __array__(self, dtype=None, copy=None):
        raise data_dependent("np.asarray(x[mask])")

    def astype(self, dtype, copy=True):
        return MaskedSelection(self.em, cast(self.em, self.x, irdt.from_numpy(np.dtype(dtype))), self.mask)

    def __getitem__(self, key):
        raise data_dependent("indexing x[mask]")

    def __bool__(self):
        raise data_dependent("bool(x[mask])")

    def __iter__(self):
        raise data_dependent("iterating over x[mask]")


def _losing_extreme(dt: np.dtype, ufunc: str):
    """The value that never wins `ufunc` for dtype dt (-inf for a float maximum, the int minimum, ...)."""
    low = ufunc == "maximum"
    if dt.kind == "b":
        return not low
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return int(info.min if low else info.max)
    inf = -np.inf if low else np.inf
    return complex(inf, inf) if dt.kind == "c" else inf


_FUNCTIONS = {"sum": "sum", "prod": "prod", "mean": "mean", "var": "var", "std": "std", "any": "any",
              "all": "all", "max": "max", "amax": "max", "min": "min", "amin": "min"}

_OPERATORS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
              "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "and": np.bitwise_and,
              "or": np.bitwise_or, "xor": np.bitwise_xor, "lt": np.less, "le": np.less_equal, "gt": np.greater,
              "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal}


def _binary(ufunc, reflected: bool):
    def method(self, other):
        return self._elementwise(ufunc, (other, self) if reflected else (self, other), {})
    return method


for _name, _ufunc in _OPERATORS.items():
    setattr(MaskedSelection, f"__{_name}__", _binary(_ufunc, False))
    if _name not in ("lt", "le", "gt", "ge", "eq", "ne"):
        setattr(MaskedSelection, f"__r{_name}__", _binary(_ufunc, True))
MaskedSelection.__neg__ = lambda self: self._elementwise(np.negative, (self,), {})
MaskedSelection.__abs__ = lambda self: self._elementwise(np.absolute, (self,), {})
MaskedSelection.__invert__ = lambda self: self._elementwise(np.invert, (self,), {})
MaskedSelection.__hash__ = object.__hash__
