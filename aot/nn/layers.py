"""The standard layers: Linear, activations, Dropout and Sequential."""
from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import functional as F
from .module import Module
from .parameter import Parameter

__all__ = ["Linear", "ReLU", "Sigmoid", "Tanh", "Dropout", "Sequential", "Identity"]


class Linear(Module):
    """`y = x @ weight.T + bias`; weight is (out_features, in_features), initialised as torch does
    (uniform in +-1/sqrt(in_features)) from numpy's global RNG."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 dtype: Any = np.float64) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bound = 1 / math.sqrt(in_features) if in_features > 0 else 0.0
        self.weight = Parameter(np.random.uniform(-bound, bound, (out_features, in_features)).astype(dtype))
        if bias:
            self.bias = Parameter(np.random.uniform(-bound, bound, (out_features,)).astype(dtype))
        else:
            self.register_parameter("bias", None)

    def forward(self, input: Any) -> Any:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        has_bias = self.bias is not None
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={has_bias}"


class Identity(Module):
    def forward(self, input: Any) -> Any:
        return input


class ReLU(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        return F.relu(input, inplace=self.inplace)


class Sigmoid(Module):
    def forward(self, input: Any) -> Any:
        return F.sigmoid(input)


class Tanh(Module):
    def forward(self, input: Any) -> Any:
        return F.tanh(input)


class Dropout(Module):
    """Dropout whose behaviour follows `self.training`, so `eval()` turns it off after tracing too."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Sequential(Module):
    """Runs its submodules in order; built from modules or from an OrderedDict of them."""

    def __init__(self, *args: Module) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def forward(self, input: Any) -> Any:
        for module in self._modules.values():
            input = module(input)
        return input

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, idx: int | slice) -> Any:
        items = list(self._modules.items())
        if isinstance(idx, slice):
            return Sequential(OrderedDict(items[idx]))
        if not -len(items) <= idx < len(items):
            raise IndexError(f"index {idx} is out of range for Sequential of length {len(items)}")
        return items[idx][1]

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self
