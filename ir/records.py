"""Value classes without dataclasses' cost at import.

Defining a dataclass costs ~0.5 ms on a 2-core VM (dataclasses builds each method's source, execs
it, and inspects annotations and defaults): 30 of them on the path of a first compile cost 16 ms,
an eighth of a cold first call. Two replacements:

- `Record`, for the classes a warm start imports (argument specs, tree specs, guard specs, ELF
  headers, ABI slot layouts): a class writes its own `__slots__` and `__init__`, and gets
  equality, hash, repr, pickling and `replace` from here. Nothing is generated: defining one costs
  what any class costs.
- `@record`, for the compile path's classes: dataclass's declaration (annotated fields, defaults,
  `field(default_factory=..., compare=False)`, `frozen`, `slots`, `__post_init__`) and methods
  (`__init__`, `__eq__`, `__hash__`, `__repr__`, `replace`), made from one exec: ~0.05 ms.
  `dataclasses.replace`/`fields` do not apply to them: `obj.replace(...)` and `record_fields(cls)`.

Treat both as values: they are compared, hashed and used as keys by value.

Plain Python, no dependencies: every package of aot imports it.
"""
from __future__ import annotations

from operator import attrgetter


class Record:
    """Equality, hash and repr over the fields named by the class's `__slots__`."""

    __slots__ = ()

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self._values() == other._values()

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._values()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({inner})"

    def __getstate__(self):
        return self._values()

    def __setstate__(self, state) -> None:
        for name, value in zip(self.__slots__, state, strict=True):
            object.__setattr__(self, name, value)

    def replace(self, **changes):
        """A copy with `changes` (as dataclasses.replace)."""
        new = object.__new__(type(self))
        for name in self.__slots__:
            object.__setattr__(new, name, changes.pop(name, getattr(self, name)))
        if changes:
            raise TypeError(f"{type(self).__name__} has no field(s) {sorted(changes)}")
        return new


# --- @record ----------------------------------------------------------------------------------------

MISSING = type("Missing", (), {"__repr__": lambda self: "MISSING"})()


class FrozenError(AttributeError):
    """Assignment to a field of a frozen record (as dataclasses.FrozenInstanceError)."""


class Field:
    """A field's declaration: `name: type = field(default=..., default_factory=..., compare=...)`."""

    __slots__ = ("compare", "default", "default_factory", "name", "repr")

    def __init__(self, default=MISSING, default_factory=MISSING, compare: bool = True, repr: bool = True):
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.default, self.default_factory, self.compare, self.repr = default, default_factory, compare, repr


def field(*, default=MISSING, default_factory=MISSING, compare: bool = True, repr: bool = True) -> Field:
    return Field(default, default_factory, compare, repr)


def record_fields(cls) -> tuple[Field, ...]:
    """The fields of a @record class (or instance), in declaration order."""
    return cls.__record_fields__


def record(cls=None, /, *, frozen: bool = False, slots: bool = False, eq: bool = True):
    """@dataclass for the compile path: the same declarations and methods, one exec per class."""

    def wrap(c):
        return _make_record(c, frozen, slots, eq)

    return wrap if cls is None else wrap(cls)


def _own_fields(cls) -> list[Field]:
    out = []
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if isinstance(annotation, str) and annotation.split("[", 1)[0] in ("ClassVar", "typing.ClassVar"):
            continue
        value = cls.__dict__.get(name, MISSING)
        f = value if isinstance(value, Field) else Field(default=value)
        if isinstance(f.default, (list, dict, set)):
            raise ValueError(f"mutable default {type(f.default).__name__} for field {name}: use default_factory")
        f.name = name
        out.append(f)
    return out


