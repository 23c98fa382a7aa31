"""Shape rules against the numpy reference's output shape, and symbolic shapes evaluated at sizes.

Concrete cases are enumerated (every axes subset, permutation, broadcast pair, ...) or drawn from a
seeded generator; whenever numpy raises, the rule must raise OpError naming the op.
"""
from __future__ import annotations

import itertools
import random
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aot.ops import ALL_OPS
from ir import dtypes as D
from ir.opdef import OPDEFS, OpError
from ir.symbols import is_static, size_symbol

from .op_samples import sample

SHAPES = [(), (0,), (1,), (3,), (2, 3), (1, 3), (3, 1), (0, 3), (2, 1, 4), (2, 0, 1)]
INDEX_OPS = {"take": 1}  # operand positions holding indices (int64 sample arrays)
ONES_OPS: set = set()  # ops whose sample operands are ones, not zeros
CONDITION_OPS = {"require": 1}  # operand positions holding a check's condition (true bool arrays)


def _data_dtype(name, n):
    """float64, or int64 for ops without float loops (bitwise ops): shapes are checked, not dtypes."""
    d = OPDEFS[name]
    if not d.has("elementwise"):
        return np.float64
    try:
        d.dtype_rule([D.float64] * n, **d.full_attrs(sample(name).attrs))
    except OpError:
        return np.int64
    return np.float64


def _arrays(name, shapes):
    dt = _data_dtype(name, len(shapes))
    if name in ONES_OPS:  # a kernel's operands that zeros leave undefined (a zero bin width)
        return [np.ones(s, dt) for s in shapes]
    if name in CONDITION_OPS:  # a check's condition holds: its shape rule is what is tested
        return [np.ones(s, bool) if CONDITION_OPS[name] == i else np.zeros(s, dt) for i, s in enumerate(shapes)]
    return [np.zeros(s, np.int64 if INDEX_OPS.get(name) == i else dt) for i, s in enumerate(shapes)]


def _numpy_shape(name, shapes, attrs):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            out = OPDEFS[name].reference(*_arrays(name, shapes), **attrs)
            return tuple(o.shape for o in out) if isinstance(out, tuple) else out.shape  # tuple: multi-result
        except (ValueError, IndexError, TypeError):
            return None


def check(name, shapes, **attrs):
    d = OPDEFS[name]
    attrs = d.full_attrs(attrs)
    expected = _numpy_shape(name, shapes, attrs)
    if expected is None:
        with pytest.raises(OpError, match=rf"^{re.escape(name)}\b"):
            d.shape_rule(list(shapes), **attrs)
    else:
        got = d.shape_rule(list(shapes), **attrs)
        assert got == expected, f"{name}{shapes} {attrs}: rule {got}, numpy {expected}"
    return expected is not None


def _subsets(rank):
    return [c for k in range(rank + 1) for c in itertools.combinations(range(rank), k)]


# --- concrete cases, by family ---------------------------------------------------------------------
def cases_elementwise(name):
    d = OPDEFS[name]
    for shapes in itertools.product(SHAPES, repeat=d.arity):
        if d.arity < 3 or len({len(s) for s in shapes}) > 1 or random.Random(str(shapes)).random() < 0.2:
            yield shapes, {**sample(name).attrs, **sample(name).attr_variants[0]}


def cases_reduce(name):
    d = OPDEFS[name]
    for shape in SHAPES:
        if "axis" in d.attrs:
            for axis, keep in itertools.product(range(len(shape)), (False, True)):
                yield [shape], {"axis": axis, "keepdims": keep}
        else:
            for axes, keep in itertools.product(_subsets(len(shape)), (False, True)):
                yield [shape], {"axes": axes, "keepdims": keep}


def _slice_bound(rng, n):
    return rng.choice([None, 0, 1, n, n + 2, -1, -n, -n - 3, rng.randint(-n - 2, n + 2)])


