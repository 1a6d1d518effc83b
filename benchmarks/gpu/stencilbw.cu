// The stencil kernel of benchmarks/legion/stencil (stencil_kernels.cuh) alone on GPU 0, against the
// device-to-device copy rate measured here: one tile of the `gpu` size (7500 x 15000 active points, SOA F_order, a
// 2-point halo), every sweep shape (points per thread along the slow axis, threads per block, one or two points per
// thread). Each shape is first checked against a one-point-per-thread reference (also on a sweep whose first column
// is not 16-byte aligned), then timed (2 warm-ups, 20 launches). Bytes counted as the application's BANDWIDTH line
// counts them: 24 per point (input and output read, output written).
//   nvcc -O3 -arch=sm_90 -I benchmarks/legion/stencil benchmarks/gpu/stencilbw.cu -o stencilbw && ./stencilbw
// Prints one `SHAPE window=W block=B pairs=P: X GB/s = Y % of copy` line per shape (window=0: the kernel before
// stencil_kernels.cuh), then `COPY BANDWIDTH = X GB/s` and `BEST window=W block=B pairs=P`.
#include <cmath>
#include <cstdio>
#include <vector>

#include "stencil_kernels.cuh"

#define CHECK(call)                                                             \
  do {                                                                          \
    cudaError_t err = (call);                                                   \
    if (err != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(err)); \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

using namespace stencil;

constexpr long long NA = 7500, NB = 15000, HALO = 2, SA = NA + 2 * HALO + 2, SB = NB + 2 * HALO;

__global__ void fill(double *in, double *out, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    in[i] = double((i * 7919) % 1009) * 1e-3;
    out[i] = double(i % 13);
  }
}

__global__ void reference(Sweep s) {
  const long long a = blockIdx.x * (long long)blockDim.x + threadIdx.x, b = blockIdx.y;
  if (a >= s.na) return;
  const double *c = s.in + a * s.ia + b * s.ib;
  s.out[a * s.oa + b * s.ob] += W1 * (c[s.ia] - c[-s.ia]) + W2 * (c[2 * s.ia] - c[-2 * s.ia]) +
                                W1 * (c[s.ib] - c[-s.ib]) + W2 * (c[2 * s.ib] - c[-2 * s.ib]);
}

__global__ void count_mismatches(const double *x, const double *y, long long n, unsigned long long *bad) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    if (fabs(x[i] - y[i]) > 1e-12 * (1 + fabs(y[i]))) atomicAdd(bad, 1ULL);
}

// The application's stencil kernel before stencil_kernels.cuh (8 points per thread along b, 128 threads per block,
// each output loaded just before its store): the baseline of the table.
__global__ void before(Sweep s) {
  const long long a = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (a >= s.na) return;
  for (long long b0 = blockIdx.y * 8LL; b0 < s.nb; b0 += gridDim.y * 8LL) {
    const double *__restrict__ c = s.in + a * s.ia + b0 * s.ib;
    double *__restrict__ o = s.out + a * s.oa + b0 * s.ob;
    const long long ia = s.ia, ib = s.ib;
    double m2 = __ldg(c - 2 * ib), m1 = __ldg(c - ib), z = __ldg(c), p1 = __ldg(c + ib);
    auto point = [&]() {
      const double p2 = __ldg(c + 2 * ib);
      *o += W1 * (__ldg(c + ia) - __ldg(c - ia)) + W2 * (__ldg(c + 2 * ia) - __ldg(c - 2 * ia)) + W1 * (p1 - m1) +
            W2 * (p2 - m2);
      m2 = m1, m1 = z, z = p1, p1 = p2, c += ib, o += s.ob;
    };
    if (s.nb - b0 >= 8) {
#pragma unroll
      for (int i = 0; i < 8; i++) point();
    } else {
      for (long long i = b0; i < s.nb; i++) point();
    }
  }
}

void launch_before(const Sweep &s, int block, bool, cudaStream_t stream) {
  before<<<dim3((unsigned)((s.na + block - 1) / block), (unsigned)((s.nb + 7) / 8)), block, 0, stream>>>(s);
}

