"""Every op row's transform rules, checked against numpy: parametrized over the registry (ALL_OPS).

Per row and operand dtype (float64, and complex128 where the row accepts it; integer/bool rows get
their own dtype), on the eager path:
- vjp: grad of a real loss sum(real(out * w)) + sum(imag(out * w2)) equals central finite
  differences (complex operands: torch's convention, dL/dRe + i dL/dIm); jacrev == jacfwd, and both
  equal the Jacobian by central differences; the
  Hessian of the loss is symmetric and, along a direction, equals differences of the gradient
  (complex operands: along real directions);
- jvp: the tangent equals the finite-difference directional derivative;
- batch: vmap equals a loop over the examples, for in_dims 0, 1 and None (one operand unbatched)
  and out_dims 0 and 1.
Only float/complex operands are differentiated; integer and bool operands (indices, masks,
conditions) are closed over. Jacobians are taken of the function on real and imaginary parts
(jacrev and jacfwd of a non-holomorphic complex function differ by convention, not by error).
A row without the facet (or whose rule emits an op lacking one) skips with "no rule yet": the
registry test (tests/ops/test_registry.py) enforces presence. Values lie in each op's domain:
positive for log/sqrt, distinct for sort/max (no ties), well-conditioned or SPD matrices.

Conventions the checks rely on: cholesky/eigh/eigvalsh read one triangle, so they are checked on
(A + A^H)/2, where every rule convention (triangle-only or symmetrised cotangents) gives the same
gradient; eigenvectors and singular vectors enter the loss as |v|^2, which their phase (a gauge
numpy picks) does not change.
"""
from __future__ import annotations

import contextlib
import itertools
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

from aot import func
from aot.compiler.creations import current_capture
from aot.ops import ALL_OPS
from ir import dtypes as D
from ir.opdef import OPDEFS, MissingRule, OpError
from tests.ops.op_samples import sample

H = 1e-6  # central differences: truncation ~H**2, rounding ~eps/H: errors ~1e-9 for O(1) values
FD_RTOL = 1e-6  # of max(1, |reference|): finite differences against a rule
EXACT_RTOL = 1e-10  # two exact computations (jacrev vs jacfwd, H vs H^T) that may round differently
VMAP_RTOL = 1e-12  # a batched op against a loop of the same op
B = 7  # the vmap batch size: no sample dim has it


def apply(name: str, *xs, **attrs):
    """Core op `name` on traced operands, in the capture that is tracing."""
    return current_capture().emit(name, list(xs), attrs)


# --- operand generators ----------------------------------------------------------------------------
# domains (lo, hi, signed): |x| in [lo, hi], random signs when signed
DEFAULT, POS, UNIT, ABOVE1 = (0.3, 1.2, True), (0.5, 2.0, False), (0.05, 0.9, True), (1.5, 3.0, False)
NEG = (0.2, 0.6, "negative")
IMAG = (0.1, 0.5, True)  # imaginary parts where the real part's domain is special (off branch cuts)


def _uniform(rng, shape, dom):
    lo, hi, signed = dom
    r = rng.uniform(lo, hi, shape)
    if signed == "negative":
        return -r
    return r * rng.choice([-1.0, 1.0], shape) if signed else r


@dataclass
class Arg:
    """One operand: gen(rng, cplx) -> array; inexact operands become complex in the complex case."""
    gen: Callable
    inexact: bool = True


def x(shape, dom=DEFAULT) -> Arg:
    def gen(rng, cplx):
        re = _uniform(rng, shape, dom)
        return re + 1j * _uniform(rng, shape, dom if dom == DEFAULT else IMAG) if cplx else re
    return Arg(gen)


def ints(shape, lo, hi, unique=False) -> Arg:
    def gen(rng, cplx):
        if unique:
            return rng.permutation(np.arange(lo, hi))[:int(np.prod(shape))].reshape(shape).astype(np.int64)
        return rng.integers(lo, hi, shape).astype(np.int64)
    return Arg(gen, inexact=False)


def bools(shape) -> Arg:
    return Arg(lambda rng, cplx: rng.random(shape) < 0.5, inexact=False)


def fixed(value, inexact=True) -> Arg:
    v = np.asarray(value)
    return Arg(lambda rng, cplx: v.astype(np.complex128) if cplx and inexact else v.copy(), inexact=inexact)


