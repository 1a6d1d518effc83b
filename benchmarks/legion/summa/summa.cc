// SUMMA: row broadcasts of B and column broadcasts of C (docs/gemm.md.2), on the GEMM layer in benchmarks/legion/gemm (flags and tasks: gemm2d.cc, gemm.h).
#include "gemm.h"

int main(int argc, char **argv) { return gemm::main_2d(argc, argv, gemm::SUMMA, "summa"); }
