"""ir -> LLVM IR with llvmlite: types, lowering context, the LOWERINGS table, loop helpers."""
