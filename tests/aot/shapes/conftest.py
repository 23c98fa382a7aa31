from __future__ import annotations

import pytest

from aot.fx.experimental.symbolic_shapes import ShapeEnv


@pytest.fixture
def env() -> ShapeEnv:
    return ShapeEnv()
