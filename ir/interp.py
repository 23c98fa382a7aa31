"""Reference interpreter: runs any function with numpy through each op's `reference`.

It is the semantic ground truth that passes and code generators are tested against. Inputs are
checked against the signature (count, dtype, shape); symbolic dims are bound from the inputs and
module guards and symbol ranges are checked. Every op's results are checked against their declared
types, so a rule that disagrees with its reference is reported at the op that produced it. Values
are dropped after their last use (like torch.fx's Interpreter), so peak memory follows liveness.

Fused kernels run on whole arrays: operands are broadcast to the kernel's `shape`, the body's
scalar ops run elementwise on arrays through the same references, and kernel.reduce combines the
yielded array over `axes` as its kind's record (ir.reductions) says. kernel.fft runs its prologue
like a kernel.elementwise body, the transform's reference on the result, then its epilogue on that.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .core import Block, Func, Module, Operation, Value
from .opdef import MissingRule, lookup
from .reductions import REDUCTIONS
from .structural import inner_fft
from .symbols import is_static, sympy
from .types import ScalarType, TensorType
from .verifier import describe_op

Env = dict  # sympy Symbol -> int


class InterpError(RuntimeError):
    """An op produced a value that disagrees with its declared type, or cannot be executed."""


# --- symbolic dims ---------------------------------------------------------------------------------

def eval_dim(dim: Any, env: Env) -> int:
    """The concrete size of a dim under the symbol bindings `env`."""
    if is_static(dim):
        return dim
    value = dim.xreplace(env)
    if isinstance(value, int):  # a bare symbol is replaced by the Python int itself
        return value
    if value.free_symbols:
        names = sorted(str(s) for s in value.free_symbols)
        raise ValueError(f"dimension {dim} depends on unbound size symbol(s) {names}")
    return int(value)


def concretize(x: Any, env: Env) -> Any:
    """Attributes with every symbolic dim replaced by its size (in dicts, tuples and lists)."""
    if isinstance(x, dict):
        return {k: concretize(v, env) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return type(x)(concretize(e, env) for e in x)
    if hasattr(x, "free_symbols") and hasattr(x, "xreplace") and x.free_symbols:
        value = x.xreplace(env)
        return int(value) if isinstance(value, int) or value.is_Integer else value
    return x


def _arg_label(func: Func, i: int) -> str:
    hint = func.args[i].name_hint
    return f"argument #{i}" + (f" (%{hint})" if hint else "") + f" of @{func.name}"


def bind_inputs(func: Func, arrays: tuple) -> tuple[list[np.ndarray], Env]:
    """Check `arrays` against the signature of `func`; return them as arrays and the size bindings."""
    if len(arrays) != len(func.args):
        raise TypeError(f"@{func.name} takes {len(func.args)} argument(s) "
                        f"({', '.join(map(str, func.arg_types))}), got {len(arrays)}")
    out = [np.asarray(a) for a in arrays]
    env: Env = {}
    origin: dict[Any, str] = {}
    deferred = []
    for i, (a, t) in enumerate(zip(out, func.arg_types)):
        label = _arg_label(func, i)
        if a.dtype != t.dtype.numpy:
            raise TypeError(f"{label}: expected dtype {t.dtype.np_name} ({t}), got {a.dtype}")
        if a.ndim != len(t.shape):
            raise ValueError(f"{label}: expected rank {len(t.shape)} ({t}), got shape {a.shape}")
        for k, (dim, size) in enumerate(zip(t.shape, a.shape)):
            if is_static(dim):
                if dim != size:
                    raise ValueError(f"{label}: expected {t}, got shape {a.shape} (dim {k} must be {dim})")
            elif dim.is_Symbol:
                if dim in env and env[dim] != size:
                    raise ValueError(f"{label}: dim {k} is {size}, but size symbol {dim} is {env[dim]} "
                                     f"from {origin[dim]} (expected {t}, got shape {a.shape})")
                env.setdefault(dim, size)
                origin.setdefault(dim, f"{label} dim {k}")
            else:
                deferred.append((label, t, a.shape, k, dim, size))
    for label, t, shape, k, dim, size in deferred:
        _bind_expression(env, dim, size)
        unbound = sorted(str(s) for s in dim.free_symbols if s not in env)
        if unbound:
            raise ValueError(f"{label}: cannot bind size symbol(s) {unbound} from dim {k} = {dim} "
                             f"(expected {t}, got shape {shape})")
        if eval_dim(dim, env) != size:
            raise ValueError(f"{label}: dim {k} is {size}, but {dim} = {eval_dim(dim, env)} "
                             f"(expected {t}, got shape {shape})")
    return out, env


def _bind_expression(env: Env, dim: Any, size: int) -> None:
    """Bind the one unbound symbol of a compound dim such as `2*s0` from its size, if it is solvable."""
    free = [s for s in dim.free_symbols if s not in env]
    if len(free) != 1:
        return
    sp = sympy()
    sols = [s for s in sp.solve(sp.Eq(dim.xreplace(env), size), free[0]) if s.is_Integer and s > 0]
    if len(sols) == 1:
        env[free[0]] = int(sols[0])


def check_guards(module: Module, env: Env, func: Func) -> None:
    """Symbol ranges and guards of `module` must hold for the bindings `env`."""
    by_name = {str(s): v for s, v in env.items()}
    for name, info in module.symbols.items():
        if name not in by_name:
            continue
        v = by_name[name]
        if v < info.lower or (info.upper is not None and v > info.upper):
            upper = "inf)" if info.upper is None else f"{info.upper}]"
            raise ValueError(f"@{func.name}: size symbol {name} = {v} is outside its range "
                             f"[{info.lower}, {upper}")
    for g in module.guards:
        held = g.xreplace(env) if hasattr(g, "xreplace") else g
        if getattr(held, "free_symbols", None):
            continue  # a guard over symbols this function does not bind
        if not bool(held):
            bound = ", ".join(f"{k} = {v}" for k, v in sorted(by_name.items()))
            raise ValueError(f"@{func.name}: guard {g} fails for the given inputs ({bound})")


# --- execution --------------------------------------------------------------------------------------

def run_module(module: Module, name: str, *arrays, check_types: bool = True) -> tuple[np.ndarray, ...]:
    if name not in module.funcs:
        raise KeyError(f"module @{module.name} has no function @{name}; it has {sorted(module.funcs)}")
    return run_func(module.funcs[name], *arrays, check_types=check_types)


def run_func(func: Func, *arrays, check_types: bool = True) -> tuple[np.ndarray, ...]:
    """Execute `func` on numpy inputs; returns the tuple of its results."""
    values, env = bind_inputs(func, arrays)
    if func.parent is not None:
        check_guards(func.parent, env, func)
    frame = _Frame(env, check_types)
    return tuple(frame.run_block(func.body, values))


class _Frame:
    def __init__(self, env: Env, check_types: bool):
        self.env = env
        self.check_types = check_types

    def run_block(self, block: Block, args: list) -> list:
        """Run `block` with its arguments bound to `args`; returns the terminator's operand values."""
        vals: dict[Value, Any] = dict(zip(block.args, args))
        last_use = _last_uses(block)
        for i, op in enumerate(block.ops):
            if op is block.terminator and _is_terminator(op):
                return [vals[v] for v in op.operands]
            results = self.run_op(op, [vals[v] for v in op.operands])
            for r, x in zip(op.results, results):
                vals[r] = x
            for v in last_use.get(i, ()):
                vals.pop(v, None)
        raise InterpError("block ended without a terminator")

    def run_op(self, op: Operation, operands: list) -> list:
        executor = REGION_EXECUTORS.get(op.name)
        try:
            with np.errstate(all="ignore"):
                if executor is not None:
                    results = executor(self, op, operands)
                else:
                    results = _call_reference(op, operands, self.env)
        except (MissingRule, InterpError):
            raise
        except Exception as e:
            e.add_note(f"while interpreting {describe_op(op)}")
            raise
        if self.check_types:
            self._check_results(op, results)
        return results

    def _check_results(self, op: Operation, results: list) -> None:
        for i, (r, x) in enumerate(zip(op.results, results)):
            t = r.type
            if isinstance(t, (TensorType, ScalarType)) and x.dtype != t.dtype.numpy:
                raise InterpError(f"{describe_op(op)}: the reference returned dtype {x.dtype} for "
                                  f"result #{i}, its type is {t}")
            if isinstance(t, TensorType):
                want = tuple(eval_dim(d, self.env) for d in t.shape)
                if x.shape != want:
                    raise InterpError(f"{describe_op(op)}: the reference returned shape {x.shape} for result "
                                      f"#{i}, its type {t} means {want}")


