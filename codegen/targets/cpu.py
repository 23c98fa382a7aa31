"""CPU targets: the host (triple, CPU name and features from LLVM) and named x86-64 levels."""

from __future__ import annotations

import ctypes
import functools

import llvmlite.binding as llvm

from ir.logger import get_logger

from .base import Target, init_llvm

log = get_logger(__name__)

# x86-64 micro-architecture levels (psABI): cpu name for LLVM and the widest vector register
_X86_LEVELS = {
    "x86-64": ("x86-64", 128),
    "x86-64-v2": ("x86-64-v2", 128),
    "x86-64-v3": ("x86-64-v3", 256),
    "x86-64-v4": ("x86-64-v4", 512),
}


def vector_bits_from_features(features: str) -> int:
    feats = set(features.split(","))
    if "+avx512f" in feats:
        return 512
    if "+avx2" in feats or "+avx" in feats:
        return 256
    if "+sse2" in feats or "+neon" in feats:
        return 128
    return 0


@functools.cache
@functools.cache
def libmvec_available() -> bool:
    """glibc's libmvec (vector math) can be loaded into this process (x86-64 Linux only).
    Tries the soname first: ctypes.util.find_library starts a process (~10 ms)."""
    try:
        ctypes.CDLL("libmvec.so.1")
        return True
    except OSError:
        from ctypes.util import find_library  # imports subprocess and tempfile: only when needed

        return find_library("mvec") is not None


def _vector_library(triple: str, bits: int) -> str | None:
    return "libmvec" if triple.startswith("x86_64") and "linux" in triple and bits >= 128 else None


@functools.cache
def host_target(vector_bits: int | None = None, opt_level: int = 3) -> Target:
    """The machine we run on. `vector_bits` overrides the width derived from the CPU features."""
    init_llvm()
    triple = llvm.get_process_triple()
    cpu = llvm.get_host_cpu_name()
    features = llvm.get_host_cpu_features().flatten()
    bits = vector_bits_from_features(features) if vector_bits is None else vector_bits
    vlib = _vector_library(triple, bits) if libmvec_available() else None
    return Target("host", triple, cpu, features, bits, vlib, opt_level)


@functools.cache
def jit_target(opt_level: int = 3) -> Target:
    """The host, for object code loaded into this process by the JIT (runtime/jit.py). MCJIT maps an
    object's code and its constants in separate mappings, which in a long-lived process can lie over
    2 GiB apart, beyond the small code model's 32-bit PC-relative references (RuntimeDyld then
    aborts the process). The large code model with static relocation reaches everything through
    64-bit absolute addresses, as LLVM's own JIT TargetMachines on x86-64 do (RuntimeDyld resolves
    the large model's position-independent, GOT-relative form wrongly once an engine holds more
    than one object)."""
    return host_target(opt_level=opt_level).replace(code_model="large", relocation="static")


def named_target(name: str) -> Target:
    """`host`, or an x86-64 level (`x86-64`, `x86-64-v2`, `x86-64-v3`, `x86-64-v4`)."""
    if name == "host":
        return host_target()
    if name in _X86_LEVELS:
        cpu, bits = _X86_LEVELS[name]
        triple = "x86_64-unknown-linux-gnu"
        return Target(name, triple, cpu, "", bits, _vector_library(triple, bits))
    raise ValueError(f"unknown target {name!r}; expected 'host' or one of {sorted(_X86_LEVELS)}")
