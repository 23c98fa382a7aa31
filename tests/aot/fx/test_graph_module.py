"""GraphModule: regenerating code, running it, saving it, printing it, managing submodules."""
from __future__ import annotations

import copy
import importlib
import sys

import numpy as np
import pytest

import aot.nn as nn
from aot import fx

RNG = np.random.default_rng(2)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = nn.Sequential(nn.Linear(4, 6), nn.Tanh())
        self.head = nn.Linear(6, 2)
        self.scale = nn.Parameter(np.full(2, 0.5))
        self.register_buffer("shift", np.arange(2.0))
        self.unused = nn.ReLU()

    def forward(self, x):
        h = self.block(x)
        return self.head(h) * self.scale + self.shift


def test_call_matches_eager_and_code_is_valid_python():
    m = Net()
    gm = fx.symbolic_trace(m)
    compile(gm.code, "<gm>", "exec")
    for shape in [(3, 4), (1, 4), (7, 4)]:
        x = RNG.standard_normal(shape)
        np.testing.assert_allclose(gm(x), m(x), rtol=1e-14)
        np.testing.assert_allclose(gm.forward(x), m(x), rtol=1e-14)
    assert 'getattr(self.block, "0")' in gm.code or "getattr(self.block, '0')" in gm.code


def test_reassigning_graph_regenerates_code():
    gm = fx.symbolic_trace(lambda x: np.sin(x) + 1)
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(np.cos, (x,)))
    gm.graph = g
    assert "numpy.cos(x)" in gm.code and g.owning_module is gm
    np.testing.assert_allclose(gm(np.zeros(2)), np.ones(2))


def test_recompile_after_in_place_edit():
    gm = fx.symbolic_trace(lambda x: np.sin(x))
    node = gm.graph.find_nodes(op="call_function", target=np.sin)[0]
    node.target = np.cos
    assert "numpy.sin" in gm.code
    gm.recompile()
    assert "numpy.cos" in gm.code
    np.testing.assert_allclose(gm(np.zeros(3)), np.ones(3))


def test_each_instance_has_its_own_forward():
    a = fx.symbolic_trace(lambda x: x + 1)
    b = fx.symbolic_trace(lambda x: x * 3)
    assert a(2) == 3 and b(2) == 6 and type(a) is not type(b)


def test_to_folder_is_importable(tmp_path):
    m = Net()
    gm = fx.symbolic_trace(m)
    gm.to_folder(tmp_path / "saved_net", "SavedNet")
    sys.path.insert(0, str(tmp_path))
    try:
        mod = importlib.import_module("saved_net")
        restored = mod.SavedNet()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("saved_net", None)
        sys.modules.pop("saved_net.module", None)
    x = RNG.standard_normal((5, 4))
    np.testing.assert_allclose(restored(x), m(x), rtol=1e-14)
    assert isinstance(restored, nn.Module)


def test_print_readable(capsys):
    gm = fx.symbolic_trace(Net())
    text = gm.print_readable(print_output=False)
    assert capsys.readouterr().out == ""
    assert text.startswith("class Net(aot.nn.Module):") and "    def forward(self, x):" in text
    gm.print_readable()
    assert capsys.readouterr().out.strip() == text.strip()


def test_add_delete_submodule():
    gm = fx.symbolic_trace(Net())
    assert gm.add_submodule("extra.deep.relu", nn.ReLU())
    assert isinstance(gm.get_submodule("extra.deep.relu"), nn.ReLU)
    assert not gm.add_submodule("scale.sub", nn.ReLU())  # `scale` is a Parameter, not a Module
    assert gm.delete_submodule("extra.deep.relu")
    assert not gm.delete_submodule("extra.deep.relu")
    assert not gm.delete_submodule("nothing.here")


def test_delete_all_unused_submodules():
    gm = fx.symbolic_trace(Net())
    gm.add_submodule("spare", nn.Sigmoid())
    gm.add_submodule("head_helper.x", nn.Tanh())
    gm.delete_all_unused_submodules()
    names = {n for n, _ in gm.named_modules()}
    assert names == {"", "block", "block.0", "block.1", "head"}
    x = RNG.standard_normal((2, 4))
    assert gm(x).shape == (2, 2)


def test_graph_module_from_dict_root():
    g = fx.Graph()
    x = g.placeholder("x")
    w = g.get_attr("sub.w")
    g.output(g.call_method("__matmul__", (x, w)))
    w_val = RNG.standard_normal((3, 2))
    gm = fx.GraphModule({"sub.w": w_val}, g, class_name="FromDict")
    x_val = RNG.standard_normal((4, 3))
    np.testing.assert_allclose(gm(x_val), x_val @ w_val)
    assert type(gm).__name__ == "FromDict"
    with pytest.raises(RuntimeError, match="missing from the root dict"):
        fx.GraphModule({}, g)


def test_deepcopy_graph_module():
    gm = fx.symbolic_trace(Net())
    gm2 = copy.deepcopy(gm)
    assert gm2.code == gm.code and gm2.graph is not gm.graph
    gm2.head.weight[...] = 0
    x = RNG.standard_normal((2, 4))
    assert not np.allclose(gm(x), gm2(x))


def test_generated_code_traceback_points_at_source():
    gm = fx.symbolic_trace(lambda x: np.reshape(x, (5, 5)))
    with pytest.raises(ValueError) as info:
        gm(np.zeros(3))
    import traceback
    tb = "".join(traceback.format_exception(info.value))
    assert "reshape = numpy.reshape(x, (5, 5))" in tb


def test_pickle_round_trip_regenerates_code():
    import pickle

    m = Net()
    gm = fx.symbolic_trace(m)
    gm.graph.find_nodes(op="call_module", target="head")[0].meta["note"] = "kept"
    restored = pickle.loads(pickle.dumps(gm))
    assert type(restored).__name__ == "Net" and restored.code == gm.code
    assert restored.graph.find_nodes(op="call_module", target="head")[0].meta["note"] == "kept"
    x = RNG.standard_normal((3, 4))
    np.testing.assert_allclose(restored(x), m(x))
    restored.graph.lint()


def test_retracing_a_graph_module():
    m = Net()
    gm2 = fx.symbolic_trace(fx.symbolic_trace(m))
    assert gm2.code == fx.symbolic_trace(m).code
    x = RNG.standard_normal((3, 4))
    np.testing.assert_allclose(gm2(x), m(x))