def sorted_x(n) -> Arg:
    def gen(rng, cplx):
        re = np.sort(rng.uniform(-1, 1, n)) + np.arange(n) * 0.1
        return re + 1j * rng.uniform(-0.5, 0.5, n) if cplx else re
    return Arg(gen)


def matrix(shape, kind="general") -> Arg:
    """Well-conditioned (general), Hermitian (herm) or Hermitian positive definite (spd) matrices."""
    def gen(rng, cplx):
        m = rng.standard_normal(shape) * 0.4
        if cplx:
            m = m + 1j * rng.standard_normal(shape) * 0.4
        n = shape[-1]
        if kind == "general":
            return m + 1.5 * np.eye(n) if shape[-1] == shape[-2] else m
        h = (m + np.conj(np.swapaxes(m, -1, -2))) / 2
        if kind == "herm":
            return h + np.diag(np.arange(n) * 0.7)  # eigenvalues apart
        return m @ np.conj(np.swapaxes(m, -1, -2)) + np.eye(n)
    return Arg(gen)


def _hermitian_part(xs):
    m = xs[0]
    return [(m + np.conj(np.swapaxes(m, -1, -2))) / 2, *xs[1:]]


def _gauge(*which):
    """Outputs `which` as |v|^2: eigen/singular vectors up to a phase numpy picks."""
    def post(outs):
        return tuple(np.real(o * np.conj(o)) if i in which else o for i, o in enumerate(outs))
    return post


@dataclass
class Variant:
    attrs: dict = field(default_factory=dict)
    args: list | None = None  # this variant's operands (None: the spec's)
    diff: str | None = None  # why derivatives are not checked for it (None: they are)
    tag: str = ""


@dataclass
class Spec:
    args: list
    attrs: dict = field(default_factory=dict)
    variants: list = field(default_factory=lambda: [Variant()])
    pre: Callable | None = None  # on the differentiated operands, before the op (numpy or traced)
    post: Callable | None = None  # on the op's results (a tuple)


def binary(dx=DEFAULT, dy=DEFAULT) -> Spec:
    return Spec([x((2, 3), dx), x((3,), dy)])


def int_binary(lo=-9, hi=10, ylo=None, yhi=None) -> Spec:
    return Spec([ints((2, 3), lo, hi), ints((3,), lo if ylo is None else ylo, hi if yhi is None else yhi)])


REDUCTION_VARIANTS = [Variant({"axes": (1,)}), Variant({"axes": (0, 1), "keepdims": True}, tag="all"),
                      Variant({"axes": ()}, tag="none")]


def _hist_uniform_args():
    edges = np.linspace(0.0, 1.0, 4)
    scalars = [0.0, 1.0, 0.0, 1.0, 0.0, 1.0 / 3, 1.0, 1.0]  # first_k, last_k, first_s, denom, linspace's
    return [x((6,), (0.02, 0.98, False)), fixed(edges), *[fixed(np.float64(s)) for s in scalars],
            x((6,), DEFAULT)]