def _make_record(cls, frozen: bool, slots: bool, eq: bool):
    fields: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        fields.update((f.name, f) for f in getattr(base, "__record_fields__", ()))
    own = _own_fields(cls)
    fields.update((f.name, f) for f in own)
    fs = tuple(fields.values())
    compared = [f.name for f in fs if f.compare]
    class_hash = cls.__dict__.get("__hash__", MISSING)  # defining __eq__ sets it to None
    explicit_hash = not (class_hash is MISSING or (class_hash is None and "__eq__" in cls.__dict__))
    namespace = {"MISSING": MISSING, "_object_setattr": object.__setattr__}
    exec(_init_source(cls, fs, frozen, namespace), namespace)  # noqa: S102 - built here from field names
    methods = {"__init__": namespace["__init__"]}
    methods["__init__"].__qualname__ = f"{cls.__qualname__}.__init__"
    values = _values_getter(compared)  # a C getter: eq and hash at generated code's speed, no compile
    if eq and "__eq__" not in cls.__dict__:
        methods["__eq__"] = _make_eq(values)
    if eq and frozen and not explicit_hash:
        methods["__hash__"] = _make_hash(values)
    if "__repr__" not in cls.__dict__:
        methods["__repr__"] = _record_repr
    for f in own:  # a class attribute keeps a plain default, as on a dataclass
        if isinstance(cls.__dict__.get(f.name), Field):
            delattr(cls, f.name) if f.default is MISSING else setattr(cls, f.name, f.default)
    if slots:
        cls = _with_slots(cls, fs)
    for name, method in methods.items():
        setattr(cls, name, method)
    if eq and not frozen and not explicit_hash:
        cls.__hash__ = None  # mutable and compared by value: unhashable, as a dataclass
    if frozen:
        cls.__setattr__, cls.__delattr__ = _frozen_setattr, _frozen_delattr
    if slots:
        cls.__getstate__, cls.__setstate__ = _slots_getstate, _slots_setstate
    cls.__record_fields__ = fs
    cls.__match_args__ = tuple(f.name for f in fs)
    if "replace" not in cls.__dict__:
        cls.replace = _replace
    return cls


def _init_source(cls, fs, frozen: bool, namespace: dict) -> str:
    params, body = [], []
    for f in fs:
        if f.default_factory is not MISSING:
            namespace[f"_factory_{f.name}"] = f.default_factory
            params.append(f"{f.name}=MISSING")
            value = f"_factory_{f.name}() if {f.name} is MISSING else {f.name}"
        elif f.default is not MISSING:
            namespace[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
            value = f.name
        else:
            if any("=" in p for p in params):
                raise TypeError(f"non-default argument {f.name!r} follows default argument in {cls.__name__}")
            params.append(f.name)
            value = f.name
        body.append(f"_object_setattr(self, {f.name!r}, {value})" if frozen else f"self.{f.name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    lines = "\n    ".join(body or ["pass"])
    return f"def __init__(self, {', '.join(params)}):\n    {lines}\n"


def _values_getter(names: list[str]):
    if not names:
        return lambda obj: ()
    return attrgetter(*names) if len(names) > 1 else (lambda obj, g=attrgetter(names[0]): (g(obj),))


def _make_eq(values):
    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _make_hash(values):
    def __hash__(self):
        return hash(values(self))

    return __hash__


def _record_repr(self) -> str:
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self.__record_fields__ if f.repr)
    return f"{type(self).__qualname__}({shown})"


def _frozen_setattr(self, name, value):
    raise FrozenError(f"cannot assign to field {name!r} of frozen {type(self).__name__}")


def _frozen_delattr(self, name):
    raise FrozenError(f"cannot delete field {name!r} of frozen {type(self).__name__}")


def _slots_getstate(self):
    return tuple(getattr(self, f.name) for f in self.__record_fields__)


def _slots_setstate(self, state) -> None:
    for f, value in zip(self.__record_fields__, state, strict=True):
        object.__setattr__(self, f.name, value)


def _replace(self, **changes):
    """A copy with `changes`, made by `__init__` (as dataclasses.replace: `__post_init__` runs)."""
    for f in self.__record_fields__:
        if f.name not in changes:
            changes[f.name] = getattr(self, f.name)
    return type(self)(**changes)


def _with_slots(cls, fs):
    """A new class with `__slots__` for the fields (as dataclass(slots=True) makes)."""
    names = tuple(f.name for f in fs if f.name not in _inherited_slots(cls))
    body = {k: v for k, v in cls.__dict__.items() if k not in names and k not in ("__dict__", "__weakref__")}
    body["__slots__"] = names
    return type(cls)(cls.__name__, cls.__bases__, body)


def _inherited_slots(cls) -> set:
    out = set()
    for base in cls.__mro__[1:]:
        out.update(base.__dict__.get("__slots__", ()))
    return out
