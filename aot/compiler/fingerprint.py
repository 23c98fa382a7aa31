"""What a function's compiled code depends on, hashed before tracing: the key of a warm start.

A warm start (warm_start.py) loads native code compiled by an earlier process without tracing the
function again, so the key must change whenever tracing could give another graph:

- the function's code and, recursively, that of every Python function it can reach through its
  globals, closure cells and defaults (a callee edited in another module changes the key; so does
  `import helpers; helpers.g(x)`, whose attribute `g` is followed through the module);
- the values of the scalars, strings and tuples it reads there (a changed global constant);
- the arguments' types, dtypes and shapes;
- numpy's, Python's and aot's versions, a stamp of aot's own sources (their sizes and mtimes),
  the machine and its CPU features, the thread count and the compile options.

Anything the key cannot describe (a global array, an object of a user class, a keyword argument,
a Python scalar argument) makes `function_key` return None, and the call takes the ordinary path.
Functions of numpy and aot themselves are named, not hashed: their versions are in the key.
"""
from __future__ import annotations

import functools
import marshal
import os
import sys
import types

import numpy as np

from ir.digest import sha256

_SCALARS = (type(None), bool, int, float, complex, str, bytes)
_NAMED_PACKAGES = ("numpy", "aot", "math", "builtins", "operator", "functools", "cmath")
_MAX_DEPTH = 32  # reachable functions followed; deeper programs are not warm-started


class Unkeyable(Exception):
    """A value the key cannot describe: the call is not warm-started."""


def function_key(fn, args: tuple, kwargs: dict, settings: str, dynamic=False) -> str | None:
    """Hex digest of everything `fn(*args)`'s compiled code depends on (see the module docstring),
    with `settings` (the compile options) mixed in; None when some part cannot be keyed. `dynamic`:
    the (argument, dim) pairs a symbolic compile leaves open (True: every dim), keyed as "?": the
    entry's guards, stored with it, then decide whether it serves a call."""
    if kwargs or not all(type(a) is np.ndarray for a in args):
        return None
    env = environment_stamp()
    if env is None:
        return None
    h = sha256()
    h.update(env.encode())
    h.update(settings.encode())
    for i, a in enumerate(args):  # the layout too: the code may read an argument as C-contiguous
        shape = a.shape if dynamic is False else \
            tuple("?" if dynamic is True or (i, d) in dynamic else n for d, n in enumerate(a.shape))
        h.update(f"{a.dtype.str}{shape}{'C' if a.flags.c_contiguous else 'A'}".encode())
    try:
        _function(fn, h, {}, 0)
    except (Unkeyable, RecursionError):
        return None
    return h.hexdigest()


def _function(fn, h, seen: dict, depth: int) -> None:
    inner = getattr(fn, "_orig", None)  # an aot.compile'd callee: its function is what is traced
    if inner is not None and getattr(type(fn), "__module__", "").startswith("aot."):
        fn = inner
    if not isinstance(fn, types.FunctionType):
        raise Unkeyable(f"not a Python function: {type(fn).__name__}")
    if id(fn) in seen:
        h.update(b"@" + str(seen[id(fn)]).encode())  # recursion: a back reference
        return
    if depth > _MAX_DEPTH:
        raise Unkeyable("too deep")
    seen[id(fn)] = len(seen)
    code = fn.__code__
    h.update(marshal.dumps(code))  # bytecode, constants, names, nested code objects
    for cell in fn.__closure__ or ():
        try:
            _value(cell.cell_contents, h, seen, depth, ())
        except ValueError:  # an unbound cell
            h.update(b"<unbound>")
    _value(fn.__defaults__, h, seen, depth, ())
    _value(fn.__kwdefaults__ and tuple(sorted(fn.__kwdefaults__.items())), h, seen, depth, ())
    names = _names(code)
    g = fn.__globals__
    for name in names:
        if name in g:
            h.update(name.encode())
            _value(g[name], h, seen, depth, names)


