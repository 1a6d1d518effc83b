// The stencil kernel of stencil.cu without Legion, so that benchmarks/gpu/stencilbw.cu times the very code the
// application runs. A sweep works in (a, b) coordinates: `a` is the fast axis (consecutive threads), `b` the slow
// one; the radius-2 star's weights are the same along x and y, so either axis may be the fast one.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace stencil {

// PRK weights for radius 2: w(i) = 1 / (2 i R).
constexpr double W1 = 1.0 / (2.0 * 1 * 2), W2 = 1.0 / (2.0 * 2 * 2);

// Sweep shape chosen by benchmarks/gpu/stencilbw.cu on one H200: points per thread along the slow axis, threads per
// block, and whether a thread computes two neighbouring points with 16-byte loads (when the layout allows it).
// Measured 2026-12-02 (one 7500 x 15000 tile, 24 bytes per point): 4.21 TB/s, 99.7 % of the copy rate measured
// beside it (4.23 TB/s), against 2.98 TB/s (70.5 %) for the kernel before; one point per thread reached at most
// 3.89 TB/s (window 32), two per thread fell off above window 8 (more registers, fewer threads).
constexpr int STENCIL_WINDOW = 8, STENCIL_BLOCK = 128, STENCIL_PAIRS = 1;

// output += stencil(input) on na x nb points. Strides in elements; `in`/`out` point at the sweep's point (0, 0).
// `in` and `out` are different fields: the pointers never alias.
struct Sweep {
  const double *in;
  double *out;
  long long ia, ib, oa, ob;
  long long na, nb;
};

// A sweep of WINDOW rows reads every output value of the window before it stores any: a store may alias a later
// output load (the compiler cannot tell), so a load after a store would issue only once the store's value, and so
// the previous load, is back; loading first keeps WINDOW output loads in flight per thread.

// One point per thread, WINDOW points along b: the b-neighbours stay in registers, the a-neighbours come from the
// cache (the neighbouring threads load them).
template <int WINDOW>
__global__ void stencil_points(Sweep s) {
  const long long a = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (a >= s.na) return;
  for (long long b0 = blockIdx.y * (long long)WINDOW; b0 < s.nb; b0 += (long long)gridDim.y * WINDOW) {
    const double *__restrict__ c = s.in + a * s.ia + b0 * s.ib;
    double *__restrict__ o = s.out + a * s.oa + b0 * s.ob;
    const long long ia = s.ia, ib = s.ib, ob = s.ob;
    double m2 = __ldg(c - 2 * ib), m1 = __ldg(c - ib), z = __ldg(c), p1 = __ldg(c + ib);
    auto point = [&](double old) {
      const double p2 = __ldg(c + 2 * ib);
      *o = old + (W1 * (__ldg(c + ia) - __ldg(c - ia)) + W2 * (__ldg(c + 2 * ia) - __ldg(c - 2 * ia)) +
                  W1 * (p1 - m1) + W2 * (p2 - m2));
      m2 = m1;
      m1 = z;
      z = p1;
      p1 = p2;
      c += ib;
      o += ob;
    };
    const long long n = s.nb - b0 < WINDOW ? s.nb - b0 : WINDOW;
    if (n == WINDOW) {
      double v[WINDOW];
#pragma unroll
      for (int i = 0; i < WINDOW; i++) v[i] = o[i * ob];
#pragma unroll
      for (int i = 0; i < WINDOW; i++) point(v[i]);
    } else {
      for (long long i = 0; i < n; i++) point(*o);
    }
  }
}

