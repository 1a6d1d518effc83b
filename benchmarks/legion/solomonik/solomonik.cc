// Solomonik's 2.5-D algorithm: an r x r x c grid, c layers of a Cannon over r3 sub-blocks of their chunk of k, partial A's reduced along c (docs/gemm.md), on the GEMM layer in benchmarks/legion/gemm (flags and tasks: gemm3d.cc, gemm.h).
#include "gemm.h"

int main(int argc, char **argv) { return gemm::main_3d(argc, argv, gemm::SOLOMONIK, "solomonik"); }
