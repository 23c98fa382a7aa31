"""`Module`: torch.nn.Module's object model (parameters, buffers, submodules) over numpy arrays."""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from ir.logger import get_logger

from .parameter import Parameter

__all__ = ["Module"]

logger = get_logger(__name__)


class _IncompatibleKeys(NamedTuple):
    missing_keys: list[str]
    unexpected_keys: list[str]


class Module:
    """Base class of models: attribute assignment registers Parameters, Modules and buffers.

    `__call__` runs `forward`. Under `aot.fx` tracing, `__call__` and attribute lookup are
    intercepted (as torch.fx does), which is why both go through these two methods only.
    """

    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, np.ndarray | None]
    _modules: dict[str, Module | None]

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" '
                                  "function")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # --- attribute model ---------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if "_parameters" not in d:
            raise AttributeError(f"cannot assign {name!r} before Module.__init__() call")
        params, modules, buffers = d["_parameters"], d["_modules"], d["_buffers"]
        if isinstance(value, Parameter):
            self._forget(name)
            params[name] = value
        elif name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(aot.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            self._forget(name)
            modules[name] = value
        elif name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                "(aot.nn.Module or None expected)")
            modules[name] = None
        elif name in buffers:
            if value is not None and not isinstance(value, np.ndarray):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(numpy.ndarray or None expected)")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def _forget(self, name: str) -> None:
        self.__dict__.pop(name, None)
        for store in ("_parameters", "_buffers", "_modules"):
            self.__dict__[store].pop(name, None)

    def __dir__(self) -> list[str]:
        registered = set(self._parameters) | set(self._buffers) | set(self._modules)
        return sorted(set(super().__dir__()) | registered)

    # --- registration ---------------------------------------------------------------------
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        _check_name(name, "parameter")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' as parameter '{name}' "
                            "(aot.nn.Parameter or None expected)")
        self._forget(name)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: np.ndarray | None, persistent: bool = True) -> None:
        _check_name(name, "buffer")
        if tensor is not None and not isinstance(tensor, np.ndarray):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' as buffer '{name}' "
                            "(numpy.ndarray or None expected)")
        self._forget(name)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        _check_name(name, "module")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._forget(name)
        self._modules[name] = module

    register_module = add_module

    # --- lookup ---------------------------------------------------------------------------
    def get_submodule(self, target: str) -> Module:
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}` "
                                     f"(looking up {target!r})")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an aot.nn.Module (looking up {target!r})")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters:
            raise AttributeError(f"`{name}` is not a parameter of {type(mod).__name__} "
                                 f"(looking up {target!r})")
        return mod._parameters[name]  # type: ignore[return-value]

    def get_buffer(self, target: str) -> np.ndarray:
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer of {type(mod).__name__} (looking up {target!r})")
        return mod._buffers[name]  # type: ignore[return-value]

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        memo = set() if memo is None else memo
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[int] = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, store: str, prefix: str, recurse: bool, remove_duplicate: bool) -> Iterator:
        seen: set[int] = set()
        if recurse:
            mods: Any = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        else:
            mods = [(prefix, self)]
        for mod_prefix, mod in mods:
            for name, value in getattr(mod, store).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{mod_prefix}.{name}" if mod_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, np.ndarray]]:
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[np.ndarray]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # --- modes and state ------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError(f"training mode is expected to be boolean, got {type(mode).__name__}")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def apply(self, fn: Callable[[Module], None]) -> Module:
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def state_dict(self, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, np.ndarray]:
        """Parameters and persistent buffers by qualified name; arrays share memory with the module."""
        out: dict[str, np.ndarray] = OrderedDict() if destination is None else destination
        for mod_prefix, mod in self.named_modules(prefix=prefix.rstrip(".")):
            head = f"{mod_prefix}." if mod_prefix else ""
            for name, p in mod._parameters.items():
                if p is not None:
                    out[head + name] = p if keep_vars else p.view(np.ndarray)
            for name, b in mod._buffers.items():
                if b is not None and name not in mod._non_persistent_buffers_set:
                    out[head + name] = b
        return out

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> _IncompatibleKeys:
        """Copy values into the existing arrays in place (shapes must match)."""
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = np.asarray(state_dict[key])
            if value.shape != target.shape:
                errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                              f"checkpoint, the shape in current model is {target.shape}.")
                continue
            target[...] = value
        if strict:
            if missing:
                errors.append("Missing key(s) in state_dict: " + ", ".join(repr(k) for k in missing) + ".")
            if unexpected:
                listed = ", ".join(repr(k) for k in unexpected)
                errors.append(f"Unexpected key(s) in state_dict: {listed}.")
        if errors:
            details = "\n\t".join(errors)
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t{details}")
        return _IncompatibleKeys(missing, unexpected)

    # --- printing -------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        children = [f"({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()]
        extra = self.extra_repr()
        if not children:
            return f"{type(self).__name__}({extra})"
        lines = ([extra] if extra else []) + children
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


def _check_name(name: str, kind: str) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string, got {type(name).__name__}")
    if "." in name or name == "":
        raise KeyError(f'{kind} name can\'t contain "." and can\'t be empty, got {name!r}')
