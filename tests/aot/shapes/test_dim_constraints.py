"""DimConstraints: suggested fixes for dims declared dynamic, in torch.export's style."""
from __future__ import annotations

import pytest

from aot.fx.experimental.symbolic_shapes import DimConstraints, DimDynamic, ShapeEnv

NAMES = {"L['x'].size()[0]": "N", "L['x'].size()[1]": "M", "L['y'].size()[0]": "K", "L['y'].size()[1]": "P",
         "L['z'].size()[0]": "Q"}


@pytest.fixture
def solved() -> DimConstraints:
    env = ShapeEnv()
    x = env.create_symbolic_sizes((8, 4), "x", dynamic_dims=[DimDynamic.DYNAMIC] * 2)
    y = env.create_symbolic_sizes((3, 8), "y", dynamic_dims=[DimDynamic.DYNAMIC] * 2)
    z = env.create_symbolic_sizes((10,), "z", dynamic_dims=[DimDynamic.DYNAMIC])
    assert x[0] <= 4096
    assert x[1] % 2 == 0
    assert y[1] == x[0]
    assert int(y[0]) == 3
    assert z[0] > x[1] + x[0] - 4
    dc = DimConstraints.from_env(env, source_name_to_debug_name=NAMES)
    dc.solve()
    return dc


def test_forced_specializations(solved):
    assert solved.forced_specializations() == {"K": 3}


def test_violations_text(solved):
    assert solved.violations() == [
        "N must be >= 2",
        "N must be <= 4096",
        "M must be >= 2",
        "M must be divisible by 2",
        "K must be specialized to 3 because the guards generated for it are too complex.",
        "P must be equal to N",
        "Q must be >= 2",
        "N + M < Q + 4 must hold",
    ]


def test_prettify_results(solved):
    assert solved.prettify_results() == "\n".join([
        "Specializations unexpectedly required (K)!",
        "  - K must be specialized to 3 because the guards generated for it are too complex.",
        "Suggested fixes:",
        "  N = Dim('N', min=2, max=4096)",
        "  _M = Dim('_M', min=1)",
        "  M = 2*_M",
        "  K = 3",
        "  P = N",
        "  Q = Dim('Q', min=2)",
    ])


def test_add_and_add_equality_directly():
    env = ShapeEnv()
    (n,) = env.create_symbolic_sizes((6,), "x")
    sym = n.node.expr
    dc = DimConstraints(dict(env.var_to_sources), dict(env.var_to_val), {sym})
    assert dc.add(sym >= 3) and dc.add(sym < 100)
    assert not dc.add(sym**2 > 7)  # not understood: listed as it is
    dc.add_equality("L['x'].size()[0]", 6)
    assert dc.forced_specializations() == {"dim0_x": 6}  # torch.export's default name for it
    with pytest.raises(KeyError):
        dc.add_equality("L['nope'].size()[0]", 1)
