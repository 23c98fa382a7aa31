"""The standalone C ABI of aot shared libraries: DLPack layout, status codes, the generated header.

A library for function NAME exports (examples/c_abi/README.md describes the ABI for its users):

    int         NAME(const DLTensor *inputs, int32_t n_inputs, DLTensor *outputs, int32_t n_outputs);
    int         NAME_output_shapes(const DLTensor *inputs, int32_t n_inputs, int64_t *shapes_out);
    const char *NAME_signature(void);
    const char *NAME_last_error(void);
    int32_t     NAME_abi_version(void);
    const char *NAME_target(void);
    int         NAME_set_num_threads(int32_t n);

Data must be in the host's byte order (DLPack has no byte-order field, so the library cannot
check it; aot_load converts other arrays) and aligned to the element size (checked:
AOT_STATUS_INVALID_ARGUMENT).

This file is plain data and text: `LibrarySpec` describes one function (dims already rendered as
C expressions by the caller), `header_text` writes NAME.h. The validating wrapper around the
internal entry ABI (codegen/entry.py) is in runtime/abi_wrapper.py.
"""

from __future__ import annotations

import re

from ir import status
from ir.records import field, record

ABI_VERSION = 1

# DLPack (dlpack.h v0.8+): DLDeviceType and DLDataTypeCode values we accept
DL_CPU, DL_CUDA_HOST = 1, 3
DL_INT, DL_UINT, DL_FLOAT, DL_COMPLEX, DL_BOOL = 0, 1, 2, 5, 6

# numpy dtype name -> (short name in signatures, DLPack type code, bits)
DTYPES = {
    "bool": ("bool", DL_BOOL, 8),
    "int32": ("i32", DL_INT, 32),
    "int64": ("i64", DL_INT, 64),
    "float32": ("f32", DL_FLOAT, 32),
    "float64": ("f64", DL_FLOAT, 64),
    "complex64": ("c64", DL_COMPLEX, 64),
    "complex128": ("c128", DL_COMPLEX, 128),
}
SHORT_TO_NUMPY = {short: np_name for np_name, (short, _, _) in DTYPES.items()}

# return codes (also in every header, as AOT_STATUS_*), from the one table of status codes
STATUS = {s.code: (s.name, s.doc) for s in status.LIBRARY}  # code -> (name, doc)
STATUS_CODE = dict(status.LIBRARY_CODE)  # name -> code

