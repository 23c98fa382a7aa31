"""`aot.Dim` and torch.export's `dynamic_shapes` argument, resolved to per-leaf symbolic dims."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

INT64_MAX = 2**63 - 1


class ExportError(ValueError):
    """The function cannot be exported as asked; the message suggests how to fix it."""


@dataclass(frozen=True)
class Dim:
    """A named dynamic dimension with an inclusive range, as torch.export.Dim.

    Using the same Dim (or the same name) in several places says those sizes are equal. Sizes
    are positive (aot specialises empty arrays), so `min` is at least 1."""

    name: str
    min: int = 1
    max: int | None = None  # None: unbounded

    def __init__(self, name: str, *, min: int | None = None, max: int | None = None):
        if not isinstance(name, str) or not name.isidentifier() or name.startswith(("_", "aot_", "INT64_")):
            raise ValueError(
                f"Dim name must be a Python identifier not starting with '_', 'aot_' or 'INT64_' "
                f"(names the generated C reserves), got {name!r}"
            )
        lo = 1 if min is None else int(min)
        hi = None if max is None or max >= INT64_MAX else int(max)
        if lo < 1:
            raise ValueError(
                f"Dim {name!r}: min must be >= 1 (dynamic sizes are positive; empty arrays need a "
                f"static dim of size 0), got {lo}"
            )
        if hi is not None and hi < lo:
            raise ValueError(f"Dim {name!r}: max ({hi}) is below min ({lo})")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "min", lo)
        object.__setattr__(self, "max", hi)

    def __repr__(self) -> str:
        hi = "inf" if self.max is None else self.max
        return f"Dim({self.name!r}, min={self.min}, max={hi})"

    def contains(self, n: int) -> bool:
        return n >= self.min and (self.max is None or n <= self.max)


def arg_names(fn, n_args: int) -> list[str]:
    try:
        params = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    return [params[i].name if i < len(params) else f"arg{i}" for i in range(n_args)]


def resolve_dynamic_shapes(fn, args: tuple, kwargs: dict, dynamic_shapes) -> dict[tuple[int, int], Dim]:
    """{(flat leaf index, dim): Dim} for torch.export's `dynamic_shapes` (a dict keyed by argument
    name, or a tuple/list in argument order; per array a dict {dim: Dim} or a sequence of Dim/None).
    Arrays must be top-level arguments (nested containers are not supported yet)."""
    if dynamic_shapes is None:
        return {}
    names = arg_names(fn, len(args))
    per_arg = _per_argument(dynamic_shapes, names, args, kwargs)
    leaf, out = 0, {}
    by_name: dict[str, Dim] = {}
    sizes: dict[str, tuple[str, int]] = {}  # Dim name -> (where, example size)
    values = list(args) + [kwargs[k] for k in kwargs]
    labels = names + list(kwargs)
    for label, value in zip(labels, values, strict=True):
        spec = per_arg.get(label)
        n_leaves = _count_leaves(value)
        if spec is not None:
            if not isinstance(value, np.ndarray):
                raise ExportError(
                    f"dynamic_shapes[{label!r}]: only numpy array arguments can have dynamic dims, "
                    f"got {type(value).__name__}"
                )
            for k, d in _dims_of(spec, label, value.ndim).items():
                _check_dim(d, label, k, value, by_name)
                where, size = sizes.setdefault(d.name, (f"{label}.shape[{k}]", value.shape[k]))
                if size != value.shape[k]:
                    raise ExportError(
                        f"{where} = {size} and {label}.shape[{k}] = {value.shape[k]} share Dim "
                        f"{d.name!r} but differ; suggested fix: use different Dims for them"
                    )
                out[(leaf, k)] = by_name.setdefault(d.name, d)
        leaf += n_leaves
    return out


def _per_argument(spec, names, args, kwargs) -> dict:
    if isinstance(spec, dict):
        unknown = set(spec) - set(names) - set(kwargs)
        if unknown:
            raise ExportError(
                f"dynamic_shapes names unknown argument(s) {sorted(unknown)}; the arguments are "
                f"{names + list(kwargs)}"
            )
        return spec
    if isinstance(spec, (tuple, list)):
        if len(spec) != len(args):
            raise ExportError(
                f"dynamic_shapes has {len(spec)} entries for {len(args)} positional argument(s); "
                "give one entry (None for static) per argument, or a dict keyed by argument name"
            )
        return dict(zip(names, spec, strict=True))
    raise ExportError(
        f"dynamic_shapes must be a dict keyed by argument name or a tuple, got {type(spec).__name__}"
    )


def _dims_of(spec, label: str, ndim: int) -> dict[int, Dim]:
    if isinstance(spec, dict):
        items = spec.items()
    elif isinstance(spec, (tuple, list)):
        if len(spec) != ndim:
            raise ExportError(f"dynamic_shapes[{label!r}] lists {len(spec)} dims but {label} has {ndim}")
        items = enumerate(spec)
    else:
        raise ExportError(
            f"dynamic_shapes[{label!r}] must be a dict {{dim: Dim}} or a sequence of Dim/None, "
            f"got {type(spec).__name__}"
        )
    out = {}
    for k, d in items:
        if d is None:
            continue
        if not isinstance(k, int) or not -ndim <= k < ndim:
            raise ExportError(
                f"dynamic_shapes[{label!r}]: dim {k!r} is out of range for an array of {ndim} dims"
            )
        if not isinstance(d, Dim):
            raise ExportError(f"dynamic_shapes[{label!r}][{k}] must be an aot.Dim or None, got {d!r}")
        out[k % ndim] = d
    return out


def _check_dim(d: Dim, label: str, k: int, value: np.ndarray, by_name: dict[str, Dim]) -> None:
    size = value.shape[k]
    prev = by_name.get(d.name)
    if prev is not None and (prev.min, prev.max) != (d.min, d.max):
        raise ExportError(
            f"two different Dims are named {d.name!r} ({prev} and {d}); give them one range or "
            "different names"
        )
    if not d.contains(size):
        raise ExportError(
            f"{label}.shape[{k}] = {size} is outside the range of {d}; suggested fix: widen the "
            f"range (e.g. aot.Dim({d.name!r}, min={min(d.min, size)}, "
            f"max={d.max if d.max is None else max(d.max, size)})) or pass an example inside it"
        )


def _count_leaves(value) -> int:
    from ..fx._pytree import tree_flatten

    return len(tree_flatten(value)[0])