SPECS: dict[str, Spec] = {
    **{n: Spec([x((2, 3), POS)]) for n in ("log", "log2", "log10", "log1p", "sqrt", "rsqrt", "cbrt")},
    **{n: Spec([x((2, 3), UNIT)]) for n in ("arcsin", "arccos", "arctanh")},
    "arccosh": Spec([x((2, 3), ABOVE1)]),
    "round": Spec([x((2, 3))], {"decimals": 1}),
    "cast": Spec([x((2, 3))], {}, [Variant({"dtype": D.float64}, tag="to-f64"),
                                   Variant({"dtype": D.complex128}, tag="to-c128"),
                                   Variant({"dtype": D.int64}, tag="to-i64")]),
    "pow": binary(POS, DEFAULT),
    "complex": Spec([x((2, 3)), x((3,))]),
    **{n: int_binary() for n in ("bitwise_and", "bitwise_or", "bitwise_xor")},
    "invert": Spec([ints((2, 3), -9, 10)]),
    **{n: int_binary(ylo=0, yhi=6) for n in ("left_shift", "right_shift")},
    **{n: int_binary(1, 13) for n in ("gcd", "lcm")},
    "ldexp": Spec([x((2, 3)), ints((3,), -3, 4)]),
    "where": Spec([bools((2, 3)), x((2, 3)), x((3,))]),
    "clip": Spec([x((2, 3)), x((1, 3), NEG), x((3,), (0.2, 0.6, False))]),
    "argmax": Spec([x((2, 3))], {"axis": 1}),
    "argmin": Spec([x((2, 3))], {"axis": 0, "keepdims": True}),
    "take": Spec([x((2, 3)), ints((4,), -3, 3)], {"axis": 1}),
    "take_along_axis": Spec([x((2, 3)), ints((2, 1), -3, 3)], {"axis": 1}),
    "constant": Spec([], {"value": np.arange(6.0).reshape(2, 3), "dtype": D.float64}),
    "full": Spec([], {"shape": (2, 3), "value": 1, "dtype": D.float64}),
    "iota": Spec([], {"n": 5, "dtype": D.float64}),
    "full_like": Spec([x((2, 3))], {"value": 1}),
    "fft": Spec([x((4, 6))], {"axis": 1},
                [Variant({"inverse": False}),
                 Variant({"inverse": True, "n": 4, "norm": "ortho"}, tag="inv")]),
    "rfft": Spec([x((4, 6))], {"axis": 1}, [Variant(), Variant({"n": 5, "norm": "forward"}, tag="n5")]),
    "irfft": Spec([x((4, 6))], {"axis": 0}, [Variant(), Variant({"n": 7}, tag="n7")]),
    "require": Spec([x((2, 3)), fixed(np.True_, inexact=False)], {"status": "EMPTY_MAXIMUM"}),
    "scan": Spec([x((2, 3))], {"kind": "sum", "axis": 1},
                 [Variant(), Variant({"kind": "max"}, tag="max"),
                  Variant({"kind": "prod", "axis": 0}, tag="prod"),
                  Variant({"kind": "any", "axis": 0}, args=[bools((2, 3))], tag="any"),
                  Variant({"kind": "sub", "axis": 0}, tag="sub"), Variant({"kind": "div"}, tag="div")]),
    "searchsorted": Spec([sorted_x(3), x((2, 3))], {},
                         [Variant(), Variant({"side": "right"}, tag="right")]),
    "bincount": Spec([ints((6,), 0, 3), x((6,))], {"length": 3}),
    "correlate1d": Spec([x((5,)), x((3,))], {"left": 1, "right": 1}),
    "det": Spec([matrix((2, 3, 3))]),
    "slogdet": Spec([matrix((2, 3, 3))]),
    "inv": Spec([matrix((2, 3, 3))]),
    "solve": Spec([matrix((2, 3, 3)), x((3, 2))]),
    "cholesky": Spec([matrix((2, 3, 3), "spd")], {},
                     [Variant({"upper": False}), Variant({"upper": True}, tag="upper")], pre=_hermitian_part),
    "qr": Spec([matrix((4, 3))], {},
               [Variant({"mode": "reduced"}),
                Variant({"mode": "complete"}, diff="complete Q of a tall matrix: its last columns are not "
                                                   "determined (torch and jax refuse its derivative)",
                        tag="complete")]),
    "eigh": Spec([matrix((2, 3, 3), "herm")], {}, [Variant({"uplo": "L"}), Variant({"uplo": "U"}, tag="U")],
                 pre=_hermitian_part, post=_gauge(1)),
    "eigvalsh": Spec([matrix((3, 3), "herm")], {}, [Variant({"uplo": "L"}), Variant({"uplo": "U"}, tag="U")],
                     pre=_hermitian_part),
    "svd": Spec([matrix((2, 4, 3))], {},
                [Variant({"full_matrices": False}),
                 Variant({"full_matrices": True}, diff="full U of a tall matrix: its last columns are not "
                                                       "determined", tag="full")], post=_gauge(0, 2)),
    "svdvals": Spec([matrix((3, 4))]),
    "eig": Spec([matrix((2, 3, 3))], post=_gauge(1)),
    "eigvals": Spec([matrix((3, 3))]),
    "select_kth": Spec([x((2, 5)), ints((3,), -5, 5)], {"axis": 1}),
    "partition": Spec([x((2, 5))], {"kth": (1, -1), "axis": 1}),
    "argpartition": Spec([x((5, 2))], {"kth": (2,), "axis": 0}),
    "histogram_uniform": Spec(_hist_uniform_args()),
    "histogram_edges": Spec([x((6,), (0.02, 0.98, False)), fixed(np.array([0.0, 0.3, 0.65, 1.0])), x((6,))]),
    "compact": Spec([x((4, 2)), bools((4,)), x(())], {},
                    [Variant({"size": 3}), Variant({"size": 6}, tag="pad"),
                     Variant({"size": 0}, tag="empty")]),
    "scatter": Spec([x((5,)), ints((3,), -5, 5), x((3,))], {},
                    [Variant(), Variant({"kind": "sum"}, tag="sum"),
                     Variant({"kind": "max", "unique": True}, tag="max",
                             args=[x((5,)), ints((3,), -5, 0, unique=True), x((3,))])]),
}


