"""Hypothesis strategies for random well-typed IR functions, built from the op registry.

`random_functions()` draws `(module, inputs)`: a module with one function `@f` made with ir.Builder
from random registered ops (elementwise, broadcasting, reductions, layout, ... whatever the registry
holds) and numpy inputs matching its argument types. Ops whose rules reject the drawn operands or
attributes are skipped, so every produced function is well typed. Sizes stay small and inputs stay in
ranges where most ops are finite (floats in [0.5, 2], ints in [1, 4]); an interpreter comparison should
still use `equal_nan=True`. Used by the text round-trip test and by the pass/interpreter tests.
"""
from __future__ import annotations

import logging

import numpy as np
from hypothesis import strategies as st

import ir
from ir import dtypes as D
from ir.opdef import MissingRule, OpError
from ir.symbols import size_symbol
from ir.types import TensorType
from tests.ir.op_samples import attr_candidates, operand_counts, testable_ops

logger = logging.getLogger(__name__)

DTYPES = (D.float32, D.float64, D.int32, D.int64, D.complex64, D.complex128, D.bool_)
NAME_HINTS = (None, None, None, "x", "t", "x_1", "acc")


def random_input(rng: np.random.Generator, t: TensorType, concrete: tuple[int, ...]) -> np.ndarray:
    """Values where exp/log/sqrt/div stay finite: |x| in [0.5, 2] for floats, [1, 4] for ints."""
    dt = t.dtype
    if dt.is_bool:
        return rng.random(concrete) < 0.5
    if dt.is_int:
        return rng.integers(1, 5, size=concrete).astype(dt.numpy)
    real = rng.uniform(0.5, 2.0, size=concrete)
    if dt.is_complex:
        real = real + 1j * rng.uniform(0.5, 2.0, size=concrete)
    return np.asarray(real).astype(dt.numpy)


@st.composite
def _arg_types(draw, symbolic: bool):
    rank = draw(st.integers(0, 3))
    base = [draw(st.integers(1, 4)) for _ in range(rank)]
    sym = None
    if symbolic and rank and base[0] >= 2:
        sym = size_symbol("s0")
    shared = draw(st.sampled_from(DTYPES))
    args = []
    for _ in range(draw(st.integers(1, 3))):
        # broadcast-compatible variants of one base shape: drop leading dims or set dims to 1
        drop = draw(st.integers(0, rank))
        shape = [1 if draw(st.integers(0, 4)) == 0 else d for d in base][drop:]
        dtype = shared if draw(st.booleans()) else draw(st.sampled_from(DTYPES))
        args.append((dtype, shape))
    return base, sym, args


@st.composite
def random_functions(draw, max_ops: int = 6, symbolic: bool | None = None):
    """Strategy of (ir.Module, list[np.ndarray]); `symbolic=None` draws whether dim 0 is a size symbol.

    Each candidate op is run through its numpy reference on the drawn inputs while the function is
    built; ops that raise, disagree with their inferred type, or produce non-finite values or values
    above 1e4 in magnitude are dropped, so every function runs under the references with stable values.
    Size symbols may appear in attributes (e.g. a reshape's shape): bind them from the input shapes.
    """
    if symbolic is None:
        symbolic = draw(st.booleans())
    base, sym, arg_specs = draw(_arg_types(symbolic))
    m = ir.Module("random")
    arg_types = []
    for dtype, shape in arg_specs:
        full_rank = len(shape) == len(base)
        symbolic_dim0 = sym is not None and full_rank
        dims = [sym if (symbolic_dim0 and i == 0 and d != 1) else d for i, d in enumerate(shape)]
        arg_types.append(TensorType(dtype, tuple(dims)))
    subs = {}
    if sym is not None:
        m.declare_symbol(ir.SymbolInfo("s0", 2, None, base[0]))
        m.guards.append(ir.symbols.sympy().Ge(sym, 2))
        subs = {sym: base[0]}
    f, b = ir.new_func(m, "f", arg_types, [f"a{i}" for i in range(len(arg_types))])
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    inputs = [random_input(rng, t, _concrete(t.shape, subs)) for t in arg_types]
    env = {id(a): x for a, x in zip(f.args, inputs)}
    pool: list[ir.Value] = list(f.args)
    ops = testable_ops()
    for _ in range(draw(st.integers(1, max_ops)) if ops else 0):
        _try_add_op(draw, b, ops, pool, env, subs)
    results = [v for v in pool[len(f.args):] if not v.uses][-3:] or [pool[-1]]
    b.ret(*results)
    return m, inputs


def _concrete(v, subs: dict):
    """Attributes and shapes with the size symbols replaced by their values in the drawn inputs."""
    if isinstance(v, (tuple, list)):
        return tuple(_concrete(x, subs) for x in v)
    if hasattr(v, "free_symbols") and not isinstance(v, np.ndarray):
        return int(v.subs(subs))
    return v


def _evaluate(op: ir.Operation, env: dict, subs: dict) -> list[np.ndarray] | None:
    """The op's reference outputs on the drawn inputs, or None if they are unusable for testing."""
    d = ir.lookup(op.name)
    args = [env[id(v)] for v in op.operands]
    attrs = {k: _concrete(v, subs) for k, v in op.attrs.items()}
    try:
        with np.errstate(all="ignore"):
            out = d.reference(*args, **attrs)
    except Exception as e:  # noqa: BLE001  (a reference rejecting a drawn case drops the op)
        logger.debug("dropping %s: reference raised %s", op.name, e)
        return None
    outs = [np.asarray(o) for o in (out if len(op.results) > 1 else (out,))]
    for r, o in zip(op.results, outs):
        if o.dtype != r.type.dtype.numpy or o.shape != _concrete(r.type.shape, subs):
            logger.debug("dropping %s: reference gave %s%s for %s", op.name, o.dtype, o.shape, r.type)
            return None
        if o.dtype.kind in "fciu" and o.size and not np.all(np.abs(o) <= 1e4):
            return None  # overflow, nan or inf: comparisons across rewrites would be unstable
    return outs


def _try_add_op(draw, b: ir.Builder, ops, pool: list, env: dict, subs: dict, attempts: int = 8) -> None:
    for _ in range(attempts):
        d = draw(st.sampled_from(ops))
        n = draw(st.sampled_from(operand_counts(d)))
        if n == 0:
            continue  # a constant-only function is not interesting to interpret
        operands = [draw(st.sampled_from(pool)) for _ in range(n)]
        types = [v.type for v in operands]
        attrs = {}
        for k, default in d.attrs.items():
            cands = attr_candidates(k, default, types)
            if not cands:
                break
            attrs[k] = draw(st.sampled_from(cands))
        else:
            try:
                op = b.create(d.name, operands, attrs)
            except (OpError, MissingRule, TypeError, ValueError, ZeroDivisionError):
                continue
            outs = _evaluate(op, env, subs)
            if outs is None:
                op.erase()
                continue
            for r, o in zip(op.results, outs):
                r.name_hint = draw(st.sampled_from(NAME_HINTS))
                env[id(r)] = o
                pool.append(r)
            return
