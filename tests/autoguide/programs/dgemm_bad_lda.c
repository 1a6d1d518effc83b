/* A GEMM leaf that passes a row-major (C_order) instance to column-major BLAS: the leading dimension it gives for
 * A is the row length, smaller than the number of rows, so BLAS rejects parameter 8 (LDA). Built and run against
 * the OpenBLAS that numpy ships by tests/autoguide/capture.py, recipe dgemm-bad-lda. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void scipy_dgemm_64_(const char *transa, const char *transb, const int64_t *m, const int64_t *n, const int64_t *k,
                     const double *alpha, const double *a, const int64_t *lda, const double *b, const int64_t *ldb,
                     const double *beta, double *c, const int64_t *ldc, size_t la, size_t lb);

int main(void) {
  const int64_t m = 64, n = 32, k = 16;
  const int64_t lda = k; /* row-major A (m x k) has rows of length k; column-major BLAS needs lda >= m */
  const int64_t ldb = k, ldc = m;
  const double alpha = 1.0, beta = 0.0;
  double *a = calloc(m * k, sizeof(double)), *b = calloc(k * n, sizeof(double)), *c = calloc(m * n, sizeof(double));
  scipy_dgemm_64_("N", "N", &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
  printf("c[0] = %g\n", c[0]);
  return 0;
}