LAYOUT_CASES = {
    "broadcast_to": lambda: (([x], {"shape": t}) for x, t in itertools.product(SHAPES, SHAPES)),
    "reshape": lambda: (([x], {"shape": t}) for x, t in itertools.product(SHAPES, SHAPES + [(6,), (3, 2)])),
    "transpose": lambda: (([x], {"perm": p}) for x in SHAPES for p in itertools.permutations(range(len(x)))),
    "expand_dims": lambda: (([x], {"axes": a}) for x in SHAPES for a in _subsets(len(x) + 2)
                            if len(a) <= 2 and max(a, default=0) < len(x) + len(a)),
    "squeeze": lambda: (([x], {"axes": a}) for x in SHAPES for a in _subsets(len(x))),
    "flip": lambda: (([x], {"axes": a}) for x in SHAPES for a in _subsets(len(x))),
    "concatenate": lambda: ((list(s), {"axis": ax}) for s in itertools.product(SHAPES, repeat=2)
                            for ax in range(len(s[0]))),
    "stack": lambda: ((list(s), {"axis": ax}) for s in itertools.product(SHAPES[:6], repeat=2)
                      for ax in range(len(s[0]) + 1)),
    "take": lambda: (([x, i], {"axis": ax}) for x in SHAPES for i in [(), (0,), (2,), (2, 2)]
                     for ax in range(len(x))),
    "matmul": lambda: (list(s) for s in itertools.product(
        [(), (0,), (3,), (4,), (2, 3), (3, 4), (1, 3, 4), (5, 2, 3), (3, 0), (0, 3)], repeat=2)),
}

# the everyday numpy rows (aot/ops/scatter.py, signal.py, arrays.py)
LAYOUT_CASES.update({
    "bincount": lambda: (([s], {"length": n}) for s in [(0,), (3,), (2, 3), ()] for n in (1, 4)),
    "correlate1d": lambda: ((list(s), {"left": lo, "right": hi})
                            for s in [((5,), (3,)), ((3,), (3,)), ((2,), (3,)), ((4,), (1,)), ((2, 3), (1,))]
                            for lo, hi in [(0, 0), (1, 1), (2, 2), (1, 0)]),
    "diagonal": lambda: (([x], {"offset": o, "axis1": i, "axis2": j}) for x in SHAPES if len(x) >= 2
                         for o in (-2, 0, 1, 3) for i in range(len(x)) for j in range(len(x)) if i != j),
})
INDEX_OPS["bincount"] = 0

# run-time checks (aot/ops/checks.py): the condition is 0-d
LAYOUT_CASES["require"] = lambda: (([x, c], {"status": "EMPTY_MAXIMUM"}) for x in SHAPES for c in [(), (1,)])

# sorting and searching (aot/ops/sorting.py)
LAYOUT_CASES.update({
    "sort": lambda: (([x], {"axis": ax}) for x in SHAPES for ax in range(len(x))),
    "argsort": lambda: (([x], {"axis": ax}) for x in SHAPES for ax in range(len(x))),
    "searchsorted": lambda: (([a, v], {}) for a in [(), (0,), (3,), (2, 3)] for v in SHAPES),
    "take_along_axis": lambda: (([x, i], {"axis": ax}) for x in SHAPES for i in SHAPES if len(i) == len(x)
                                for ax in range(len(x))),
})
INDEX_OPS["take_along_axis"] = 1

# order statistics, partitions and one-pass histograms (aot/ops/selection_ops.py, histogram.py)
LAYOUT_CASES.update({
    "select_kth": lambda: (([x, i], {"axis": ax}) for x in [(5,), (2, 5), (3, 4)] for i in [(2,), (1,)]
                           for ax in range(len(x))),
    "partition": lambda: (([x], {"kth": (0,), "axis": ax}) for x in SHAPES for ax in range(len(x))),
    "argpartition": lambda: (([x], {"kth": (0,), "axis": ax}) for x in SHAPES for ax in range(len(x))),
    "histogram_uniform": lambda: (([x, (4,)] + [()] * 8 + w, {}) for x in [(0,), (6,)] for w in [[], [x]]),
    "histogram_edges": lambda: (([x, e] + w, {}) for x in [(0,), (6,)] for e in [(2,), (4,)] for w in [[], [x]]),
})
INDEX_OPS["select_kth"] = 1
ONES_OPS.add("histogram_uniform")

