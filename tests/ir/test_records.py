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
