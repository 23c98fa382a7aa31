"""aot.nn.Module, Parameter and the standard layers."""
from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import aot.nn as nn

RNG = np.random.default_rng(5)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.act = nn.ReLU()
        self.register_buffer("running", np.zeros(2))
        self.register_buffer("scratch", np.ones(2), persistent=False)

    def forward(self, x):
        return self.act(self.fc(x)) + self.running


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.out = nn.Linear(2, 1, bias=False)
        self.gain = nn.Parameter(np.array([2.0]))

    def forward(self, x):
        return self.out(self.block(x)) * self.gain


def test_parameter_is_an_in_place_updatable_ndarray():
    data = np.arange(3.0)
    p = nn.Parameter(data)
    assert isinstance(p, np.ndarray) and p.requires_grad
    p[...] = 7.0
    assert data[0] == 7.0  # shares memory, like torch.nn.Parameter
    assert type(p * 2) is np.ndarray and type(np.sin(p)) is np.ndarray
    assert "Parameter containing" in repr(p)
    q = pickle.loads(pickle.dumps(nn.Parameter(np.ones(2), requires_grad=False)))
    assert isinstance(q, nn.Parameter) and not q.requires_grad


def test_registration_and_lookup():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["gain", "block.fc.weight", "block.fc.bias", "out.weight"]
    assert len(list(net.parameters())) == 4
    assert [n for n, _ in net.named_modules()] == ["", "block", "block.fc", "block.act", "out"]
    assert [n for n, _ in net.named_buffers()] == ["block.running", "block.scratch"]
    assert net.get_submodule("block.fc") is net.block.fc
    assert net.get_parameter("block.fc.bias") is net.block.fc.bias
    assert net.get_buffer("block.running") is net.block.running
    assert [n for n, _ in net.named_children()] == ["block", "out"]
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        net.get_submodule("block.nope")
    with pytest.raises(AttributeError, match="object has no attribute 'missing'"):
        _ = net.missing


def test_setattr_type_checks():
    net = Net()
    with pytest.raises(TypeError, match="as parameter 'gain'"):
        net.gain = np.ones(1)
    net.gain = None
    assert net.gain is None and "gain" not in dict(net.named_parameters())
    with pytest.raises(TypeError, match="as child module 'out'"):
        net.out = 3
    with pytest.raises(AttributeError, match="before Module.__init__"):
        class Early(nn.Module):
            def __init__(self):
                self.x = 1
        Early()
    with pytest.raises(KeyError):
        net.register_buffer("a.b", np.ones(1))


def test_train_eval_and_call():
    net = Net()
    assert net.training and net.block.fc.training
    assert net.eval() is net and not net.block.act.training
    net.train()
    assert net.block.training
    x = RNG.standard_normal((4, 3))
    np.testing.assert_allclose(net(x), net.forward(x))


def test_state_dict_round_trip_in_place():
    a, b = Net(), Net()
    sd = a.state_dict()
    # torch's order: a module's own parameters and buffers, then its children
    assert list(sd) == ["gain", "block.running", "block.fc.weight", "block.fc.bias", "out.weight"]
    weight_before = b.block.fc.weight
    result = b.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert b.block.fc.weight is weight_before  # updated in place
    x = RNG.standard_normal((2, 3))
    np.testing.assert_allclose(a(x), b(x))
    with pytest.raises(RuntimeError, match="size mismatch for gain"):
        b.load_state_dict({**sd, "gain": np.ones(2)})
    with pytest.raises(RuntimeError, match="Missing key"):
        b.load_state_dict({"gain": np.ones(1)})
    assert b.load_state_dict({"gain": np.ones(1), "x": 1}, strict=False).unexpected_keys == ["x"]


def test_linear_matches_torch_layout():
    lin = nn.Linear(4, 5)
    assert lin.weight.shape == (5, 4) and lin.bias.shape == (5,)
    assert np.all(np.abs(lin.weight) <= 0.5)
    x = RNG.standard_normal((3, 4))
    np.testing.assert_allclose(lin(x), x @ lin.weight.T + lin.bias)
    assert nn.Linear(4, 5, bias=False).bias is None
    assert nn.Linear(2, 2, dtype=np.float32)(np.ones((1, 2), np.float32)).dtype == np.float32
    assert repr(lin) == "Linear(in_features=4, out_features=5, bias=True)"


def test_activations_and_dropout_modules():
    x = RNG.standard_normal(10)
    np.testing.assert_array_equal(nn.ReLU()(x), np.maximum(x, 0))
    np.testing.assert_allclose(nn.Sigmoid()(x), 1 / (1 + np.exp(-x)))
    np.testing.assert_allclose(nn.Tanh()(x), np.tanh(x))
    d = nn.Dropout(0.3)
    np.testing.assert_array_equal(d.eval()(x), x)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_sequential():
    seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    assert len(seq) == 3 and isinstance(seq[1], nn.ReLU) and isinstance(seq[-1], nn.Linear)
    assert isinstance(seq[:2], nn.Sequential) and len(seq[:2]) == 2
    x = RNG.standard_normal((5, 3))
    np.testing.assert_allclose(seq(x), seq[2](seq[1](seq[0](x))))
    named = nn.Sequential(OrderedDict([("first", nn.Tanh()), ("second", nn.Sigmoid())]))
    assert [n for n, _ in named.named_children()] == ["first", "second"]
    seq.append(nn.Tanh())
    assert len(list(iter(seq))) == 4
    with pytest.raises(IndexError):
        seq[10]


def test_repr_and_deepcopy_and_apply():
    net = Net()
    text = repr(net)
    assert text.startswith("Net(\n  (block): Block(")
    assert "(out): Linear(in_features=2, out_features=1, bias=False)" in text
    clone = copy.deepcopy(net)
    clone.gain[...] = 0
    assert net.gain[0] == 2.0
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "ReLU", "Block", "Linear", "Net"]


def test_forward_must_be_defined():
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)
