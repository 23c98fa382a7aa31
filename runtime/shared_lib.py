"""Shared libraries with the standalone C ABI: write, link with the system C compiler, load with cffi.

`write_library` takes the object code of the graph entry (codegen) and a `LibrarySpec`, writes
NAME.h and the wrapper source, and (for the host) links NAME.so with `cc`: position independent,
only the ABI symbols exported (version script), `--as-needed` so that the NEEDED entries are the
system libraries actually used (libc, libm/libmvec, libpthread). For a foreign target it leaves
NAME.o, NAME_abi.c and NAME.h for the user's cross toolchain.

`load_library(path)` opens NAME.so through cffi and returns a `SharedLibrary`, a callable taking
numpy arrays that builds DLTensor descriptors, asks the library for the output shapes, allocates
outputs and calls it; a non-zero status raises with the library's own message.

A `SharedLibrary` pickles by value: the bytes of the file it mapped travel with their SHA-256;
`rebuild_library` checks the digest, writes them to a private file and loads that as any other.
"""

from __future__ import annotations

import atexit
import os
import pickle
import shutil
import subprocess
import tempfile
import threading
import weakref
from pathlib import Path

import cffi
import numpy as np

from ir.digest import sha256
from ir.logger import get_logger
from ir.records import record

from .abi import (
    ABI_VERSION,
    DTYPES,
    STATUS,
    STATUS_CODE,
    LibrarySpec,
    check_c_name,
    header_text,
    parse_signature,
)
from .abi_wrapper import wrapper_source
from .buffers import check_array_kind, readable_layout
from .native_lib import LinkError, find_cc

log = get_logger(__name__)

ALLOWED_NEEDED = ("libc.so", "libm.so", "libmvec.so", "libpthread.so", "ld-linux")