def spec_for(name: str) -> Spec:
    """The table's spec, or one from tests/ops/op_samples.py (default-domain values)."""
    if name in SPECS:
        return SPECS[name]
    s = sample(name)
    variants = [Variant(v, tag="-".join(f"{k}{v[k]}" for k in v)) for v in s.attr_variants]
    if OPDEFS[name].has("reduction") and not OPDEFS[name].has("index_reduction"):
        variants = REDUCTION_VARIANTS
    return Spec([x(shape) for shape in s.shapes], dict(s.attrs), variants)


# --- cases -----------------------------------------------------------------------------------------
@dataclass
class Case:
    name: str
    label: str
    args: list  # Arg per operand
    attrs: dict
    cplx: bool
    diff: str | None
    pre: Callable | None
    post: Callable | None
    seed: int

    def operands(self, rng=None) -> list[np.ndarray]:
        rng = rng or np.random.default_rng(self.seed)
        return [np.asarray(a.gen(rng, self.cplx)) for a in self.args]

    @property
    def inexact(self) -> list[int]:
        return [i for i, a in enumerate(self.args) if a.inexact]

    def reference(self, *ops):
        out = OPDEFS[self.name].reference(*ops, **self.attrs)
        return out if isinstance(out, tuple) else (out,)


def _cases() -> tuple[list[Case], list[str]]:
    """Every variant of every row, in float64 (or its integer/bool operands) and complex128 where the
    row's rules accept it; and the variants they accept in neither (a spec to fix)."""
    cases, refused = [], []
    for name in ALL_OPS:
        spec = spec_for(name)
        for variant in spec.variants:
            attrs = {**spec.attrs, **variant.attrs}
            args = variant.args or spec.args
            found = False
            for cplx in (False, True):
                case = Case(name, "", args, attrs, cplx, variant.diff, spec.pre, spec.post,
                            seed=zlib.crc32(name.encode()))
                dts = _accepted(case)
                if dts is not None:
                    case.label = "-".join(p for p in (dts, variant.tag) if p)
                    cases.append(case)
                    found = True
            if not found:
                refused.append(f"{name} {variant.tag or attrs}")
    return cases, refused


def _accepted(case: Case) -> str | None:
    """The operand dtype label when the row's rules take these operands (None: they refuse them)."""
    ops = case.operands()
    if not ops:
        return None if case.cplx else "none"
    if case.cplx and not case.inexact:
        return None
    d = OPDEFS[case.name]
    try:
        attrs = d.full_attrs(case.attrs)
        d.dtype_rule([D.from_numpy(o.dtype) for o in ops], **attrs)
        d.shape_rule([o.shape for o in ops], **attrs)
    except OpError:
        return None
    case.attrs = attrs
    kinds = sorted({o.dtype.name for o in ops if o.dtype.kind in "fc"}) or sorted({o.dtype.name for o in ops})
    return "+".join(kinds)


CASES, REFUSED = _cases()
IDS = [f"{c.name}-{c.label}" for c in CASES]


def test_every_row_has_a_case():
    """No row, and no variant of the table, is silently left out (its operands refused by its rules)."""
    missing = sorted(set(ALL_OPS) - {c.name for c in CASES})
    assert not missing, f"rows with no case: {missing}"
    assert not REFUSED, f"variants whose operands their row refuses: {REFUSED}"


# --- the functions checked -------------------------------------------------------------------------
@contextlib.contextmanager
def rules_present():
    """A rule that the transform reached but a row lacks is a skip (the registry test fails it)."""
    try:
        yield
    except MissingRule as e:
        pytest.skip(f"no rule yet: {e}")


