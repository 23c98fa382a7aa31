"""Guards of a cache entry: what must hold of the call's flat arguments for the entry to be reused.

All guards of an entry compile into one generated Python function over the flat leaves, so the
check is a single call. Static dims give `shape[d] == n`; symbolic dims give the ShapeEnv's
guards over them (see dynamic.py). Python scalars and other constants are guarded by type and
value.
"""
from __future__ import annotations

import _thread
import ast
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ir.records import Record

_LEAF = r"L\[(\d+)\]"  # L[i] in a guard's text (compiled by re when first used: a warm start's guards need none)


class GuardSet:
    """The compiled guards of an entry (see compile_guards)."""

    def __init__(self, texts: list[str], check: Callable[[list], bool], source: str, static_dims: dict | None = None,
                 ranks: dict | None = None):
        self.texts = texts  # readable, over argument names: L['x'].shape[0] == 4
        self.check = check
        self.source = source  # the generated check over the flat leaves L[i]
        self.static_dims = {} if static_dims is None else static_dims  # leaf index -> {dim: size}
        self.ranks = {} if ranks is None else ranks  # leaf index -> rank (arrays)
        self._singles: list | None = None  # (readable, check) per guard: made when one fails
        self._namespace: dict = {}
        self.names: list | None = None
        self.extra_check: Callable[[], bool] | None = None  # the guards not over the call's arguments
        # the guards on sizes only, for calls whose leaves are all arrays of the right types and ranks
        # (the native strided call checks those itself): static dims and the ShapeEnv's relations
        self.shape_check: Callable[[list], bool] | None = None
        self.spec = None  # the GuardSpec it was compiled from

    def why_failed(self, leaves: list) -> str:
        if self._singles is None:  # compiled now: a guard failure is rare, a warm start needs none
            spec = self.spec
            self._singles = [(r, eval(compile(f"lambda L: {t}", "<aot guard>", "eval"), self._namespace))
                             for r, t in zip(spec.readable, spec.texts)]
        for text, fn in self._singles:
            try:
                ok = fn(leaves)
            except Exception:  # wrong type or rank: the guard cannot even be evaluated
                ok = False
            if not ok:
                return f"{text} (got {_describe_failure(text, leaves, self.names)})"
        return "no guard failed"

    def failed_layouts(self, leaves: list) -> list[int]:
        """The leaves the entry's code reads as C-contiguous that are arrays of another layout now."""
        spec = self.spec
        return [i for i in (spec.contiguous if spec is not None else ())
                if i < len(leaves) and isinstance(leaves[i], np.ndarray) and not leaves[i].flags.c_contiguous]

    def failed_dims(self, leaves: list) -> list[tuple[int, int]]:
        out = []
        for i, dims in self.static_dims.items():
            leaf = leaves[i] if i < len(leaves) else None
            if not isinstance(leaf, np.ndarray) or leaf.ndim != self.ranks.get(i, len(dims)):
                continue  # another rank: no dim to make dynamic
            out += [(i, d) for d, n in dims.items() if leaf.shape[d] != n]
        return out


def _rename(text: str, names: list[str] | None) -> str:
    while (i := text.find("in (DT_")) >= 0:  # _dtype_guard's "in (DT_x, DTS_x)" (no regex to
        comma, end = text.find(",", i), text.find(")", i)  # compile on a warm start)
        text = f"{text[:i]}== numpy.{text[i + 7:comma]} (either byte order){text[end + 1:]}"
    text = text.replace("DT_", "numpy.")
    if not names:
        return text
    return re.sub(_LEAF, lambda m: names[int(m.group(1))], text)


def _show_consts(text: str, consts: dict) -> str:
    """CONST3 -> its repr, TYPE3 -> its type name, for the texts users read."""
    for key in sorted(consts, key=len, reverse=True):
        v = consts[key]
        text = text.replace(key, v.__name__ if key.startswith("TYPE") else repr(v))
    return text


def _describe_failure(text: str, leaves: list, names: list[str] | None = None) -> str:
    i = _leaf_of(text, names)
    if i is None:
        return "?"
    if i >= len(leaves):
        return f"{len(leaves)} arguments"
    leaf = leaves[i]
    if isinstance(leaf, np.ndarray) and text.endswith("c_contiguous"):
        return f"a {leaf.dtype}{list(leaf.shape)} array with strides {leaf.strides}"
    if isinstance(leaf, np.ndarray):
        return f"{leaf.dtype}{list(leaf.shape)}"
    return repr(leaf)


