"""Build the prebuilt FFT kernels (aot/fft/_prebuilt.py): every group of each precision for named
targets, linked with `cc`, with their manifest. `aot prebuild` (aot/prebuild.py) runs it; make
does at install. Imports llvmlite and the code generator (the loader does not)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import time

from ir.logger import get_logger
from runtime.prebuilt import make_dir, write_file

from . import _prebuilt

log = get_logger(__name__)

PRECISIONS = ("f32", "f64")


def default_targets() -> list[str]:
    """`host`: this CPU's model and features, the code a first use would build here (they load on
    CPUs of this model only). A level (x86-64-v3, x86-64-v4: any CPU of the level) is for copies
    that travel; built here it is tuned for this CPU, and its complex64 kernels of 4096 and 65536
    points ran 5-10% slower than the host's own here."""
    return ["host"]


def _target(name: str):
    from codegen.targets import host_target, named_target

    if name == "host":
        return host_target()
    if name not in _prebuilt.LEVEL_FLAGS:
        raise ValueError(f"aot prebuild: FFT target must be 'host' or one of {sorted(_prebuilt.LEVEL_FLAGS)}, "
                         f"got {name!r}")
    # the level's instructions, scheduled for this CPU (LLVM's generic tuning of a level ran c64
    # transforms up to 10% slower than the host's own build); tuning never adds an instruction
    return named_target(name).replace(tune_cpu=host_target().cpu)


def _requires(name: str) -> dict:
    if name == "host":
        from runtime.host_stamp import cpu_features

        cpu = cpu_features()
        if cpu is None:
            raise RuntimeError("aot prebuild: this CPU's features cannot be read (/proc/cpuinfo); "
                               "kernels built for it could not be told from another's")
        return {"cpu": cpu}
    return {"flags": list(_prebuilt.LEVEL_FLAGS[name])}


def groups_of(vlen: int) -> list[tuple]:
    """Every group of a precision: those of compiled graphs, the threaded ones, the call thunks."""
    from ._native import _thunks_group, all_groups

    thunks = _thunks_group()
    return [*all_groups(vlen), ("fourstep",), ("threads",), *([thunks] if thunks is not None else [])]


def up_to_date(root: str, targets: list[str], precisions=PRECISIONS) -> bool:
    """The manifest in `root` is of these sources and format and holds these targets' groups."""
    from ._native import _FORMAT

    try:
        with open(os.path.join(root, _prebuilt.MANIFEST), encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        return False
    have = manifest.get("targets", {})
    return (manifest.get("format") == _FORMAT and manifest.get("sources") == _prebuilt.source_digest()
            and all(t in have and all(p in have[t].get("groups", {}) for p in precisions) for t in targets))


def build(root: str | None = None, targets: list[str] | None = None, precisions=PRECISIONS,
          only: list[str] | None = None, force: bool = False) -> dict:
    """Build the kernels of `targets` (default_targets()) into `root` (the prebuilt directory's
    fft/) and replace what was there; `only`: group names to build (tests), else every group.
    Skipped when up to date unless `force`. Returns {"root", "targets", "groups", "seconds",
    "skipped"}."""
    root = root or _prebuilt.directory()
    if root is None:
        raise ValueError("aot prebuild: AOT_PREBUILT=0 turns prebuilt code off; name a directory")
    targets = list(dict.fromkeys(targets or default_targets()))
    for name in targets:
        _target(name)  # an unknown name fails before anything is built
    if not force and only is None and up_to_date(root, targets, precisions):
        return {"root": root, "targets": targets, "groups": 0, "seconds": 0.0, "skipped": True}
    from ._native import _FORMAT

    t0 = time.perf_counter()
    tmp = f"{root}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    manifest = {"format": _FORMAT, "sources": _prebuilt.source_digest(), "targets": {}}
    count = 0
    for name in targets:
        entry = _build_target(tmp, name, precisions, only)
        manifest["targets"][name] = entry
        count += sum(len(g) for g in entry["groups"].values())
    write_file(os.path.join(tmp, _prebuilt.MANIFEST), json.dumps(manifest, indent=1, sort_keys=True).encode())
    _replace(tmp, root)
    return {"root": root, "targets": targets, "groups": count, "seconds": time.perf_counter() - t0,
            "skipped": False}


def _build_target(tmp: str, name: str, precisions, only) -> dict:
    from concurrent.futures import ThreadPoolExecutor

    from codegen.fft.names import group_name

    from ._native import _build_cost, kernel_vlen

    target = _target(name)
    entry: dict = {"requires": _requires(name), "cpu": target.cpu, "vlen": {}, "groups": {}}
    jobs = []
    for p in precisions:
        vlen = kernel_vlen(p, target)
        entry["vlen"][p] = vlen
        entry["groups"][p] = {}
        make_dir(os.path.join(tmp, name, p))
        jobs += [(p, g, vlen) for g in groups_of(vlen) if only is None or group_name(g) in only]
    jobs.sort(key=lambda j: _build_cost(j[1]), reverse=True)  # LLVM releases the GIL: cores in parallel
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        libs = list(pool.map(lambda j: _library(j[0], j[1], j[2], target), jobs))
    for (p, g, _), data in zip(jobs, libs, strict=True):
        write_file(os.path.join(tmp, name, p, group_name(g) + ".so"), data)
        entry["groups"][p][group_name(g)] = hashlib.sha256(data).hexdigest()
    return entry


def _library(precision: str, group: tuple, vlen: int, target) -> bytes:
    from runtime.native_lib import link_objects

    from ._native import _group_object

    return link_objects([_group_object(precision, group, None if group == ("core",) else vlen, target)])


def _replace(tmp: str, root: str) -> None:
    """Put the new directory in place of the old one (readers see one or the other, or none)."""
    old = f"{root}.old{os.getpid()}"
    if os.path.exists(root):
        os.rename(root, old)
    os.rename(tmp, root)
    shutil.rmtree(old, ignore_errors=True)
