// Cannon's algorithm: systolic shifts of B along rows and C along columns (docs/gemm.md.2), on the GEMM layer in benchmarks/legion/gemm (flags and tasks: gemm2d.cc, gemm.h).
#include "gemm.h"

int main(int argc, char **argv) { return gemm::main_2d(argc, argv, gemm::CANNON, "cannon"); }
