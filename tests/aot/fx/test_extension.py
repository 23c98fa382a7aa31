"""The extension point later used by shape-aware tracing: a Tracer subclass that attaches example
values to nodes (create_proxy) and hands out a Proxy subclass (proxy) answering shape questions."""
from __future__ import annotations

import numpy as np

import aot.nn as nn
from aot import fx
from aot.fx.node import map_arg


class MetaProxy(fx.Proxy):
    @property
    def _val(self):
        return self.node.meta["val"]

    @property
    def shape(self):
        return self._val.shape

    @property
    def ndim(self):
        return self._val.ndim

    @property
    def dtype(self):
        return self._val.dtype

    def __len__(self):
        return len(self._val)


def _fetch(root, qualname):
    """Attribute lookup that bypasses Module.__getattr__ (patched while tracing)."""
    *path, name = qualname.split(".")
    mod = root
    for item in path:
        mod = mod._modules[item]
    for store in (mod._parameters, mod._buffers, mod.__dict__):
        if name in store:
            return store[name]
    raise AttributeError(qualname)


class ExampleValueTracer(fx.Tracer):
    """Computes every node's value on example inputs and stores it in node.meta['val']."""

    def __init__(self, *examples):
        super().__init__()
        self.examples = list(examples)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr, proxy_factory_fn)
        node = proxy.node
        a = map_arg(node.args, lambda n: n.meta["val"])
        k = map_arg(node.kwargs, lambda n: n.meta["val"])
        if kind == "placeholder":
            node.meta["val"] = self.examples.pop(0)
        elif kind == "get_attr":
            node.meta["val"] = _fetch(self.root, target)
        elif kind == "call_function":
            node.meta["val"] = target(*a, **k)
        elif kind == "call_method":
            node.meta["val"] = getattr(a[0], target)(*a[1:], **k)
        elif kind == "call_module":
            node.meta["val"] = self.root.get_submodule(target).forward(*a, **k)  # __call__ is patched
        return proxy

    def proxy(self, node):
        return MetaProxy(node, self)


def test_user_code_may_branch_on_shape_ndim_dtype_and_len():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(np.random.rand(2, 4))

        def forward(self, x):
            if x.ndim == 1:
                x = x[None]
            if x.dtype == np.float32:
                x = x.astype(np.float64)
            y = nn.functional.linear(x, self.w)
            return y * len(x) + y.shape[-1]

    m = M()
    graph = ExampleValueTracer(np.ones(4, np.float32)).trace(m)
    gm = fx.GraphModule(m, graph)
    ops = [n.target for n in gm.graph.nodes if n.op in ("call_function", "call_method")]
    import operator
    # branches were decided from the metadata; shape/len answers are constants in the graph
    assert ops == [operator.getitem, "astype", nn.functional.linear, operator.mul, operator.add]
    assert "mul = linear * 1" in gm.code and "add = mul + 2" in gm.code
    x = np.random.rand(4).astype(np.float32)
    np.testing.assert_allclose(gm(x), m(x))
    assert all("val" in n.meta for n in gm.graph.nodes if n.op != "output")