class LibraryError(RuntimeError):
    """A library call returned a non-zero status (the message is the library's)."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


class InvalidLibraryError(OSError):
    """The file is not a complete shared object for this machine (checked before the system
    loader maps it: a truncated file would end the process there with SIGBUS)."""


class LibraryIndexError(LibraryError, IndexError):
    """An index read from an input is out of bounds (AOT_STATUS_INDEX_OUT_OF_RANGE), where numpy
    would raise IndexError."""


class LibraryMemoryError(LibraryError, MemoryError):
    """The library could not allocate an intermediate buffer (AOT_STATUS_OUT_OF_MEMORY), where
    numpy would raise MemoryError."""


class LibraryLinAlgError(LibraryError, np.linalg.LinAlgError):
    """A matrix is singular or not positive definite, or a decomposition does not converge
    (AOT_STATUS_LINALG_ERROR), where numpy raises numpy.linalg.LinAlgError."""


@record(frozen=True)
class LibraryFiles:
    header: Path
    library: Path | None  # NAME.so (host targets)
    object: Path | None  # NAME.o (foreign targets: link it yourself, with wrapper)
    wrapper: Path | None  # NAME_abi.c (foreign targets)
    extra_objects: tuple = ()  # NAME_<what>.o the object calls into (foreign targets: link them too)





def write_library(
    spec: LibrarySpec, obj: bytes, out_dir: Path, *, link: bool = True, version: str = "",
    extra_objects: dict[str, bytes] | None = None,
) -> LibraryFiles:
    """Write NAME.h and, with `link`, NAME.so (atomically; the object code and the wrapper source
    stay in a temporary directory). Without `link` (a foreign target), write NAME.o and
    NAME_abi.c next to NAME.h for the target's toolchain. `extra_objects` ({what: object code},
    e.g. the FFT kernels the graph calls) are linked in too, or written as NAME_<what>.o."""
    check_c_name(spec.name)
    out_dir.mkdir(parents=True, exist_ok=True)
    n = spec.name
    header = out_dir / f"{n}.h"
    header.write_text(header_text(spec, version))
    if not link:
        wrapper, objpath = out_dir / f"{n}_abi.c", out_dir / f"{n}.o"
        wrapper.write_text(wrapper_source(spec))
        objpath.write_bytes(obj)
        extras = _write_objects(out_dir, n, extra_objects)
        return LibraryFiles(header, None, objpath, wrapper, extras)
    lib = out_dir / f"{n}.so"
    with tempfile.TemporaryDirectory(prefix="aot-link-") as tmp:
        wrapper, objpath = Path(tmp) / f"{n}_abi.c", Path(tmp) / f"{n}.o"
        wrapper.write_text(wrapper_source(spec))
        objpath.write_bytes(obj)
        extras = _write_objects(Path(tmp), n, extra_objects)
        _link(spec, header, wrapper, objpath, lib, Path(tmp), extras)
    return LibraryFiles(header, lib, None, None)


def _write_objects(out_dir: Path, name: str, objects: dict[str, bytes] | None) -> tuple:
    paths = []
    for what, data in (objects or {}).items():
        p = out_dir / f"{name}_{check_c_name(what)}.o"
        p.write_bytes(data)
        paths.append(p)
    return tuple(paths)


def _link(spec: LibrarySpec, header: Path, wrapper: Path, obj: Path, lib: Path, tmp: Path,
          extras: tuple = ()) -> None:
    cc = find_cc()
    script = tmp / "exports.map"
    script.write_text(
        "{\n  global:\n" + "".join(f"    {s};\n" for s in spec.exported_symbols()) + "  local: *;\n};\n"
    )
    tmp_lib = lib.with_name(f".{lib.name}.{os.getpid()}.tmp")
    cmd = [
        cc, "-std=c11", "-O1", "-fPIC", "-shared", "-fvisibility=hidden", "-Wall", "-Werror=implicit",
        "-iquote", str(header.parent), str(wrapper), str(obj), *map(str, extras), "-o", str(tmp_lib),
        f"-Wl,--version-script={script}", "-Wl,--as-needed", "-Wl,-z,defs", "-Wl,-z,now", "-lm", "-lpthread",
    ]  # fmt: skip
    log.debug("linking %s: %s", lib.name, " ".join(cmd))
    r = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if r.returncode != 0:
        tmp_lib.unlink(missing_ok=True)
        errors = "\n".join(r.stderr.strip().splitlines()[:40])
        raise LinkError(
            f"{cc} failed to link {lib.name} (exit {r.returncode}):\n{errors}\ncommand: {' '.join(cmd)}"
        )
    os.replace(tmp_lib, lib)


# --- loading ------------------------------------------------------------------------------------
_CDEF = """
typedef struct { int32_t device_type; int32_t device_id; } DLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct {
  void *data; DLDevice device; int32_t ndim; DLDataType dtype;
  int64_t *shape; int64_t *strides; uint64_t byte_offset;
} DLTensor;
"""
_FUNCS = """
int {n}(const DLTensor *inputs, int32_t n_inputs, DLTensor *outputs, int32_t n_outputs);
int {n}_output_shapes(const DLTensor *inputs, int32_t n_inputs, int64_t *shapes_out);
const char *{n}_signature(void);
const char *{n}_last_error(void);
int32_t {n}_abi_version(void);
const char *{n}_target(void);
"""
_ffi_lock = threading.Lock()


def library_name(path: str | os.PathLike) -> str:
    """NAME of NAME.so (also accepts libNAME.so when the file holds no NAME symbols)."""
    stem = Path(path).name.split(".so")[0]
    return stem


class SharedLibrary:
    """A loaded aot library: call it with numpy arrays (one per input, in signature order)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path).resolve()
        if not self.path.is_file():
            raise FileNotFoundError(f"aot_load: no such library: {path}")
        name = library_name(self.path)
        _check_file(self.path)
        self._mapped = _fresh_path(self.path)
        self._ident = _identity(os.stat(self._mapped))  # what dlopen maps: pickling sends exactly that
        self.ffi = cffi.FFI()
        self.ffi.cdef(_CDEF)
        try:
            self.lib = self.ffi.dlopen(str(self._mapped))
        except OSError as e:
            raise OSError(f"aot_load: cannot load {self.path}: {e}") from None
        self.name = self._find_name(name)
        self.ffi.cdef(_FUNCS.format(n=self.name))
        self._fn = getattr(self.lib, self.name)
        self._shapes = getattr(self.lib, f"{self.name}_output_shapes")
        self._error = getattr(self.lib, f"{self.name}_last_error")
        self.abi_version = int(getattr(self.lib, f"{self.name}_abi_version")())
        if self.abi_version != ABI_VERSION:
            raise OSError(
                f"aot_load: {self.path.name} has ABI version {self.abi_version}; this aot reads "
                f"version {ABI_VERSION} (rebuild the library)"
            )
        self.signature = self.ffi.string(getattr(self.lib, f"{self.name}_signature")()).decode()
        self.target = self.ffi.string(getattr(self.lib, f"{self.name}_target")()).decode()
        ins, outs = parse_signature(self.signature)
        self.in_dtypes = [np.dtype(d) for d, _ in ins]
        self.in_ranks = [len(s) for _, s in ins]
        self.out_dtypes = [np.dtype(d) for d, _ in outs]
        self.out_ranks = [len(s) for _, s in outs]
        self._codes = [DTYPES[d.name][1:] for d in self.in_dtypes + self.out_dtypes]

    def _find_name(self, stem: str) -> str:
        """NAME from the file name (NAME.so, or libNAME.so as a linker would want it)."""
        for cand in (stem, stem[3:] if stem.startswith("lib") else None):
            if not cand:
                continue
            probe = cffi.FFI()
            probe.cdef(f"int32_t {cand}_abi_version(void);")
            try:
                getattr(probe.dlopen(str(self._mapped)), f"{cand}_abi_version")
                return cand
            except (AttributeError, OSError):
                continue
        raise OSError(
            f"aot_load: {self.path.name} does not export {stem}_abi_version: not an aot library, "
            "or renamed (the file must be named NAME.so after its function NAME)"
        )

    def __reduce__(self):
        """Pickle by value: the mapped file's bytes, its name (NAME.so or libNAME.so, which the
        loader reads NAME from) and their SHA-256; read here, not kept: most are never pickled."""
        try:
            with open(self._mapped, "rb") as f:
                if _identity(os.fstat(f.fileno())) != self._ident:
                    raise OSError("the file was replaced since it was loaded")
                data = f.read()
        except OSError as e:
            raise pickle.PicklingError(
                f"cannot pickle the aot library {self.name}: {self._mapped} no longer holds what was loaded "
                f"({e}); load it again"
            ) from None
        return rebuild_library, (data, self.path.name, sha256(data).hexdigest())

    def __repr__(self) -> str:
        return f"<aot library {self.name}{self.signature} at {self.path}>"

    def output_shapes(self, *arrays) -> list[tuple]:
        return self._output_shapes([self._as_array(a, i) for i, a in enumerate(arrays)])

    def _output_shapes(self, arrays: list) -> list[tuple]:
        desc, _keep = self._describe(arrays, with_data=False)  # shapes only: any layout will do
        n = sum(self.out_ranks)
        buf = self.ffi.new("int64_t[]", max(1, n))
        self._check(self._shapes(desc, len(arrays), buf))
        out, pos = [], 0
        for r in self.out_ranks:
            out.append(tuple(int(buf[pos + k]) for k in range(r)))
            pos += r
        return out

    def __call__(self, *arrays):
        # the library reads native byte order, aligned elements, whole-element strides (DLPack
        # cannot say otherwise): copy other arrays, with the same values, as numpy's ufuncs do
        arrays = [readable_layout(self._as_array(a, i)) for i, a in enumerate(arrays)]
        shapes = self._output_shapes(arrays)
        outs = [np.empty(s, d) for s, d in zip(shapes, self.out_dtypes, strict=True)]
        ins, _keep_in = self._describe(arrays)
        od, _keep_out = self._describe(outs)
        self._check(self._fn(ins, len(arrays), od, len(outs)))
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _as_array(self, a, i: int) -> np.ndarray:
        """Input `i` as an ndarray: arrays as they are (np.matrix as its data), Python and numpy
        scalars and sequences converted to the signature's dtype when numpy's same_kind rule
        allows (an int list for a float input; not a float list for an int input)."""
        where = f"{self.name}: input {i}"
        if isinstance(a, np.ndarray):
            check_array_kind(a, where, allow_matrix=True)
            return np.asarray(a)
        b = np.asarray(a)
        if i < len(self.in_dtypes):
            want = self.in_dtypes[i]
            if b.dtype != want and not np.can_cast(b.dtype, want, "same_kind"):
                raise TypeError(f"{where}: a {type(a).__name__} of {b.dtype} values does not convert to "
                                f"{want} (numpy's same_kind rule); pass an array of {want}")
            b = b.astype(want, copy=False)
        return b

    def _describe(self, arrays, with_data: bool = True):
        """DLTensor array for ndarrays (as readable_layout gives them; data NULL unless
        `with_data`); keeps the cffi buffers alive with the result."""
        ffi = self.ffi
        desc = ffi.new("DLTensor[]", max(1, len(arrays)))
        keep = []
        for k, a in enumerate(arrays):
            t = desc[k]
            t.data = ffi.cast("void *", a.__array_interface__["data"][0] if with_data else 0)
            t.device.device_type, t.device.device_id = 1, 0
            t.ndim = a.ndim
            entry = DTYPES.get(a.dtype.name)
            t.dtype.code, t.dtype.bits = (entry[1], entry[2]) if entry else (255, a.itemsize * 8)
            t.dtype.lanes = 1
            shape = ffi.new("int64_t[]", list(a.shape) or [0])
            strides = ffi.new("int64_t[]", [s // a.itemsize if a.itemsize else 0 for s in a.strides] or [0])
            t.shape, t.strides, t.byte_offset = shape, strides, 0
            keep += [a, shape, strides]
        return desc, keep

    def _check(self, rc: int) -> None:
        if rc == 0:
            return
        msg = self.ffi.string(self._error()).decode(errors="replace") or STATUS.get(rc, ("", "error"))[1]
        if rc == STATUS_CODE["INVALID_ARGUMENT"]:
            raise TypeError(msg) if ("dtype" in msg or "input(s)" in msg) else ValueError(msg)
        if rc == STATUS_CODE["SHAPE_MISMATCH"]:
            raise ValueError(msg)
        if rc == STATUS_CODE["OUT_OF_MEMORY"]:
            raise LibraryMemoryError(rc, msg)
        if rc == STATUS_CODE["INDEX_OUT_OF_RANGE"]:
            raise LibraryIndexError(rc, msg)
        if rc == STATUS_CODE["LINALG_ERROR"]:
            raise LibraryLinAlgError(rc, msg)
        raise LibraryError(rc, msg)


def _check_file(path: Path) -> None:
    """InvalidLibraryError naming `path` and what is wrong with it, unless it is a shared object
    the system loader can map (dlopen does not check segments against the file size)."""
    from .elf import ElfError, check_shared_object

    try:
        check_shared_object(path.read_bytes())
    except ElfError as e:
        raise InvalidLibraryError(f"aot_load: {path} is not a loadable library: {e}") from None


_OPENED: dict[Path, tuple[int, int, int]] = {}  # path -> (device, inode, mtime) of what dlopen mapped there
_opened_lock = threading.Lock()


def _identity(st: os.stat_result) -> tuple[int, int, int]:
    return st.st_dev, st.st_ino, st.st_mtime_ns


def _fresh_path(path: Path) -> Path:
    """What to dlopen for `path`: itself, or, when this process already mapped another file under
    that name (a library rebuilt in place), a private copy: dlopen would return the old one."""
    ident = _identity(path.stat())
    with _opened_lock:
        seen = _OPENED.setdefault(path, ident)
    if seen == ident:
        return path
    private = Path(tempfile.mkdtemp(prefix="aot-lib-"))  # mode 0700: nobody else can swap the file
    copy = private / path.name
    shutil.copyfile(path, copy)
    log.info("%s was rebuilt since it was loaded; loading a private copy %s", path, copy)
    return copy


def load_library(path: str | os.PathLike) -> SharedLibrary:
    return SharedLibrary(path)


# --- unpickling ---------------------------------------------------------------------------------
# (digest, file name) -> library unpickled from those bytes; weak: a library nobody holds may unload
_UNPICKLED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_unpickle_lock = threading.Lock()
_PRIVATE_DIRS: list[tuple[int, str]] = []  # (creating pid, directory): mapped from until exit


def rebuild_library(data: bytes, filename: str, digest: str) -> SharedLibrary:
    """The SharedLibrary a pickle holds: `data` (the .so bytes) checked against its SHA-256
    `digest`, written to a fresh private file named `filename`, and loaded as aot_load does (so
    the ELF checks run before the system loader maps it)."""
    data = bytes(data)
    got = sha256(data).hexdigest()
    if got != digest:
        raise InvalidLibraryError(
            f"aot_load: pickled library {filename!r} is corrupt: SHA-256 mismatch "
            f"(expected {digest}, got {got})"
        )
    if not isinstance(filename, str) or Path(filename).name != filename or filename in ("", ".", ".."):
        raise InvalidLibraryError(f"aot_load: pickled library has a bad file name {filename!r}")
    with _unpickle_lock:
        lib = _UNPICKLED.get((digest, filename))
        if lib is None:
            lib = _UNPICKLED[(digest, filename)] = _load_private(data, filename)
    return lib


def _load_private(data: bytes, filename: str) -> SharedLibrary:
    private = tempfile.mkdtemp(prefix="aot-pickled-")  # mode 0700: nobody else can swap the file
    path = Path(private) / filename
    try:
        path.write_bytes(data)
        lib = SharedLibrary(path)
    except BaseException:
        shutil.rmtree(private, ignore_errors=True)  # the load failed: nothing will run from it
        raise
    if not _PRIVATE_DIRS:
        atexit.register(_remove_private_dirs)
    _PRIVATE_DIRS.append((os.getpid(), private))
    log.debug("unpickled library %s into %s", lib.name, path)
    return lib


def _remove_private_dirs() -> None:
    # a forked child exiting normally runs this too: it must not delete what its parent maps
    for pid, d in _PRIVATE_DIRS:
        if pid == os.getpid():
            shutil.rmtree(d, ignore_errors=True)


def needed_libraries(path: str | os.PathLike) -> list[str]:
    """The DT_NEEDED entries of an ELF shared library (read from its dynamic section)."""
    from .elf import read_needed

    return read_needed(Path(path))
