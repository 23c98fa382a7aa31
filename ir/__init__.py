"""ir: the typed SSA dialect of aot (types, ops, builder, verifier, text form, passes, interpreter).

Importing `ir` does not import sympy (loaded when the first symbolic dim is made) nor llvmlite.
Its namespace loads on first use: the runtime imports ir's plain-data modules (status codes, ABI
slots: `import ir.abi_slots`) on a warm first call, which needs none of the dialect (~15 ms).
The first attribute taken from `ir` loads the dialect, the structural ops' registration included.
"""
import importlib
import importlib.machinery  # not importlib.util (0.4 ms on a warm start): numpy imported machinery

_NAMES = {
    "Block": "core", "BlockArg": "core", "Func": "core", "Module": "core", "Operation": "core",
    "OpResult": "core", "Region": "core", "Value": "core", "DType": "dtypes", "OPDEFS": "opdef",
    "REQUIRED": "opdef", "MissingRule": "opdef", "OpDef": "opdef", "OpError": "opdef", "lookup": "opdef",
    "register": "opdef", "SymbolInfo": "symbols", "IndexType": "types", "ScalarType": "types",
    "TensorType": "types", "Builder": "builder", "new_func": "builder", "parse_module": "parser",
    "print_module": "printer", "VerifyError": "verifier", "verify": "verifier",
}
_DIALECT = ("dtypes", "structural", "core", "opdef", "symbols", "types")  # structural registers ops


def load_dialect() -> None:
    for m in _DIALECT:
        importlib.import_module(f".{m}", __name__)


def __getattr__(name: str):
    if name in _NAMES:
        load_dialect()
        value = getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
        globals()[name] = value  # later lookups are plain attribute reads
        return value
    if importlib.machinery.PathFinder.find_spec(f"{__name__}.{name}", __path__) is not None:  # a submodule: `from . import dtypes`
        return importlib.import_module(f".{name}", __name__)  # (the dialect may be what imports it)
    load_dialect()
    if name in globals():
        return globals()[name]
    raise AttributeError(f"module 'ir' has no attribute {name!r}")


__all__ = [
    "Block", "BlockArg", "Builder", "DType", "Func", "IndexType", "MissingRule", "Module", "OPDEFS",
    "OpDef", "OpError", "OpResult", "Operation", "REQUIRED", "Region", "ScalarType", "SymbolInfo",
    "TensorType", "Value", "dtypes", "lookup", "new_func", "parse_module", "print_module", "register",
    "VerifyError", "verify",
]