def _require(case: Case, facet: str) -> None:
    d = OPDEFS[case.name]
    if not case.args:
        pytest.skip("the row takes no array operands: nothing to differentiate or batch")
    if facet != "batch" and "not_differentiable" in d.markers:
        reason = d.markers["not_differentiable"]
        assert isinstance(reason, str) and len(reason) > 10, f"{case.name}: not_differentiable needs a reason"
        pytest.skip(f"not differentiable: {reason}")
    if getattr(d, facet) is None:
        pytest.skip(f"no rule yet: {case.name} has no {facet} rule")
    if facet != "batch":
        if case.diff:
            pytest.skip(case.diff)
        if not case.inexact:
            pytest.skip("no floating-point operand to differentiate")


class Problem:
    """A case's operands split into the differentiated ones and the fixed ones, and its functions."""

    def __init__(self, case: Case):
        self.case = case
        self.ops = case.operands()
        self.wrt = case.inexact
        self.primals = [self.ops[i] for i in self.wrt]
        outs = case.reference(*self._full(self._pre(self.primals)))
        self.keep = [i for i, o in enumerate(self._post(outs)) if np.asarray(o).dtype.kind in "fc"]
        if not self.keep:
            pytest.skip("no floating-point result")
        rng = np.random.default_rng(case.seed + 1)
        self.weights = [(rng.standard_normal(np.shape(o)), rng.standard_normal(np.shape(o)))
                        for o in (self._post(outs)[i] for i in self.keep)]

    def _pre(self, xs):
        return self.case.pre(list(xs)) if self.case.pre else list(xs)

    def _post(self, outs):
        return self.case.post(tuple(outs)) if self.case.post else tuple(outs)

    def _full(self, xs) -> list:
        ops = list(self.ops)
        for i, v in zip(self.wrt, xs):
            ops[i] = v
        return ops

    def traced(self, *xs):
        """The op on the differentiated operands (inside a transform), its floating results."""
        out = apply(self.case.name, *self._full(self._pre(xs)), **self.case.attrs)
        outs = self._post(out if isinstance(out, tuple) else (out,))
        return tuple(outs[i] for i in self.keep)

    def numpy(self, *xs):
        outs = self._post(self.case.reference(*self._full(self._pre(xs))))
        return tuple(np.asarray(outs[i]) for i in self.keep)

    def loss(self, outs):
        """sum(real(o * w)) + sum(imag(o * w2)): every real and imaginary part of every result counts."""
        total = 0.0
        for o, (w, w2) in zip(outs, self.weights):
            total = total + np.sum(np.real(o * w))
            if _is_complex(o):
                total = total + np.sum(np.imag(o * w2))
        return total

    # real and imaginary parts as separate real arguments, and results (Jacobians, Hessians)
    def split(self) -> list[np.ndarray]:
        parts = []
        for p in self.primals:
            parts += [p.real.copy(), p.imag.copy()] if p.dtype.kind == "c" else [p]
        return parts

    def joined(self, parts):
        xs, k = [], 0
        for p in self.primals:
            if p.dtype.kind == "c":
                xs.append(apply("complex", parts[k], parts[k + 1]))
                k += 2
            else:
                xs.append(parts[k])
                k += 1
        return xs

    def real_numpy(self, *parts):
        """numpy's results, split into real and imaginary parts, of the split arguments."""
        xs, k = [], 0
        for p in self.primals:
            xs.append(parts[k] + 1j * parts[k + 1] if p.dtype.kind == "c" else parts[k])
            k += 2 if p.dtype.kind == "c" else 1
        outs = []
        for o in self.numpy(*xs):  # copies: a view of an argument would follow its perturbation
            outs += [o.real.copy(), o.imag.copy()] if np.iscomplexobj(o) else [np.array(o)]
        return outs

    def real_traced(self, *parts):
        outs = []
        for o in self.traced(*self.joined(parts)):
            outs += [apply("real", o), apply("imag", o)] if o.meta.dtype.is_complex else [o]
        return tuple(outs)


def _is_complex(o) -> bool:
    return o.meta.dtype.is_complex if hasattr(o, "meta") else np.iscomplexobj(o)


def _err(got, want) -> tuple[float, float]:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    if not got.size:
        return 0.0, 1.0
    return float(np.max(np.abs(got - want))), max(1.0, float(np.max(np.abs(want))))


