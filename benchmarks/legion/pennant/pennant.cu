// Pennant: GPU variants of the 27 phase tasks (compiled only in CUDA builds, MAPPEROPT_USE_CUDA). Each variant is
// the phase of pennant.h run by GpuExec: one thread per zone, side or point on the task's stream, reading and
// writing through the instances' affine layouts (any layout the mapper picks). Sums into points use atomics;
// calc_dt_hydro reduces its minimum on the device.
#ifdef MAPPEROPT_USE_CUDA

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cuda_task.h"
#include "legion.h"
#include "pennant.h"

using namespace Legion;

namespace pennant {
namespace {

using mapperopt::blocks_for;
using mapperopt::task_stream;
using mapperopt::THREADS_PER_BLOCK;

void check_cuda(cudaError_t err, const char *what) { mapperopt::check_cuda(err, "pennant", what); }

template <typename F>
__global__ void __launch_bounds__(THREADS_PER_BLOCK) each_kernel(const F f, coord_t lo, coord_t n) {
  const coord_t i = static_cast<coord_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) f(lo + i);
}

// Minimum of f over the range. Values are positive doubles, whose bit patterns order like the numbers, so an
// integer atomicMin on the bits finds the minimum.
template <typename F>
__global__ void __launch_bounds__(THREADS_PER_BLOCK) min_kernel(const F f, coord_t lo, coord_t n,
                                                                unsigned long long *out) {
  const coord_t i = static_cast<coord_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  double v = i < n ? f(lo + i) : 1e99;
  for (int offset = 16; offset > 0; offset /= 2) v = dmin(v, __shfl_down_sync(0xffffffffu, v, offset));
  if ((threadIdx.x & 31) == 0) atomicMin(out, static_cast<unsigned long long>(__double_as_longlong(v)));
}

struct GpuExec {
  template <typename F>
  static void run(const Rect<1> &r, const F &f) {
    const coord_t n = r.volume();
    if (n <= 0) return;
    each_kernel<<<blocks_for(n), THREADS_PER_BLOCK, 0, task_stream()>>>(f, r.lo[0], n);
    check_cuda(cudaGetLastError(), "a phase kernel");
  }
  template <typename F>
  static double min(const Rect<1> &r, const F &f) {
    const coord_t n = r.volume();
    if (n <= 0) return 1e99;
    const cudaStream_t stream = task_stream();
    const unsigned long long init = static_cast<unsigned long long>(double_bits(1e99));
    DeferredBuffer<unsigned long long, 1> buffer(Rect<1>(0, 0), Memory::GPU_FB_MEM, &init);
    min_kernel<<<blocks_for(n), THREADS_PER_BLOCK, 0, stream>>>(f, r.lo[0], n, buffer.ptr(Point<1>(0)));
    check_cuda(cudaGetLastError(), "calc_dt_hydro");
    unsigned long long bits = init;
    check_cuda(cudaMemcpyAsync(&bits, buffer.ptr(Point<1>(0)), sizeof(bits), cudaMemcpyDeviceToHost, stream),
               "calc_dt_hydro (copy)");
    check_cuda(cudaStreamSynchronize(stream), "calc_dt_hydro (synchronize)");
    double value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
  }
  static long long double_bits(double v) {
    long long bits;
    std::memcpy(&bits, &v, sizeof(bits));
    return bits;
  }
};

}  // namespace

void register_gpu_variants() { register_phase_variants<GpuExec>(Processor::TOC_PROC); }

}  // namespace pennant

#endif  // MAPPEROPT_USE_CUDA
