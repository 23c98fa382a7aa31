"""Status codes of generated code, defined once (plain data: codegen emits them, runtime reads them).

Two ABIs carry them:

- A graph entry function (codegen/entry.py, `int32_t NAME(void **data, int64_t *meta)`) returns
  0 or one of the ENTRY codes below. The JIT (runtime.JitFunction) raises the row's Python
  exception for it.
- A shared library's C function (runtime/abi_wrapper.py) returns a LIBRARY code, documented as
  AOT_STATUS_* in every generated header and in examples/c_abi: public, so the numbers never
  change. An entry code becomes its row's `library` status (with `library_message` in
  NAME_last_error()); an entry code not in ENTRY becomes INTERNAL.

Nothing here imports llvmlite or sympy.
"""

from __future__ import annotations

from .records import record


@record(frozen=True)
class LibraryStatus:
    """A return code of a library's C functions: AOT_STATUS_{name} = code."""

    code: int
    name: str
    doc: str


@record(frozen=True)
class EntryStatus:
    """A non-zero return code of a graph entry function.

    python_error: the builtin exception class the JIT raises (as a runtime.Native* subclass), or
    "LinAlgError" for numpy.linalg.LinAlgError.
    message: its text; `own_message`: the text is Python's or numpy's own and raised as is, else
    it follows the function's name ("NAME: message").
    library: the LibraryStatus name a library returns for it, with `library_message` as its
    NAME_last_error() text (after "NAME: ").
    """

    code: int
    name: str
    python_error: str
    message: str
    library: str
    library_message: str
    own_message: bool = True


LIBRARY = (
    LibraryStatus(0, "OK", "success"),
    LibraryStatus(1, "INVALID_ARGUMENT", "bad argument count, NULL pointer, rank, dtype, device or "
                  "alignment, or a value numpy rejects"),
    LibraryStatus(2, "SHAPE_MISMATCH", "a size disagrees with the signature, a range constraint or a guard"),
    LibraryStatus(3, "OUT_OF_MEMORY", "an intermediate buffer could not be allocated"),
    LibraryStatus(4, "INDEX_OUT_OF_RANGE", "an index read from an input is out of range"),
    LibraryStatus(5, "INTERNAL", "the generated code returned an unknown status"),
    LibraryStatus(6, "LINALG_ERROR", "a matrix is singular or not positive definite, or a decomposition "
                  "does not converge (numpy's LinAlgError)"),
)

