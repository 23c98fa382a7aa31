"""aot.nn: the part of torch.nn that tracing needs, on numpy arrays."""
from __future__ import annotations

from . import functional
from .layers import Dropout, Identity, Linear, ReLU, Sequential, Sigmoid, Tanh
from .module import Module
from .parameter import Parameter

__all__ = ["Module", "Parameter", "Linear", "ReLU", "Sigmoid", "Tanh", "Dropout", "Sequential", "Identity",
           "functional"]