def _is_terminator(op: Operation) -> bool:
    return lookup(op.name).has("terminator")


def _last_uses(block: Block) -> dict[int, list[Value]]:
    """op index -> values (of this block's scope) whose last use in the block is that op.

    Kernel bodies are isolated, so only ops of the block itself read the block's values."""
    last: dict[Value, int] = {}
    for a in block.args:
        last[a] = -1
    for i, op in enumerate(block.ops):
        for r in op.results:
            last[r] = i  # a value nobody reads dies right after its definition
        for v in op.operands:
            if v in last:
                last[v] = i
    out: dict[int, list[Value]] = {}
    for v, i in last.items():
        out.setdefault(max(i, 0), []).append(v)
    return out


def _call_reference(op: Operation, operands: list, env: Env) -> list:
    d = lookup(op.name)
    if d.reference is None:
        raise MissingRule("reference", op.name)
    attrs = concretize(d.full_attrs(op.attrs), env)
    out = d.reference(*operands, **attrs)
    outs = out if len(op.results) > 1 else (out,)
    if len(outs) != len(op.results):
        raise InterpError(f"{describe_op(op)}: the reference returned {len(outs)} values for "
                          f"{len(op.results)} results")
    return [np.asarray(x) for x in outs]


# --- fused kernels ------------------------------------------------------------------------------------