# in-place updates as values (aot/ops/updates.py): 1-D array, indices and updates of one length
LAYOUT_CASES["scatter"] = lambda: (([x, i, u], {}) for x in [(0,), (4,), (2, 3)] for i in [(0,), (3,), (2, 2)]
                                   for u in [(0,), (3,)])
INDEX_OPS["scatter"] = 1

# numpy.linalg's factorisations (aot/ops/linalg_kernels.py): the arrays are zeros, so the ops that refuse
# singular matrices get only empty ones (and shapes they must refuse)
_LINALG_SQUARE = [(), (3,), (2, 3), (3, 3), (1, 1), (0, 0), (2, 0, 0), (0, 3, 3), (2, 2, 4, 4)]
_LINALG_NONSINGULAR = [(), (3,), (2, 3), (0, 0), (2, 0, 0), (0, 3, 3), (3, 0, 2, 2)]
_LINALG_ANY = [(3,), (2, 3), (3, 2), (0, 3), (2, 0), (0, 0), (2, 4, 3), (3, 2, 5), (1, 1)]
LAYOUT_CASES.update({
    "det": lambda: (([s], {}) for s in _LINALG_SQUARE),
    "slogdet": lambda: (([s], {}) for s in _LINALG_SQUARE),
    "inv": lambda: (([s], {}) for s in _LINALG_NONSINGULAR),
    "cholesky": lambda: (([s], {"upper": u}) for s in _LINALG_NONSINGULAR for u in (False, True)),
    "solve": lambda: (([a, b], {}) for a in _LINALG_NONSINGULAR
                      for b in [(3,), (0, 1), (0, 0), (2, 0, 3), (0, 2), (3, 0, 0)]),
    "eigh": lambda: (([s], {"uplo": u}) for s in _LINALG_SQUARE for u in "LU"),
    "eigvalsh": lambda: (([s], {"uplo": u}) for s in _LINALG_SQUARE for u in "LU"),
    "qr": lambda: (([s], {"mode": m}) for s in _LINALG_ANY for m in ("reduced", "complete")),
    "svd": lambda: (([s], {"full_matrices": f}) for s in _LINALG_ANY for f in (True, False)),
    "svdvals": lambda: (([s], {}) for s in _LINALG_ANY),
})
LAYOUT_CASES.update({"eig": lambda: (([s], {}) for s in _LINALG_SQUARE),  # aot/ops/linalg_eig.py
                     "eigvals": lambda: (([s], {}) for s in _LINALG_SQUARE)})

# values[mask] cut or padded to size rows (aot/ops/compaction.py): the mask is a true bool array
LAYOUT_CASES["compact"] = lambda: (([x, m, f], {"size": n}) for x in SHAPES for m in [(), (0,), (2,), (3,)]
                                   for f in [(), (1,)] for n in (0, 2, 5))
CONDITION_OPS["compact"] = 1


def _random_cases(name, rng):
    for _ in range(150):
        shape = rng.choice(SHAPES[1:] + [(5, 7), (4, 1, 6)])
        if name == "slice":
            steps = tuple(rng.choice([1, 2, 3, -1, -2, -3]) for _ in shape)
            starts = tuple(_slice_bound(rng, n) for n in shape)
            stops = tuple(_slice_bound(rng, n) for n in shape)
            yield [shape], {"starts": starts, "stops": stops, "steps": steps}
        elif name == "pad":
            yield [shape], {"pad_width": tuple((rng.randint(0, 2), rng.randint(0, 3)) for _ in shape)}
        elif name in ("fft", "rfft", "irfft"):
            n = rng.choice([None, None, 0, 1, 4, 5])
            yield [shape], {"axis": rng.randrange(len(shape)), "n": n}
        elif name == "scan":
            yield [shape], {"kind": rng.choice(["sum", "max", "sub"]), "axis": rng.randrange(len(shape))}