def _leaf_guards(i: int, leaf: Any, kind, dyn_dims: set[int]) -> tuple[list[str], list[str], dict]:
    """Guard expressions (Python source over L) for one leaf: those on its type, dtype and rank,
    those on its sizes, and its static dims."""
    if kind == "array":
        dims = {d: int(n) for d, n in enumerate(leaf.shape) if d not in dyn_dims}
        g = [f"isinstance(L[{i}], ndarray)", _dtype_guard(i, leaf.dtype)]
        if not dyn_dims:  # one tuple comparison checks the rank and every size
            return g, [f"L[{i}].shape == {tuple(int(n) for n in leaf.shape)!r}"], dims
        g.append(f"L[{i}].ndim == {leaf.ndim}")
        return g, [f"L[{i}].shape[{d}] == {n}" for d, n in dims.items()], dims
    value = kind[1]
    if value is None:
        return [f"L[{i}] is None"], [], {}
    if isinstance(value, (bool, int, float, complex, str, np.generic)):
        # exact type (True is not 1, np.float64(3) is not 3.0) and value, both bound by name
        return [f"type(L[{i}]) is TYPE{i}", f"L[{i}] == CONST{i}"], [], {}
    return [f"L[{i}] is CONST{i}"], [], {}


def _check_source(name: str, texts: list[str]) -> str:
    """The source of `name(L)`: all `texts` hold (False where one cannot be evaluated on these leaves)."""
    return f"def {name}(L):\n    try:\n        return (" + "\n            and ".join(texts or ["True"]) + ")\n" \
           "    except (IndexError, AttributeError, TypeError):\n        return False\n"


_DTYPE_NAMES = {np.dtype(t).str: f"DT_{np.dtype(t).name}" for t in
                (bool, np.int32, np.int64, np.float32, np.float64, np.complex64, np.complex128)}


# the same dtypes in the other byte order: compiled code reads a copy in native order, so both orders
# share one entry (the native fast paths check the exact type and leave swapped arrays to the copy)
_SWAPPED_NAMES = {np.dtype(code).newbyteorder("S").str: name.replace("DT_", "DTS_")
                  for code, name in _DTYPE_NAMES.items() if np.dtype(code).itemsize > 1}


def _dtype_guard(i: int, dt: np.dtype) -> str:
    native = dt.newbyteorder("=")
    swapped = _SWAPPED_NAMES.get(native.newbyteorder("S").str)
    if swapped is None:
        return f"L[{i}].dtype == {_dtype_src(native)}"
    return f"L[{i}].dtype in ({_dtype_src(native)}, {swapped})"


def _dtype_src(dt: np.dtype) -> str:
    """A name bound to the dtype in the check's namespace (calling dtype() per check costs ~1 us)."""
    return _DTYPE_NAMES.get(dt.str, f"dtype({dt.str!r})")


class GuardSpec(Record):
    """What a GuardSet compiles from, as plain data: an entry shipped to another process
    (shipping.py) carries it and compiles it there. `env`: the values the `extra` guards (on
    closure and global scalars) compare with, captured at trace time; the cells and globals they
    read (CELLk, GLOBALS) are bound from the function where the set is compiled. Fields: `texts`,
    the conditions over the flat leaves L, in order; `shown`, GuardSet.texts (readable, over
    argument names); `readable`, one per condition, for why_failed; `sizes`, the conditions on
    sizes (static dims, the ShapeEnv's relations); `consts`, CONSTi / TYPEi: the values and types
    non-array leaves must have; `extra`, the conditions on closure and global scalars;
    `contiguous`, the array leaves the entry's code reads as C-contiguous (a guard each)."""

    __slots__ = ("texts", "shown", "readable", "sizes", "static_dims", "ranks", "consts", "extra", "env", "names",
                 "all_arrays", "contiguous")

    def __init__(self, texts, shown, readable, sizes, static_dims, ranks, consts, extra, env, names, all_arrays,
                 contiguous=()):
        self.texts, self.shown, self.readable, self.sizes = texts, shown, readable, sizes
        self.static_dims, self.ranks, self.consts, self.extra, self.env = static_dims, ranks, consts, extra, env
        self.names, self.all_arrays, self.contiguous = names, all_arrays, contiguous


def build_guards(cap, leaves: list, extra: list[tuple[str, str]] | None = None, env: dict | None = None,
                 names: list[str] | None = None, contiguous=()) -> GuardSet:
    """One GuardSet from the capture's leaves, plus `extra` (source, readable text) guards whose
    names `env` binds. `names` are readable sources of the leaves (`L['x']`) used in the texts;
    `contiguous`: the array leaves the compiled code reads as C-contiguous (torch's stride guards:
    another layout recompiles)."""
    return compile_guards(guard_spec(cap, leaves, extra, env, names, contiguous), env)