_C_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_C_KEYWORDS = frozenset(
    ["auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "class", "namespace", "template", "new", "delete"]
)


def check_c_name(name: str) -> str:
    if not _C_IDENT.match(name) or name in _C_KEYWORDS or name.startswith("__"):
        raise ValueError(
            f"library name {name!r} is not a valid C identifier (letters, digits and '_', not starting "
            "with a digit or '__'); it comes from the output file name NAME.so"
        )
    return name


@record(frozen=True)
class TensorSpec:
    """One argument or result. `dims`: ints, or C expressions over the size symbols (a bare symbol
    name for an input dim binds that symbol). `text_dims`: the same dims as shown to users."""

    name: str
    dtype: str  # numpy name
    dims: tuple
    text_dims: tuple

    @property
    def ndim(self) -> int:
        return len(self.dims)

    @property
    def short(self) -> str:
        return DTYPES[self.dtype][0]

    def text(self) -> str:
        return f"{self.short}[{','.join(str(d) for d in self.text_dims)}]"


@record(frozen=True)
class SymbolSpec:
    name: str
    lower: int
    upper: int | None  # None: unbounded


@record(frozen=True)
class LibrarySpec:
    """Everything the header and the wrapper need to know about one compiled function."""

    name: str
    entry: str  # internal graph entry symbol: int32 entry(void **data, int64 *meta)
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    symbols: tuple[SymbolSpec, ...] = ()
    guards: tuple[tuple[str, str], ...] = ()  # (C boolean expression, readable text)
    target: str = ""
    doc: str = ""
    extra: dict = field(default_factory=dict, compare=False)
    threads_symbol: str = ""  # the generated code's thread-count global (codegen.entry)
    max_threads: int = 1  # the pool's cap (codegen.kernels.parallel.MAX_THREADS)

    @property
    def signature(self) -> str:
        ins = ", ".join(t.text() for t in self.inputs)
        outs = ", ".join(t.text() for t in self.outputs)
        return f"({ins}) -> ({outs})"

    @property
    def n_output_dims(self) -> int:
        return sum(t.ndim for t in self.outputs)

    def exported_symbols(self) -> list[str]:
        n = self.name
        return [
            n,
            f"{n}_output_shapes",
            f"{n}_signature",
            f"{n}_last_error",
            f"{n}_abi_version",
            f"{n}_target",
            f"{n}_set_num_threads",
        ]


def parse_signature(text: str) -> tuple[list[tuple[str, tuple]], list[tuple[str, tuple]]]:
    """`(f64[N,3], f32[]) -> (f64[N])` -> ([(numpy dtype, dims)...], [...]); dims as strings."""
    m = re.fullmatch(r"\s*\((.*)\)\s*->\s*\((.*)\)\s*", text)
    if m is None:
        raise ValueError(f"not an aot signature: {text!r}")
    return _parse_tensors(m.group(1)), _parse_tensors(m.group(2))


def _parse_tensors(text: str) -> list[tuple[str, tuple]]:
    out = []
    for m in re.finditer(r"([a-z0-9]+)\[([^\]]*)\]", text):
        short, dims = m.group(1), m.group(2)
        if short not in SHORT_TO_NUMPY:
            raise ValueError(f"unknown dtype {short!r} in signature {text!r}")
        out.append((SHORT_TO_NUMPY[short], tuple(_split_dims(dims))))
    return out


def _split_dims(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


_COMMON = """\
#ifndef AOT_ABI_COMMON_V1
#define AOT_ABI_COMMON_V1
#define AOT_ABI_VERSION {abi}

/* Return codes of every aot library function (0: success). On a non-zero code nothing was
   written to the outputs that may be relied on, and NAME_last_error() says why. */
{status}

/* DLPack tensor descriptor (https://github.com/dmlc/dlpack, dlpack.h v0.8+), declared here so
   that this header needs no other. If you also use dlpack.h, include it before this header. */
#ifndef DLPACK_DLPACK_H_
typedef enum {{ kDLCPU = 1, kDLCUDAHost = 3 }} DLDeviceType;
typedef struct {{ int32_t device_type; int32_t device_id; }} DLDevice;
typedef enum {{ kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLComplex = 5, kDLBool = 6 }} DLDataTypeCode;
typedef struct {{ uint8_t code; uint8_t bits; uint16_t lanes; }} DLDataType;
typedef struct {{
  void *data;          /* start of the allocation; element (0,...,0) is at data + byte_offset,
                          aligned to the element size; elements in the host's byte order */
  DLDevice device;     /* must be kDLCPU (or kDLCUDAHost: pinned host memory) */
  int32_t ndim;        /* rank */
  DLDataType dtype;    /* lanes must be 1 */
  int64_t *shape;      /* ndim sizes (may be NULL when ndim == 0) */
  int64_t *strides;    /* ndim strides in ELEMENTS, or NULL for C-contiguous */
  uint64_t byte_offset;
}} DLTensor;
#endif
#endif /* AOT_ABI_COMMON_V1 */
"""

_HEADER = """\
/* {name}.h: generated by aot {version} -- do not edit.
 *
 * {doc}
 * Signature: {signature}
{symbols}{guards} * Target:    {target}
 *
 * Plain C99/C++ interface to {name}.so (no Python needed): link with the .so path or -l:{name}.so.
 * Thread-safe and re-entrant: all state is per call; error messages are per thread.
 */
#ifndef AOT_{upper}_H
#define AOT_{upper}_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {{
#endif

{common}
#define {name}_NUM_INPUTS {n_in}
#define {name}_NUM_OUTPUTS {n_out}
/* number of int64_t that {name}_output_shapes writes: the ranks of the outputs, summed */
#define {name}_OUTPUT_SHAPES_LEN {n_dims}

/* Run {name}.
 *   inputs     {n_in} descriptors, in this order:
{in_docs}
 *   n_inputs   must be {n_in}
 *   outputs    {n_out} descriptors allocated by the caller, shapes as {name}_output_shapes gives:
{out_docs}
 *   n_outputs  must be {n_out}
 * Every input and output is checked (count, NULL pointers, device, rank, dtype, sizes against the
 * signature, the ranges and the guards above, and that data + byte_offset is aligned to the element
 * size -- for complex types to the size of one part -- as the generated loads assume). Not
 * checkable, so the caller's duty: every element the shape and strides reach lies in memory it
 * owns, elements are in the host's byte order (a DLTensor has no byte-order field: big-endian data
 * on a little-endian host would be read as wrong numbers), and outputs overlap no input.
 * Returns AOT_STATUS_OK, or another AOT_STATUS_* code with a message in {name}_last_error(). */
int {name}(const DLTensor *inputs, int32_t n_inputs, DLTensor *outputs, int32_t n_outputs);

/* Output shapes for these inputs, without running: writes {name}_OUTPUT_SHAPES_LEN sizes to
 * shapes_out (the dims of output 0, then of output 1, ...). Checks the inputs like {name}
 * (their data pointers may be NULL here). Returns an AOT_STATUS_* code. */
int {name}_output_shapes(const DLTensor *inputs, int32_t n_inputs, int64_t *shapes_out);

/* The signature text, e.g. "{signature}". Static storage. */
const char *{name}_signature(void);

/* Why the latest call of a {name}* function on this thread failed ("" after a success).
 * Valid until the next call on this thread. */
const char *{name}_last_error(void);

/* AOT_ABI_VERSION of the library (compare with the one in this header). */
int32_t {name}_abi_version(void);

/* The LLVM target the code was generated for (triple and CPU). Static storage. */
const char *{name}_target(void);

/* Threads for the large kernels of {name}* calls (process-wide, from the next call on): n replaces
 * the default, which is AOT_NUM_THREADS when the library is loaded (if a positive integer), else
 * the count chosen when it was built; more than {max_threads} are capped. Results do not depend on it.
 * Returns AOT_STATUS_OK, or AOT_STATUS_INVALID_ARGUMENT (and a message) for n < 1. */
int {name}_set_num_threads(int32_t n);

#ifdef __cplusplus
}}
#endif
#endif /* AOT_{upper}_H */
"""


def header_text(spec: LibrarySpec, version: str = "") -> str:
    status = "\n".join(f"#define AOT_STATUS_{n} {c} /* {why} */" for c, (n, why) in STATUS.items())
    symbols = "".join(
        f" * Size {s.name}: {s.lower} <= {s.name}" + (f" <= {s.upper}\n" if s.upper is not None else "\n")
        for s in spec.symbols
    )
    guards = "".join(f" * Guard:     {text}\n" for _, text in spec.guards)
    return _HEADER.format(
        max_threads=spec.max_threads,
        name=spec.name,
        upper=spec.name.upper(),
        version=version,
        doc=(spec.doc or f"{spec.name}: a numpy function compiled ahead of time.").replace("*/", "* /"),
        signature=spec.signature,
        symbols=symbols,
        guards=guards,
        target=spec.target,
        common=_COMMON.format(abi=ABI_VERSION, status=status),
        n_in=len(spec.inputs),
        n_out=len(spec.outputs),
        n_dims=spec.n_output_dims,
        in_docs=_tensor_docs(spec.inputs),
        out_docs=_tensor_docs(spec.outputs),
    )


def _tensor_docs(tensors) -> str:
    lines = []
    for i, t in enumerate(tensors):
        _, code, bits = DTYPES[t.dtype]
        lines.append(
            f" *                [{i}] {t.name}: {t.text()}  ({t.dtype}: dtype code {code}, bits {bits})"
        )
    return "\n".join(lines) if lines else " *                (none)"
