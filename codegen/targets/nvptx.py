"""The NVIDIA target: `cuda:sm_XX` names, the PTX ISA tables, and the Target they give.

Two tables decide the `.version` a PTX file states. A GPU architecture needs a minimum PTX ISA
(`MIN_ISA_OF_SM`: what the PTX ISA documentation lists as the version that introduced it), and a
CUDA release's ptxas and driver accept up to a maximum (`MAX_ISA_OF_CUDA`). aot emits the lowest
ISA the architecture allows (our kernels use no newer instruction), so that the oldest driver
that knows the GPU can JIT the PTX. The pair is checked here, before LLVM sees it: LLVM aborts the
process on a pair it cannot emit (`sm_90a` with `+ptx78`).

Plain data and string parsing: no llvmlite.
"""
from __future__ import annotations

import re

from .base import Target

TRIPLE = "nvptx64-nvidia-cuda"
DEFAULT_SM = "sm_80"
OLDEST_SM = 75  # ptxas 13 dropped everything older

# GPU architecture -> the first PTX ISA version that supports it (PTX ISA, "Target ISA notes")
MIN_ISA_OF_SM = {
    "sm_75": (6, 3), "sm_80": (7, 0), "sm_86": (7, 1), "sm_87": (7, 4), "sm_89": (7, 8),
    "sm_90": (7, 8), "sm_90a": (8, 0), "sm_100": (8, 6), "sm_100a": (8, 6), "sm_101": (8, 6),
    "sm_101a": (8, 6), "sm_120": (8, 7), "sm_120a": (8, 7),
}

# CUDA release -> the newest PTX ISA its ptxas and driver accept
MAX_ISA_OF_CUDA = {
    (11, 0): (7, 0), (11, 1): (7, 1), (11, 2): (7, 2), (11, 3): (7, 3), (11, 4): (7, 4), (11, 5): (7, 5),
    (11, 6): (7, 6), (11, 7): (7, 7), (11, 8): (7, 8), (12, 0): (8, 0), (12, 1): (8, 1), (12, 2): (8, 2),
    (12, 3): (8, 3), (12, 4): (8, 4), (12, 5): (8, 5), (12, 6): (8, 5), (12, 8): (8, 7), (12, 9): (8, 8),
    (13, 0): (9, 0),
}


def isa_feature(isa: tuple[int, int]) -> str:
    """LLVM's subtarget feature of a PTX ISA version: (7, 8) -> "+ptx78"."""
    return f"+ptx{isa[0]}{isa[1]}"


def cuda_release_for(isa: tuple[int, int]) -> tuple[int, int]:
    """The oldest CUDA release whose driver accepts PTX of ISA `isa`."""
    return min(cuda for cuda, top in MAX_ISA_OF_CUDA.items() if top >= isa)


def parse_sm(name: str) -> str:
    """`cuda`, `cuda:sm_90`, `sm_90`, `nvptx64-nvidia-cuda:sm_90` -> "sm_90"; ValueError naming
    what is accepted otherwise."""
    sm = name.strip()
    for prefix in ("cuda:", f"{TRIPLE}:", "nvptx64:"):
        sm = sm.removeprefix(prefix)
    if sm in ("cuda", TRIPLE, ""):
        return DEFAULT_SM
    m = re.fullmatch(r"sm_(\d+)([a-z]?)", sm)
    if m is None:
        raise ValueError(f"NVIDIA target {name!r}: expected 'cuda' or 'cuda:sm_XX' (e.g. 'cuda:sm_90')")
    if int(m.group(1)) < OLDEST_SM:
        raise ValueError(f"NVIDIA target {name!r}: architectures older than sm_{OLDEST_SM} are not "
                         f"supported (ptxas 13 no longer assembles them)")
    if sm not in MIN_ISA_OF_SM:
        raise ValueError(f"NVIDIA target {name!r}: unknown architecture {sm!r}; known: {', '.join(MIN_ISA_OF_SM)}")
    return sm


def check_pair(sm: str, isa: tuple[int, int]) -> None:
    """ValueError when PTX ISA `isa` cannot describe code for `sm` (before LLVM would abort)."""
    need = MIN_ISA_OF_SM[sm]
    if isa < need:
        raise ValueError(f"PTX ISA {isa[0]}.{isa[1]} cannot target {sm} (it needs {need[0]}.{need[1]} or newer)")
    if isa > max(MAX_ISA_OF_CUDA.values()):
        raise ValueError(f"PTX ISA {isa[0]}.{isa[1]} is newer than any CUDA release aot knows")


def cuda_target(name: str = "cuda", opt_level: int = 3) -> Target:
    """The Target of `name` (see parse_sm): scalar code (a thread per element, vector_bits 0),
    libdevice math, the lowest PTX ISA the architecture allows."""
    sm = parse_sm(name)
    isa = MIN_ISA_OF_SM[sm]
    check_pair(sm, isa)
    return Target(f"cuda:{sm}", TRIPLE, sm, isa_feature(isa), 0, None, opt_level=opt_level,
                  kind="nvptx", math_library="libdevice", loop_skeleton="vector_rows")


def isa_of(target: Target) -> tuple[int, int]:
    m = re.search(r"\+ptx(\d)(\d)", target.features)
    if m is None:
        raise ValueError(f"target {target.name!r} names no PTX ISA feature")
    return int(m.group(1)), int(m.group(2))
