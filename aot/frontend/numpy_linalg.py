"""matmul, dot, outer, inner, vdot, tensordot and einsum, as matmul / mul / sum / layout core ops
(np.matmul is the matmul row's; the others decompose: DECOMPOSITIONS).

einsum and tensordot share one pairwise contraction: each operand is summed over the labels nobody
else needs, laid out as (batch, free, contracted) and multiplied with one batched matmul (or a
broadcast mul when nothing is contracted), then permuted into the requested output order.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .emitter import Emitter, abstract_of
from .numpy_reductions import reduce
from .numpy_shape import broadcast_to, reshape, transpose
from .numpy_ufuncs import apply_ufunc, emit
from .operands import UnsupportedError, cast, constant, no_out, normalize_axis, result_dtype, to_dtype
from .registry import translates
from .shapes import dim_equals, dims_equal, fmt_shape, prod


def _operand(em: Emitter, x: Any):
    return x if em.is_value(x) else constant(em, np.asarray(x))


def matmul(em: Emitter, a: Any, b: Any, dtype: Any = None):
    a, b = _operand(em, a), _operand(em, b)
    sa, sb = abstract_of(a).shape, abstract_of(b).shape
    for i, s in enumerate((sa, sb)):
        if not s:
            raise ValueError(f"matmul: Input operand {i} does not have enough dimensions (has 0, gufunc core "
                             f"with signature (n?,k),(k,m?)->(n?,m?) requires 1)")
    k_b = sb[-2] if len(sb) > 1 else sb[0]
    if not dims_equal(sa[-1], k_b):
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                         f"signature (n?,k),(k,m?)->(n?,m?) (size {k_b} is different from {sa[-1]})")
    dt = to_dtype(dtype, "dtype") if dtype is not None else result_dtype(em, a, b)
    return emit(em, "matmul", cast(em, a, dt), cast(em, b, dt))


@translates("matmul")
def np_matmul(em: Emitter, x1: Any, x2: Any, /, out: Any = None, *, dtype: Any = None, **kwargs: Any):
    no_out("np.matmul", out)
    if kwargs:
        raise UnsupportedError(f"np.matmul: arguments {sorted(kwargs)} are not supported in traced code")
    return matmul(em, x1, x2, dtype)


def np_dot(em: Emitter, a: Any, b: Any, out: Any = None):
    no_out("np.dot", out)
    a, b = _operand(em, a), _operand(em, b)
    sa, sb = abstract_of(a).shape, abstract_of(b).shape
    if not sa or not sb:
        return apply_ufunc(em, np.multiply, a, b)
    k_b = sb[-2] if len(sb) > 1 else sb[0]
    if not dims_equal(sa[-1], k_b):
        raise ValueError(f"shapes {fmt_shape(sa)} and {fmt_shape(sb)} not aligned: {sa[-1]} "
                         f"(dim {len(sa) - 1}) != {k_b} (dim {max(len(sb) - 2, 0)})")
    if len(sb) <= 2 and (len(sa) <= 2 or len(sb) == 1):
        return matmul(em, a, b)
    # N-d . M-d: sum over a's last and b's second-to-last axis, numpy's output order
    la = [f"a{i}" for i in range(len(sa) - 1)] + ["k"]
    lb = [f"b{i}" for i in range(len(sb) - 2)] + ["k", "n"]
    return contract_all(em, [a, b], [la, lb], la[:-1] + lb[:-2] + ["n"])


def np_outer(em: Emitter, a: Any, b: Any, out: Any = None):
    no_out("np.outer", out)
    x = reshape(em, _operand(em, a), (-1, 1))
    y = reshape(em, _operand(em, b), (1, -1))
    return apply_ufunc(em, np.multiply, x, y)


def np_inner(em: Emitter, a: Any, b: Any):
    a, b = _operand(em, a), _operand(em, b)
    sa, sb = abstract_of(a).shape, abstract_of(b).shape
    if not sa or not sb:
        return apply_ufunc(em, np.multiply, a, b)
    la = [f"a{i}" for i in range(len(sa) - 1)] + ["k"]
    lb = [f"b{i}" for i in range(len(sb) - 1)] + ["k"]
    return contract_all(em, [a, b], [la, lb], la[:-1] + lb[:-1])


def np_vdot(em: Emitter, a: Any, b: Any, /):
    x, y = reshape(em, _operand(em, a), (-1,)), reshape(em, _operand(em, b), (-1,))
    if abstract_of(x).dtype.is_complex:
        x = emit(em, "conj", x)
    return matmul(em, x, y)


def np_tensordot(em: Emitter, a: Any, b: Any, axes: Any = 2):
    a, b = _operand(em, a), _operand(em, b)
    na, nb = abstract_of(a).ndim, abstract_of(b).ndim
    if isinstance(axes, int):
        ax_a, ax_b = list(range(na - axes, na)), list(range(axes))
    else:
        ax_a, ax_b = ([x] if isinstance(x, int) else list(x) for x in axes)
    if len(ax_a) != len(ax_b):
        raise ValueError("shape-mismatch for sum")
    ax_a = [normalize_axis(x, na, "axes") for x in ax_a]
    ax_b = [normalize_axis(x, nb, "axes") for x in ax_b]
    la, lb = [f"a{i}" for i in range(na)], [f"b{i}" for i in range(nb)]
    for k, (i, j) in enumerate(zip(ax_a, ax_b)):
        la[i] = lb[j] = f"k{k}"
    out = [x for x in la if x.startswith("a")] + [x for x in lb if x.startswith("b")]
    return contract_all(em, [a, b], [la, lb], out)


# --- einsum ---------------------------------------------------------------------------------------

def np_einsum(em: Emitter, subscripts: Any, *operands: Any, out: Any = None, dtype: Any = None,
              order: str = "K", casting: str = "safe", optimize: Any = False):
    no_out("np.einsum", out)
    if not isinstance(subscripts, str):
        raise UnsupportedError("np.einsum: only the subscripts-string form is supported in traced code")
    vals = [_operand(em, x) for x in operands]
    labels, out_labels = _parse_einsum(subscripts, [abstract_of(v).ndim for v in vals])
    r = contract_all(em, vals, labels, out_labels)
    return cast(em, r, to_dtype(dtype, "dtype")) if dtype is not None else r


def _parse_einsum(subscripts: str, ranks: list[int]) -> tuple[list[list[str]], list[str]]:
    spec = subscripts.replace(" ", "")
    lhs, arrow, rhs = spec.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"einsum: {len(terms)} operand subscripts for {len(ranks)} operands in "
                         f"{subscripts!r}")
    n_ell = max((r - len(t.replace("...", "")) for t, r in zip(terms, ranks) if "..." in t), default=0)
    ell = [f".{i}" for i in range(n_ell)]
    labels = []
    for t, r in zip(terms, ranks):
        explicit = list(t.replace("...", ""))
        for c in explicit:
            if not c.isalpha():
                raise ValueError(f"einsum: invalid subscript {c!r} in {subscripts!r}")
        if "..." in t:
            k = r - len(explicit)
            i = t.index("...")
            labels.append(list(t[:i]) + ell[n_ell - k:] + list(t[i + 3:]))
        else:
            if len(explicit) != r:
                raise ValueError(f"einsum: operand has {r} dimensions but subscripts {t!r} give "
                                 f"{len(explicit)}")
            labels.append(explicit)
        if len(set(labels[-1])) != len(labels[-1]):
            raise UnsupportedError(f"np.einsum: repeated subscripts within one operand ({t!r}: diagonals) "
                                   f"are not supported in traced code")
    if arrow:
        out = list(rhs.replace("...", "\0"))
        out = [x for c in out for x in (ell if c == "\0" else [c])]
        seen = {x for ls in labels for x in ls}
        for c in out:
            if c not in seen:
                raise ValueError(f"einsum: output subscript {c!r} does not appear in the inputs")
    else:
        counts: dict[str, int] = {}
        for ls in labels:
            for c in ls:
                counts[c] = counts.get(c, 0) + 1
        out = ell + sorted(c for c, k in counts.items() if k == 1 and not c.startswith("."))
    return labels, out


def contract_all(em: Emitter, vals: list, labels: list[list[str]], out: list[str]):
    """Contract operands left to right; each step keeps the labels later operands or `out` need."""
    dt = result_dtype(em, *vals)
    vals = [cast(em, v, dt) for v in vals]
    acc, acc_labels = vals[0], list(labels[0])
    for i in range(1, len(vals)):
        later = set(out).union(*(labels[j] for j in range(i + 1, len(vals))))
        acc, acc_labels = _contract_pair(em, acc, acc_labels, vals[i], list(labels[i]), later)
    acc, acc_labels = _sum_unneeded(em, acc, acc_labels, set(out))
    r = transpose(em, acc, [acc_labels.index(c) for c in out])
    return cast(em, r, dt)


def _sum_unneeded(em: Emitter, x: Any, labels: list[str], needed: set[str]):
    axes = tuple(i for i, c in enumerate(labels) if c not in needed)
    return reduce(em, "sum", x, axes, False), [c for c in labels if c in needed]


def _contract_pair(em: Emitter, a: Any, la: list[str], b: Any, lb: list[str], later: set[str]):
    a, la = _sum_unneeded(em, a, la, later | set(lb))
    b, lb = _sum_unneeded(em, b, lb, later | set(la))
    size = _label_sizes(em, [(a, la), (b, lb)])
    batch = [c for c in la if c in lb and c in later]
    contracted = [c for c in la if c in lb and c not in later]
    a_free = [c for c in la if c not in lb]
    b_free = [c for c in lb if c not in la]
    a = _arrange(em, a, la, batch + a_free + contracted, size)
    b = _arrange(em, b, lb, batch + contracted + b_free, size)
    if not contracted:
        nb, na, nf = len(batch), len(a_free), len(b_free)
        a = reshape(em, a, tuple(size[c] for c in batch + a_free) + (1,) * nf)
        b = reshape(em, b, tuple(size[c] for c in batch) + (1,) * na + tuple(size[c] for c in b_free))
        return apply_ufunc(em, np.multiply, a, b), batch + a_free + b_free
    dims = [prod(size[c] for c in group) for group in (batch, a_free, contracted, b_free)]
    a3 = reshape(em, a, (dims[0], dims[1], dims[2]))
    b3 = reshape(em, b, (dims[0], dims[2], dims[3]))
    r = emit(em, "matmul", a3, b3)
    return reshape(em, r, tuple(size[c] for c in batch + a_free + b_free)), batch + a_free + b_free


def _label_sizes(em: Emitter, operands: list[tuple[Any, list[str]]]) -> dict[str, Any]:
    """Each label's size; a size-1 dim broadcasts against the others (as numpy's einsum)."""
    size: dict[str, Any] = {}
    for v, ls in operands:
        for c, d in zip(ls, abstract_of(v).shape):
            if c not in size or dim_equals(size[c], 1):
                size[c] = d
            elif not dim_equals(d, 1) and not dims_equal(size[c], d):
                raise ValueError(f"einsum: operands could not be broadcast together: subscript {c!r} has "
                                 f"sizes {size[c]} and {d}")
    return size


def _arrange(em: Emitter, x: Any, labels: list[str], order: list[str], size: dict[str, Any]):
    x = transpose(em, x, [labels.index(c) for c in order])
    target = tuple(size[c] for c in order)
    return broadcast_to(em, x, target)


# numpy functions that are not one core op (np.matmul registers with @translates)
DECOMPOSITIONS = {
    np.dot: np_dot, np.outer: np_outer, np.inner: np_inner, np.vdot: np_vdot, np.tensordot: np_tensordot,
    np.einsum: np_einsum,
}