def concrete_cases(name):
    d = OPDEFS[name]
    if name in LAYOUT_CASES:
        for case in LAYOUT_CASES[name]():
            yield case if isinstance(case, tuple) else (case, {})
    elif d.has("elementwise"):
        yield from cases_elementwise(name)
    elif d.has("reduction"):
        yield from cases_reduce(name)
    elif name == "full":
        yield from (([], {"shape": s, "value": 2, "dtype": D.float64}) for s in SHAPES)
    elif name == "full_like":
        yield from (([s], {"value": 2}) for s in SHAPES)
    elif name == "constant":
        yield from (([], {"value": np.zeros(s), "dtype": D.float64}) for s in SHAPES)
    elif name == "iota":
        yield from (([], {"n": n, "dtype": D.float64}) for n in (0, 1, 7))
    else:
        yield from _random_cases(name, random.Random(name))


@pytest.mark.parametrize("name", ALL_OPS)
def test_shape_rule_matches_numpy(name):
    results = [check(name, shapes, **attrs) for shapes, attrs in concrete_cases(name)]
    assert any(results), f"{name}: no valid case was generated"


# --- attributes must arrive normalised -------------------------------------------------------------
@pytest.mark.parametrize("name, shapes, attrs", [
    ("sum", [(2, 3)], {"axes": (-1,)}),
    ("sum", [(2, 3)], {"axes": (0, 0)}),
    ("sum", [(2, 3)], {"axes": 1}),
    ("argmax", [(2, 3)], {"axis": -1}),
    ("transpose", [(2, 3)], {"perm": (0, 0)}),
    ("concatenate", [(2, 3), (2, 3)], {"axis": 2}),
    ("slice", [(2, 3)], {"starts": (0,), "stops": (1,), "steps": (1,)}),
    ("slice", [(2, 3)], {"starts": (0, 0), "stops": (1, 1), "steps": (1, 0)}),
    ("reshape", [(2, 3)], {"shape": (-1,)}),
    ("pad", [(2, 3)], {"pad_width": ((1, 1),)}),
    ("fft", [(4,)], {"axis": 0, "n": 0}),
    ("iota", [], {"n": -1, "dtype": D.float64}),
])
def test_bad_attributes_raise(name, shapes, attrs):
    d = OPDEFS[name]
    with pytest.raises(OpError, match=rf"^{name}:"):
        d.shape_rule(shapes, **d.full_attrs(attrs))


# --- symbolic shapes -------------------------------------------------------------------------------
S0, S1 = size_symbol("s0"), size_symbol("s1")
SIZES = [{S0: a, S1: b} for a, b in [(1, 1), (2, 3), (5, 2), (8, 8)]]


def _sub(x, env):
    if isinstance(x, (tuple, list)):
        return type(x)(_sub(v, env) for v in x)
    if x is None or isinstance(x, (int, float, str, np.ndarray)):
        return x
    if hasattr(x, "subs"):
        return int(x.subs(env))
    if isinstance(x, dict):
        return {k: _sub(v, env) for k, v in x.items()}
    return x


SYMBOLIC_CASES = [
    ("add", [(S0, 1), (1, 3)], {}),
    ("where", [(S0,), (S0,), ()], {}),
    ("sum", [(S0, S1, 3)], {"axes": (0, 2), "keepdims": True}),
    ("max", [(S0, 4)], {"axes": (1,)}),
    ("argmin", [(S1, S0)], {"axis": 1}),
    ("broadcast_to", [(1, S1)], {"shape": (S0, S1)}),
    ("reshape", [(S0, 2, 3)], {"shape": (6 * S0,)}),
    ("reshape", [(S0, S1)], {"shape": (S1, S0)}),
    ("transpose", [(S0, 2, S1)], {"perm": (2, 0, 1)}),
    ("expand_dims", [(S0,)], {"axes": (0, 2)}),
    ("squeeze", [(S0, 1)], {"axes": (1,)}),
    ("concatenate", [(S0, 3), (S1, 3), (2, 3)], {"axis": 0}),
    ("stack", [(S0,), (S0,)], {"axis": 1}),
    ("pad", [(S0, 2)], {"pad_width": ((1, 2), (0, S1))}),
    ("take", [(S0, 3), (S1, 2)], {"axis": 0}),
    ("matmul", [(S0, S1), (S1, 4)], {}),
    ("matmul", [(3, S0, S1), (S1,)], {}),
    ("fft", [(2, S0)], {"axis": 1}),
    ("fft", [(S0,)], {"axis": 0, "n": 2 * S1}),
    ("rfft", [(S0, 3)], {"axis": 0}),
    ("irfft", [(S0, 3)], {"axis": 0, "n": None}),
    ("irfft", [(S1,)], {"axis": 0, "n": S0}),
    ("full", [], {"shape": (S0, 2), "value": 1.0, "dtype": D.float64}),
    ("iota", [], {"n": S0 + 1, "dtype": D.float64}),
    ("full_like", [(S1, S0)], {"value": 0}),
]
SLICE_BOUNDS = [None, 0, 1, 3, -1, -2, -9, S0, S0 - 1, 2 * S0]
for _start, _stop, _step in itertools.product(SLICE_BOUNDS, SLICE_BOUNDS[:7], (2, -1)):
    SYMBOLIC_CASES.append(("slice", [(S0,)], {"starts": (_start,), "stops": (_stop,), "steps": (_step,)}))