// Two neighbouring points per thread (unit a-stride, 16-byte aligned pairs): per row one 16-byte load of the
// pair two rows ahead, of the pair on each side and of the output, where one point per thread needs six 8-byte
// loads per point. Same arithmetic, in the same order, as stencil_points: bit-identical results.
template <int WINDOW>
__global__ void stencil_pairs(Sweep s) {
  const long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (2 * p >= s.na) return;
  const long long ib = s.ib / 2, ob = s.ob / 2;  // in pairs
  for (long long b0 = blockIdx.y * (long long)WINDOW; b0 < s.nb; b0 += (long long)gridDim.y * WINDOW) {
    const double2 *__restrict__ c = reinterpret_cast<const double2 *>(s.in + 2 * p + b0 * s.ib);
    double2 *__restrict__ o = reinterpret_cast<double2 *>(s.out + 2 * p + b0 * s.ob);
    double2 m2 = __ldg(c - 2 * ib), m1 = __ldg(c - ib), z = __ldg(c), p1 = __ldg(c + ib);
    auto point = [&](double2 v) {
      const double2 p2 = __ldg(c + 2 * ib), l = __ldg(c - 1), r = __ldg(c + 1);
      v.x = v.x + (W1 * (z.y - l.y) + W2 * (r.x - l.x) + W1 * (p1.x - m1.x) + W2 * (p2.x - m2.x));
      v.y = v.y + (W1 * (r.x - z.x) + W2 * (r.y - l.y) + W1 * (p1.y - m1.y) + W2 * (p2.y - m2.y));
      *o = v;
      m2 = m1;
      m1 = z;
      z = p1;
      p1 = p2;
      c += ib;
      o += ob;
    };
    const long long n = s.nb - b0 < WINDOW ? s.nb - b0 : WINDOW;
    if (n == WINDOW) {
      double2 v[WINDOW];
#pragma unroll
      for (int i = 0; i < WINDOW; i++) v[i] = o[i * ob];
#pragma unroll
      for (int i = 0; i < WINDOW; i++) point(v[i]);
    } else {
      for (long long i = 0; i < n; i++) point(*o);
    }
  }
}

constexpr long long MAX_GRID_B = 65535;

template <int WINDOW>
void launch_points(const Sweep &s, int block, cudaStream_t stream) {
  if (s.na <= 0 || s.nb <= 0) return;
  const long long gb = (s.nb + WINDOW - 1) / WINDOW;
  const dim3 grid((unsigned)((s.na + block - 1) / block), (unsigned)(gb < MAX_GRID_B ? gb : MAX_GRID_B));
  stencil_points<WINDOW><<<grid, block, 0, stream>>>(s);
}

inline bool aligned16(const void *p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// The sweep `s`: with `pairs` and a layout that allows it (unit a-strides, even b-strides), the 16-byte aligned
// middle columns with stencil_pairs and the at most two columns outside it with stencil_points; otherwise all with
// stencil_points.
template <int WINDOW>
void launch_sweep(const Sweep &s, int block, bool pairs, cudaStream_t stream) {
  if (s.na <= 0 || s.nb <= 0) return;
  const long long lo = aligned16(s.in) ? 0 : 1;
  if (!pairs || s.ia != 1 || s.oa != 1 || s.ib % 2 || s.ob % 2 || !aligned16(s.in + lo) || !aligned16(s.out + lo) ||
      s.na - lo < 2) {
    launch_points<WINDOW>(s, block, stream);
    return;
  }
  const long long n2 = (s.na - lo) / 2, hi = lo + 2 * n2;
  auto columns = [&](long long a0, long long na) {
    return Sweep{s.in + a0, s.out + a0, s.ia, s.ib, s.oa, s.ob, na, s.nb};
  };
  if (lo) launch_points<WINDOW>(columns(0, lo), block, stream);
  if (hi < s.na) launch_points<WINDOW>(columns(hi, s.na - hi), block, stream);
  const long long gb = (s.nb + WINDOW - 1) / WINDOW;
  const dim3 grid((unsigned)((n2 + block - 1) / block), (unsigned)(gb < MAX_GRID_B ? gb : MAX_GRID_B));
  stencil_pairs<WINDOW><<<grid, block, 0, stream>>>(columns(lo, 2 * n2));
}

}  // namespace stencil
