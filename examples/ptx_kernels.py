"""The kernels of a numpy function as PTX for NVIDIA GPUs, checked by ptxas.

A particle-pusher step (positions, velocities, a field sampled per particle) is exported once and
its kernels are compiled for two GPU architectures from the same ir as the CPU build. The PTX
states the lowest ISA each architecture allows (sm_80: 7.0, sm_90: 7.8), so the oldest driver
that knows the GPU can load it. Running the kernels needs the NVIDIA driver (aot.cuda); here they
are assembled by ptxas when a CUDA toolkit is installed.

Run: python examples/ptx_kernels.py
"""
from __future__ import annotations

import numpy as np

import aot
from codegen.ptx import compile_ptx
from codegen.targets.cuda_tools import assemble, find_libdevice, find_ptxas


def push(pos, vel, field, dt):
    """One leapfrog step of charged particles in a smooth field, with a speed limit."""
    accel = field * np.cos(pos) - 0.1 * vel
    vel = vel + dt * accel
    speed = np.abs(vel)
    vel = np.where(speed > 10.0, 10.0 * np.sign(vel), vel)
    return pos + dt * vel, vel, (0.5 * vel * vel).sum()


def main() -> None:
    n = 4096
    rng = np.random.default_rng(0)
    pos, vel, field = rng.standard_normal((3, n))
    program = aot.export(push, (pos, vel, field, np.float64(0.01)))
    module = program.ir_module()
    if find_libdevice() is None:
        print("no libdevice.10.bc (CUDA toolkit or the nvidia-nvvm wheel): PTX needs it for cos and sign")
        return
    for sm in ("sm_80", "sm_90"):
        ptx = compile_ptx(module, f"cuda:{sm}")
        line = f"{sm}: PTX ISA {ptx.isa}, {len(ptx.kernels)} kernels ({', '.join(k.name for k in ptx.kernels)}), " \
               f"{len(ptx.text.splitlines())} lines"
        if find_ptxas() is not None:
            line += f"; ptxas: {len(assemble(ptx.text, sm))} bytes of cubin"
        print(line)
    print(f"GPU present: {aot.cuda.is_available()}")


if __name__ == "__main__":
    main()
