"""Targets named by an LLVM triple (cross compilation: object code for another machine).

`resolve_target(name)` is what ahead-of-time compilation calls: "host", an x86-64 level, or any
triple LLVM was built with (`aarch64-unknown-linux-gnu`, `x86_64-pc-linux-gnu`, `riscv64-...`),
optionally with a CPU after a colon (`aarch64-unknown-linux-gnu:neoverse-v1`).
"""

from __future__ import annotations

import functools

import llvmlite.binding as llvm

from .base import Target, init_llvm
from .cpu import _X86_LEVELS, host_target, named_target

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


def resolve_target(name: str) -> Target:
    """`host`, an x86-64 level, or `TRIPLE[:CPU]`."""
    if name == "host" or name in _X86_LEVELS:
        return named_target(name)
    triple, _, cpu = name.partition(":")
    if triple.count("-") < 1:
        raise ValueError(
            f"unknown target {name!r}; expected 'host', one of {sorted(_X86_LEVELS)}, or an LLVM "
            "triple such as 'aarch64-unknown-linux-gnu'"
        )
    return triple_target(triple, cpu or "generic")


def is_host(target: Target) -> bool:
    """Code for `target` runs on this machine (so it can be linked and loaded here)."""
    if target.name == "host":
        return True
    arch, host_arch = target.triple.split("-")[0], host_target().triple.split("-")[0]
    host_os = host_target().triple.split("-")[2:3]
    return arch == host_arch and target.triple.split("-")[2:3] == host_os
