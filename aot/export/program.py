"""`aot.export` and `ExportedProgram`: a traced, frozen function with its input/output specs,
range constraints and guards (torch.export's contract, numpy arrays in place of tensors)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ir import dtypes as D
from ir.symbols import SymbolInfo, dim_str

from ..fx._pytree import tree_flatten, tree_unflatten
from ..fx.interpreter import Interpreter
from .dims import Dim, ExportError, arg_names, resolve_dynamic_shapes
from .guards import readable
from .trace import Traced, trace_for_export


@dataclass(frozen=True)
class InputSpec:
    name: str  # the argument as the user wrote it: x, pair[0], ...
    dtype: np.dtype
    shape: tuple  # ints and Dim names

    def __str__(self) -> str:
        return f"{self.name}: {D.from_numpy(self.dtype).name}[{','.join(dim_str(d) for d in self.shape)}]"


@dataclass(frozen=True)
class OutputSpec:
    name: str
    dtype: np.dtype
    shape: tuple  # ints and size expressions (text) over the Dim names

    def __str__(self) -> str:
        return f"{self.name}: {D.from_numpy(self.dtype).name}[{','.join(dim_str(d) for d in self.shape)}]"


class ExportedProgram:
    """What aot.export returns. `graph_module` / `graph`: the captured core-op graph;
    `input_specs`, `output_specs`; `range_constraints`: {Dim name: (min, max or None)};
    `guards`: sympy booleans over the Dim symbols that the inputs must satisfy besides the
    ranges (the shape decisions taken while tracing; `str(program)` prints them as Python);
    `module()`: a callable that runs the program with numpy (same arguments as the original
    function), checking specs, ranges and guards first."""

    def __init__(self, fn, traced: Traced, example_args: tuple, example_kwargs: dict):
        self._fn = fn
        self._traced = traced
        self.example_inputs = (example_args, example_kwargs)
        self.graph_module = traced.gm
        self.range_constraints = {d.name: (d.min, d.max) for d in _unique(traced.dims.values())}
        self.guards = list(traced.guards)
        metas = [n.meta["val"] for n in traced.gm.graph.nodes if n.op == "placeholder"]
        self.input_specs = [  # the declared dims: `y: f64[M]` even when a guard says M == N
            InputSpec(name, m.dtype.numpy, tuple(shape))
            for name, m, shape in zip(traced.input_names, metas, traced.input_shapes, strict=True)
        ]
        out_node = next(n for n in traced.gm.graph.nodes if n.op == "output")
        outs = out_node.args[0]
        self.output_specs = [
            OutputSpec(
                f"out{k}" if len(outs) > 1 else "out", o.meta["val"].dtype.numpy, tuple(o.meta["val"].shape)
            )
            for k, o in enumerate(outs)
        ]
        self.name = getattr(fn, "__name__", "fn")

    @property
    def graph(self):
        return self.graph_module.graph

    @property
    def traced(self) -> Traced:
        return self._traced

    def __str__(self) -> str:
        ins = ", ".join(str(s) for s in self.input_specs)
        outs = ", ".join(str(s) for s in self.output_specs)
        rng = ", ".join(
            f"{n}: [{lo}, {'inf' if hi is None else hi}]" for n, (lo, hi) in self.range_constraints.items()
        )
        return (
            f"ExportedProgram {self.name}({ins}) -> ({outs})\n  range constraints: {{{rng}}}\n"
            f"  guards: [{', '.join(readable(g) for g in self.guards)}]\n{self.graph}"
        )

    __repr__ = __str__

    # --- running -------------------------------------------------------------------------------
    def module(self):
        """A callable with the original function's arguments that runs the graph with numpy."""
        return functools.partial(_run_program, self)

    def flat_inputs(self, args, kwargs=None) -> list[np.ndarray]:
        """The graph inputs for a call: checks Python-scalar leaves (specialised at export) and
        array dtypes, ranks, static sizes, ranges and guards."""
        return self._bind(args, kwargs)[0]

    def _bind(self, args, kwargs) -> tuple[list[np.ndarray], dict[str, int]]:
        leaves, _ = tree_flatten((tuple(args), dict(kwargs or {})))
        t = self._traced
        if len(leaves) != len(t.leaf_kinds):
            raise TypeError(
                f"{self.name}: expected the structure of the example inputs ({len(t.leaf_kinds)} "
                f"leaves), got {len(leaves)}"
            )
        for leaf, kind in zip(leaves, t.leaf_kinds, strict=True):
            if kind != "array" and not _same(leaf, kind[1]):
                raise ValueError(f"{self.name}: a non-array argument was {kind[1]!r} at export, got {leaf!r}")
        arrays = [np.asarray(leaves[i]) for i in t.input_index]
        return arrays, self.sizes(arrays)

    def sizes(self, arrays) -> dict[str, int]:
        """The value of each Dim for these graph inputs (checked against specs, ranges, guards)."""
        env: dict[str, int] = {}
        for a, spec in zip(arrays, self.input_specs, strict=True):
            if a.dtype != spec.dtype:
                raise TypeError(
                    f"{self.name}: argument {spec.name} has dtype {a.dtype}, expected {spec.dtype}"
                )
            if a.ndim != len(spec.shape):
                raise ValueError(
                    f"{self.name}: argument {spec.name} has {a.ndim} dims, expected {len(spec.shape)}"
                )
            for k, (n, d) in enumerate(zip(a.shape, spec.shape, strict=True)):
                if isinstance(d, int):
                    if n != d:
                        raise ValueError(f"{self.name}: {spec.name}.shape[{k}] is {n}, expected {d}")
                    continue
                name = str(d)
                lo, hi = self.range_constraints[name]
                if n < lo or (hi is not None and n > hi):
                    raise ValueError(
                        f"{self.name}: {spec.name}.shape[{k}] = {n} is outside the range of {name} "
                        f"[{lo}, {'inf' if hi is None else hi}]"
                    )
                if env.setdefault(name, n) != n:
                    raise ValueError(
                        f"{self.name}: size {name} is {env[name]} and {n} in different arguments"
                    )
        for g in self.guards:
            if not _holds(g, env):
                sizes = ", ".join(f"{s} = {env[s.name]}" for s in sorted(g.free_symbols, key=str))
                raise ValueError(f"{self.name}: the input sizes ({sizes}) break the guard {readable(g)}")
        return env

    def outputs_from(self, graph_outs, args, kwargs=None):
        """Rebuild the function's output structure from the flat graph outputs."""
        leaves, _ = tree_flatten((tuple(args), dict(kwargs or {})))
        flat = [
            graph_outs[k] if kind == "graph" else k for kind, k in self._traced.out_template
        ]
        return tree_unflatten(flat, self._traced.out_spec)

    # --- lowering -------------------------------------------------------------------------------
    def ir_module(self):
        """A fresh optimised ir Module (function `main`) with the Dim symbols and guards declared."""
        from ..compiler.llvm_backend import build_ir

        module = build_ir(self.graph_module)  # decides with the trace's facts (gm.meta["dynamic"])
        for name, (lo, hi) in self.range_constraints.items():
            module.declare_symbol(SymbolInfo(name, lo, hi))
        module.guards = list(self.guards)
        return module


