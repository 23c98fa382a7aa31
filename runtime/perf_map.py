"""Names for generated code in profilers: perf's JIT map, /tmp/perf-PID.map (AOT_PERF_MAP=1).

perf cannot name code that MCJIT put in anonymous memory, nor the code of a shared library loaded
from a memory file (runtime/native_lib.py), so a profile of compiled code shows bare addresses.
With AOT_PERF_MAP=1 in the environment (read once, at import), every generated function loaded
into the process gets a line `START SIZE aot:FUNC:SYMBOL` (START and SIZE in hex) in perf's map
format: FUNC says whose code it is (the compiled Python function, `fft`, `trampoline`) and SYMBOL
is the function's own name (a kernel's says what it computes: codegen/host.py Host.symbol).

The functions and their sizes come from the loaded bytes' symbol table (runtime/elf.py); their
addresses from a global symbol the loader resolves: MCJIT loads each section of an object in one
piece, so a local function lies at addr(global) - value(global) + value(local) of a global of its
section; a shared object's symbols all move by its load base, dlsym(global) - value(global).

The file is opened in append mode, created by this user (one owned by anyone else is refused),
and each load's lines are written at once, under a lock. Off, nothing here runs: callers check
`ENABLED` first. A map that cannot be written costs one warning, never a load.
"""
from __future__ import annotations

import _thread  # not threading: a warm start imports nothing it does not use
import contextvars
import os

from ir.logger import get_logger

log = get_logger(__name__)

ENV_VAR = "AOT_PERF_MAP"
ENABLED = os.environ.get(ENV_VAR, "") not in ("", "0")
_lock = _thread.allocate_lock()
_out: dict[int, int] = {}  # pid -> the open map file's descriptor (a forked child opens its own)
_failed: list[str] = []  # why the map cannot be written (then nothing more is tried)


def _reset_in_child() -> None:  # a lock another thread held at fork() would never be released
    global _lock
    _lock = _thread.allocate_lock()


if ENABLED and hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_in_child)


def path(pid: int | None = None) -> str:
    """The map file perf reads for process `pid` (this one by default)."""
    return f"/tmp/perf-{os.getpid() if pid is None else pid}.map"


def label(text: str) -> str:
    """`text` as one word of a map line's name: no whitespace, no ":" (the name's separator)."""
    return "".join("_" if c.isspace() or c == ":" else c for c in text) or "_"


def function_label(fn) -> str:
    """The FUNC of a Python function's code: its qualified name without `<locals>.` parts."""
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return label(name.replace("<locals>.", ""))


# whose code the current thread's compile or warm start loads: set by aot.compile around them
_owner: contextvars.ContextVar = contextvars.ContextVar("aot_perf_map_owner", default="compiled")


class serving:
    """`with serving(fn):` code loaded meanwhile on this thread is `fn`'s (the FUNC of its lines)."""

    __slots__ = ("fn", "token")

    def __init__(self, fn):
        self.fn = fn

    def __enter__(self):
        self.token = _owner.set(function_label(self.fn)) if ENABLED else None

    def __exit__(self, *exc):
        if self.token is not None:
            _owner.reset(self.token)


def current_owner() -> str:
    """The FUNC for code loaded now on this thread ("compiled" outside any `serving`)."""
    return _owner.get()


def add_object(obj: bytes, address, owner: str, owners: dict | None = None) -> None:
    """Map lines for relocatable object `obj` just loaded into an MCJIT engine; `address(name)`:
    the loaded address of a global symbol (0 when unknown); `owners`: FUNC by symbol name, where
    it is not `owner`."""
    _add(obj, address, owner, owners, per_section=True)


def add_library(data: bytes, address, owner: str, owners: dict | None = None) -> None:
    """Map lines for shared object `data` just loaded (`address`: dlsym; as add_object)."""
    _add(data, address, owner, owners, per_section=False)


def _add(data: bytes, address, owner: str, owners, per_section: bool) -> None:
    from .elf import ElfError, read_function_symbols

    try:
        symbols = read_function_symbols(data)
    except ElfError as e:
        log.warning("perf map: cannot read the symbols of loaded code (%s): it stays unnamed", e)
        return
    bases = _bases(symbols, address, per_section)
    lines, unplaced = [], 0
    for s in symbols:
        base = bases.get(s.section if per_section else None)
        if base is None:
            unplaced += 1
            continue
        func = label((owners or {}).get(s.name, owner))
        lines.append(f"{base + s.value:x} {s.size:x} aot:{func}:{label(s.name)}\n")
    if unplaced:
        log.debug("perf map: %d functions of %s lie in sections without a global symbol", unplaced, owner)
    _write("".join(lines))


def _bases(symbols: list, address, per_section: bool) -> dict:
    """Load base per section (objects) or of the whole file (key None, shared objects), from the
    first global symbol of each that `address` resolves."""
    bases: dict = {}
    for s in symbols:
        key = s.section if per_section else None
        if s.is_global and key not in bases:
            try:
                addr = address(s.name)
            except (KeyError, AttributeError, OSError):
                addr = 0
            if addr:
                bases[key] = addr - s.value
    return bases


def _write(text: str) -> None:
    if not text:
        return
    with _lock:
        if _failed:
            return
        try:
            fd = _open()
            data = memoryview(text.encode())
            while data:
                data = data[os.write(fd, data):]
        except OSError as e:
            _failed.append(str(e))
            log.warning("perf map: cannot write %s (%s): generated code stays unnamed in profiles", path(), e)


def _open() -> int:
    """This process's map file, opened for appending (created if missing, never through a link,
    refused when another user owns it: perf ignores such a file and it is not ours to write)."""
    pid = os.getpid()
    fd = _out.get(pid)
    if fd is None:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path(pid), flags, 0o644)
        st = os.fstat(fd)
        if st.st_uid != os.getuid():
            os.close(fd)
            raise OSError(f"the file is owned by uid {st.st_uid}, not by this user")
        _out[pid] = fd
    return fd
