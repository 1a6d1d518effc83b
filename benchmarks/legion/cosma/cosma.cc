// COSMA: a gx x gy x gz grid chosen from the matrix shape and the processor count, partial A's reduced along z (docs/gemm.md), on the GEMM layer in benchmarks/legion/gemm (flags and tasks: gemm3d.cc, gemm.h).
#include "gemm.h"

int main(int argc, char **argv) { return gemm::main_3d(argc, argv, gemm::COSMA, "cosma"); }
