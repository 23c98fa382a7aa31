"""Row groups (codegen/row_groups.py): a row softmax, log_softmax or layer norm runs its kernels
block of rows by block of rows in one launch; results equal numpy's and are bit for bit those of
the kernels run one after the other, for any thread count."""
from __future__ import annotations

import numpy as np
import pytest

import aot
import codegen
from codegen import row_groups
from codegen.kernels.common import reports_errors
from codegen.options import CodegenOptions
from codegen.targets import host_target


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def log_softmax(x):
    m = np.max(x, axis=-1, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))


def layer_norm(x, w, b):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * w + b


def norm_and_stats(x):  # group results returned beside the output
    mu = x.mean(axis=1, keepdims=True)
    return x - mu, mu, np.abs(x - mu).max(axis=1)


def centre_columns_then_rows(x):  # the column means are complete before the rows' group runs
    y = x - x.mean(axis=0)
    return y / y.sum(axis=1, keepdims=True)


def by_row_sums_across(x):  # square x: row sums broadcast along the rows (column j / sum of row j)
    return x / x.sum(axis=1)


def _ir(fn, *args):
    return aot.export(fn, args).ir_module()


def _llvm(fn, *args, num_threads=2) -> str:
    return str(codegen.lower_module(_ir(fn, *args), host_target(), CodegenOptions(num_threads=num_threads)))


def _data(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_plan_groups_a_row_softmax_and_a_layer_norm():
    x = _data((64, 256), np.float32)
    (g,) = row_groups.plan([op for op in _ir(softmax, x).funcs["main"].body.ops if op.name != "return"])
    assert (g.start, g.lead, g.block_rows) == (0, 1, row_groups.BLOCK_ELEMENTS // 256)
    ops = [op for op in _ir(layer_norm, x, x[0], x[1]).funcs["main"].body.ops if op.name != "return"]
    (g,) = row_groups.plan(ops)
    assert g.stop - g.start == len(ops) >= 3


@pytest.mark.parametrize("fn, args, grouped", [
    (softmax, (_data((64, 256), np.float32),), True),
    (softmax, (_data((8, 1 << 16), np.float32),), False),  # rows too long to stay in cache
    (centre_columns_then_rows, (_data((64, 256), np.float64),), True),
    (by_row_sums_across, (_data((64, 64), np.float64),), False),  # a row-group value read across rows
    (lambda x: x / x.sum(axis=0), (_data((64, 256), np.float64),), False),  # rows are reduced
])
def test_which_kernels_are_grouped(fn, args, grouped):
    assert (".rows" in _llvm(fn, *args)) is grouped


def power_minus_row_sums(x, k):
    p = x ** k
    return p - p.sum(axis=1, keepdims=True)


def test_a_kernel_that_reports_errors_stays_out():
    x = np.arange(1, 65, dtype=np.int64).reshape(8, 8)
    ops = [op for op in _ir(power_minus_row_sums, x, x).funcs["main"].body.ops if op.name != "return"]
    power = [i for i, op in enumerate(ops) if op.regions and reports_errors(op.regions[0].block)]
    assert power  # x ** k raises for negative k: the entry reads its error slot right after the launch
    assert not any(g.start <= i < g.stop for g in row_groups.plan(ops) for i in power)
    f = aot.compile(power_minus_row_sums, options={"disk_cache": False})
    np.testing.assert_array_equal(f(x, x % 3), power_minus_row_sums(x, x % 3))
    with pytest.raises(ValueError, match="negative"):
        f(x, x % 3 - 1)


CASES = [
    ("softmax f32", softmax, lambda: (_data((300, 1000), np.float32),), 2e-6),
    ("softmax f64 3-D", softmax, lambda: (_data((7, 37, 129), np.float64),), 1e-14),
    ("log_softmax f32", log_softmax, lambda: (_data((257, 512), np.float32),), 2e-6),
    ("layer_norm f32", layer_norm, lambda: (_data((300, 1024), np.float32), _data(1024, np.float32, 1),
                                            _data(1024, np.float32, 2)), 2e-5),
    ("layer_norm f64", layer_norm, lambda: (_data((33, 100), np.float64), _data(100, np.float64, 1),
                                            _data(100, np.float64, 2)), 1e-12),
    ("stats", norm_and_stats, lambda: (_data((129, 64), np.float64),), 1e-14),
    ("columns then rows", centre_columns_then_rows, lambda: (_data((200, 64), np.float64),), 1e-12),
    ("row sums across", by_row_sums_across, lambda: (_data((64, 64), np.float64),), 1e-12),
]


@pytest.mark.parametrize("name, fn, make, rtol", CASES, ids=[c[0] for c in CASES])
def test_results_equal_numpy_and_do_not_depend_on_threads_or_grouping(name, fn, make, rtol, monkeypatch):
    args = make()
    ref = fn(*args)
    runs = {t: aot.compile(fn, options={"num_threads": t, "disk_cache": False})(*args) for t in (1, 2, 3, 5)}
    monkeypatch.setattr(row_groups, "plan", lambda ops: [])
    ungrouped = aot.compile(fn, options={"num_threads": 2, "disk_cache": False})(*args)
    for got in runs.values():
        for g, r, u in zip(_tuple(got), _tuple(ref), _tuple(ungrouped), strict=True):
            np.testing.assert_allclose(g, r, rtol=rtol, atol=rtol)
            np.testing.assert_array_equal(g, u)  # the same kernels on the same data: bit for bit
            assert g.dtype == r.dtype and g.shape == r.shape


def _tuple(x):
    return x if isinstance(x, tuple) else (x,)


@pytest.mark.parametrize("rows", [0, 1, 15, 17, 1000])
def test_dynamic_rows(rows):
    f = aot.compile(softmax, dynamic=True, options={"disk_cache": False})
    for n in (rows, 3):
        x = _data((n, 96), np.float64, seed=n)
        np.testing.assert_allclose(f(x), softmax(x), rtol=1e-14, atol=1e-300)
    n, c = aot.Dim("n"), 96
    llvm = str(codegen.lower_module(aot.export(softmax, (_data((8, c), np.float64),),
                                               dynamic_shapes={"x": {0: n}}).ir_module(),
                                    host_target(), CodegenOptions(num_threads=2)))
    assert ".rows" in llvm  # symbolic rows, static row length: grouped


def test_a_profile_shows_the_group_as_one_launch():
    p = aot.profile(softmax, _data((64, 256), np.float32), repeat=2)
    (row,) = p.rows
    assert ".rows" in row.label and row.label.endswith("red_ew_red_ew") and row.calls == 2