def _kernel_body(frame: _Frame, op: Operation, operands: list, block: Block | None = None,
                 shape: tuple | None = None) -> tuple[tuple[int, ...], list]:
    """Run a kernel body (`block`, default the op's only one) over `shape` (default its attribute)."""
    if shape is None:
        shape = tuple(eval_dim(d, frame.env) for d in op.attrs["shape"])
    args = [np.broadcast_to(x, shape) for x in operands]
    body = frame.run_block(op.regions[0].block if block is None else block, args)
    return shape, [np.broadcast_to(np.asarray(y), shape) for y in body]


def _run_elementwise(frame: _Frame, op: Operation, operands: list) -> list:
    _, ys = _kernel_body(frame, op, operands)
    return [np.array(y) for y in ys]  # materialise the broadcast views


def _run_reduce(frame: _Frame, op: Operation, operands: list) -> list:
    shape, (y,) = _kernel_body(frame, op, operands)
    axes = tuple(sorted({a % len(shape) for a in op.attrs["axes"]})) if shape else ()
    dtype = op.attrs["dtype"].numpy
    return [REDUCTIONS[op.attrs["kind"]].reduce(y, axes, bool(op.attrs["keepdims"]), dtype)]


def _run_fft(frame: _Frame, op: Operation, operands: list) -> list:
    fft, k = inner_fft(op), op.attrs["inputs"]
    _, (x,) = _kernel_body(frame, op, operands[:k], op.regions[0].block)
    (y,) = frame.run_op(fft, [np.array(x)])  # checks the transform's result against its type
    _, ys = _kernel_body(frame, op, [y] + operands[k:], op.regions[1].block, y.shape)
    return [np.array(v) for v in ys]


# region-carrying ops the interpreter runs itself: name -> fn(frame, op, operand arrays) -> results
REGION_EXECUTORS: dict[str, Callable[[_Frame, Operation, list], list]] = {
    "kernel.elementwise": _run_elementwise,
    "kernel.reduce": _run_reduce,
    "kernel.fft": _run_fft,
}
