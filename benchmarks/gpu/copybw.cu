// Device-to-device copy bandwidth of GPU 0: the ceiling the GPU reports compare memory-bound kernels with.
// Copies a 4 GiB buffer 20 times (after 3 warm-ups) and prints `COPY BANDWIDTH = X GB/s`, counting the bytes read
// and the bytes written (2 x 4 GiB per copy), as the stencil's BANDWIDTH line counts both; then
// `MULTIPROCESSORS = N` (for the FP32 peak of benchmarks/evaluate.py).
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t err = (call);                                                        \
    if (err != cudaSuccess) {                                                        \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(err));      \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

int main() {
  const size_t bytes = size_t(4) << 30;
  const int warmup = 3, timed = 20;
  void *src = nullptr, *dst = nullptr;
  CHECK(cudaMalloc(&src, bytes));
  CHECK(cudaMalloc(&dst, bytes));
  CHECK(cudaMemset(src, 1, bytes));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < warmup; i++) CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
  CHECK(cudaEventRecord(start));
  for (int i = 0; i < timed; i++) CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice));
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::printf("COPY BANDWIDTH = %.1f GB/s\n", 2.0 * bytes * timed / (ms * 1e-3) / 1e9);
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::printf("MULTIPROCESSORS = %d\n", sms);
  return 0;
}