ENTRY = (
    EntryStatus(1, "OUT_OF_MEMORY", "MemoryError", "out of memory allocating an intermediate buffer",
                "OUT_OF_MEMORY", "out of memory allocating an intermediate buffer", own_message=False),
    EntryStatus(2, "INDEX_OUT_OF_RANGE", "IndexError", "index out of range",
                "INDEX_OUT_OF_RANGE", "an index is out of range"),
    EntryStatus(3, "NEGATIVE_POWER", "ValueError", "Integers to negative integer powers are not allowed.",
                "INVALID_ARGUMENT", "integers to negative integer powers are not allowed"),
    EntryStatus(4, "ZERO_DIVISION", "ZeroDivisionError", "division by zero",
                "INVALID_ARGUMENT", "a size expression divides by zero"),
    # a maximum/minimum of a masked selection (x[mask].max()) that selected nothing
    EntryStatus(5, "EMPTY_MAXIMUM", "ValueError", "zero-size array to reduction operation maximum which has no "
                "identity", "INVALID_ARGUMENT", "a maximum over an empty selection"),
    EntryStatus(6, "EMPTY_MINIMUM", "ValueError", "zero-size array to reduction operation minimum which has no "
                "identity", "INVALID_ARGUMENT", "a minimum over an empty selection"),
    # checks of the everyday numpy functions (aot/ops/checks.py raise_if, aot/ops/scatter.py bincount)
    EntryStatus(7, "ALL_NAN_SLICE", "ValueError", "All-NaN slice encountered",
                "INVALID_ARGUMENT", "an all-NaN slice has no nanargmax/nanargmin"),
    EntryStatus(8, "WEIGHTS_SUM_TO_ZERO", "ZeroDivisionError", "Weights sum to zero, can't be normalized",
                "INVALID_ARGUMENT", "the weights of an average sum to zero"),
    EntryStatus(9, "BINCOUNT_NEGATIVE", "ValueError", "'list' argument must have no negative elements",
                "INVALID_ARGUMENT", "a bincount input is negative"),
    EntryStatus(10, "BINCOUNT_TOO_LARGE", "ValueError", "bincount: an input value is >= minlength (compiled "
                "code takes minlength as the static output length, so every value must be below it)",
                "INVALID_ARGUMENT", "a bincount input is not below minlength"),
    EntryStatus(11, "RANGE_NOT_FINITE", "ValueError", "autodetected range of the data is not finite (it holds "
                "nan or inf)", "INVALID_ARGUMENT", "the autodetected histogram range is not finite"),
    EntryStatus(12, "TOO_MANY_BINS", "ValueError", "Too many bins for data range. Cannot create the requested "
                "number of finite-sized bins.", "INVALID_ARGUMENT", "too many bins for the data range"),
    EntryStatus(13, "BINS_NOT_MONOTONIC", "ValueError", "`bins` must increase monotonically, when an array",
                "INVALID_ARGUMENT", "histogram bin edges do not increase monotonically"),
    EntryStatus(14, "UNRAVEL_OUT_OF_BOUNDS", "ValueError", "index is out of bounds for the size of the array "
                "np.unravel_index unravels into", "INVALID_ARGUMENT", "an index to unravel is out of bounds"),
    EntryStatus(15, "INVALID_COORDINATES", "ValueError", "invalid entry in coordinates array",
                "INVALID_ARGUMENT", "invalid entry in coordinates array"),
    # in-place updates (aot/frontend/assignment.py)
    EntryStatus(30, "MASK_ASSIGN_COUNT", "ValueError", "NumPy boolean array indexing assignment cannot assign the "
                "values: their number differs from the number of True entries of the mask", "INVALID_ARGUMENT",
                "x[mask] = values got a number of values other than the mask's True entries"),
    EntryStatus(31, "PLACE_FROM_EMPTY", "ValueError", "Cannot insert from an empty array!", "INVALID_ARGUMENT",
                "np.place got no values for a mask with True entries"),
    # checks of the misc numpy functions (aot/frontend/numpy_special.py, numpy_assembly.py,
    # numpy_polynomials.py)
    EntryStatus(40, "BINS_NOT_MONOTONIC_EITHER_WAY", "ValueError", "bins must be monotonically increasing "
                "or decreasing", "INVALID_ARGUMENT",
                "np.digitize bins are neither increasing nor decreasing"),
    EntryStatus(41, "INVALID_CHOICE", "ValueError", "invalid entry in choice array", "INVALID_ARGUMENT",
                "an np.choose index is out of range"),
    EntryStatus(42, "POLYNOMIAL_LEADING_ZEROS", "ValueError", "leading zero coefficients: numpy trims them "
                "(np.polymul's factors; np.polydiv's remainder, where |r[0]| <= 1e-8), so its result's "
                "length depends on the values, and these need another length than the compiled one; trim the "
                "coefficients outside the compiled function", "INVALID_ARGUMENT",
                "a polynomial has leading zero coefficients numpy would trim"),
    # numpy.linalg's errors (aot/ops/linalg_kernels.py): numpy.linalg.LinAlgError, not a builtin
    EntryStatus(20, "SINGULAR_MATRIX", "LinAlgError", "Singular matrix", "LINALG_ERROR", "Singular matrix"),
    EntryStatus(21, "NOT_POSITIVE_DEFINITE", "LinAlgError", "Matrix is not positive definite",
                "LINALG_ERROR", "Matrix is not positive definite"),
    EntryStatus(22, "SVD_NO_CONVERGENCE", "LinAlgError", "SVD did not converge", "LINALG_ERROR",
                "SVD did not converge"),
    EntryStatus(23, "LSTSQ_NO_CONVERGENCE", "LinAlgError", "SVD did not converge in Linear Least Squares",
                "LINALG_ERROR", "SVD did not converge in Linear Least Squares"),
    EntryStatus(24, "EIGH_NO_CONVERGENCE", "LinAlgError", "Eigenvalues did not converge", "LINALG_ERROR",
                "Eigenvalues did not converge"),
    # eig, eigvals and np.roots (aot/ops/linalg_eig.py; their non-convergence is EIGH_NO_CONVERGENCE's message)
    EntryStatus(25, "LINALG_NOT_FINITE", "LinAlgError", "Array must not contain infs or NaNs", "LINALG_ERROR",
                "Array must not contain infs or NaNs"),
    EntryStatus(26, "ROOTS_LEADING_ZERO", "ValueError", "np.roots: the leading coefficient is zero; numpy strips "
                "leading zeros and returns fewer roots, a length compiled code cannot return (it returns len(p) - 1 "
                "roots): strip them outside the compiled function", "INVALID_ARGUMENT",
                "np.roots got a zero leading coefficient"),
)

# derived views
LIBRARY_CODE = {s.name: s.code for s in LIBRARY}  # "OUT_OF_MEMORY" -> 3
ENTRY_BY_CODE = {s.code: s for s in ENTRY}
_ENTRY_CODE = {s.name: s.code for s in ENTRY}
UNKNOWN_ENTRY_LIBRARY_STATUS = "INTERNAL"  # what a library returns for an entry code not in ENTRY

# the entry codes by name, for the code generator
OK = 0
OUT_OF_MEMORY = _ENTRY_CODE["OUT_OF_MEMORY"]
INDEX_OUT_OF_RANGE = _ENTRY_CODE["INDEX_OUT_OF_RANGE"]
NEGATIVE_POWER = _ENTRY_CODE["NEGATIVE_POWER"]
ZERO_DIVISION = _ENTRY_CODE["ZERO_DIVISION"]
SINGULAR_MATRIX = _ENTRY_CODE["SINGULAR_MATRIX"]
NOT_POSITIVE_DEFINITE = _ENTRY_CODE["NOT_POSITIVE_DEFINITE"]
SVD_NO_CONVERGENCE = _ENTRY_CODE["SVD_NO_CONVERGENCE"]
LSTSQ_NO_CONVERGENCE = _ENTRY_CODE["LSTSQ_NO_CONVERGENCE"]
EIGH_NO_CONVERGENCE = _ENTRY_CODE["EIGH_NO_CONVERGENCE"]
LINALG_NOT_FINITE = _ENTRY_CODE["LINALG_NOT_FINITE"]


def library_code(entry_code: int) -> int:
    """The library status an entry function's return code becomes (0 stays 0)."""
    if entry_code == OK:
        return LIBRARY_CODE["OK"]
    s = ENTRY_BY_CODE.get(entry_code)
    return LIBRARY_CODE[s.library if s is not None else UNKNOWN_ENTRY_LIBRARY_STATUS]
