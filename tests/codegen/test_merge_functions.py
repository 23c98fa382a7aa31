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


def _merged(steps: int) -> tuple[dict, dict]:
    from aot._pytree import tree_flatten
    from aot.compiler.capture import capture

    args = (np.linspace(0, 1, 64),)
    leaves, spec = tree_flatten(args)
    gm = capture(lambda u: relax(u, steps), args, {}, leaves, spec, module=None, dynamic=False).gm
    module = llvm_backend.build_ir(gm)
    target = llvm_backend._host(3)
    mod = parse(str(lower_module(module, target, CodegenOptions(num_threads=1))))
    before = _kernel_bodies(mod)
    merge_duplicates(mod, thread_target_machine(target))
    return before, _kernel_bodies(mod)


def test_steps_share_one_kernel_body():
    before, after = _merged(6)
    kernels = [n for n in before if n != "main"]
    assert len(kernels) >= 24  # 6 steps, 4 kernels each
    # the duplicates are gone or a call of the first (a thunk, where their address is taken): twice
    # the steps, the same bodies (the first and last steps' differ: they read and write the argument)
    bodies = [n for n in kernels if after.get(n, 0) > 4]
    assert sum(after.get(n, 0) for n in kernels) < sum(before[n] for n in kernels) / 2
    before12, after12 = _merged(12)
    assert len([n for n in before12 if n != "main"]) >= 48
    assert len([n for n in after12 if n != "main" and after12[n] > 4]) == len(bodies) <= 8


def test_merged_code_is_right():
    u = np.random.default_rng(3).random(100)
    want = relax(u.copy())
    got = aot.compile(relax, options={"disk_cache": False})(u.copy())
    np.testing.assert_allclose(got, want, rtol=1e-15)
