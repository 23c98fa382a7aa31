"""Backend registry: name -> callable(gm: aot.fx.GraphModule, example_inputs: list[np.ndarray]) -> callable.

A backend receives the captured graph of core ops and, as example inputs, the flat list of the
arrays the graph takes: the array arguments of the first call that triggered the compile (pytree
leaves, in flattening order), followed by lifted arrays (module parameters/buffers and captured
global arrays). It returns a callable taking the same flat list of arrays and returning the flat
tuple of graph outputs.
"""
from __future__ import annotations

from collections.abc import Callable

BACKENDS: dict[str, Callable] = {}


def register_backend(compiler_fn: Callable | None = None, name: str | None = None):
    """Register a backend under `name` (default: the function's name); usable as a decorator."""
    if compiler_fn is None:
        return lambda fn: register_backend(fn, name)
    key = name or compiler_fn.__name__
    if key in BACKENDS and BACKENDS[key] is not compiler_fn:
        raise ValueError(f"backend {key!r} is already registered")
    BACKENDS[key] = compiler_fn
    return compiler_fn


def list_backends(exclude_tags=None) -> list[str]:
    return sorted(BACKENDS)


def lookup_backend(backend) -> Callable:
    if callable(backend):
        return backend
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a name or a callable, got {type(backend).__name__}")
    try:
        return BACKENDS[backend]
    except KeyError:
        raise ValueError(f"unknown backend {backend!r}; registered: {list_backends()}") from None


@register_backend(name="eager")
def eager(gm, example_inputs):
    """Run the captured graph with numpy (each core op's reference implementation); with symbolic
    sizes, their values are read from the inputs and put into the attributes that hold them."""
    if getattr(gm, "meta", {}).get("dynamic") is None:
        return gm.forward
    from ..fx.interpreter import Interpreter

    env = gm.meta["dynamic"].env

    class SizedInterpreter(Interpreter):
        def run_node(self, n):
            if n.op == "call_function":  # attributes with this call's sizes
                args, kwargs = self.fetch_args_kwargs_from_env(n)
                return n.target(*args, **{k: _sized(v, self.sizes, env) for k, v in kwargs.items()})
            value = super().run_node(n)
            if n.op == "placeholder":  # bind the symbols, as recorded and after the env's replacements
                for d, size in zip(n.meta["val"].shape, getattr(value, "shape", ())):
                    for e in (d, env.simplify(d)) if getattr(d, "free_symbols", None) else ():
                        if e.is_Symbol:
                            self.sizes[e] = size
            return value

    def run(*args):
        interp = SizedInterpreter(gm)
        interp.sizes = {}
        return interp.run(*args)

    return run


def _sized(v, sizes: dict, env):
    """An attribute with the symbols' values substituted (a size expression becomes its number)."""
    if isinstance(v, (tuple, list)):
        return type(v)(_sized(x, sizes, env) for x in v)
    if getattr(v, "free_symbols", None):
        e = env.simplify(v).subs(sizes)
        return int(e) if e.is_integer else float(e)
    return v


@register_backend(name="llvm")
def llvm(gm, example_inputs, options=None):
    """Native CPU code: fx graph -> ir -> fused kernels -> LLVM -> JIT."""
    from .llvm_backend import compile_graph

    return compile_graph(gm, example_inputs, options or {})