struct Shape {
  int window, block, pairs;
  void (*launch)(const Sweep &, int, bool, cudaStream_t);
};

int main() {
  const long long n = SA * SB;
  double *in, *out, *ref;
  unsigned long long *bad;
  CHECK(cudaMalloc(&in, n * sizeof(double)));
  CHECK(cudaMalloc(&out, n * sizeof(double)));
  CHECK(cudaMalloc(&ref, n * sizeof(double)));
  CHECK(cudaMalloc(&bad, sizeof(*bad)));
  auto sweep = [&](double *o, long long a0, long long na, long long nb) {
    return Sweep{in + a0 + HALO * SA, o + a0 + HALO * SA, 1, SA, 1, SA, na, nb};
  };
  // The application's tile starts its active points 2 (halo) + 2 (border) points in: 16-byte aligned.
  const Sweep full = sweep(out, 2 * HALO, NA, NB), odd = sweep(out, 3, 1002, 37);
  std::vector<Shape> shapes{{0, 128, 0, launch_before}};
  for (int block : {64, 128, 256})
    for (int pairs : {0, 1}) {
      shapes.push_back({4, block, pairs, launch_sweep<4>});
      shapes.push_back({8, block, pairs, launch_sweep<8>});
      shapes.push_back({16, block, pairs, launch_sweep<16>});
      shapes.push_back({32, block, pairs, launch_sweep<32>});
    }
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  const int warmup = 2, timed = 20;
  // the copy rate of one field (the bytes read plus written), like benchmarks/gpu/copybw.cu
  for (int i = 0; i < warmup; i++) CHECK(cudaMemcpyAsync(ref, in, n * sizeof(double), cudaMemcpyDeviceToDevice));
  CHECK(cudaEventRecord(start));
  for (int i = 0; i < timed; i++) CHECK(cudaMemcpyAsync(ref, in, n * sizeof(double), cudaMemcpyDeviceToDevice));
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  const double copy_gbs = 2.0 * n * sizeof(double) * timed / (ms * 1e-3) / 1e9;
  double best = 0;
  const Shape *best_shape = nullptr;
  int failures = 0;
  for (const Shape &sh : shapes) {
    unsigned long long mismatches = 0;
    for (const Sweep &s : {full, odd}) {
      fill<<<1024, 256>>>(in, out, n);
      CHECK(cudaMemcpy(ref, out, n * sizeof(double), cudaMemcpyDeviceToDevice));
      Sweep r = s;
      r.out = ref + (s.out - out);
      reference<<<dim3((unsigned)((s.na + 127) / 128), (unsigned)s.nb), 128>>>(r);
      sh.launch(s, sh.block, sh.pairs, 0);
      CHECK(cudaGetLastError());
      CHECK(cudaMemset(bad, 0, sizeof(*bad)));
      count_mismatches<<<1024, 256>>>(out, ref, n, bad);
      unsigned long long b = 0;
      CHECK(cudaMemcpy(&b, bad, sizeof(b), cudaMemcpyDeviceToHost));
      mismatches += b;
    }
    for (int i = 0; i < warmup; i++) sh.launch(full, sh.block, sh.pairs, 0);
    CHECK(cudaEventRecord(start));
    for (int i = 0; i < timed; i++) sh.launch(full, sh.block, sh.pairs, 0);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaGetLastError());
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    const double gbs = 24.0 * NA * NB * timed / (ms * 1e-3) / 1e9;
    std::printf("SHAPE window=%d block=%d pairs=%d: %.1f GB/s = %.1f %% of copy, %.3f ms per sweep%s\n", sh.window,
                sh.block, sh.pairs, gbs, 100 * gbs / copy_gbs, ms / timed,
                mismatches ? " WRONG RESULTS" : "");
    if (mismatches) failures++;
    if (!mismatches && sh.window && gbs > best) best = gbs, best_shape = &sh;
  }
  std::printf("COPY BANDWIDTH = %.1f GB/s\n", copy_gbs);
  if (best_shape)
    std::printf("BEST window=%d block=%d pairs=%d\n", best_shape->window, best_shape->block, best_shape->pairs);
  return failures ? 2 : 0;
}
