"""Prebuilt FFT kernel groups: every group of both precisions, built once (at install, `aot
prebuild`) for named targets and loaded where the user's disk cache has no group yet, so that a
first FFT costs a load instead of a second of LLVM.

`fft/` of the prebuilt directory (runtime/prebuilt.py: AOT_PREBUILT) holds `manifest.json` and
one shared library per target, precision and group. The
manifest names the kernel format, a digest of the generator's sources by *content* (an installed
copy's files get new mtimes), and per target the CPU flags it needs (an x86-64 micro-architecture
level) or the exact CPU it was built on (`host`, where no level applies), its SIMD lanes per
precision and each library's SHA-256. A process uses the highest target its CPU runs; a group is
taken when the sources match, its lanes equal the loaded core's and its bytes their digest, and is
then copied into the user's cache (later processes find it there without reading the sources).
Anything else (another format, edited sources, a damaged file) is skipped, and the group is built
as before.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os

from ir.logger import get_logger

log = get_logger(__name__)

MANIFEST = "manifest.json"
# /proc/cpuinfo flags of the x86-64 micro-architecture levels (the psABI's lists; LZCNT is "abm")
_V2 = ("cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3")
_V3 = (*_V2, "avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave")
TARGETS = ("host", "x86-64-v4", "x86-64-v3", "x86-64-v2")  # best first: a process takes the first it runs
LEVEL_FLAGS = {
    "x86-64-v2": _V2,
    "x86-64-v3": _V3,
    "x86-64-v4": (*_V3, "avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"),
}


def directory(root: str | None = None) -> str | None:
    """Where the prebuilt kernels are (under `root`, default the prebuilt directory); None when
    AOT_PREBUILT is 0."""
    from runtime.prebuilt import directory as prebuilt_directory

    root = root or prebuilt_directory()
    return None if root is None else os.path.join(root, "fft")


def source_digest() -> str:
    """SHA-256 of the kernel generator's sources (aot.fft._native._SOURCES), by content."""
    from ._native import _SOURCES, _matches

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    h = hashlib.sha256()
    for folder, pattern in _SOURCES:
        for name in sorted(n for n in os.listdir(os.path.join(root, folder)) if _matches(n, pattern)):
            with open(os.path.join(root, folder, name), "rb") as f:
                data = f.read()
            h.update(f"{folder}/{name}:{len(data)}:".encode())
            h.update(data)
    return h.hexdigest()


def _host_flags() -> set[str] | None:
    from runtime.host_stamp import cpu_features

    cpu = cpu_features()
    if cpu is None or os.uname().machine not in ("x86_64", "AMD64"):
        return None
    flags: set[str] = set()
    for line in cpu.split("\n"):
        flags.update(line.split())
    return flags


def host_level() -> str | None:
    """The highest x86-64 level this CPU runs, or None (another architecture, or unknown)."""
    flags = _host_flags()
    if flags is None:
        return None
    runs = [level for level, need in LEVEL_FLAGS.items() if flags.issuperset(need)]
    return runs[-1] if runs else None


def _runs_here(requires: dict) -> bool:
    if "flags" in requires:
        flags = _host_flags()
        return flags is not None and flags.issuperset(requires["flags"])
    from runtime.host_stamp import cpu_features

    return requires.get("cpu") is not None and requires.get("cpu") == cpu_features()


class _Selected:
    """The manifest's target this process uses."""

    def __init__(self, root: str, name: str, entry: dict):
        self.root, self.name = root, name
        self.vlen: dict = entry["vlen"]
        self.groups: dict = entry["groups"]


@functools.cache
def selected() -> _Selected | None:
    """The target whose kernels this process may load, or None (logged: why not)."""
    from runtime.prebuilt import trusted

    from ._native import _FORMAT

    root = directory()
    if root is None:
        return None
    try:
        with open(os.path.join(root, MANIFEST), encoding="utf-8") as f:
            manifest = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        log.warning("prebuilt FFT kernels in %s: unreadable manifest (%s); building kernels instead", root, e)
        return None
    if not (trusted(root) and trusted(os.path.join(root, MANIFEST))):
        return None
    if manifest.get("format") != _FORMAT:
        log.info("prebuilt FFT kernels in %s: format %s, not %s; not used", root, manifest.get("format"), _FORMAT)
        return None
    if manifest.get("sources") != source_digest():
        log.info("prebuilt FFT kernels in %s: built from other sources (rebuild: aot prebuild); not used", root)
        return None
    targets = manifest.get("targets", {})
    for name in sorted(targets, key=lambda t: TARGETS.index(t) if t in TARGETS else len(TARGETS)):
        if _runs_here(targets[name].get("requires", {})):
            return _Selected(root, name, targets[name])
    log.info("prebuilt FFT kernels in %s: none for this CPU; not used", root)
    return None


def group_library(precision: str, group: tuple, vlen: int | None) -> tuple[bytes, str] | None:
    """(shared-library bytes, target name) of a prebuilt group with `vlen` lanes (None: any, for the
    core), checked against the manifest's digest; None when there is none to use."""
    from codegen.fft.names import group_name

    sel = selected()
    if sel is None or (vlen is not None and sel.vlen.get(precision) != vlen):
        return None
    name = group_name(group)
    want = sel.groups.get(precision, {}).get(name)
    if want is None:
        return None
    from runtime.prebuilt import trusted

    path = os.path.join(sel.root, sel.name, precision, name + ".so")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        log.warning("prebuilt FFT kernel %s unreadable (%s); building it", path, e)
        return None
    if not trusted(path):
        return None
    if hashlib.sha256(data).hexdigest() != want:
        log.warning("prebuilt FFT kernel %s does not match its manifest (damaged?); building it", path)
        return None
    return data, sel.name
