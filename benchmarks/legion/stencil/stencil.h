// Stencil (PRK 2-D star stencil, radius 2) — declarations shared by stencil.cc (CPU variants, top level) and
// stencil.cu (GPU variants). The decomposition is docs/running.md (points, private, four halo buffers).
//
// Build with both benchmarks/legion/common and this folder as include directories so that the build cache sees
// this header.
#pragma once

#include <vector>

#include "legion.h"

#if defined(__CUDACC__)
#define STENCIL_HD __host__ __device__
#else
#define STENCIL_HD
#endif

namespace stencil {

constexpr int RADIUS = 2;  // star stencil radius R

enum TaskIDs {
  TOP_LEVEL_TASK_ID = 1,
  INIT_TILE_TASK_ID,
  STENCIL_TASK_ID,
  INCREMENT_TASK_ID,
  CHECK_TASK_ID,
};

// One field space for `points` {input, output}; the buffers' field space has `input` only (same FieldID).
enum FieldIDs { FID_INPUT = 1, FID_OUTPUT = 2 };

// The global problem; the task argument of every tile task.
struct Grid {
  long long nx, ny;    // grid G = [0, nx) x [0, ny), including the R-wide border
  long long ntx, nty;  // tiles in x and y; tile t = iy * ntx + ix
  int skip_halo;       // test hook (-test-skip-halo): `stencil` ignores the incoming strips, so the check must fail
};

// Argument of `check`: the grid and the total number of steps performed.
struct CheckArgs {
  Grid grid;
  long long steps;
};

// Result of `check` for one tile (a future of the index launch; reduced in the top-level task).
struct CheckResult {
  double max_abs_err;   // over every compared value of the tile
  long long mismatches; // values outside the relative tolerance
  int field;            // first mismatch (scan order y, then x, input before output): FID_*, or 0 if none
  long long x, y;       // global coordinates of the first mismatch
  double value, expected;
};

// Geometry of one tile, in global coordinates of G. The tile's storage in `points` is its owned block plus an
// R-wide halo on every side: storage coordinate = global coordinate + (ox, oy).
struct Tile {
  long long ix, iy;
  long long x0, x1, y0, y1;      // owned block [x0, x1) x [y0, y1)
  long long ox, oy;              // storage offset
  long long ax0, ax1, ay0, ay1;  // active points of the block: distance >= R from the border of G (may be empty)
};

inline Tile tile_of(const Grid &g, long long t) {
  Tile tile;
  tile.ix = t % g.ntx;
  tile.iy = t / g.ntx;
  tile.x0 = tile.ix * g.nx / g.ntx;
  tile.x1 = (tile.ix + 1) * g.nx / g.ntx;
  tile.y0 = tile.iy * g.ny / g.nty;
  tile.y1 = (tile.iy + 1) * g.ny / g.nty;
  tile.ox = RADIUS + 2 * RADIUS * tile.ix;
  tile.oy = RADIUS + 2 * RADIUS * tile.iy;
  tile.ax0 = tile.x0 > RADIUS ? tile.x0 : RADIUS;
  tile.ax1 = tile.x1 < g.nx - RADIUS ? tile.x1 : g.nx - RADIUS;
  tile.ay0 = tile.y0 > RADIUS ? tile.y0 : RADIUS;
  tile.ay1 = tile.y1 < g.ny - RADIUS ? tile.y1 : g.ny - RADIUS;
  return tile;
}

// A strided 2-D view of one double field of a physical instance (any affine layout), addressed in the region's
// own coordinates: element (x, y) is at base[(x - lo_x) * sx + (y - lo_y) * sy]; strides in elements.
struct View {
  double *base;
  long long sx, sy;
  long long lo_x, lo_y;
  STENCIL_HD double *at(long long x, long long y) const { return base + (x - lo_x) * sx + (y - lo_y) * sy; }
};

// Where a halo strip lives: the buffer slot `rect` (buffer coordinates) corresponds to the points
// `rect + shift` of the tile's storage in `points` (shift is a translation; x and y stay aligned).
struct Strip {
  Legion::Rect<2> rect;  // empty for a tile on the global boundary (incoming strips only)
  long long shift_x, shift_y;
};

// The strip for requirement `req` (1..4, in requirement order xm, xp, ym, yp) of buffer slot `slot`. `outgoing`:
// the tile's own slot (written from its R outermost owned columns/rows); otherwise the neighbour's slot it reads
// into its halo. Buffer semantics are those of docs/running.md: xm carries what the receiver needs on its
// -x side, i.e. the sender's R right-most owned columns.
inline Strip strip_of(const Tile &tile, int req, const Legion::Rect<2> &slot, bool outgoing) {
  Strip s;
  s.rect = slot;
  const int axis = req <= 2 ? 0 : 1;  // xm, xp move along x; ym, yp along y
  const bool minus = req == 1 || req == 3;
  // Global coordinate (along `axis`) of the first row/column of the slot.
  long long global_lo;
  if (axis == 0)
    global_lo = outgoing ? (minus ? tile.x1 - RADIUS : tile.x0) : (minus ? tile.x0 - RADIUS : tile.x1);
  else
    global_lo = outgoing ? (minus ? tile.y1 - RADIUS : tile.y0) : (minus ? tile.y0 - RADIUS : tile.y1);
  // Slots span the tile's owned rows (x strips) or columns (y strips) in global coordinates along the other axis.
  s.shift_x = axis == 0 ? global_lo - slot.lo[0] + tile.ox : tile.ox;
  s.shift_y = axis == 1 ? global_lo - slot.lo[1] + tile.oy : tile.oy;
  return s;
}

// A View of field accessor `acc` over the non-empty rectangle `r`; `byte_stride_x` receives the x stride in bytes.
template <typename ACC>
inline View view_of(const ACC &acc, const Legion::Rect<2> &r, size_t *byte_stride_x = nullptr) {
  size_t strides[2];
  double *p = const_cast<double *>(acc.ptr(r, strides, 1));  // field size 1: strides in bytes
  if (byte_stride_x) *byte_stride_x = strides[0];
  return View{p, (long long)(strides[0] / sizeof(double)), (long long)(strides[1] / sizeof(double)), r.lo[0], r.lo[1]};
}

using TaskFn = void(const Legion::Task *, const std::vector<Legion::PhysicalRegion> &, Legion::Context,
                    Legion::Runtime *);

#ifdef MAPPEROPT_USE_CUDA
// GPU variants (stencil.cu). They accept any affine layout.
TaskFn init_tile_gpu;
TaskFn stencil_gpu;
TaskFn increment_gpu;
#endif

}  // namespace stencil