def _run_program(program: ExportedProgram, *args, **kwargs):
    arrays, sizes = program._bind(args, kwargs)
    outs = _SizedInterpreter(program.graph_module, sizes).run(*arrays)
    outs = outs if isinstance(outs, tuple) else (outs,)
    return program.outputs_from(outs, args, kwargs)


class _SizedInterpreter(Interpreter):
    """Runs the graph with numpy, with the Dims in op attributes (`stops=(N,)`) bound to sizes."""

    def __init__(self, gm, sizes: dict[str, int]):
        super().__init__(gm)
        from ir.symbols import size_symbol

        self._bind = {size_symbol(k): v for k, v in sizes.items()}

    def call_function(self, target, args, kwargs):
        return target(*args, **{k: self._value(v) for k, v in kwargs.items()})

    def _value(self, v):
        if isinstance(v, (tuple, list)):
            return type(v)(self._value(x) for x in v)
        if getattr(v, "free_symbols", None):
            return int(v.xreplace(self._bind))
        return v


def _holds(guard, env: dict[str, int]) -> bool:
    from ir.symbols import size_symbol

    return bool(guard.subs({size_symbol(k): v for k, v in env.items()}))


def _same(a, b) -> bool:
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:  # noqa: BLE001 - an exotic __eq__ just means "not the same"
        return False


def _unique(dims) -> list[Dim]:
    seen: dict[str, Dim] = {}
    for d in dims:
        seen.setdefault(d.name, d)
    return list(seen.values())


def export(fn, args, kwargs=None, *, dynamic_shapes=None) -> ExportedProgram:
    """Trace `fn` on example `args` into an ExportedProgram (torch.export.export's contract).

    dynamic_shapes: which dims stay symbolic, e.g. {"x": {0: aot.Dim("N", min=1, max=4096)}}."""
    from ..compiler.api import CompiledFunction
    from ..nn import Module

    if isinstance(fn, CompiledFunction):  # aot.compile(f): export the function it wraps
        fn = fn._orig
    if not isinstance(args, tuple):
        raise TypeError(f"aot.export: args must be a tuple of example inputs, got {type(args).__name__}")
    kwargs = dict(kwargs or {})
    target = fn.forward if isinstance(fn, Module) else fn
    if not callable(target):
        raise TypeError(f"aot.export expects a function or aot.nn.Module, got {type(fn).__name__}")
    dims = resolve_dynamic_shapes(target, args, kwargs, dynamic_shapes)
    names = _leaf_names(target, args, kwargs)
    traced = trace_for_export(target, args, kwargs, dims, names)
    return ExportedProgram(target, traced, args, kwargs)


def _leaf_names(fn, args, kwargs) -> list[str]:
    out: list[str] = []
    for name, value in zip(
        arg_names(fn, len(args)) + list(kwargs), list(args) + list(kwargs.values()), strict=True
    ):
        _names(value, name, out)
    return out


def _names(tree, prefix: str, out: list[str]) -> None:
    leaves, _ = tree_flatten(tree)
    if len(leaves) == 1 and leaves[0] is tree:
        out.append(prefix)
    elif isinstance(tree, dict):
        for k in tree:  # tree_flatten's order for dicts
            _names(tree[k], f"{prefix}[{k!r}]", out)
    elif isinstance(tree, (list, tuple)):
        for i, v in enumerate(tree):
            _names(v, f"{prefix}[{i}]", out)
    else:
        out.extend(prefix for _ in leaves)


__all__ = ["ExportError", "ExportedProgram", "InputSpec", "OutputSpec", "export"]
