// GPU variants of the GEMM layer (gemm.h): taco_fill (a kernel per tile), task_4 (cuBLAS DGEMM) and init_cublas.
// All work goes on the task's stream (Realm::Cuda::get_task_cuda_stream), so the task's completion covers it.
// cuBLAS handles are created once per GPU (by init_cublas, or by the first task_4 on a GPU init_cublas missed)
// and kept for the life of the process.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "cuda_task.h"
#include "gemm.h"

using namespace Legion;

namespace gemm {
namespace {

void cublas_check(cublasStatus_t status, const char *what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "gemm: %s failed: %s (%s)\n", what, cublasGetStatusName(status),
               cublasGetStatusString(status));
  std::fflush(stderr);
  std::abort();
}

constexpr int MAX_GPUS = 64;
std::mutex handles_lock;
cublasHandle_t handles[MAX_GPUS];

// The handle of the current device, created on first use.
cublasHandle_t handle_here() {
  int device = 0;
  mapperopt::check_cuda(cudaGetDevice(&device), "gemm", "cudaGetDevice");
  if (device < 0 || device >= MAX_GPUS) {
    std::fprintf(stderr, "gemm: device %d out of range (at most %d GPUs)\n", device, MAX_GPUS);
    std::abort();
  }
  std::lock_guard<std::mutex> guard(handles_lock);
  if (handles[device] == nullptr) cublas_check(cublasCreate(&handles[device]), "cublasCreate");
  return handles[device];
}

using AccRO = FieldAccessor<LEGION_READ_ONLY, double, 2, coord_t, Realm::AffineAccessor<double, 2, coord_t>>;
using AccRW = FieldAccessor<LEGION_READ_WRITE, double, 2, coord_t, Realm::AffineAccessor<double, 2, coord_t>>;
using AccWD = FieldAccessor<LEGION_WRITE_DISCARD, double, 2, coord_t, Realm::AffineAccessor<double, 2, coord_t>>;
using AccSum = ReductionAccessor<SumReduction<double>, false /*exclusive*/, 2, coord_t,
                                 Realm::AffineAccessor<double, 2, coord_t>>;

Rect<2> rect_of(Runtime *runtime, Context ctx, const RegionRequirement &req) {
  return runtime->get_index_space_domain(ctx, req.region.get_index_space());
}

// Fills rows [lo0, lo0 + rows) x columns [lo1, lo1 + cols): which 0 = A (zero), 1 = B, 2 = C. Consecutive threads
// walk the dimension with the smaller stride, so both orders are coalesced.
__global__ void fill_kernel(double *p, long long s0, long long s1, long long lo0, long long lo1, long long rows,
                            long long cols, int which, Inputs in) {
  const bool cols_fast = s1 <= s0;
  const long long fast_n = cols_fast ? cols : rows, slow_n = cols_fast ? rows : cols;
  const long long a = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (a >= fast_n) return;
  for (long long b = blockIdx.y; b < slow_n; b += gridDim.y) {
    const long long r = cols_fast ? b : a, c = cols_fast ? a : b;
    const long long i = lo0 + r, j = lo1 + c;
    p[r * s0 + c * s1] = which == 0 ? 0.0 : which == 1 ? b_value(in, i, j) : c_value(in, i, j);
  }
}

}  // namespace

void fill_gpu(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  const FillArgs &args = *static_cast<const FillArgs *>(task->args);
  const cudaStream_t stream = Realm::Cuda::get_task_cuda_stream();
  for (int r = 0; r < (int)task->regions.size(); r++) {
    const Rect<2> rect = rect_of(runtime, ctx, task->regions[r]);
    if (rect.empty()) continue;
    const AccWD acc(regions[r], FID_VAL);
    size_t s[2];
    double *p = acc.ptr(rect, s, 1);
    const long long s0 = s[0] / sizeof(double), s1 = s[1] / sizeof(double);
    const long long rows = rect.hi[0] - rect.lo[0] + 1, cols = rect.hi[1] - rect.lo[1] + 1;
    const long long fast_n = s1 <= s0 ? cols : rows, slow_n = s1 <= s0 ? rows : cols;
    const dim3 grid((unsigned)((fast_n + 255) / 256), (unsigned)(slow_n < 65535 ? slow_n : 65535));
    fill_kernel<<<grid, 256, 0, stream>>>(p, s0, s1, rect.lo[0], rect.lo[1], rows, cols, args.first + r, args.inputs);
    mapperopt::check_cuda(cudaGetLastError(), "gemm", "fill_kernel");
  }
}

void gemm_gpu(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  const Rect<2> ra = rect_of(runtime, ctx, task->regions[0]), rb = rect_of(runtime, ctx, task->regions[1]),
                rc = rect_of(runtime, ctx, task->regions[2]);
  size_t sa[2], sb[2], sc[2];
  double *pa;
  if (task->regions[0].privilege == LEGION_REDUCE) {
    const AccSum acc(regions[0], FID_VAL, LEGION_REDOP_SUM_FLOAT64);
    pa = acc.ptr(ra, sa, 1);
  } else {
    const AccRW acc(regions[0], FID_VAL);
    pa = acc.ptr(ra, sa, 1);
  }
  const AccRO accb(regions[1], FID_VAL), accc(regions[2], FID_VAL);
  const double *pb = accb.ptr(rb, sb, 1), *pc = accc.ptr(rc, sc, 1);
  const long long m = ra.hi[0] - ra.lo[0] + 1, n = ra.hi[1] - ra.lo[1] + 1, k = rb.hi[1] - rb.lo[1] + 1;
  // Row-major A = B C is column-major A^T = C^T B^T: cuBLAS gets (C, ldc) as its first operand (parameter 8),
  // (B, ldb) as its second (10) and (A, lda) as the output (13).
  const Tile c = row_major_tile("task_4", "C", 8, const_cast<double *>(pc), sc, k, n);
  const Tile b = row_major_tile("task_4", "B", 10, const_cast<double *>(pb), sb, m, k);
  const Tile a = row_major_tile("task_4", "A", 13, pa, sa, m, n);
  cublasHandle_t handle = handle_here();
  cublas_check(cublasSetStream(handle, Realm::Cuda::get_task_cuda_stream()), "cublasSetStream");
  const double one = 1.0;
  cublas_check(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, c.p, (int)c.ld, b.p,
                           (int)b.ld, &one, a.p, (int)a.ld),
               "cublasDgemm (task_4)");
}

void init_cublas_gpu(const Task *, const std::vector<PhysicalRegion> &, Context, Runtime *) { handle_here(); }

}  // namespace gemm