def guard_spec(cap, leaves: list, extra=None, env: dict | None = None, names=None, contiguous=()) -> GuardSpec:
    texts, static_dims, ranks = [f"len(L) == {len(leaves)}"], {}, {}
    consts, sizes = {}, []
    contiguous = tuple(sorted(set(contiguous)))
    for i, (leaf, kind) in enumerate(zip(leaves, cap.leaf_kinds)):
        g, size_guards, dims = _leaf_guards(i, leaf, kind, cap.dynamic_dims.get(i, set()))
        if i in contiguous:
            g.append(f"L[{i}].flags.c_contiguous")
        texts += g + size_guards
        sizes += size_guards
        if kind == "array":
            static_dims[i], ranks[i] = dims, leaf.ndim
        else:
            consts[f"CONST{i}"], consts[f"TYPE{i}"] = kind[1], type(kind[1])
    extra_readable = {src: text for src, text in (extra or [])}
    texts += list(extra_readable)
    shape_texts = []
    if getattr(cap, "dyn", None) is not None:  # symbolic dims: the ShapeEnv's guards, inlined
        flat = [f"L[{i}]" for i in cap.input_index]
        relations = [t.replace(".size()[", ".shape[") for t in cap.dyn.guard_texts(flat)]
        texts += relations
        sizes += relations
        shape_texts = cap.dyn.guard_texts()
    readable = [extra_readable.get(t) or _show_consts(_rename(t, names), consts) for t in texts]
    n_shape = len(shape_texts)
    shown = (readable[:-n_shape] if n_shape else readable) + shape_texts
    values = {k: v for k, v in (env or {}).items() if not _bound_from_function(k)}
    return GuardSpec(texts, shown, readable, sizes, static_dims, ranks, consts, list(extra_readable), values,
                     names, all(kind == "array" for kind in cap.leaf_kinds), contiguous)


def _bound_from_function(name: str) -> bool:
    return name == "GLOBALS" or name.startswith("CELL")


def function_env(fn) -> dict:
    """The cells and globals of `fn` that GuardSpec.extra reads (see free_variable_guards)."""
    cells = getattr(fn, "__closure__", None) or ()
    env = {f"CELL{k}": cell for k, cell in enumerate(cells)}
    env["GLOBALS"] = getattr(fn, "__globals__", {})
    return env


def compile_guards(spec: GuardSpec, env: dict | None = None) -> GuardSet:
    """The GuardSet of `spec`; `env` binds the names its extra guards read (function_env)."""
    namespace = {"ndarray": np.ndarray, "dtype": np.dtype, "math": math, **spec.consts, **spec.env, **(env or {})}
    namespace.update({name: np.dtype(code) for code, name in (*_DTYPE_NAMES.items(), *_SWAPPED_NAMES.items())})
    source = _check_source("check", spec.texts)
    more = _check_source("shape_check", spec.sizes) if spec.all_arrays else ""
    if spec.extra:  # closure/global scalars: checked on the native fast path too
        more += "def extra_check():\n    return (" + "\n            and ".join(spec.extra) + ")\n"
    exec(compile(source + more, "<aot guards>", "exec"), namespace)  # one compile for all three
    gs = GuardSet(spec.shown, namespace["check"], source, spec.static_dims, ranks=spec.ranks)
    gs._namespace = namespace
    gs.names = spec.names
    gs.spec = spec
    if spec.all_arrays:
        gs.shape_check = namespace["shape_check"]
        # runtime's fast call tests the simple relations natively, the rest in place (no call)
        gs.shape_check.parts = ([(t, size_relations(t)) for t in spec.sizes], namespace)
    if spec.extra:
        gs.extra_check = namespace["extra_check"]
    return gs


_OPS = {ast.Eq: "==", ast.LtE: "<=", ast.Lt: "<", ast.GtE: ">=", ast.Gt: ">"}
# CPython 3.11 keeps the AST constructor's recursion depth in interpreter-wide state: two threads
# parsing at once (concurrent compiles did, in the suite) can fail with "SystemError: AST
# constructor recursion depth mismatch" (CPython gh-106905); parses are short, so ours take turns
_AST_LOCK = _thread.allocate_lock()  # _thread: a warm start does not import threading


def size_relations(text: str) -> list[tuple] | None:
    """A size guard as relations (op, a, b) between terms ("dim", leaf, k) (L[leaf].shape[k]) and
    ("int", n), op one of == <= < >= >; None when it is not such a comparison (`s % 2 == 0`,
    sums, ...): `L[1].shape[0] == L[0].shape[0]`, `2 <= L[0].shape[0]`, `L[0].shape == (3, 4)`."""
    static = _static_shape(text)
    if static is not None:  # _leaf_guards' form, read without a parse
        return static
    try:
        with _AST_LOCK:
            node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Compare) or len(node.ops) != 1 or type(node.ops[0]) not in _OPS:
        return None
    op, left, right = _OPS[type(node.ops[0])], node.left, node.comparators[0]
    a, b = _size_term(left), _size_term(right)
    if a is not None and b is not None:
        return [(op, a, b)]
    leaf, dims = _leaf_index(getattr(left, "value", None)), _int_tuple(right)
    if op == "==" and isinstance(left, ast.Attribute) and left.attr == "shape" and leaf is not None \
            and dims is not None:
        return [("==", ("dim", leaf, k), ("int", n)) for k, n in enumerate(dims)]
    return None