def _check(what: str, case: Case, got, want, rtol: float) -> None:
    err, scale = _err(got, want)
    assert err <= rtol * scale, (f"{case.name} ({case.label}) {what}: max error {err:.3g} "
                                 f"(tolerance {rtol * scale:.3g}, |reference| {scale:.3g})\n"
                                 f"got\n{np.asarray(got)}\nexpected\n{np.asarray(want)}")


def _fd_grad(fn, primals: list) -> list:
    """dL/dRe + i dL/dIm of a real fn(*primals) by central differences."""
    grads = []
    for k, p in enumerate(primals):
        g = np.zeros(p.shape, p.dtype)
        for idx in np.ndindex(p.shape):
            for unit in ((1, 1j) if p.dtype.kind == "c" else (1,)):
                args = [q.copy() for q in primals]
                args[k][idx] = p[idx] + H * unit
                up = fn(*args)
                args[k][idx] = p[idx] - H * unit
                g[idx] += unit * (up - fn(*args)) / (2 * H)
        grads.append(g)
    return grads


# --- reverse mode ----------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_grad_matches_finite_differences(case):
    _require(case, "vjp")
    pb = Problem(case)
    argnums = tuple(range(len(pb.primals)))
    with rules_present():
        got = func.grad(lambda *xs: pb.loss(pb.traced(*xs)), argnums=argnums)(*pb.primals)
    want = _fd_grad(lambda *xs: float(pb.loss(pb.numpy(*xs))), pb.primals)
    for k, (g, w) in enumerate(zip(got, want)):
        _check(f"grad of operand #{pb.wrt[k]}", case, g, w, FD_RTOL)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jacrev_equals_jacfwd_and_finite_differences(case):
    _require(case, "vjp")
    _require(case, "jvp")
    pb = Problem(case)
    parts = pb.split()
    argnums = tuple(range(len(parts)))
    with rules_present():
        rev = func.jacrev(pb.real_traced, argnums=argnums)(*parts)
        fwd = func.jacfwd(pb.real_traced, argnums=argnums)(*parts)
    fd = _fd_jacobian(pb.real_numpy, parts)
    for o, (r_row, f_row) in enumerate(zip(rev, fwd)):
        for k, (r, f) in enumerate(zip(r_row, f_row)):
            _check(f"jacrev vs jacfwd (result part #{o}, argument part #{k})", case, r, f, EXACT_RTOL)
            _check(f"jacfwd vs finite differences (result part #{o}, argument part #{k})", case, f, fd[o][k],
                   FD_RTOL)


def _fd_jacobian(fn, parts: list) -> list:
    """d result o / d argument k by central differences: [o][k] of shape result + argument."""
    outs = fn(*parts)
    jac = [[np.zeros(np.shape(o) + p.shape) for p in parts] for o in outs]
    for k, p in enumerate(parts):
        for idx in np.ndindex(p.shape):
            args = [q.copy() for q in parts]
            args[k][idx] = p[idx] + H
            up = fn(*args)
            args[k][idx] = p[idx] - H
            for o, (u, d) in enumerate(zip(up, fn(*args))):
                jac[o][k][(...,) + idx] = (np.asarray(u, float) - np.asarray(d, float)) / (2 * H)
    return jac


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_hessian_is_symmetric(case):
    """H = jacfwd(jacrev(loss)). For complex operands it is taken along real directions (jacfwd's
    basis): H[i, j] = d grad_i / d Re x_j, whose real part d2L / dRe x_i dRe x_j is symmetric."""
    _require(case, "vjp")
    _require(case, "jvp")
    pb = Problem(case)
    sizes = [p.size for p in pb.primals]
    argnums = tuple(range(len(pb.primals)))
    loss = lambda *xs: pb.loss(pb.traced(*xs))
    with rules_present():
        blocks = func.hessian(loss, argnums=argnums)(*pb.primals)
        grad = func.grad(loss, argnums=argnums)
        hess = np.block([[np.reshape(blocks[i][j], (sizes[i], sizes[j])) for j in argnums] for i in argnums])
        asym = float(np.max(np.abs(hess.real - hess.real.T), initial=0))
        assert asym <= EXACT_RTOL * max(1.0, float(np.max(np.abs(hess), initial=0))), \
            f"{case.name} ({case.label}): the Hessian is not symmetric: max |H - H^T| {asym:.3g}\n{hess}"
        # H v by central differences of the gradient along a random real direction v
        rng = np.random.default_rng(case.seed + 4)
        v = [rng.standard_normal(p.shape) for p in pb.primals]
        up, down = (np.concatenate([np.ravel(g) for g in grad(*[np.asarray(p + s * H * d, p.dtype)
                                                                for p, d in zip(pb.primals, v)])])
                    for s in (1, -1))
    hv = hess @ np.concatenate([np.ravel(d) for d in v])
    _check("Hessian times a direction vs differences of the gradient", case, hv, (up - down) / (2 * H),
           FD_RTOL)


