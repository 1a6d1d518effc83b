// Stencil: GPU variants of init_tile, stencil and increment (docs/running.md). Same semantics as the CPU
// variants in stencil.cc. They accept any affine layout: every access goes through the instance's strides, and
// each kernel lets consecutive threads walk the dimension with the smaller stride (so SOA F_order and C_order are
// both coalesced). All work goes on the task's stream (Realm::Cuda::get_task_cuda_stream).
#include <cuda_runtime.h>

#include "cuda_task.h"
#include "stencil.h"
#include "stencil_kernels.cuh"

using namespace Legion;

namespace stencil {
namespace {

// The points [x0, x0 + nx) x [y0, y0 + ny) a kernel visits; `x_fast`: consecutive threads step in x.
struct Box {
  long long x0, y0, nx, ny;
  bool x_fast;
};

constexpr int BLOCK_FAST = 128, BLOCK_SLOW = 4, MAX_GRID_SLOW = 65535;

template <typename F>
__global__ void for_each_point(Box box, F f) {
  const long long fast_n = box.x_fast ? box.nx : box.ny, slow_n = box.x_fast ? box.ny : box.nx;
  const long long a = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (a >= fast_n) return;
  for (long long b = blockIdx.y * (long long)blockDim.y + threadIdx.y; b < slow_n;
       b += (long long)gridDim.y * blockDim.y) {
    if (box.x_fast)
      f(box.x0 + a, box.y0 + b);
    else
      f(box.x0 + b, box.y0 + a);
  }
}

template <typename F>
void launch(const Box &box, const F &f, cudaStream_t stream) {
  if (box.nx <= 0 || box.ny <= 0) return;
  const long long fast_n = box.x_fast ? box.nx : box.ny, slow_n = box.x_fast ? box.ny : box.nx;
  long long slow_blocks = (slow_n + BLOCK_SLOW - 1) / BLOCK_SLOW;
  if (slow_blocks > MAX_GRID_SLOW) slow_blocks = MAX_GRID_SLOW;
  const dim3 grid((unsigned)((fast_n + BLOCK_FAST - 1) / BLOCK_FAST), (unsigned)slow_blocks);
  for_each_point<<<grid, dim3(BLOCK_FAST, BLOCK_SLOW), 0, stream>>>(box, f);
  mapperopt::check_cuda(cudaGetLastError(), "stencil", "for_each_point");
}

// The increment with 4 points per thread ran at 0.45 ms (about cudaMemcpy's rate) against 0.63 ms for one point
// per thread on one H200 (15000 x 7500 points per tile, SOA F_order).

// The stencil on `box` (stencil_kernels.cuh; its sweep shape is measured by benchmarks/gpu/stencilbw.cu).
static_assert(RADIUS == 2, "stencil_kernels.cuh keeps a five-point window: written for radius 2");

void launch_stencil(const Box &box, const View &input, const View &output, cudaStream_t stream) {
  const bool x = box.x_fast;
  const Sweep s{input.at(box.x0, box.y0), output.at(box.x0, box.y0), x ? input.sx : input.sy,
                x ? input.sy : input.sx, x ? output.sx : output.sy, x ? output.sy : output.sx,
                x ? box.nx : box.ny, x ? box.ny : box.nx};
  launch_sweep<STENCIL_WINDOW>(s, STENCIL_BLOCK, STENCIL_PAIRS, stream);
  mapperopt::check_cuda(cudaGetLastError(), "stencil", "stencil_points/stencil_pairs");
}

// input += 1 on `box`: one block row per line of the slow axis, INCREMENT_ILP points per thread along the fast
// axis (loads first, then stores, for memory-level parallelism).
constexpr int INCREMENT_ILP = 4, INCREMENT_BLOCK = 256;

__global__ void increment_kernel(View input, Box box) {
  const long long fast_n = box.x_fast ? box.nx : box.ny, slow_n = box.x_fast ? box.ny : box.nx;
  const long long sa = box.x_fast ? input.sx : input.sy, sb = box.x_fast ? input.sy : input.sx;
  const long long a0 = blockIdx.x * (long long)blockDim.x * INCREMENT_ILP + threadIdx.x;
  for (long long b = blockIdx.y; b < slow_n; b += gridDim.y) {
    double *__restrict__ line = input.at(box.x0, box.y0) + b * sb;
    double v[INCREMENT_ILP];
#pragma unroll
    for (int k = 0; k < INCREMENT_ILP; k++) {
      const long long a = a0 + k * (long long)blockDim.x;
      if (a < fast_n) v[k] = line[a * sa];
    }
#pragma unroll
    for (int k = 0; k < INCREMENT_ILP; k++) {
      const long long a = a0 + k * (long long)blockDim.x;
      if (a < fast_n) line[a * sa] = v[k] + 1.0;
    }
  }
}

void launch_increment(const Box &box, const View &input, cudaStream_t stream) {
  if (box.nx <= 0 || box.ny <= 0) return;
  const long long fast_n = box.x_fast ? box.nx : box.ny, slow_n = box.x_fast ? box.ny : box.nx;
  const long long per_block = (long long)INCREMENT_BLOCK * INCREMENT_ILP;
  const dim3 grid((unsigned)((fast_n + per_block - 1) / per_block),
                  (unsigned)(slow_n < MAX_GRID_SLOW ? slow_n : MAX_GRID_SLOW));
  increment_kernel<<<grid, dim3(INCREMENT_BLOCK, 1), 0, stream>>>(input, box);
  mapperopt::check_cuda(cudaGetLastError(), "stencil", "increment_kernel");
}

bool x_is_fast(const View &v) { return llabs(v.sx) <= llabs(v.sy); }

struct InitPoint {
  View input, output;
  long long ox, oy;
  __device__ void operator()(long long x, long long y) const {
    *input.at(x, y) = double((x - ox) + (y - oy));
    *output.at(x, y) = 0.0;
  }
};

// Visits the buffer slot; the tile point is the slot point shifted by (dx, dy).
struct CopyStrip {
  View tile, buffer;
  long long dx, dy;
  bool to_buffer;
  __device__ void operator()(long long x, long long y) const {
    double *t = tile.at(x + dx, y + dy), *b = buffer.at(x, y);
    if (to_buffer)
      *b = *t;
    else
      *t = *b;
  }
};

template <PrivilegeMode MODE>
using Acc = FieldAccessor<MODE, double, 2, coord_t, Realm::AffineAccessor<double, 2, coord_t>>;

Rect<2> domain_of(Runtime *runtime, Context ctx, const RegionRequirement &req) {
  return runtime->get_index_space_domain(ctx, req.region.get_index_space());
}

void copy_strip(const View &tile_view, const View &buffer, const Strip &s, bool to_buffer, cudaStream_t stream) {
  const long long w = s.rect.hi[0] - s.rect.lo[0] + 1, h = s.rect.hi[1] - s.rect.lo[1] + 1;
  launch(Box{s.rect.lo[0], s.rect.lo[1], w, h, w >= h}, CopyStrip{tile_view, buffer, s.shift_x, s.shift_y, to_buffer},
         stream);
}

// Writes the four outgoing strips (requirements 1..4, write-discard) from the tile's `input`.
void write_strips(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime,
                  const Tile &tile, const View &input, cudaStream_t stream) {
  for (int r = 1; r <= 4; r++) {
    const Rect<2> slot = domain_of(runtime, ctx, task->regions[r]);
    if (slot.empty()) continue;
    const Acc<LEGION_WRITE_DISCARD> acc(regions[r], FID_INPUT);
    copy_strip(input, view_of(acc, slot), strip_of(tile, r, slot, true), true, stream);
  }
}

}  // namespace

void init_tile_gpu(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  assert(regions.size() == 5 && task->arglen == sizeof(Grid));
  const cudaStream_t stream = mapperopt::task_stream();
  const Grid &g = *static_cast<const Grid *>(task->args);
  const Tile tile = tile_of(g, task->index_point[0]);
  const Rect<2> rect = domain_of(runtime, ctx, task->regions[0]);
  const Acc<LEGION_WRITE_DISCARD> in_acc(regions[0], FID_INPUT), out_acc(regions[0], FID_OUTPUT);
  const View input = view_of(in_acc, rect), output = view_of(out_acc, rect);
  const Box all{rect.lo[0], rect.lo[1], rect.hi[0] - rect.lo[0] + 1, rect.hi[1] - rect.lo[1] + 1, x_is_fast(input)};
  launch(all, InitPoint{input, output, tile.ox, tile.oy}, stream);
  write_strips(task, regions, ctx, runtime, tile, input, stream);
}

void stencil_gpu(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  assert(regions.size() == 5 && task->arglen == sizeof(Grid));
  const cudaStream_t stream = mapperopt::task_stream();
  const Grid &g = *static_cast<const Grid *>(task->args);
  const Tile tile = tile_of(g, task->index_point[0]);
  const Rect<2> rect = domain_of(runtime, ctx, task->regions[0]);
  const Acc<LEGION_READ_WRITE> in_acc(regions[0], FID_INPUT), out_acc(regions[0], FID_OUTPUT);
  const View input = view_of(in_acc, rect), output = view_of(out_acc, rect);
  for (int r = 1; r <= 4 && !g.skip_halo; r++) {
    const Rect<2> slot = domain_of(runtime, ctx, task->regions[r]);
    if (slot.empty()) continue;
    const Acc<LEGION_READ_ONLY> acc(regions[r], FID_INPUT);
    copy_strip(input, view_of(acc, slot), strip_of(tile, r, slot, false), false, stream);
  }
  const Box active{tile.ax0 + tile.ox, tile.ay0 + tile.oy, tile.ax1 - tile.ax0, tile.ay1 - tile.ay0,
                   x_is_fast(input)};
  launch_stencil(active, input, output, stream);
}

void increment_gpu(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  assert(regions.size() == 5 && task->arglen == sizeof(Grid));
  const cudaStream_t stream = mapperopt::task_stream();
  const Grid &g = *static_cast<const Grid *>(task->args);
  const Tile tile = tile_of(g, task->index_point[0]);
  const Rect<2> rect = domain_of(runtime, ctx, task->regions[0]);
  const Acc<LEGION_READ_WRITE> in_acc(regions[0], FID_INPUT);
  const View input = view_of(in_acc, rect);
  const Box owned{tile.x0 + tile.ox, tile.y0 + tile.oy, tile.x1 - tile.x0, tile.y1 - tile.y0, x_is_fast(input)};
  launch_increment(owned, input, stream);
  write_strips(task, regions, ctx, runtime, tile, input, stream);
}

}  // namespace stencil
