"""Status codes are defined once (ir/status.py): the JIT's exceptions, the library header's
AOT_STATUS_* and the library wrapper's mapping of entry codes are derived from that table, and the
public library numbers stay what generated headers and examples/c_abi document."""

from __future__ import annotations

import builtins
import re

import numpy as np
import pytest

import runtime
from ir import status
from runtime import abi
from runtime.abi import LibrarySpec, TensorSpec, header_text
from runtime.abi_wrapper import wrapper_source

# the public C ABI: these numbers never change
PUBLIC = {"OK": 0, "INVALID_ARGUMENT": 1, "SHAPE_MISMATCH": 2, "OUT_OF_MEMORY": 3, "INDEX_OUT_OF_RANGE": 4,
          "INTERNAL": 5, "LINALG_ERROR": 6}


def _spec():
    t = TensorSpec("x", "float64", (4,), ("4",))
    return LibrarySpec("lib", "lib__aot_entry", (t,), (t,))


def test_public_library_codes():
    assert status.LIBRARY_CODE == PUBLIC
    assert abi.STATUS_CODE == PUBLIC
    assert {c: n for c, (n, _) in abi.STATUS.items()} == {c: n for n, c in PUBLIC.items()}


def test_header_defines_every_library_code():
    text = header_text(_spec())
    found = dict(re.findall(r"#define AOT_STATUS_(\w+) (\d+)", text))
    assert {n: int(c) for n, c in found.items()} == PUBLIC


def test_wrapper_maps_every_entry_code():
    text = wrapper_source(_spec())
    cases = {int(c): int(lib) for c, lib in re.findall(r"case (\d+): return aot_fail\((\d+),", text)}
    assert cases == {s.code: PUBLIC[s.library] for s in status.ENTRY}
    assert f"default: return aot_fail({PUBLIC['INTERNAL']}," in text
    for s in status.ENTRY:
        assert f'"lib: {s.library_message}"' in text


def test_library_code_of_entry_codes():
    assert status.library_code(0) == 0
    assert status.library_code(status.OUT_OF_MEMORY) == PUBLIC["OUT_OF_MEMORY"]
    assert status.library_code(status.INDEX_OUT_OF_RANGE) == PUBLIC["INDEX_OUT_OF_RANGE"]
    assert status.library_code(status.NEGATIVE_POWER) == PUBLIC["INVALID_ARGUMENT"]
    assert status.library_code(status.ZERO_DIVISION) == PUBLIC["INVALID_ARGUMENT"]
    assert status.library_code(99) == PUBLIC["INTERNAL"]


@pytest.mark.parametrize("entry", status.ENTRY, ids=lambda s: s.name)
def test_jit_exception_of_each_entry_code(entry):
    err = runtime.native_error("fn", entry.code)
    assert isinstance(err, runtime.NativeError)
    linalg = entry.python_error == "LinAlgError"  # numpy's, not a builtin
    expected = np.linalg.LinAlgError if linalg else getattr(builtins, entry.python_error)
    assert isinstance(err, expected)
    assert str(err) == (entry.message if entry.own_message else f"fn: {entry.message}")


def test_entry_codes_unique_and_nonzero():
    codes = [s.code for s in status.ENTRY]
    assert len(set(codes)) == len(codes) and 0 not in codes
    assert all(s.library in status.LIBRARY_CODE for s in status.ENTRY)
    err = runtime.native_error("fn", 77)
    assert type(err) is runtime.NativeError and "77" in str(err)


def test_c_abi_readme_lists_every_library_status():
    """The C ABI's users read the status codes in examples/c_abi/README.md: it must match ir/status.py."""
    from pathlib import Path

    from ir.status import LIBRARY

    text = (Path(__file__).resolve().parents[2] / "examples" / "c_abi" / "README.md").read_text()
    for s in LIBRARY:
        assert f"| `AOT_STATUS_{s.name}` | {s.code} |" in text, s.name
