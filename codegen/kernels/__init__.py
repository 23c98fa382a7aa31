"""LLVM functions for fused kernels: kernel.elementwise, kernel.reduce, and the parallel-for helper."""
