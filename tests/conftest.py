"""Suite-wide settings: a private disk cache per test session, and the gpu/slow markers."""
from __future__ import annotations

import os
import shutil

import pytest


def pytest_configure(config):
    # no warm-start records (each links a shared library with cc on a background thread): the
    # tests of aot/compiler/warm_start.py turn it on for the processes they start
    os.environ.setdefault("AOT_WARM_START", "0")
    # never touch the user's real cache from tests; each xdist worker gets its own directory
    if "AOT_CACHE_DIR" not in os.environ or os.environ.get("AOT_TEST_OWN_CACHE"):
        import tempfile

        d = tempfile.mkdtemp(prefix="aot-test-cache-")
        os.environ["AOT_CACHE_DIR"] = d
        os.environ["AOT_TEST_OWN_CACHE"] = d
        config.add_cleanup(lambda: shutil.rmtree(d, ignore_errors=True))


def _has_gpu() -> bool:
    import ctypes.util

    return ctypes.util.find_library("cuda") is not None and os.path.exists("/dev/nvidia0")


def pytest_collection_modifyitems(config, items):
    if not config.getoption("markexpr"):  # slow-marked tests run only when asked for (-m slow)
        slow = [item for item in items if "slow" in item.keywords]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if "slow" not in item.keywords]
    if _has_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
