"""aot.cuda: the NVIDIA GPU, as torch.cuda names it (is_available, device_count).

aot compiles kernels to PTX for any architecture from sm_75 up (`codegen.compile_ptx`, checked by
ptxas in the test suite); the driver is reached through ctypes (runtime/cuda_driver.py), so only
the NVIDIA driver is needed at run time. Running compiled functions on a GPU is not built yet.
"""
from __future__ import annotations

from runtime.cuda_driver import CudaError, CudaUnavailable, device_count, driver, is_available

__all__ = ["CudaError", "CudaUnavailable", "device_count", "driver", "is_available"]