@pytest.mark.parametrize("name, shapes, attrs", SYMBOLIC_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(SYMBOLIC_CASES)])
def test_symbolic_shape_evaluates_to_numpy(name, shapes, attrs):
    d = OPDEFS[name]
    got = d.shape_rule(shapes, **d.full_attrs(attrs))
    assert name in ("stack", "slice") or any(not is_static(x) for x in got)
    for env in SIZES:
        concrete = d.full_attrs(_sub(attrs, env))
        if name in ("irfft",) and concrete.get("n") is None and _sub(shapes, env)[0][0] == 1:
            continue  # n = 2 * (1 - 1) = 0: numpy refuses; the front end specialises size 1
        expected = _numpy_shape(name, _sub(shapes, env), concrete)
        assert expected is not None, f"{name} at {env}: numpy refused"
        assert _sub(got, env) == expected, f"{name}{shapes} {attrs} at {env}: {got}"


def test_symbolic_errors():
    with pytest.raises(OpError, match="reshape: cannot reshape"):
        OPDEFS["reshape"].shape_rule([(S0, 2)], shape=(S0 + 2,))
    with pytest.raises(OpError, match="broadcast"):
        OPDEFS["add"].shape_rule([(S0,), (S1,)])
    with pytest.raises(OpError, match="slice: cannot decide the sign"):
        OPDEFS["slice"].shape_rule([(S0,)], starts=(S0 - 3,), stops=(None,), steps=(1,))
    with pytest.raises(OpError, match="squeeze"):
        OPDEFS["squeeze"].shape_rule([(S0,)], axes=(0,))


_BOUND = st.one_of(st.none(), st.integers(-12, 12), st.integers(-3, 3).map(lambda k: S0 + k))


@settings(max_examples=60, deadline=None)
@given(start=_BOUND, stop=_BOUND, step=st.integers(-4, 4).filter(bool))
def test_symbolic_slice_length_is_python_slice_length(start, stop, step):
    """Bounds like s0 - 2 are accepted only when sympy can decide their sign from s0 >= 1."""
    try:
        (got,) = OPDEFS["slice"].shape_rule([(S0,)], starts=(start,), stops=(stop,), steps=(step,))
    except OpError as e:
        assert "cannot decide the sign" in str(e)
        return
    for n in range(1, 11):
        py = [None if b is None else int(_sub(b, {S0: n})) for b in (start, stop)]
        assert _sub(got, {S0: n}) == len(range(n)[py[0]:py[1]:step]), (start, stop, step, n, got)


def test_builder_with_symbolic_operands():
    import ir

    f, b = ir.new_func(ir.Module(), "f", [ir.TensorType(D.float32, (S0, 3)), ir.TensorType(D.int32, (S1,))])
    x, idx = f.args
    y = b.slice(x, starts=(1, None), stops=(None, None), steps=(2, -1))
    assert y.type == ir.TensorType(D.float32, (S0 // 2, 3))
    assert b.take(x, idx, axis=0).type == ir.TensorType(D.float32, (S1, 3))
    assert b.sum(b.mul(x, x), axes=(0,)).type == ir.TensorType(D.float32, (3,))
    assert b.rfft(x, axis=0).type == ir.TensorType(D.complex64, (S0 // 2 + 1, 3))
