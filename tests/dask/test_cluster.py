"""aot on a real dask.distributed cluster (LocalCluster: a scheduler and two worker processes on
loopback): the tasks carry native code, so the workers run it without compiling (their compile
counters are read back), and a worker killed mid-computation is survived by Dask's retry."""
from __future__ import annotations

import os

import numpy as np
import pytest

import aot

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


def fn(x, y):
    z = np.sin(x) * np.exp(-y) + x * y / (1 + y * y)
    return z.sum(), z.mean(axis=0), np.argmax(z, axis=1), np.fft.rfft(z, axis=1)


def _compiles() -> dict:
    from aot.compiler import llvm_backend

    return dict(llvm_backend.STATS)


def kill_once(block, marker):
    """The first task to run it kills its worker process (the nanny starts a new one)."""
    if block.size == 0:  # dask's probe for the output type, in the client
        return block
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return block
    os.close(fd)
    os._exit(1)


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    cache = tmp_path_factory.mktemp("worker-cache")  # the workers' own, empty disk cache
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
                                  env={"AOT_CACHE_DIR": str(cache)}) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _data():
    rng = np.random.default_rng(0)
    return rng.random((400, 32)), rng.random((400, 32))


def _compare(got, x, y):
    for g, w in zip(got, fn(x, y)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_workers_run_shipped_code_without_compiling(client):
    x, y = _data()
    f = aot.compile(fn)
    lazy = f(da.from_array(x, chunks=(50, 32)), da.from_array(y, chunks=(50, 32)))
    _compare(client.compute(list(lazy), sync=True), x, y)
    stats = client.run(_compiles)
    assert len(stats) == 2
    assert all(s["compiles"] == 0 for s in stats.values()), stats


def test_a_worker_killed_mid_computation_is_survived(client, tmp_path):
    x, y = _data()
    dx = da.from_array(x, chunks=(50, 32)).map_blocks(kill_once, marker=str(tmp_path / "killed"),
                                                         meta=np.empty((0, 0), x.dtype))
    lazy = aot.compile(fn)(dx, da.from_array(y, chunks=(50, 32)))
    _compare(client.compute(list(lazy), sync=True), x, y)
    assert (tmp_path / "killed").exists()
    client.wait_for_workers(2, timeout=60)
    assert all(s["compiles"] == 0 for s in client.run(_compiles).values())  # the new worker too