def _static_shape(text: str) -> list[tuple] | None:
    """The relations of `L[i].shape == (n, ...)` with plain decimal sizes, else None."""
    head, sep, dims = text.partition("].shape == (")
    if not sep or not head.startswith("L[") or not head[2:].isdigit() or not dims.endswith(")"):
        return None
    parts = [p.strip() for p in dims[:-1].split(",")]
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()  # (n,)
    if parts == [""]:
        parts = []  # ()
    if not all(p.isdigit() and p.isascii() for p in parts):
        return None
    return [("==", ("dim", int(head[2:]), k), ("int", int(p))) for k, p in enumerate(parts)]


def _size_term(node) -> tuple | None:
    """("int", n) for an integer literal, ("dim", i, k) for L[i].shape[k], else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _size_term(node.operand)
        return ("int", -inner[1]) if inner is not None and inner[0] == "int" else None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return ("int", node.value)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
        leaf, k = _leaf_index(node.value.value), _size_term(node.slice)
        if leaf is not None and k is not None and k[0] == "int" and k[1] >= 0:
            return ("dim", leaf, k[1])
    return None


def _leaf_index(node) -> int | None:
    """i for the node L[i]."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "L":
        k = _size_term(node.slice)
        return k[1] if k is not None and k[0] == "int" and k[1] >= 0 else None
    return None


def _int_tuple(node) -> tuple | None:
    if not isinstance(node, ast.Tuple):
        return None
    terms = [_size_term(e) for e in node.elts]
    return tuple(t[1] for t in terms) if all(t is not None and t[0] == "int" for t in terms) else None


def _leaf_of(text: str, names: list[str] | None) -> int | None:
    m = re.match(_LEAF, text)
    if m:
        return int(m.group(1))
    for i, n in enumerate(names or []):
        if text.startswith(n + ".") or text.startswith(n + " ") or text.startswith(f"isinstance({n},") \
                or text.startswith(f"type({n})"):
            return i
    return None


def leaf_sources(fn, args: tuple, kwargs: dict) -> list[str]:
    """Readable source of every flat leaf, in tree_flatten order: L['x'], L['pair'][0], L['d']['k']."""
    import inspect

    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    out: list[str] = []
    for i, a in enumerate(args):
        base = f"L[{positional[i]!r}]" if i < len(positional) else f"L['args'][{i}]"
        _paths(a, base, out)
    for k, v in kwargs.items():
        _paths(v, f"L[{k!r}]", out)
    return out


def _paths(tree, prefix: str, out: list[str]) -> None:
    if tree is None:
        return
    if isinstance(tree, dict):
        for k, v in tree.items():
            _paths(v, f"{prefix}[{k!r}]", out)
    elif type(tree) in (tuple, list):
        for i, v in enumerate(tree):
            _paths(v, f"{prefix}[{i}]", out)
    else:
        out.append(prefix)


_SCALARS = (bool, int, float, complex, str, np.generic)


def free_variable_guards(fn) -> tuple[list[tuple[str, str]], dict]:
    """Guards on the Python scalars `fn` reads from its closure and globals: they were baked into
    the graph as constants, so a changed value must not reuse the entry."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return [], {}
    out, env = [], {}
    cells = getattr(fn, "__closure__", None) or ()
    for k, (name, cell) in enumerate(zip(code.co_freevars, cells)):
        try:
            v = cell.cell_contents
        except ValueError:  # not yet bound
            continue
        if isinstance(v, _SCALARS):
            env[f"CELL{k}"], env[f"CV{k}"], env[f"CT{k}"] = cell, v, type(v)
            out.append((f"type(CELL{k}.cell_contents) is CT{k} and CELL{k}.cell_contents == CV{k}",
                        f"closure variable {name} == {v!r}"))
    g = getattr(fn, "__globals__", {})
    for k, name in enumerate(code.co_names):
        v = g.get(name)
        if isinstance(v, _SCALARS):
            env["GLOBALS"], env[f"GV{k}"], env[f"GT{k}"] = g, v, type(v)
            out.append((f"type(GLOBALS.get({name!r})) is GT{k} and GLOBALS.get({name!r}) == GV{k}",
                        f"global {name} == {v!r}"))
    return out, env
