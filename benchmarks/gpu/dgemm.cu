// cuBLAS DGEMM alone: the ceiling the GEMM benchmarks are compared with (reports/gemm-h200.md).
//   nvcc -O3 -arch=sm_90 benchmarks/gpu/dgemm.cu -lcublas -o dgemm && ./dgemm 4096 16384
// For each size n: C = A B + C on n x n float64 matrices in GPU memory, 2 warm-up calls, then calls timed with CUDA
// events until at least 1 s has passed; prints `dgemm n=<n> gflops=<GFLOP/s> calls=<count>` (2 n³ per call).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(expr)                                                                        \
  do {                                                                                     \
    auto status_ = (expr);                                                                 \
    if ((int)status_ != 0) {                                                               \
      std::fprintf(stderr, "%s failed with status %d\n", #expr, (int)status_);             \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

__global__ void fill(double *p, size_t count, double value) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
    p[i] = value * (double)(i % 7);
}

int main(int argc, char **argv) {
  cublasHandle_t handle;
  CHECK(cublasCreate(&handle));
  for (int a = 1; a < argc; a++) {
    const long long n = std::atoll(argv[a]);
    const size_t count = (size_t)(n * n);
    double *m[3];
    for (double *&p : m) CHECK(cudaMalloc(&p, count * sizeof(double)));
    for (int i = 0; i < 3; i++) fill<<<1024, 256>>>(m[i], count, 0.5 + i);
    const double one = 1.0;
    auto call = [&]() {
      CHECK(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, m[0], (int)n, m[1], (int)n,
                        &one, m[2], (int)n));
    };
    call();
    call();
    CHECK(cudaDeviceSynchronize());
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    long long calls = 0;
    float ms = 0;
    CHECK(cudaEventRecord(start));
    while (ms < 1000.0f) {
      for (int i = 0; i < 4; i++, calls++) call();
      CHECK(cudaEventRecord(stop));
      CHECK(cudaEventSynchronize(stop));
      CHECK(cudaEventElapsedTime(&ms, start, stop));
    }
    std::printf("dgemm n=%lld gflops=%.1f calls=%lld\n", n, 2.0 * n * n * n * calls / (ms * 1e-3) / 1e9, calls);
    std::fflush(stdout);
    for (double *p : m) CHECK(cudaFree(p));
  }
  return 0;
}