def _names(code) -> tuple[str, ...]:
    """Every global or attribute name `code` and its nested code objects mention."""
    out = list(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out += _names(c)
    return tuple(dict.fromkeys(out))


def _value(v, h, seen: dict, depth: int, names: tuple) -> None:
    t = type(v)
    if t in _SCALARS:
        h.update(f"{t.__name__}:{v!r};".encode())
    elif t in (tuple, list, frozenset):
        h.update(f"{t.__name__}{len(v)}(".encode())
        for x in (sorted(v, key=repr) if t is frozenset else v):
            _value(x, h, seen, depth, ())
        h.update(b")")
    elif isinstance(v, np.generic):
        h.update(f"{v.dtype.str}:{v!r};".encode())
    elif isinstance(v, types.ModuleType):
        _module(v, h, seen, depth, names)
    elif _named(v):
        h.update(f"{t.__name__}:{getattr(v, '__module__', None)}.{getattr(v, '__qualname__', v)};".encode())
    elif isinstance(v, types.FunctionType) or hasattr(v, "_orig"):
        _function(v, h, seen, depth + 1)
    elif isinstance(v, (type, np.dtype)) and _library(getattr(v, "__module__", "") or "numpy"):
        h.update(f"type:{v!r};".encode())
    else:
        raise Unkeyable(f"cannot key a {t.__name__}")


def _named(v) -> bool:
    """numpy's and aot's functions and ufuncs, and builtins: identified by name (versions are keyed)."""
    if isinstance(v, (np.ufunc, types.BuiltinFunctionType)):
        return True
    return isinstance(v, types.FunctionType) and _library(v.__module__ or "")


def _library(module: str) -> bool:
    return module.split(".", 1)[0] in _NAMED_PACKAGES


def _module(m, h, seen: dict, depth: int, names: tuple) -> None:
    """A module the function reads: its name, and for a user's module the attributes the code
    may reach through it (`helpers.g(x)` mentions `g`)."""
    h.update(f"module:{m.__name__};".encode())
    if _library(m.__name__):
        return
    for name in names:
        attr = getattr(m, name, None)
        if attr is not None and not isinstance(attr, types.ModuleType):
            h.update(f".{name}".encode())
            _value(attr, h, seen, depth + 1, ())


@functools.cache
def environment_stamp() -> str | None:
    """Versions, sources, machine and threads: what every warm key shares in this process (None
    where the CPU's features cannot be read: code built for one CPU must not load on another)."""
    import aot
    from runtime import default_num_threads
    from runtime.buffers import ARRAY_LAYOUT

    cpu = _cpu_features()
    if cpu is None or ARRAY_LAYOUT is None:
        return None
    from runtime.host_stamp import llvmlite_stamp

    return "|".join([aot.__version__, np.__version__, sys.version, sys.platform, os.uname().machine,
                     cpu, llvmlite_stamp(), _source_stamp(), str(default_num_threads()), repr(ARRAY_LAYOUT)])


def _cpu_features() -> str | None:
    from runtime.host_stamp import cpu_features

    return cpu_features()


def _source_stamp() -> str:
    """Path, size and mtime of every source file of aot's packages: an edit or reinstall changes it
    (~300 stats; collected as tuples and hashed once, the cheapest way measured)."""
    import aot

    root = os.path.dirname(os.path.dirname(os.path.abspath(aot.__file__)))
    return tree_stamp(*(os.path.join(root, pkg) for pkg in ("aot", "ir", "codegen", "runtime")))


def tree_stamp(*dirs: str) -> str:
    """Hex digest of the path, size and mtime of every .py file under `dirs`."""
    found: list = []
    for d in dirs:
        _stamp_tree(d, found)
    return sha256(marshal.dumps(found)).hexdigest()


def _stamp_tree(path: str, found: list) -> None:
    try:
        with os.scandir(path) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for e in entries:
        if e.name.endswith(".py"):
            st = e.stat()
            found.append((e.path, st.st_size, st.st_mtime_ns))
        elif e.name != "__pycache__" and e.is_dir(follow_symlinks=False):
            _stamp_tree(e.path, found)