# --- forward mode ----------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jvp_matches_finite_differences(case):
    _require(case, "jvp")
    pb = Problem(case)
    rng = np.random.default_rng(case.seed + 2)
    tangents = [(rng.standard_normal(p.shape) + 1j * rng.standard_normal(p.shape) * (p.dtype.kind == "c"))
                .astype(p.dtype) for p in pb.primals]
    with rules_present():
        out, tan = func.jvp(pb.traced, tuple(pb.primals), tuple(tangents))
    up = pb.numpy(*[np.asarray(p + H * t) for p, t in zip(pb.primals, tangents)])
    down = pb.numpy(*[np.asarray(p - H * t) for p, t in zip(pb.primals, tangents)])
    for k, (o, t, u, d, ref) in enumerate(zip(out, tan, up, down, pb.numpy(*pb.primals))):
        _check(f"jvp's primal result #{k}", case, o, ref, VMAP_RTOL)
        _check(f"jvp's tangent of result #{k}", case, t, (u - d) / (2 * H), FD_RTOL)


# --- batching --------------------------------------------------------------------------------------
def _vmap_params():
    params, ids = [], []
    for case, cid in zip(CASES, IDS):
        n = len(case.args)
        if not n:
            params.append((case, 0, 0))
            ids.append(f"{cid}-in0-out0")
            continue
        outs = case.reference(*case.operands())
        out_modes = [0, 1] if all(np.ndim(o) >= 1 for o in outs) else [0]
        # in_dims 0 and 1 with each out_dims; one operand unbatched (the first three in turn) with 0
        modes = list(itertools.product([0, 1], out_modes))
        modes += [(f"none{i}", 0) for i in range(min(n, 3))] if n > 1 else []
        for i, o in modes:
            params.append((case, i, o))
            ids.append(f"{cid}-in{i}-out{o}")
    return params, ids


VMAP_PARAMS, VMAP_IDS = _vmap_params()


def _in_dims(mode, examples: list) -> list:
    first = examples[0]
    if mode == 0:
        return [0] * len(first)
    if mode == 1:  # 0-d operands batch at 0 (their only dim)
        return [1 if np.ndim(op) >= 1 else 0 for op in first]
    none = int(mode[4:])
    return [None if i == none else 0 for i in range(len(first))]


@pytest.mark.parametrize("case,in_mode,out_dim", VMAP_PARAMS, ids=VMAP_IDS)
def test_vmap_matches_a_loop(case, in_mode, out_dim):
    _require(case, "batch")
    rng = np.random.default_rng(case.seed + 3)
    examples = [case.operands(rng) for _ in range(B)]
    dims = _in_dims(in_mode, examples)
    for e in examples:  # an unbatched operand is the first example's, for every example
        for i, d in enumerate(dims):
            if d is None:
                e[i] = examples[0][i]
    batched = [examples[0][i] if d is None else np.stack([e[i] for e in examples], axis=d)
               for i, d in enumerate(dims)]
    loop = [case.reference(*e) for e in examples]
    want = [np.stack([r[k] for r in loop], axis=out_dim) for k in range(len(loop[0]))]

    def f(*ops):
        return apply(case.name, *ops, **case.attrs)

    with rules_present():
        got = func.vmap(f, in_dims=tuple(dims), out_dims=out_dim)(*batched)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g)
        what = f"vmap(in_dims={tuple(dims)}, out_dims={out_dim}) result #{k}"
        assert g.dtype == w.dtype, f"{case.name} ({case.label}) {what}: dtype {g.dtype}, expected {w.dtype}"
        if w.dtype.kind in "fc":
            _check(what, case, g, w, VMAP_RTOL)
        else:
            assert g.shape == w.shape and np.array_equal(g, w), \
                f"{case.name} ({case.label}) {what}:\n{g}\nexpected\n{w}"
