"""How a dimension may vary (DimDynamic), user constraints on it, and where it came from (sources).

These mirror torch.fx.experimental.symbolic_shapes and torch._guards: a *source* names the
origin of a size in guard text (`L['x'].size()[0]`), a *constraint* is what the user asked for
(`Dim("N", min=2, max=64)` becomes a StrictMinMaxConstraint) and a *symbolic context* carries
both for one input array.
"""
from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from aot.shapes.value_ranges import ValueRanges


class DimDynamic(enum.Enum):
    """How `ShapeEnv.create_symbol` treats one dimension (torch's members and meanings)."""

    DYNAMIC = 0  # a fresh symbol, never shared with equal sizes
    DUCK = 1  # a symbol shared with every other dimension of the same size (duck sizing)
    STATIC = 2  # the concrete value; no symbol
    SIZE_LIKE = 3  # a symbol treated as a size (>= 0) even in size-oblivious reasoning
    UNBACKED = 4  # no hint: a data-dependent size
    INFER_STRIDE = 5  # a stride derived from the sizes
    OBLIVIOUS_SIZE = 6  # like SIZE_LIKE, and guards on it are evaluated size-obliviously


# ---- errors -----------------------------------------------------------------------------------
class ConstraintViolationError(RuntimeError):
    """A user constraint on a dynamic dimension cannot hold given the guards the program needs."""


class GuardOnDataDependentSymNode(RuntimeError):
    """A guard would be needed on a size that has no hint (an unbacked, data-dependent symbol)."""


# ---- constraints ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Constraint:
    warn_only: bool


@dataclass(frozen=True)
class StrictMinMaxConstraint(Constraint):
    """The dimension must stay symbolic with every value in `vr` valid (torch.export `Dim`)."""

    vr: ValueRanges

    def render(self, source) -> str:
        return f"{self.vr.lower} <= {as_source(source).name()} <= {self.vr.upper}"


@dataclass(frozen=True)
class RelaxedUnspecConstraint(Constraint):
    """The dimension should stay symbolic, but specialisation is allowed (mark_dynamic-lite)."""

    def render(self, source) -> str:
        return f"RelaxedUnspecConstraint({as_source(source).name()})"


@dataclass(frozen=True)
class EqualityConstraint(Constraint):
    """Dimensions the user declared equal (`source_pairs`) or derived (`(src, root, fn)`)."""

    source_pairs: list = field(default_factory=list)
    derived_equalities: list = field(default_factory=list)  # (source, root source, fn(root_expr))
    warn_only: bool = False

    def render(self) -> str:
        pairs = [f"{as_source(a).name()} == {as_source(b).name()}" for a, b in self.source_pairs]
        return "\n".join(pairs)


DimConstraint = StrictMinMaxConstraint | RelaxedUnspecConstraint | None


# ---- symbolic contexts ------------------------------------------------------------------------
@dataclass(frozen=True)
class SymbolicContext:
    """How to symbolicize one input; subclasses say per dimension."""


@dataclass(frozen=True)
class StatelessSymbolicContext(SymbolicContext):
    """Per-dimension `DimDynamic` and constraint, fixed for the whole tracing run."""

    dynamic_sizes: Sequence[DimDynamic]
    constraint_sizes: Sequence[DimConstraint] | None = None

    def __post_init__(self):
        if self.constraint_sizes is None:
            object.__setattr__(self, "constraint_sizes", [None] * len(self.dynamic_sizes))
        if len(self.constraint_sizes) != len(self.dynamic_sizes):
            raise ValueError(
                f"StatelessSymbolicContext: {len(self.dynamic_sizes)} dynamic_sizes but "
                f"{len(self.constraint_sizes)} constraint_sizes; they describe the same dims"
            )


# ---- sources ----------------------------------------------------------------------------------
class Source:
    """The origin of a value, printed in guards as Python code over the locals `L`."""

    def name(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.name()


@dataclass(frozen=True)
class LocalSource(Source):
    local_name: str

    def name(self) -> str:
        return f"L[{self.local_name!r}]"


@dataclass(frozen=True)
class ConstantSource(Source):
    """A source given as its printed form (any string)."""

    source_name: str

    def name(self) -> str:
        return self.source_name


class TensorProperty(enum.Enum):
    SIZE = 0
    STRIDE = 1
    STORAGE_OFFSET = 2


@dataclass(frozen=True)
class TensorPropertySource(Source):
    base: Source
    prop: TensorProperty
    idx: int | None = None

    def name(self) -> str:
        if self.prop is TensorProperty.SIZE:
            return f"{self.base.name()}.size()[{self.idx}]"
        if self.prop is TensorProperty.STRIDE:
            return f"{self.base.name()}.stride()[{self.idx}]"
        return f"{self.base.name()}.storage_offset()"


def as_source(source) -> Source:
    """A Source for `source`: Sources pass through, strings become their printed form."""
    if isinstance(source, Source):
        return source
    if isinstance(source, str):
        return ConstantSource(source)
    if hasattr(source, "name") and callable(source.name):
        return ConstantSource(source.name())
    raise TypeError(f"a source must be a Source or a str, got {type(source).__name__}")


def input_source(source) -> Source:
    """The source of a whole input: a bare identifier `x` becomes the local `L['x']`."""
    if isinstance(source, str) and source.isidentifier():
        return LocalSource(source)
    return as_source(source)


SourceFn = Callable[[Source], str]
