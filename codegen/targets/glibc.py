"""Libraries that load on older glibc: references pinned to the oldest symbol versions.

Linking on a new glibc binds each libc/libm reference to its newest version (pthread_create@2.34,
exp@2.29, ...), so a library built here would refuse to load on an older distribution although
the old versions of those functions do the same job (pthread moved into libc in 2.34; exp/log/
pow/hypot lost their SVID error wrapper in 2.29-2.35, same results; memcpy@2.14 only stopped
copying backwards). `.symver` directives in the module's
own assembly bind the references to the baseline versions of the target's ABI instead; what
remains is libmvec (glibc 2.22), which the vectorised transcendentals need.
"""
from __future__ import annotations

import platform

# the first glibc version of each architecture's ABI
BASELINE = {"x86_64": "GLIBC_2.2.5", "aarch64": "GLIBC_2.17"}
# functions whose default version on a current glibc is newer than the baseline
PINNED = ("pthread_create", "pthread_join", "pthread_detach", "pthread_attr_setstacksize", "memcpy",
          "exp", "exp2", "log", "log2", "pow", "hypot", "lgamma", "expf", "exp2f", "exp10f", "logf", "log2f",
          "powf", "hypotf", "lgammaf")


def baseline_version(triple: str) -> str | None:
    """The version to pin to, for glibc Linux on this machine's architecture (objects for another
    architecture are linked by their user against that machine's glibc; llvmlite has only the
    native assembly parser that module asm needs)."""
    arch, _, rest = triple.partition("-")
    native = arch == platform.machine() or (arch, platform.machine()) == ("aarch64", "arm64")
    return BASELINE.get(arch) if native and rest.endswith("linux-gnu") else None


def pin_symbol_versions(llvm_ir: str, triple: str) -> str:
    """`llvm_ir` with `module asm` .symver lines for the PINNED functions (none for targets other
    than glibc Linux). A pin binds only references the object makes, including the libm calls
    that LLVM intrinsics lower to, so every PINNED name is pinned."""
    version = baseline_version(triple)
    if version is None:
        return llvm_ir
    return "\n".join([llvm_ir] + [f'module asm ".symver {f},{f}@{version}"' for f in PINNED])
