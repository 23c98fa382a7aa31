"""ir.records.Record (value classes without dataclasses) and ir.logger (logging on first use)."""
from __future__ import annotations

import copy
import pickle
import subprocess
import sys

import numpy as np
import pytest

from ir.records import Record
from runtime.buffers import ArgSpec, Signature


class Pair(Record):
    __slots__ = ("a", "b")

    def __init__(self, a, b=()):
        self.a, self.b = a, b


def test_value_semantics():
    p, q = Pair(1, (2, 3)), Pair(1, (2, 3))
    assert p == q and hash(p) == hash(q) and p != Pair(1, (2,)) and p != (1, (2, 3))
    assert repr(p) == "Pair(a=1, b=(2, 3))" and {p: 1}[q] == 1
    assert p.replace(b=()) == Pair(1) and p.b == (2, 3)
    with pytest.raises(TypeError, match="no field"):
        p.replace(c=1)
    for clone in (pickle.loads(pickle.dumps(p)), copy.copy(p), copy.deepcopy(p)):
        assert clone == p and clone is not p


def test_argspec_and_signature():
    a = ArgSpec(np.dtype(np.float64), (3, "s0"), True)
    assert a.rank == 2 and a == ArgSpec(np.dtype(np.float64), (3, "s0"), True)
    assert a != ArgSpec(np.dtype(np.float64), (3, "s0"))  # the layout is part of the spec
    sig = Signature((a,), (ArgSpec(np.dtype(np.float64), (3,)),), "f")
    assert pickle.loads(pickle.dumps(sig)) == sig and len({sig, pickle.loads(pickle.dumps(sig))}) == 1


_NO_LOGGING = """
import sys
from ir.logger import INFO, get_logger
log = get_logger("aot.test")
log.debug("nothing imports logging for this"); log.info("nor this")
assert "logging" not in sys.modules and not log.isEnabledFor(INFO) and log.isEnabledFor(40)
log.warning("a warning goes out")
assert "logging" in sys.modules
"""


def test_logger_imports_logging_only_when_a_record_can_go_out():
    out = subprocess.run([sys.executable, "-c", _NO_LOGGING], capture_output=True, text=True, check=True)
    assert "a warning goes out" in out.stderr


def test_logger_follows_configured_logging(caplog):
    from ir.logger import get_logger

    with caplog.at_level("DEBUG", logger="aot.test2"):
        get_logger("aot.test2").debug("seen %d", 1)
    assert "seen 1" in caplog.text


# --- @record: dataclass's declarations and methods, made from one exec ------------------------------

from ir.records import FrozenError, field, record, record_fields  # noqa: E402


@record(frozen=True, slots=True)
class Shaped:
    dtype: str
    shape: tuple
    note: str = field(default="", compare=False)

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(self.shape))

    @property
    def rank(self) -> int:
        return len(self.shape)


@record
class Bag:
    name: str
    items: list = field(default_factory=list)
    count: int = 3


def test_record_is_a_frozen_value():
    a = Shaped("f32", [2, 3])  # __post_init__ ran
    assert a.shape == (2, 3) and a.rank == 2 and Shaped.__slots__ == ("dtype", "shape", "note")
    assert a == Shaped("f32", (2, 3), note="other") and hash(a) == hash(Shaped("f32", (2, 3)))  # note: compare=False
    assert a != Shaped("f64", (2, 3)) and a != ("f32", (2, 3))
    assert repr(a) == "Shaped(dtype='f32', shape=(2, 3), note='')"
    with pytest.raises(FrozenError):
        a.dtype = "f64"
    with pytest.raises(AttributeError):  # FrozenError is one, as dataclasses.FrozenInstanceError
        del a.shape
    assert a.replace(shape=[4]) == Shaped("f32", (4,)) and a.shape == (2, 3)
    for clone in (pickle.loads(pickle.dumps(a)), copy.copy(a), copy.deepcopy(a)):
        assert clone == a and clone is not a
    assert [f.name for f in record_fields(Shaped)] == ["dtype", "shape", "note"]
    assert Shaped.__match_args__ == ("dtype", "shape", "note")


def test_mutable_record_takes_factories_and_is_unhashable():
    a, b = Bag("x"), Bag("x")
    a.items.append(1)
    assert b.items == [] and a != b and Bag("x", [1], 3) == a and Bag.count == 3
    a.count = 4  # not frozen
    with pytest.raises(TypeError):
        hash(a)  # compared by value and mutable: as a dataclass
    assert pickle.loads(pickle.dumps(a)) == a


def test_record_declaration_errors():
    with pytest.raises(ValueError, match="default_factory"):
        record(type("Bad", (), {"__annotations__": {"xs": "list"}, "xs": []}))
    with pytest.raises(TypeError, match="follows default"):
        record(type("Bad", (), {"__annotations__": {"a": "int", "b": "int"}, "a": 1}))


def test_record_keeps_methods_the_class_defines():
    @record(frozen=True)
    class Named:
        name: str

        def __repr__(self):
            return f"<{self.name}>"

        def __eq__(self, other):
            return isinstance(other, Named) and self.name.lower() == other.name.lower()

        def __hash__(self):
            return hash(self.name.lower())

    assert repr(Named("A")) == "<A>" and Named("A") == Named("a") and len({Named("A"), Named("a")}) == 1


_COLD = """
import sys, numpy as np, aot
f = aot.compile(lambda x, y: np.sin(x) * np.exp(-y) + x * y / (1 + y * y))
x = np.linspace(0, 1, 100)
f(x, x + 1)
print(sorted(m for m in ("dataclasses", "logging", "platformdirs", "sympy") if m in sys.modules))
"""


def test_a_cold_compile_imports_no_dataclasses_logging_or_platformdirs(tmp_path):
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}  # the default cache directory, empty
    out = subprocess.run([sys.executable, "-c", _COLD], env=env, check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
