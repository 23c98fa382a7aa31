"""np.linalg.solve of small matrices of static size: LU with partial pivoting unrolled for the size.

For n <= MAX_N and n + k <= MAX_WIDTH (k right-hand sides, static too) a batch member's [A | B] is
copied into rows of a stack matrix, each row one vector of W lanes (W = n + k rounded up to a
power of two, the padding zero). The elimination is unrolled at build time: per column the pivot
(the first row of largest |a_ik|, as LAPACK's idamax), a row swap (two vector loads and stores,
the pivot row found at run time), then each row below takes row_i -= (a_ik / a_kk) * row_k on the
whole vector, B's columns along, and its entry in column k set to 0 exactly (a zero pivot marks the
member singular: getrf's info > 0, the entry raises LinAlgError). The back substitution works on
whole rows too: row_j /= u_jj, then row_i -= u_ij * row_j above it (with the exact zeros, only
column j and B's columns change: the standard substitution). No work buffer, no loops, no calls: what the general kernel
(linalg_lu.py) spends on them is most of a small solve's time.

The argument block is linalg_lu's solve layout without its work operand or scalars: [a, b, x,
batch dims, batch strides, core strides, error].
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType

from ..llvm.loops import alloca, for_range, i64
from ..llvm.types import F64, I1
from ..targets.base import Target
from .linalg_common import BatchArgs, KernelBuilder, Layout, compute_dtype, convert_value, operand_matrix

MAX_N = 16
MAX_WIDTH = 32
OPERANDS = ("a", "b", "x")


def applies(n, k, dt: DType) -> bool:
    """Whether the small kernel solves these sizes (static ints) and dtype."""
    return isinstance(n, int) and isinstance(k, int) and 1 <= n <= MAX_N and n + k <= MAX_WIDTH \
        and k >= 1 and not dt.is_complex


def layout(batch_rank: int) -> Layout:
    return Layout(len(OPERANDS), batch_rank, 0)


def _width(n: int, k: int) -> int:
    w = 1
    while w < n + k:
        w *= 2
    return w


def emit_small_solve(module: L.Module, target: Target, name: str, n: int, k: int, out_dt: DType,
                     in_dtypes: list, batch_rank: int, helpers: dict) -> L.Function:
    dt = compute_dtype(out_dt)
    assert dt.is_float and dt.bits == 64, "the small solve computes in float64"
    kb = KernelBuilder(module, target, name, helpers)
    b = kb.b
    args = BatchArgs(kb, layout(batch_rank))
    w = _width(n, k)
    vt = L.VectorType(F64, w)
    rows = alloca(kb.ab, L.ArrayType(vt, n), name="rows")
    zero = L.Constant(F64, 0.0)

    def row_ptr(i):
        return b.gep(rows, [i64(0), i], source_etype=rows.slot_type)

    def load_row(i):
        return b.load(row_ptr(i), typ=vt, align=8)

    def store_row(i, v):
        b.store(v, row_ptr(i), align=8)

    def splat(x):
        one = b.insert_element(L.Constant(vt, L.Undefined), x, L.Constant(L.IntType(32), 0))
        return b.shuffle_vector(one, L.Constant(vt, L.Undefined), L.Constant(L.VectorType(L.IntType(32), w), [0] * w))

    def lane(v, j):
        return b.extract_element(v, L.Constant(L.IntType(32), j))

    with for_range(b, kb.begin, kb.end, name="t") as t:
        offs = args.offsets(t)
        a = operand_matrix(kb, args, 0, in_dtypes[0], offs[0])
        rhs = operand_matrix(kb, args, 1, in_dtypes[1], offs[1])
        for i in range(n):  # [A | B] into the rows (converted to float64), the padding zero
            v = L.Constant(vt, [0.0] * w)
            for j in range(n + k):
                src, col, sdt = (a, j, in_dtypes[0]) if j < n else (rhs, j - n, in_dtypes[1])
                x = convert_value(kb, src.load(i64(i), i64(col)), sdt, dt)
                v = b.insert_element(v, x, L.Constant(L.IntType(32), j))
            store_row(i64(i), v)
        singular = L.Constant(I1, 0)
        for c in range(n):
            best = b.call(_fabs(module), [lane(load_row(i64(c)), c)])
            piv = i64(c)
            for i in range(c + 1, n):
                x = b.call(_fabs(module), [lane(load_row(i64(i)), c)])
                better = b.fcmp_ordered(">", x, best)
                best, piv = b.select(better, x, best), b.select(better, i64(i), piv)
            top, other = load_row(i64(c)), load_row(piv)
            store_row(piv, top)  # the swap (a no-op when the pivot row is row c)
            store_row(i64(c), other)
            d = lane(other, c)
            singular = b.or_(singular, b.fcmp_ordered("==", d, zero))
            for i in range(c + 1, n):  # column c below the pivot becomes exactly 0
                r = load_row(i64(i))
                m = b.fdiv(lane(r, c), d)
                r = b.fsub(r, b.fmul(splat(m), other))
                store_row(i64(i), b.insert_element(r, zero, L.Constant(L.IntType(32), c)))
        with b.if_else(singular, likely=False) as (bad, good):
            with bad:
                args.fail()
            with good:
                _back_substitute(b, n, load_row, store_row, splat, lane)
                x_out = operand_matrix(kb, args, 2, out_dt, offs[2], src=dt)
                for i in range(n):
                    r = load_row(i64(i))
                    for j in range(k):
                        x_out.store(i64(i), i64(j), lane(r, n + j))
    return kb.finish()


def _back_substitute(b: L.IRBuilder, n: int, load_row, store_row, splat, lane) -> None:
    """U X = Y on whole rows, bottom-up: row_j /= u_jj, then row_i -= u_ij * row_j for i < j."""
    for j in range(n - 1, -1, -1):
        r = load_row(i64(j))
        r = b.fdiv(r, splat(lane(r, j)))
        store_row(i64(j), r)
        for i in range(j):
            above = load_row(i64(i))
            store_row(i64(i), b.fsub(above, b.fmul(splat(lane(above, j)), r)))


def _fabs(module: L.Module) -> L.Function:
    fn = module.globals.get("llvm.fabs.f64")
    if fn is None:
        fn = L.Function(module, L.FunctionType(F64, [F64]), name="llvm.fabs.f64")
    return fn

