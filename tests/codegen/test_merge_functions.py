"""Identical kernels are merged before LLVM optimises (codegen/targets/base.py merge_duplicates):
a traced time-stepping loop launches one kernel per step, and each step's kernel is the same
function."""
from __future__ import annotations

import numpy as np

import aot
from aot.compiler import llvm_backend
from codegen import lower_module
from codegen.options import CodegenOptions
from codegen.targets.base import merge_duplicates, parse, thread_target_machine


def relax(u, steps: int = 6):
    for _ in range(steps):
        u[1:-1] = 0.5 * u[1:-1] + 0.25 * (u[2:] + u[:-2])  # one kernel per step, all alike
    return u


def _kernel_bodies(mod) -> dict[str, int]:
    """Defined function -> its instruction count."""
    return {f.name: sum(len(list(b.instructions)) for b in f.blocks) for f in mod.functions if not f.is_declaration}


def test_steps_share_one_kernel_body():
    from aot._pytree import tree_flatten
    from aot.compiler.capture import capture

    args = (np.linspace(0, 1, 64),)
    leaves, spec = tree_flatten(args)
    module = llvm_backend.build_ir(capture(relax, args, {}, leaves, spec, module=None, dynamic=False).gm)
    target = llvm_backend._host(3)
    mod = parse(str(lower_module(module, target, CodegenOptions(num_threads=1))))
    before = _kernel_bodies(mod)
    merge_duplicates(mod, thread_target_machine(target))
    after = _kernel_bodies(mod)
    kernels = [n for n in before if n != "main"]
    assert len(kernels) >= 24  # 6 steps, 4 kernels each
    # the duplicates are gone or a call of the first (a thunk, where their address is taken)
    bodies = [n for n in kernels if after.get(n, 0) > 4]
    assert len(bodies) <= 6 and sum(after.get(n, 0) for n in kernels) < sum(before[n] for n in kernels) / 2


def test_merged_code_is_right():
    u = np.random.default_rng(3).random(100)
    want = relax(u.copy())
    got = aot.compile(relax, options={"disk_cache": False})(u.copy())
    np.testing.assert_allclose(got, want, rtol=1e-15)
