"""The CUDA driver API through ctypes (libcuda.so.1): no CUDA toolkit is needed at run time.

`driver()` loads the library and initialises it once per process, or raises CudaUnavailable
saying why (no library, a cuInit error such as no device or a driver too old). $AOT_CUDA_DRIVER
names another library file (tests, unusual installations). Every call is checked: a failing
one raises CudaError with the driver's name and text for the code.
"""
from __future__ import annotations

import ctypes
import functools
import os
import threading

DEFAULT_LIBRARY = "libcuda.so.1"
ENV_VAR = "AOT_CUDA_DRIVER"
_lock = threading.Lock()


class CudaUnavailable(RuntimeError):
    """No usable NVIDIA driver in this process."""


class CudaError(RuntimeError):
    """A CUDA driver call failed; `code` is its CUresult."""

    def __init__(self, call: str, code: int, name: str, text: str):
        super().__init__(f"{call} failed: {name} ({code}): {text}")
        self.call, self.code = call, code


class Driver:
    """The loaded driver: `check(name, *args)` calls the driver function `name` and raises
    CudaError unless it returns CUDA_SUCCESS."""

    def __init__(self, lib: ctypes.CDLL, path: str):
        self.lib, self.path = lib, path

    def check(self, name: str, *args) -> None:
        rc = getattr(self.lib, name)(*args)
        if rc != 0:
            raise CudaError(name, rc, *self.describe(rc))

    def describe(self, rc: int) -> tuple[str, str]:
        name, text = ctypes.c_char_p(), ctypes.c_char_p()
        self.lib.cuGetErrorName(rc, ctypes.byref(name))
        self.lib.cuGetErrorString(rc, ctypes.byref(text))
        return ((name.value or b"CUDA_ERROR_UNKNOWN").decode(), (text.value or b"unknown error").decode())

    def device_count(self) -> int:
        n = ctypes.c_int()
        self.check("cuDeviceGetCount", ctypes.byref(n))
        return n.value


@functools.cache
def _load(path: str) -> Driver:
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise CudaUnavailable(
            f"no NVIDIA driver: {path} could not be loaded ({e}); running code on the GPU needs the "
            f"NVIDIA driver (not the CUDA toolkit){'' if path == DEFAULT_LIBRARY else f' (set by ${ENV_VAR})'}"
        ) from None
    drv = Driver(lib, path)
    rc = lib.cuInit(0)
    if rc != 0:
        name, text = drv.describe(rc)
        raise CudaUnavailable(f"the NVIDIA driver ({path}) did not initialise: cuInit returned {name} ({rc}): {text}")
    return drv


def driver() -> Driver:
    """The process's CUDA driver, loaded and initialised; CudaUnavailable saying why otherwise."""
    with _lock:
        return _load(os.environ.get(ENV_VAR) or DEFAULT_LIBRARY)


def is_available() -> bool:
    try:
        return driver().device_count() > 0
    except (CudaUnavailable, CudaError):
        return False


def device_count() -> int:
    """GPUs the driver sees (0 without a driver, as torch.cuda.device_count)."""
    try:
        return driver().device_count()
    except (CudaUnavailable, CudaError):
        return 0
