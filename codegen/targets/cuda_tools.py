"""Where the CUDA tools are: ptxas (to check and assemble PTX) and libdevice (the GPU's math).

Both are looked up on PATH / under $CUDA_HOME, then the usual installation directories, then in
the PyPI wheels that carry them (`nvidia-cuda-nvcc`: ptxas; `nvidia-nvvm` or `nvidia-cuda-nvcc`:
nvvm/libdevice), which the `aot[cuda-tools]` extra installs. Neither is needed to run PTX: the
driver JIT-compiles it.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_LIBDEVICE = "libdevice.10.bc"


class PtxasError(RuntimeError):
    """ptxas refused a PTX file; the message holds its log."""


def _cuda_roots() -> list[Path]:
    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")]
    roots += ["/usr/local/cuda", "/opt/cuda"]
    found = [Path(r) for r in roots if r]
    found += sorted(Path("/usr/local").glob("cuda-*"), reverse=True)
    return found


def _wheel_dirs() -> list[Path]:
    """The nvidia/* package directories of the interpreter's site-packages."""
    dirs = []
    for entry in sys.path:
        nv = Path(entry) / "nvidia"
        if nv.is_dir():
            dirs += [p for p in nv.iterdir() if p.is_dir()]
    return dirs


@functools.cache
def find_ptxas() -> str | None:
    """The ptxas executable, or None."""
    on_path = shutil.which("ptxas")
    if on_path:
        return on_path
    candidates = [r / "bin" / "ptxas" for r in _cuda_roots()] + [d / "bin" / "ptxas" for d in _wheel_dirs()]
    return next((str(c) for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)


@functools.cache
def find_libdevice() -> str | None:
    """The path of libdevice.10.bc, or None."""
    env = os.environ.get("AOT_LIBDEVICE")
    if env:
        return env if Path(env).is_file() else None
    candidates = [r / "nvvm" / "libdevice" / _LIBDEVICE for r in _cuda_roots()]
    candidates += [d / "nvvm" / "libdevice" / _LIBDEVICE for d in _wheel_dirs()]
    candidates += [d / "libdevice" / _LIBDEVICE for d in _wheel_dirs()]
    return next((str(c) for c in candidates if c.is_file()), None)


@functools.cache
def libdevice_bitcode() -> bytes:
    path = find_libdevice()
    if path is None:
        raise FileNotFoundError(
            f"{_LIBDEVICE} (the NVIDIA target's math functions) was not found under $CUDA_HOME, "
            "/usr/local/cuda or the nvidia-nvvm wheel; install a CUDA toolkit, `pip install aot[cuda-tools]`, "
            "or set AOT_LIBDEVICE to its path")
    return Path(path).read_bytes()


def assemble(ptx: str, sm: str, ptxas: str | None = None) -> bytes:
    """The cubin ptxas makes of `ptx` for architecture `sm`; PtxasError with its log when it
    refuses the file, FileNotFoundError when there is no ptxas."""
    exe = ptxas or find_ptxas()
    if exe is None:
        raise FileNotFoundError("ptxas was not found on PATH, under $CUDA_HOME or in the nvidia-cuda-nvcc wheel")
    with tempfile.TemporaryDirectory(prefix="aot-ptxas-") as d:
        src, out = Path(d) / "kernels.ptx", Path(d) / "kernels.cubin"
        src.write_text(ptx)
        run = subprocess.run([exe, f"-arch={sm}", "-o", str(out), str(src)], capture_output=True, text=True,
                             timeout=600, check=False)
        if run.returncode != 0:
            raise PtxasError(f"ptxas -arch={sm} refused the PTX:\n{(run.stderr or run.stdout).strip()}")
        return out.read_bytes()
