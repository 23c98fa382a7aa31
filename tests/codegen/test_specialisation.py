"""What kernels are generated for what is known at compile time: coalesced dims, known strides,
the slots a launch stores, and the pipeline a module takes (lean or LLVM's)."""
from __future__ import annotations

import re

import numpy as np

import aot
import codegen
import ir
from aot.compiler import llvm_backend
from codegen.llvm.builder import module_text
from codegen.options import CodegenOptions
from codegen.targets.base import is_lean
from ir import dtypes as D
from ir.types import TensorType

from .helpers import add_elementwise, jit


def _functions(text: str) -> dict[str, str]:
    """LLVM function name -> its text."""
    out, name, lines = {}, None, []
    for line in text.splitlines():
        if line.startswith("define"):
            name, lines = re.search(r'@"?([^"(]+)"?\(', line).group(1), [line]
        elif name is not None:
            lines.append(line)
            if line == "}":
                out[name], name = "\n".join(lines), None
    return out


def _lower(fn, args, contiguous=True, threads=1):
    from aot._pytree import tree_flatten
    from aot.compiler.capture import capture

    leaves, spec = tree_flatten(args)
    module = llvm_backend.build_ir(capture(fn, args, {}, leaves, spec, module=None, dynamic=False).gm)
    opts = CodegenOptions(num_threads=threads, contiguous_inputs=(True,) * len(args) if contiguous else ())
    llmod = codegen.lower_module(module, llvm_backend._host(1), opts)
    return llmod, module_text(llmod)


def test_contiguous_elementwise_kernel_is_one_vector_loop():
    x = np.ones((6, 7, 9))
    _, text = _lower(lambda a, b: np.sin(a) * b + 1, (x, x))
    kernels = {n: t for n, t in _functions(text).items() if ".ew" in n}
    assert len(kernels) == 1
    body = next(iter(kernels.values()))
    assert body.count("!llvm.loop") <= 1  # rows and planes coalesced: the range is one run
    assert "srem" not in body and "sdiv" not in body  # no index decomposition


def test_unknown_strides_keep_the_strided_path():
    x = np.ones((6, 7))
    _, known = _lower(lambda a, b: a * b, (x, x))
    _, unknown = _lower(lambda a, b: a * b, (x, x), contiguous=False)
    k_known = next(t for n, t in _functions(known).items() if ".ew" in n)
    k_unknown = next(t for n, t in _functions(unknown).items() if ".ew" in n)
    assert k_unknown.count("!llvm.loop") > k_known.count("!llvm.loop")
    f = aot.compile(lambda a, b: a * b)
    y = np.arange(84.0).reshape(12, 7)[::2]
    np.testing.assert_array_equal(f(y, x), y * x)


def test_launches_store_only_what_the_kernel_reads():
    x = np.ones((64, 33))
    _, text = _lower(lambda a: np.exp(a) * 2, (x,))
    entry = next(t for n, t in _functions(text).items() if "." not in n)
    # the kernel reads its two pointers; static dims and known strides are constants in it
    stores = re.findall(r"store i64 (\d+), ptr", entry)
    assert not [s for s in stores if s in ("64", "33")], stores


def test_lean_modules_and_the_others():
    m = ir.Module("m")
    add_elementwise(m, "f", "sin", [TensorType(D.float64, (64,))])
    assert is_lean(codegen.lower_module(m))
    sort = ir.Module("s")
    from .helpers import add_tensor_op

    add_tensor_op(sort, "g", "sort", [TensorType(D.float64, (64,))], {"axis": 0})
    assert not is_lean(codegen.lower_module(sort))
    fns = jit(m)
    x = np.linspace(0, 3, 64)
    np.testing.assert_allclose(fns["f"](x), np.sin(x), rtol=1e-15)


def test_a_kernel_called_once_is_built_for_its_whole_range():
    """A launch known to be one call over [0, total) (serial code, or too little work to split:
    Host.one_call) builds its kernel for that range: whole rows, no partial first or last row."""
    x, col = np.ones((8, 3, 37)), np.ones((8, 3, 1))  # a broadcast operand: dims do not coalesce
    f = lambda a, c: a * c + 1  # noqa: E731
    _, serial = _lower(f, (x, col))
    _, small = _lower(f, (x, col), threads=2)  # 888 elements: below the threshold
    _, big = _lower(f, (np.ones((800, 3, 37)), np.ones((800, 3, 1))), threads=2)
    k = {name: next(t for n, t in _functions(text).items() if ".ew" in n)
         for name, text in (("serial", serial), ("small", small), ("big", big))}
    assert "row.head" not in k["serial"] and "row.head" not in k["small"]  # planes and rows: counted loops
    assert "row.head" in k["big"]  # any sub-range on any thread: partial rows at both ends
    assert len(k["serial"]) < len(k["big"])
    for shape in ((8, 3, 37), (800, 3, 37)):
        a, c = np.random.default_rng(1).random(shape), np.random.default_rng(2).random(shape[:-1] + (1,))
        np.testing.assert_array_equal(aot.compile(f, options={"disk_cache": False})(a, c), a * c + 1)
