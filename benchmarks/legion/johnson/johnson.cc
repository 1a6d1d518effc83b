// Johnson's 3-D algorithm: a g x g x g grid, B broadcast along j, C along i, partial A's reduced along k (docs/gemm.md), on the GEMM layer in benchmarks/legion/gemm (flags and tasks: gemm3d.cc, gemm.h).
#include "gemm.h"

int main(int argc, char **argv) { return gemm::main_3d(argc, argv, gemm::JOHNSON, "johnson"); }
