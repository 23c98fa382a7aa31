"""Targets named by an LLVM triple (cross compilation: object code for another machine).

`resolve_target(name)` is what ahead-of-time compilation calls: "host", an x86-64 level, or any
triple LLVM was built with (`aarch64-unknown-linux-gnu`, `x86_64-pc-linux-gnu`, `riscv64-...`),
optionally with a CPU after a colon (`aarch64-unknown-linux-gnu:neoverse-v1`). A triple codegen
cannot generate complete code for is rejected (UnsupportedTarget, naming what is missing): GPU
architectures (their target kind lacks a Host and a math library, targets/kinds.py) and CPUs
without an operating system whose C library the CPU host code calls (aligned_alloc, free,
pthreads, libm). "cuda:sm_XX", the NVIDIA target's public spelling, compiles kernels to PTX
(codegen.compile_ptx) but not yet a library.
"""

from __future__ import annotations

import functools

import llvmlite.binding as llvm

from .base import Target, init_llvm
from .cpu import _X86_LEVELS, host_target, named_target
from .kinds import TARGET_KINDS, kind_of_arch

# the vector register width we may assume on every CPU of an architecture (its baseline)
_BASELINE_VECTOR_BITS = {"x86_64": 128, "aarch64": 128, "arm64": 128, "powerpc64le": 128}


@functools.cache
def _init_all() -> None:
    init_llvm()
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


def triple_target(triple: str, cpu: str = "generic", features: str = "") -> Target:
    """A target for `triple`; raises ValueError naming the triple when LLVM does not know it."""
    _init_all()
    try:
        llvm.Target.from_triple(triple)
    except RuntimeError as e:
        raise ValueError(f"unknown target triple {triple!r} for this LLVM: {e}".strip()) from None
    arch = triple.split("-", 1)[0]
    bits = _BASELINE_VECTOR_BITS.get(arch, 0)
    vlib = "libmvec" if arch == "x86_64" and "linux" in triple else None
    return Target(triple, triple, cpu, features, bits, vlib)


class UnsupportedTarget(NotImplementedError, ValueError):
    """A target LLVM knows but codegen cannot yet generate complete code for."""


# operating systems whose C library has what the CPU host code calls (aligned_alloc, free,
# pthreads, getpid, sched_yield) and a libm (a triple's OS part starts with one of them)
_HOSTED_OS = ("linux", "freebsd", "netbsd", "openbsd", "dragonfly", "darwin", "macos", "solaris", "illumos")


def resolve_target(name: str) -> Target:
    """`host`, an x86-64 level, or `TRIPLE[:CPU]`; UnsupportedTarget for a target codegen cannot
    yet generate complete code for."""
    if name == "host" or name in _X86_LEVELS:
        return named_target(name)
    if name == "cuda" or name.startswith("cuda:"):
        from .nvptx import parse_sm

        parse_sm(name)  # a bad architecture is a ValueError naming it
        raise UnsupportedTarget(
            f"target {name!r}: libraries for the NVIDIA target ('cuda:sm_XX') are not built yet; code "
            f"generation for nvptx64-nvidia-cuda lacks {TARGET_KINDS['nvptx'].missing}"
        )
    triple, _, cpu = name.partition(":")
    if triple.count("-") < 1:
        raise ValueError(
            f"unknown target {name!r}; expected 'host', one of {sorted(_X86_LEVELS)}, or an LLVM "
            "triple such as 'aarch64-unknown-linux-gnu'"
        )
    target = triple_target(triple, cpu or "generic")
    _check_complete(name, triple)
    return target


def _check_complete(name: str, triple: str) -> None:
    """Raise UnsupportedTarget when code for `triple` would be incomplete (calls nothing defines)."""
    arch, *rest = triple.split("-")
    kind = kind_of_arch(arch)
    if kind != "cpu":
        known = TARGET_KINDS.get(kind)
        lacks = known.missing if known is not None else "a code generator for its kind of GPU"
        hint = " (the NVIDIA target, 'cuda:sm_XX', is not built yet)" if kind == "nvptx" else ""
        raise UnsupportedTarget(
            f"target {name!r} ({arch}, a GPU): codegen cannot generate complete code for it yet; it "
            f"lacks {lacks}{hint}"
        )
    if not any(part.startswith(_HOSTED_OS) for part in rest):
        raise UnsupportedTarget(
            f"target {name!r}: codegen cannot generate complete code for it yet; the CPU host code "
            "calls the C library (aligned_alloc, free, pthreads) and libm, which this triple's "
            f"operating system does not provide (supported: {', '.join(_HOSTED_OS)})"
        )


def is_host(target: Target) -> bool:
    """Code for `target` runs on this machine (so it can be linked and loaded here)."""
    if target.name == "host":
        return True
    arch, host_arch = target.triple.split("-")[0], host_target().triple.split("-")[0]
    host_os = host_target().triple.split("-")[2:3]
    return arch == host_arch and target.triple.split("-")[2:3] == host_os
