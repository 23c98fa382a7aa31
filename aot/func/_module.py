"""functional_call and stack_module_state: aot.nn modules as functions of their parameters."""
from __future__ import annotations

import contextlib

import numpy as np

from ._trace import TransformError


def _owner(module, dotted: str):
    *path, leaf = dotted.split(".")
    owner = module
    for p in path:
        sub = owner.__dict__["_modules"].get(p)
        if sub is None:
            raise TransformError(f"functional_call: the module has no submodule {p!r} (in {dotted!r})")
        owner = sub
    return owner, leaf


@contextlib.contextmanager
def _swapped(module, values: dict, strict: bool):
    names = {n for n, _ in module.named_parameters()} | {n for n, _ in _buffers(module)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise TransformError(f"functional_call: unexpected key(s) {unknown}; the module's parameters and "
                             f"buffers are {sorted(names)}")
    if strict and set(values) != names:
        raise TransformError(f"functional_call(strict=True): missing key(s) {sorted(names - set(values))}")
    saved = []
    for name, v in values.items():
        owner, leaf = _owner(module, name)
        store = owner.__dict__["_parameters"] if leaf in owner.__dict__["_parameters"] else owner.__dict__["_buffers"]
        saved.append((store, leaf, store[leaf]))
        store[leaf] = v
    try:
        yield
    finally:
        for store, leaf, old in reversed(saved):
            store[leaf] = old


def _buffers(module):
    fn = getattr(module, "named_buffers", None)
    return list(fn()) if fn is not None else []


def functional_call(module, parameter_and_buffer_dicts, args=(), kwargs=None, *, tie_weights=True, strict=False):
    """torch.func.functional_call: module(*args, **kwargs) with its parameters and buffers replaced
    by the given ones (a dict, or a tuple of dicts merged in order) for this call."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, dict):
        dicts = (dicts,)
    values: dict = {}
    for d in dicts:
        if not isinstance(d, dict):
            raise TransformError(f"functional_call: expected a dict or a tuple of dicts of arrays, got "
                                 f"{type(d).__name__}")
        dup = set(values) & set(d)
        if dup:
            raise TransformError(f"functional_call: key(s) {sorted(dup)} appear in more than one dict")
        values.update(d)
    if not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, values, strict):
        return module(*args, **(kwargs or {}))


def stack_module_state(models) -> tuple[dict, dict]:
    """torch.func.stack_module_state: (params, buffers), each name's arrays of all models stacked on a
    new leading dim (the models must share one structure)."""
    models = list(models)
    if not models:
        raise TransformError("stack_module_state: expected at least one model")
    first = models[0]
    for m in models[1:]:
        if type(m) is not type(first):
            raise TransformError(f"stack_module_state: models must be of one class, got {type(first).__name__} "
                                 f"and {type(m).__name__}")
    params = {n: np.stack([np.asarray(dict(m.named_parameters())[n]) for m in models])
              for n, _ in first.named_parameters()}
    buffers = {n: np.stack([np.asarray(dict(_buffers(m))[n]) for m in models]) for n, _ in _buffers(first)}
    return params, buffers
