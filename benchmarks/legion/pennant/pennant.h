// Pennant: unstructured-mesh Lagrangian staggered-grid hydrodynamics (docs/pennant.md), written for
// mapperopt from the published algorithm (LANL PENNANT; the task split of Regent's pennant.rg).
//
// Shared by pennant.cc (CPU variants, top level, sequential run) and pennant.cu (GPU variants): IDs, the run
// parameters, the mesh layout, and the physics of every phase as element functors (one call = one zone, side or
// point). A phase reads and writes its fields through a "source" that is either a Legion task's regions
// (LegionSource) or plain arrays (the sequential run), and runs its functor through an executor (a CPU loop or a
// CUDA kernel), so the CPU variants, the GPU variants and the sequential run compute exactly the same arithmetic.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "legion.h"

#if defined(__CUDACC__)
#define PENNANT_HD __host__ __device__
#else
#define PENNANT_HD
#endif

namespace pennant {

using Legion::coord_t;

// ---- IDs ----------------------------------------------------------------------------------------------------------

// Task IDs; the 27 GPU-capable phase tasks come first, in the order of the table in pennant.cc.
enum TaskIDs {
  INIT_MESH_ZONES_TASK_ID = 1,
  INIT_SIDE_FRACS_TASK_ID,
  INIT_HYDRO_TASK_ID,
  INIT_RADIAL_VELOCITY_TASK_ID,
  INIT_STEP_POINTS_TASK_ID,
  ADV_POS_HALF_TASK_ID,
  INIT_STEP_ZONES_TASK_ID,
  CALC_CENTERS_TASK_ID,
  CALC_VOLUMES_TASK_ID,
  CALC_CHAR_LEN_TASK_ID,
  CALC_RHO_HALF_TASK_ID,
  SUM_POINT_MASS_TASK_ID,
  CALC_STATE_AT_HALF_TASK_ID,
  CALC_FORCE_PGAS_TTS_TASK_ID,
  QCS_ZONE_CENTER_VELOCITY_TASK_ID,
  QCS_CORNER_DIVERGENCE_TASK_ID,
  QCS_QCN_FORCE_TASK_ID,
  QCS_FORCE_TASK_ID,
  QCS_VEL_DIFF_TASK_ID,
  SUM_POINT_FORCE_TASK_ID,
  APPLY_BOUNDARY_CONDITIONS_TASK_ID,
  ADV_POS_FULL_TASK_ID,
  CALC_CENTERS_FULL_TASK_ID,
  CALC_VOLUMES_FULL_TASK_ID,
  CALC_WORK_TASK_ID,
  CALC_WORK_RATE_ENERGY_RHO_FULL_TASK_ID,
  CALC_DT_HYDRO_TASK_ID,
  NUM_PHASES = CALC_DT_HYDRO_TASK_ID,  // phase tasks are 1..NUM_PHASES
  INITIALIZE_TOPOLOGY_TASK_ID,        // CPU only
  CALC_GLOBAL_DT_TASK_ID,             // CPU only, single
  CHECK_STATE_TASK_ID,                // CPU only, single
  TOP_LEVEL_TASK_ID,
};

// Field IDs: zone fields 100+, point fields 200+, side fields 300+ (one number names one field everywhere).
enum ZoneFields {
  FID_ZNUMP = 100, FID_MAPZS, FID_ZONE_ID,
  FID_ZXP, FID_ZX, FID_ZAREAP, FID_ZAREA, FID_ZVOL0, FID_ZVOLP, FID_ZVOL, FID_ZDL, FID_ZM, FID_ZRP, FID_ZR, FID_ZE,
  FID_ZETOT, FID_ZW, FID_ZWRATE, FID_ZP, FID_ZSS, FID_ZDU, FID_ZUC,
  FID_ZONE_END,
};
enum PointFields {
  FID_PX0 = 200, FID_PX, FID_PXP, FID_PU0, FID_PU, FID_PF_X, FID_PF_Y, FID_PMASWT, FID_HAS_BCX, FID_HAS_BCY,
  FID_POINT_END,
};
enum SideFields {
  FID_MAPSZ = 300, FID_MAPSP1, FID_MAPSP2, FID_MAPSS3, FID_MAPSS4,
  FID_SAREAP, FID_SAREA, FID_SMF, FID_SFP, FID_SFT, FID_SFQ, FID_EXP, FID_EX, FID_ELEN,
  FID_CAREA, FID_CCOS, FID_CDIV, FID_CEVOL, FID_CDU, FID_CQE1, FID_CQE2,
  FID_SIDE_END,
};

inline bool is_zone_field(Legion::FieldID f) { return f >= FID_ZNUMP && f < FID_ZONE_END; }
inline bool is_point_field(Legion::FieldID f) { return f >= FID_PX0 && f < FID_POINT_END; }

// ---- Small vectors ------------------------------------------------------------------------------------------------

struct vec2 {
  double x, y;
};
PENNANT_HD inline vec2 operator+(vec2 a, vec2 b) { return {a.x + b.x, a.y + b.y}; }
PENNANT_HD inline vec2 operator-(vec2 a, vec2 b) { return {a.x - b.x, a.y - b.y}; }
PENNANT_HD inline vec2 operator-(vec2 a) { return {-a.x, -a.y}; }
PENNANT_HD inline vec2 operator*(double s, vec2 a) { return {s * a.x, s * a.y}; }
PENNANT_HD inline vec2 operator*(vec2 a, double s) { return {a.x * s, a.y * s}; }
PENNANT_HD inline vec2 operator/(vec2 a, double s) { return {a.x / s, a.y / s}; }
PENNANT_HD inline double dot(vec2 a, vec2 b) { return a.x * b.x + a.y * b.y; }
PENNANT_HD inline double cross(vec2 a, vec2 b) { return a.x * b.y - a.y * b.x; }
PENNANT_HD inline double length2(vec2 a) { return dot(a, a); }
PENNANT_HD inline double length(vec2 a) { return sqrt(dot(a, a)); }
PENNANT_HD inline vec2 rotate_ccw(vec2 a) { return {-a.y, a.x}; }
PENNANT_HD inline double dmin(double a, double b) { return a < b ? a : b; }
PENNANT_HD inline double dmax(double a, double b) { return a > b ? a : b; }

// ---- Run parameters (a deck plus the command line); plain data, the argument of every task ------------------------

constexpr int MAX_PLANES = 4;

struct Params {
  // Mesh: rect nzx x nzy zones on [0, lenx] x [0, leny], cut into numpcx x numpcy blocks of zones (pieces); or pie
  // (one piece): nzx zones over the angle lenx (radians), nzy over the radius leny, triangles around the origin.
  int32_t pie = 0;
  int64_t nzx = 0, nzy = 0;
  double lenx = 1.0, leny = 1.0;
  int64_t npieces = 1, numpcx = 1, numpcy = 1;
  // Physics (PENNANT's defaults).
  double alfa = 0.5, cfl = 0.6, cflv = 0.1, dtfac = 1.2, gamma = 5.0 / 3.0, q1 = 0.0, q2 = 2.0, ssmin = 0.0;
  double dtinit = 1e99, dtmax = 1e99, tstop = 1e99;
  double rinit = 1.0, einit = 0.0, rinitsub = 1.0, einitsub = 0.0, uinitradial = 0.0;
  int32_t has_subregion = 0;
  double subregion[4] = {0, 0, 0, 0};  // xmin xmax ymin ymax
  int32_t nbcx = 0, nbcy = 0;
  double bcx[MAX_PLANES] = {0}, bcy[MAX_PLANES] = {0};  // x = bcx[k] and y = bcy[k] are reflecting walls
  // Cycles: cstop in all (the deck's, or -cstop), the first `warmup` untimed.
  int64_t cstop = 999999, deck_cstop = 999999, warmup = 2;

  int64_t num_zones() const { return nzx * nzy; }
  int64_t num_sides() const { return pie ? 3 * nzx + 4 * nzx * (nzy - 1) : 4 * nzx * nzy; }
  int64_t num_points() const { return pie ? (nzx + 1) * nzy + 1 : (nzx + 1) * (nzy + 1); }
  // The first side of zone z in a mesh with zones in row-major order (pie: the first row are triangles).
  int64_t first_side(int64_t z) const { return pie ? (z < nzx ? 3 * z : 3 * nzx + 4 * (z - nzx)) : 4 * z; }
  int64_t timed_cycles() const { return cstop - warmup; }
};

// Carried from one cycle to the next by calc_global_dt.
struct DtState {
  double dt;      // this cycle's time step (0 once time has reached tstop: the cycle changes nothing)
  double time;    // simulated time at the end of this cycle
  int64_t cycle;  // cycles that advanced time, this one included
};

// ---- Mesh layout (host): zones by piece, ghost points first, then private points piece by piece ------------------

// A rect mesh of nzx x nzy zones cut into numpcx x numpcy pieces (piece = by * numpcx + bx). Zone (i, j) (original
// id j * nzx + i) has points (i, j), (i+1, j), (i+1, j+1), (i, j+1) (counter-clockwise) and sides 4z .. 4z+3, z its
// compacted id. A point on an interior block boundary is a shared (ghost) point, owned by the piece that holds the
// zone above and to the right of it (clamped at the mesh edge); the others are private to the one piece that owns
// them. Points are numbered shared first, grouped by owner piece, then private grouped by owner piece, each group
// in row-major order, so every piece's private points and owned shared points are contiguous ranges.
class MeshLayout {
 public:
  explicit MeshLayout(const Params &p) : p_(p) {
    for (int64_t k = 0; k <= p.numpcx; k++) xcut_.push_back(k * p.nzx / p.numpcx);
    for (int64_t k = 0; k <= p.numpcy; k++) ycut_.push_back(k * p.nzy / p.numpcy);
    int64_t zones = 0, shared = 0, priv = 0;
    for (int64_t piece = 0; piece < p.npieces; piece++) {
      zstart_.push_back(zones);
      shstart_.push_back(shared);
      prstart_.push_back(priv);
      zones += zone_count(piece);
      shared += shared_count(piece);
      priv += private_count(piece);
    }
    zstart_.push_back(zones);
    shstart_.push_back(shared);
    prstart_.push_back(priv);
    nshared_ = shared;
  }

  int64_t bx(int64_t piece) const { return piece % p_.numpcx; }
  int64_t by(int64_t piece) const { return piece / p_.numpcx; }
  // Zone block [x0, x1) x [y0, y1) of a piece.
  int64_t x0(int64_t piece) const { return xcut_[bx(piece)]; }
  int64_t x1(int64_t piece) const { return xcut_[bx(piece) + 1]; }
  int64_t y0(int64_t piece) const { return ycut_[by(piece)]; }
  int64_t y1(int64_t piece) const { return ycut_[by(piece) + 1]; }
  // Owned point block [ox0, ox1) x [oy0, oy1): the zone block, plus the far edge at the mesh boundary.
  int64_t ox1(int64_t piece) const { return x1(piece) + (x1(piece) == p_.nzx ? 1 : 0); }
  int64_t oy1(int64_t piece) const { return y1(piece) + (y1(piece) == p_.nzy ? 1 : 0); }
  int64_t zone_count(int64_t piece) const { return (x1(piece) - x0(piece)) * (y1(piece) - y0(piece)); }
  int64_t owned_count(int64_t piece) const { return (ox1(piece) - x0(piece)) * (oy1(piece) - y0(piece)); }
  int64_t shared_count(int64_t piece) const {
    const int64_t w = ox1(piece) - x0(piece), h = oy1(piece) - y0(piece);
    const int64_t top = y0(piece) > 0 ? 1 : 0, left = x0(piece) > 0 ? 1 : 0;
    return top * w + left * (h - top);
  }
  int64_t private_count(int64_t piece) const {
    return p_.pie ? p_.num_points() : owned_count(piece) - shared_count(piece);  // a pie is one piece
  }
  int64_t first_zone(int64_t piece) const { return zstart_[piece]; }
  int64_t first_shared(int64_t piece) const { return shstart_[piece]; }
  int64_t first_private(int64_t piece) const { return nshared_ + prstart_[piece]; }
  int64_t num_shared() const { return nshared_; }

  int64_t owner(int64_t i, int64_t j) const {
    const int64_t zi = i < p_.nzx ? i : p_.nzx - 1, zj = j < p_.nzy ? j : p_.nzy - 1;
    int64_t bxi = 0, byj = 0;
    while (xcut_[bxi + 1] <= zi) bxi++;
    while (ycut_[byj + 1] <= zj) byj++;
    return byj * p_.numpcx + bxi;
  }
  bool is_shared(int64_t i, int64_t j) const {
    for (int64_t k = 1; k < p_.numpcx; k++)
      if (i == xcut_[k]) return true;
    for (int64_t k = 1; k < p_.numpcy; k++)
      if (j == ycut_[k]) return true;
    return false;
  }
  // The compacted id of point (i, j).
  int64_t point_id(int64_t i, int64_t j) const {
    const int64_t piece = owner(i, j);
    const int64_t ox0 = x0(piece), oy0 = y0(piece), w = ox1(piece) - ox0;
    const int64_t top = oy0 > 0 ? 1 : 0, left = ox0 > 0 ? 1 : 0;
    if (is_shared(i, j)) {
      const int64_t rank = (top && j == oy0) ? i - ox0 : top * w + (j - oy0 - top);
      return first_shared(piece) + rank;
    }
    const int64_t pw = w - left;
    return first_private(piece) + (j - oy0 - top) * pw + (i - ox0 - left);
  }
  // The compacted id of zone (i, j) (in the block of piece `piece`).
  int64_t zone_id(int64_t piece, int64_t i, int64_t j) const {
    return first_zone(piece) + (j - y0(piece)) * (x1(piece) - x0(piece)) + (i - x0(piece));
  }

 private:
  Params p_;
  std::vector<int64_t> xcut_, ycut_, zstart_, shstart_, prstart_;
  int64_t nshared_ = 0;
};

// ---- Element access -----------------------------------------------------------------------------------------------

// One field of a 1-D region: element i lives at base + stride * i (an affine instance in any layout).
template <typename T>
struct Col {
  uintptr_t base = 0;
  size_t stride = 0;
  PENNANT_HD T &operator[](coord_t i) const { return *reinterpret_cast<T *>(base + stride * static_cast<size_t>(i)); }
};

// A point field seen by a zone, side or point task: points in [lo, hi] (the private piece) come from `priv`, the
// others (ghost or shared points) from `other`.
template <typename T>
struct PCol {
  Col<T> priv, other;
  coord_t lo = 0, hi = -1;
  PENNANT_HD T &operator[](coord_t p) const { return (p >= lo && p <= hi) ? priv[p] : other[p]; }
};

// Adds v to point p of a summed point field: private points are read-write (atomic on the GPU, where threads of one
// task share points), the others are a sum reduction instance (atomic: instances may be shared between tasks).
PENNANT_HD inline void add_to_point(const PCol<double> &f, coord_t p, double v) {
  if (p >= f.lo && p <= f.hi) {
#if defined(__CUDA_ARCH__)
    atomicAdd(&f.priv[p], v);
#else
    f.priv[p] += v;
#endif
  } else {
    Legion::SumReduction<double>::apply<false>(f.other[p], v);
  }
}

// ---- The phases of a cycle, one functor per task -----------------------------------------------------------------
// Formulas follow LANL PENNANT (Hydro, Mesh, PolyGas, TTS, QCS); comments give the quantity each computes.

constexpr double THIRD = 1.0 / 3.0;
constexpr double FUZZ = 1e-99;

// Zone z's sides are mapzs[z] .. mapzs[z] + znump[z] - 1.
struct ZoneSides {
  Col<int32_t> znump;
  Col<int64_t> mapzs;
};

// calc_centers / calc_centers_full: edge centres (midpoints) and zone centres (mean of the points).
struct CentersF {
  ZoneSides zs;
  Col<coord_t> p1, p2;
  PCol<vec2> px;
  Col<vec2> ex, zx;
  PENNANT_HD void operator()(coord_t z) const {
    const int64_t s0 = zs.mapzs[z];
    const int n = zs.znump[z];
    vec2 c = {0.0, 0.0};
    for (int k = 0; k < n; k++) {
      const coord_t s = s0 + k;
      const vec2 a = px[p1[s]], b = px[p2[s]];
      ex[s] = 0.5 * (a + b);
      c = c + a;
    }
    zx[z] = c / static_cast<double>(n);
  }
};

// calc_volumes / calc_volumes_full: side areas sa = ½ cross(p2 - p1, zc - p1), zone area Σ sa and zone volume
// Σ ⅓ sa (x1 + x2 + xc) (axisymmetric); the half-step variant also stores the edge lengths.
struct VolumesF {
  ZoneSides zs;
  Col<coord_t> p1, p2;
  PCol<vec2> px;
  Col<vec2> zx;
  Col<double> sarea, zarea, zvol, elen;
  bool with_elen;
  PENNANT_HD void operator()(coord_t z) const {
    const int64_t s0 = zs.mapzs[z];
    const int n = zs.znump[z];
    const vec2 c = zx[z];
    double area = 0.0, vol = 0.0;
    for (int k = 0; k < n; k++) {
      const coord_t s = s0 + k;
      const vec2 a = px[p1[s]], b = px[p2[s]];
      const double sa = 0.5 * cross(b - a, c - a);
      const double sv = THIRD * sa * (a.x + b.x + c.x);
      sarea[s] = sa;
      area += sa;
      vol += sv;
      if (with_elen) elen[s] = length(b - a);
    }
    zarea[z] = area;
    zvol[z] = vol;
  }
};

// calc_char_len: zdl = min over sides of fac · sareap / elen (fac 3 for triangles, else 4).
struct CharLenF {
  ZoneSides zs;
  Col<double> sareap, elen, zdl;
  PENNANT_HD void operator()(coord_t z) const {
    const int64_t s0 = zs.mapzs[z];
    const int n = zs.znump[z];
    const double fac = n == 3 ? 3.0 : 4.0;
    double dl = 1e99;
    for (int k = 0; k < n; k++) dl = dmin(dl, fac * sareap[s0 + k] / elen[s0 + k]);
    zdl[z] = dl;
  }
};

// zone: a = b / c (calc_rho_half: zrp = zm / zvolp).
struct RatioF {
  Col<double> num, den, out;
  PENNANT_HD void operator()(coord_t z) const { out[z] = num[z] / den[z]; }
};

// zone: dst = src (init_step_zones: zvol0 = zvol).
struct CopyF {
  Col<double> src, dst;
  PENNANT_HD void operator()(coord_t z) const { dst[z] = src[z]; }
};

// init_mesh_zones: the rate and force-related zone values that the first cycle reads before it writes them.
struct InitZonesF {
  Col<double> zwrate, zw, zp, zss, zdu;
  PENNANT_HD void operator()(coord_t z) const { zwrate[z] = zw[z] = zp[z] = zss[z] = zdu[z] = 0.0; }
};

// init_side_fracs: smf = sarea / zarea.
struct SideFracsF {
  Col<int64_t> mapsz;
  Col<double> sarea, zarea, smf;
  PENNANT_HD void operator()(coord_t s) const { smf[s] = sarea[s] / zarea[mapsz[s]]; }
};

// init_hydro: density and energy (the sub-region box gets rinitsub/einitsub), mass and total energy.
struct InitHydroF {
  Col<vec2> zx;
  Col<double> zvol, zr, ze, zm, zetot;
  double rinit, einit, rinitsub, einitsub, box[4];
  bool has_box;
  PENNANT_HD void operator()(coord_t z) const {
    const double eps = 1e-12;
    const vec2 c = zx[z];
    const bool inside = has_box && c.x > box[0] - eps && c.x < box[1] + eps && c.y > box[2] - eps &&
                        c.y < box[3] + eps;
    zr[z] = inside ? rinitsub : rinit;
    ze[z] = inside ? einitsub : einit;
    zm[z] = zr[z] * zvol[z];
    zetot[z] = ze[z] * zm[z];
  }
};

// init_radial_velocity: pu = v · px / |px| (0 at the origin).
struct RadialVelocityF {
  PCol<vec2> px, pu;
  double v;
  PENNANT_HD void operator()(coord_t p) const {
    const vec2 x = px[p];
    const double mag = length(x);
    pu[p] = mag > 1e-12 ? v * x / mag : vec2{0.0, 0.0};
  }
};

// init_step_points: pmaswt = 0, pf = 0.
struct InitStepPointsF {
  PCol<double> pmaswt, pfx, pfy;
  PENNANT_HD void operator()(coord_t p) const { pmaswt[p] = pfx[p] = pfy[p] = 0.0; }
};

// adv_pos_half: px0 = px, pu0 = pu, pxp = px0 + ½dt·pu0.
struct AdvPosHalfF {
  PCol<vec2> px, pu, px0, pu0, pxp;
  double dt;
  PENNANT_HD void operator()(coord_t p) const {
    const vec2 x = px[p], u = pu[p];
    px0[p] = x;
    pu0[p] = u;
    pxp[p] = x + (0.5 * dt) * u;
  }
};

// sum_point_mass: corner mass zrp · zareap · ½(smf(s) + smf(s3)) added to the corner's point p1(s).
struct SumPointMassF {
  Col<int64_t> mapsz, mapss3;
  Col<coord_t> p1;
  Col<double> zrp, zareap, smf;
  PCol<double> pmaswt;
  PENNANT_HD void operator()(coord_t s) const {
    const int64_t z = mapsz[s];
    add_to_point(pmaswt, p1[s], zrp[z] * zareap[z] * 0.5 * (smf[s] + smf[mapss3[s]]));
  }
};

// calc_state_at_half: gamma-law EOS at the start of the step, pressure advanced to the half step.
struct StateAtHalfF {
  Col<double> zr, zvolp, zvol0, ze, zwrate, zm, zp, zss;
  double gamma, ssmin, dt;
  PENNANT_HD void operator()(coord_t z) const {
    const double gm1 = gamma - 1.0;
    const double ss2 = dmax(ssmin * ssmin, 1e-99);
    const double rx = zr[z], ex = dmax(ze[z], 0.0);
    const double px = gm1 * rx * ex;
    const double prex = gm1 * ex, perx = gm1 * rx;
    const double csqd = dmax(ss2, prex + perx * px / (rx * rx));
    const double ss = sqrt(csqd);
    const double zminv = 1.0 / zm[z];
    const double dv = (zvolp[z] - zvol0[z]) * zminv;
    const double bulk = rx * ss * ss;
    const double denom = 1.0 + 0.5 * perx * dv;
    const double src = zwrate[z] * (0.5 * dt) * zminv;
    zp[z] = px + (perx * src - rx * bulk * dv) / denom;
    zss[z] = ss;
  }
};

// calc_force_pgas_tts: pressure force sfp = -zp · ssurf and sft = sfp + the temporary-triangle-subzoning force.
struct ForcePgasTtsF {
  Col<int64_t> mapsz;
  Col<vec2> zxp, exp, sfp, sft;
  Col<double> zareap, zrp, zss, zp, sareap, smf;
  double alfa, ssmin;
  PENNANT_HD void operator()(coord_t s) const {
    const int64_t z = mapsz[s];
    const vec2 ssurf = rotate_ccw(exp[s] - zxp[z]);
    const vec2 fp = -zp[z] * ssurf;
    const double srho = zrp[z] * smf[s] * (zareap[z] / sareap[s]);
    double sstmp = dmax(zss[z], ssmin);
    sstmp = alfa * sstmp * sstmp;
    const double sdp = sstmp * (srho - zrp[z]);
    sfp[s] = fp;
    sft[s] = fp + (-sdp * ssurf);
  }
};

// qcs_zone_center_velocity: zuc = mean point velocity of the zone.
struct ZoneCenterVelocityF {
  ZoneSides zs;
  Col<coord_t> p1;
  PCol<vec2> pu0;
  Col<vec2> zuc;
  PENNANT_HD void operator()(coord_t z) const {
    const int64_t s0 = zs.mapzs[z];
    const int n = zs.znump[z];
    vec2 u = {0.0, 0.0};
    for (int k = 0; k < n; k++) u = u + pu0[p1[s0 + k]];
    zuc[z] = u / static_cast<double>(n);
  }
};

// qcs_corner_divergence: for the corner c at point p1(c), between sides s3 = mapss3(c) and c: its area, the cosine
// of its angle, the velocity divergence, and (compressing corners only) the evolution length and velocity jump.
struct CornerDivergenceF {
  Col<int64_t> mapsz, mapss3;
  Col<coord_t> p1, p2;
  Col<vec2> zxp, zuc, exp;
  PCol<vec2> pu0, pxp;
  Col<double> elen, carea, ccos, cdiv, cevol, cdu;
  PENNANT_HD void operator()(coord_t c) const {
    const coord_t s2 = c, s = mapss3[c];
    const int64_t z = mapsz[s];
    const coord_t p = p2[s], pa = p1[s], pb = p2[s2];
    const vec2 up0 = pu0[p], xp0 = pxp[p];
    const vec2 up1 = 0.5 * (pu0[p] + pu0[pb]), xp1 = exp[s2];
    const vec2 up2 = zuc[z], xp2 = zxp[z];
    const vec2 up3 = 0.5 * (pu0[pa] + pu0[p]), xp3 = exp[s];
    const double cvolume = 0.5 * cross(xp2 - xp0, xp3 - xp1);
    carea[c] = cvolume;
    const vec2 v1 = xp3 - xp0, v2 = xp1 - xp0;
    const double de1 = elen[s], de2 = elen[s2];
    const double minelen = dmin(de1, de2);
    ccos[c] = minelen < 1e-12 ? 0.0 : 4.0 * dot(v1, v2) / (de1 * de2);
    const double div = (cross(up2 - up0, xp3 - xp1) - cross(up3 - up1, xp2 - xp0)) / (2.0 * cvolume);
    cdiv[c] = div;
    const vec2 dxx1 = 0.5 * (xp1 + xp2 - xp0 - xp3), dxx2 = 0.5 * (xp2 + xp3 - xp0 - xp1);
    const double dx1 = length(dxx1), dx2 = length(dxx2);
    const vec2 duav = 0.25 * (up0 + up1 + up2 + up3);
    const double test1 = fabs(dot(dxx1, duav) * dx2), test2 = fabs(dot(dxx2, duav) * dx1);
    const double num = test1 > test2 ? dx1 : dx2, den = test1 > test2 ? dx2 : dx1;
    const double evol = dmin(sqrt(4.0 * cvolume * (num / den)), 2.0 * minelen);
    const double dv1 = length2(up1 + up2 - up0 - up3), dv2 = length2(up2 + up3 - up0 - up1);
    const double du = sqrt(dmax(dv1, dv2));
    cevol[c] = div < 0.0 ? evol : 0.0;
    cdu[c] = div < 0.0 ? du : 0.0;
  }
};

// qcs_qcn_force: Kurapatenko viscosity coefficient mu and the corner's two edge viscous forces cqe1, cqe2.
struct QcnForceF {
  Col<int64_t> mapsz, mapss3;
  Col<coord_t> p1, p2;
  Col<double> zrp, zss, elen, cevol, cdu, cdiv;
  PCol<vec2> pu0;
  Col<vec2> cqe1, cqe2;
  double q1, q2, gamma;
  PENNANT_HD void operator()(coord_t c) const {
    const int64_t z = mapsz[c];
    const double ztmp2 = q2 * 0.25 * (gamma + 1.0) * cdu[c];
    const double ztmp1 = q1 * zss[z];
    const double zkur = ztmp2 + sqrt(ztmp2 * ztmp2 + ztmp1 * ztmp1);
    const double rmu = cdiv[c] > 0.0 ? 0.0 : zkur * zrp[z] * cevol[c];
    const coord_t s3 = mapss3[c];
    const coord_t p = p1[c], pa = p1[s3], pb = p2[c];
    cqe1[c] = rmu * (pu0[p] - pu0[pa]) / elen[s3];
    cqe2[c] = rmu * (pu0[pb] - pu0[p]) / elen[c];
  }
};

// qcs_force: side viscous force from its two corners c1 = s and c2 = mapss4(s).
struct QcsForceF {
  Col<int64_t> mapss4;
  Col<double> elen, carea, ccos;
  Col<vec2> cqe1, cqe2, sfq;
  PENNANT_HD void operator()(coord_t s) const {
    const coord_t c1 = s, c2 = mapss4[s];
    const double cos1 = ccos[c1], cos2 = ccos[c2];
    const double sin1 = 1.0 - cos1 * cos1, sin2 = 1.0 - cos2 * cos2;
    const double w1 = sin1 < 1e-4 ? 0.0 : carea[c1] / sin1, w2 = sin2 < 1e-4 ? 0.0 : carea[c2] / sin2;
    const double k1 = sin1 < 1e-4 ? 0.0 : cos1, k2 = sin2 < 1e-4 ? 0.0 : cos2;
    sfq[s] = (w1 * (cqe2[c1] + k1 * cqe1[c1]) + w2 * (cqe1[c2] + k2 * cqe2[c2])) / elen[s];
  }
};

// qcs_vel_diff: zdu = q1 · zss + 2 q2 · max over edges of |Δu · Δx| / len.
struct VelDiffF {
  ZoneSides zs;
  Col<coord_t> p1, p2;
  PCol<vec2> pxp, pu0;
  Col<double> elen, zss, zdu;
  double q1, q2;
  PENNANT_HD void operator()(coord_t z) const {
    const int64_t s0 = zs.mapzs[z];
    const int n = zs.znump[z];
    double tmp = 0.0;
    for (int k = 0; k < n; k++) {
      const coord_t s = s0 + k;
      const vec2 dx = pxp[p2[s]] - pxp[p1[s]], du = pu0[p2[s]] - pu0[p1[s]];
      const double lenx = elen[s];
      const double dux = lenx > 0.0 ? fabs(dot(du, dx)) / lenx : 0.0;
      tmp = dmax(tmp, dux);
    }
    zdu[z] = q1 * zss[z] + 2.0 * q2 * tmp;
  }
};

// sum_point_force: corner force (sfq + sft)(s) - (sfq + sft)(s3) added to the point p1(s).
struct SumPointForceF {
  Col<int64_t> mapss3;
  Col<coord_t> p1;
  Col<vec2> sfq, sft;
  PCol<double> pfx, pfy;
  PENNANT_HD void operator()(coord_t s) const {
    const int64_t s3 = mapss3[s];
    const vec2 f = (sfq[s] + sft[s]) - (sfq[s3] + sft[s3]);
    add_to_point(pfx, p1[s], f.x);
    add_to_point(pfy, p1[s], f.y);
  }
};

// apply_boundary_conditions: no normal velocity or force on the walls.
struct BoundaryF {
  PCol<vec2> pu0;
  PCol<double> pfx, pfy;
  PCol<int32_t> bcx, bcy;
  PENNANT_HD void operator()(coord_t p) const {
    if (bcx[p]) {
      pu0[p].x = 0.0;
      pfx[p] = 0.0;
    }
    if (bcy[p]) {
      pu0[p].y = 0.0;
      pfy[p] = 0.0;
    }
  }
};

// adv_pos_full: a = pf / pmaswt; pu = pu0 + dt·a; px = px0 + ½dt·(pu + pu0).
struct AdvPosFullF {
  PCol<vec2> px0, pu0, px, pu;
  PCol<double> pfx, pfy, pmaswt;
  double dt;
  PENNANT_HD void operator()(coord_t p) const {
    const double m = dmax(pmaswt[p], FUZZ);
    const vec2 a = {pfx[p] / m, pfy[p] / m};
    const vec2 u0 = pu0[p];
    const vec2 u = u0 + a * dt;
    pu[p] = u;
    px[p] = px0[p] + 0.5 * (u + u0) * dt;
  }
};

// calc_work: work of the pressure and viscous forces over the step, per zone (zw) and added to zetot.
struct WorkF {
  ZoneSides zs;
  Col<coord_t> p1, p2;
  Col<vec2> sfp, sfq;
  PCol<vec2> pu0, pu, pxp;
  Col<double> zetot, zw;
  double dt;
  PENNANT_HD void operator()(coord_t z) const {
    const int64_t s0 = zs.mapzs[z];
    const int n = zs.znump[z];
    const double dth = 0.5 * dt;
    double etot = zetot[z], w = 0.0;
    for (int k = 0; k < n; k++) {
      const coord_t s = s0 + k, a = p1[s], b = p2[s];
      const vec2 f = sfp[s] + sfq[s];
      const double sd1 = dot(f, pu0[a] + pu[a]);
      const double sd2 = dot(-f, pu0[b] + pu[b]);
      const double dwork = -dth * (sd1 * pxp[a].x + sd2 * pxp[b].x);
      etot += dwork;
      w += dwork;
    }
    zetot[z] = etot;
    zw[z] = w;
  }
};

// calc_work_rate_energy_rho_full: zwrate, ze = zetot / zm, zr = zm / zvol.
struct WorkRateF {
  Col<double> zvol0, zvol, zw, zp, zetot, zm, zwrate, ze, zr;
  double dt;
  PENNANT_HD void operator()(coord_t z) const {
    if (dt > 0.0) zwrate[z] = (zw[z] + zp[z] * (zvol[z] - zvol0[z])) / dt;
    ze[z] = zetot[z] / (zm[z] + FUZZ);
    zr[z] = zm[z] / zvol[z];
  }
};

// calc_dt_hydro (per zone, min-reduced): Courant limit and volume-change limit.
struct DtHydroF {
  Col<double> zdl, zvol, zvol0, zdu, zss;
  double cfl, cflv, dtlast;
  PENNANT_HD double operator()(coord_t z) const {
    const double cdu = dmax(zdu[z], dmax(zss[z], FUZZ));
    const double courant = zdl[z] * cfl / cdu;
    const double dvov = fabs((zvol[z] - zvol0[z]) / zvol0[z]);
    return dmin(courant, dtlast * cflv / dmax(dvov, 1e-99));
  }
};

// ---- Running a phase: fields from a source, the loop from an executor -----------------------------------------------

// Source: zone<T>(fid), side<T>(fid), point<T>(fid) return Col/PCol views; zone_range(), side_range() and
// point_ranges() the elements this task owns. Exec: run(rect, f) calls f(i) for every i of the rect;
// min(rect, f) returns the minimum of f(i) (1e99 for an empty rect).
template <typename Source>
ZoneSides zone_sides(Source &src) {
  return {src.template zone<int32_t>(FID_ZNUMP), src.template zone<int64_t>(FID_MAPZS)};
}

// Runs phase `id` (a TaskID in 1..NUM_PHASES) on the elements `src` owns; returns the phase's value (calc_dt_hydro)
// or 0.
template <typename Exec, typename Source>
double run_phase(int id, Source &src, const Params &p, double dt) {
  auto zones = [&](const auto &f) { Exec::run(src.zone_range(), f); };
  auto sides = [&](const auto &f) { Exec::run(src.side_range(), f); };
  auto points = [&](const auto &f) {
    for (const auto &range : src.point_ranges()) Exec::run(range, f);
  };
  auto z = [&](Legion::FieldID f) { return src.template zone<double>(f); };
  auto zv = [&](Legion::FieldID f) { return src.template zone<vec2>(f); };
  auto sd = [&](Legion::FieldID f) { return src.template side<double>(f); };
  auto sv = [&](Legion::FieldID f) { return src.template side<vec2>(f); };
  auto si = [&](Legion::FieldID f) { return src.template side<int64_t>(f); };
  auto sp = [&](Legion::FieldID f) { return src.template side<coord_t>(f); };
  auto pd = [&](Legion::FieldID f) { return src.template point<double>(f); };
  auto pv = [&](Legion::FieldID f) { return src.template point<vec2>(f); };
  switch (id) {
    case INIT_MESH_ZONES_TASK_ID:
      zones(InitZonesF{z(FID_ZWRATE), z(FID_ZW), z(FID_ZP), z(FID_ZSS), z(FID_ZDU)});
      break;
    case INIT_SIDE_FRACS_TASK_ID:
      sides(SideFracsF{si(FID_MAPSZ), sd(FID_SAREA), z(FID_ZAREA), sd(FID_SMF)});
      break;
    case INIT_HYDRO_TASK_ID:
      zones(InitHydroF{zv(FID_ZX), z(FID_ZVOL), z(FID_ZR), z(FID_ZE), z(FID_ZM), z(FID_ZETOT), p.rinit, p.einit,
                       p.rinitsub, p.einitsub,
                       {p.subregion[0], p.subregion[1], p.subregion[2], p.subregion[3]}, p.has_subregion != 0});
      break;
    case INIT_RADIAL_VELOCITY_TASK_ID:
      points(RadialVelocityF{pv(FID_PX), pv(FID_PU), p.uinitradial});
      break;
    case INIT_STEP_POINTS_TASK_ID:
      points(InitStepPointsF{pd(FID_PMASWT), pd(FID_PF_X), pd(FID_PF_Y)});
      break;
    case ADV_POS_HALF_TASK_ID:
      points(AdvPosHalfF{pv(FID_PX), pv(FID_PU), pv(FID_PX0), pv(FID_PU0), pv(FID_PXP), dt});
      break;
    case INIT_STEP_ZONES_TASK_ID:
      zones(CopyF{z(FID_ZVOL), z(FID_ZVOL0)});
      break;
    case CALC_CENTERS_TASK_ID:
    case CALC_CENTERS_FULL_TASK_ID: {
      const bool half = id == CALC_CENTERS_TASK_ID;
      zones(CentersF{zone_sides(src), sp(FID_MAPSP1), sp(FID_MAPSP2), pv(half ? FID_PXP : FID_PX),
                     sv(half ? FID_EXP : FID_EX), zv(half ? FID_ZXP : FID_ZX)});
      break;
    }
    case CALC_VOLUMES_TASK_ID:
    case CALC_VOLUMES_FULL_TASK_ID: {
      const bool half = id == CALC_VOLUMES_TASK_ID;
      zones(VolumesF{zone_sides(src), sp(FID_MAPSP1), sp(FID_MAPSP2), pv(half ? FID_PXP : FID_PX),
                     zv(half ? FID_ZXP : FID_ZX), sd(half ? FID_SAREAP : FID_SAREA), z(half ? FID_ZAREAP : FID_ZAREA),
                     z(half ? FID_ZVOLP : FID_ZVOL), half ? sd(FID_ELEN) : Col<double>{}, half});
      break;
    }
    case CALC_CHAR_LEN_TASK_ID:
      zones(CharLenF{zone_sides(src), sd(FID_SAREAP), sd(FID_ELEN), z(FID_ZDL)});
      break;
    case CALC_RHO_HALF_TASK_ID:
      zones(RatioF{z(FID_ZM), z(FID_ZVOLP), z(FID_ZRP)});
      break;
    case SUM_POINT_MASS_TASK_ID:
      sides(SumPointMassF{si(FID_MAPSZ), si(FID_MAPSS3), sp(FID_MAPSP1), z(FID_ZRP), z(FID_ZAREAP), sd(FID_SMF),
                          pd(FID_PMASWT)});
      break;
    case CALC_STATE_AT_HALF_TASK_ID:
      zones(StateAtHalfF{z(FID_ZR), z(FID_ZVOLP), z(FID_ZVOL0), z(FID_ZE), z(FID_ZWRATE), z(FID_ZM), z(FID_ZP),
                         z(FID_ZSS), p.gamma, p.ssmin, dt});
      break;
    case CALC_FORCE_PGAS_TTS_TASK_ID:
      sides(ForcePgasTtsF{si(FID_MAPSZ), zv(FID_ZXP), sv(FID_EXP), sv(FID_SFP), sv(FID_SFT), z(FID_ZAREAP),
                          z(FID_ZRP), z(FID_ZSS), z(FID_ZP), sd(FID_SAREAP), sd(FID_SMF), p.alfa, p.ssmin});
      break;
    case QCS_ZONE_CENTER_VELOCITY_TASK_ID:
      zones(ZoneCenterVelocityF{zone_sides(src), sp(FID_MAPSP1), pv(FID_PU0), zv(FID_ZUC)});
      break;
    case QCS_CORNER_DIVERGENCE_TASK_ID:
      sides(CornerDivergenceF{si(FID_MAPSZ), si(FID_MAPSS3), sp(FID_MAPSP1), sp(FID_MAPSP2), zv(FID_ZXP), zv(FID_ZUC),
                              sv(FID_EXP), pv(FID_PU0), pv(FID_PXP), sd(FID_ELEN), sd(FID_CAREA), sd(FID_CCOS),
                              sd(FID_CDIV), sd(FID_CEVOL), sd(FID_CDU)});
      break;
    case QCS_QCN_FORCE_TASK_ID:
      sides(QcnForceF{si(FID_MAPSZ), si(FID_MAPSS3), sp(FID_MAPSP1), sp(FID_MAPSP2), z(FID_ZRP), z(FID_ZSS),
                      sd(FID_ELEN), sd(FID_CEVOL), sd(FID_CDU), sd(FID_CDIV), pv(FID_PU0), sv(FID_CQE1), sv(FID_CQE2),
                      p.q1, p.q2, p.gamma});
      break;
    case QCS_FORCE_TASK_ID:
      sides(QcsForceF{si(FID_MAPSS4), sd(FID_ELEN), sd(FID_CAREA), sd(FID_CCOS), sv(FID_CQE1), sv(FID_CQE2),
                      sv(FID_SFQ)});
      break;
    case QCS_VEL_DIFF_TASK_ID:
      zones(VelDiffF{zone_sides(src), sp(FID_MAPSP1), sp(FID_MAPSP2), pv(FID_PXP), pv(FID_PU0), sd(FID_ELEN),
                     z(FID_ZSS), z(FID_ZDU), p.q1, p.q2});
      break;
    case SUM_POINT_FORCE_TASK_ID:
      sides(SumPointForceF{si(FID_MAPSS3), sp(FID_MAPSP1), sv(FID_SFQ), sv(FID_SFT), pd(FID_PF_X), pd(FID_PF_Y)});
      break;
    case APPLY_BOUNDARY_CONDITIONS_TASK_ID:
      points(BoundaryF{pv(FID_PU0), pd(FID_PF_X), pd(FID_PF_Y), src.template point<int32_t>(FID_HAS_BCX),
                       src.template point<int32_t>(FID_HAS_BCY)});
      break;
    case ADV_POS_FULL_TASK_ID:
      points(AdvPosFullF{pv(FID_PX0), pv(FID_PU0), pv(FID_PX), pv(FID_PU), pd(FID_PF_X), pd(FID_PF_Y),
                         pd(FID_PMASWT), dt});
      break;
    case CALC_WORK_TASK_ID:
      zones(WorkF{zone_sides(src), sp(FID_MAPSP1), sp(FID_MAPSP2), sv(FID_SFP), sv(FID_SFQ), pv(FID_PU0),
                  pv(FID_PU), pv(FID_PXP), z(FID_ZETOT), z(FID_ZW), dt});
      break;
    case CALC_WORK_RATE_ENERGY_RHO_FULL_TASK_ID:
      zones(WorkRateF{z(FID_ZVOL0), z(FID_ZVOL), z(FID_ZW), z(FID_ZP), z(FID_ZETOT), z(FID_ZM), z(FID_ZWRATE),
                      z(FID_ZE), z(FID_ZR), dt});
      break;
    case CALC_DT_HYDRO_TASK_ID:
      return Exec::min(src.zone_range(), DtHydroF{z(FID_ZDL), z(FID_ZVOL), z(FID_ZVOL0), z(FID_ZDU), z(FID_ZSS),
                                                  p.cfl, p.cflv, dt});
    default:
      break;
  }
  return 0.0;
}

// ---- Legion side: views of a task's regions (used by the CPU and the GPU variants) ---------------------------------

// Finds each field among the task's region requirements: a zone or side field in the requirement that names it
// (read-only, read-write or write-discard), a point field in the first requirement that names it (the private
// points) and the second (ghost points, possibly a sum reduction, or the piece's shared points).
class LegionSource {
 public:
  LegionSource(const Legion::Task *task, const std::vector<Legion::PhysicalRegion> &regions, Legion::Context ctx,
               Legion::Runtime *runtime)
      : task_(task), regions_(regions), ctx_(ctx), runtime_(runtime) {}

  template <typename T>
  Col<T> zone(Legion::FieldID f) const { return col<T>(find(f, -1), f); }
  template <typename T>
  Col<T> side(Legion::FieldID f) const { return col<T>(find(f, -1), f); }
  template <typename T>
  PCol<T> point(Legion::FieldID f) const {
    const int first = find(f, -1), second = find(f, first, false);
    PCol<T> out;
    out.priv = col<T>(first, f);
    if (second >= 0) out.other = col<T>(second, f);
    const Legion::Rect<1> r = rect(first);
    out.lo = r.lo[0];
    out.hi = r.hi[0];
    return out;
  }
  Legion::Rect<1> zone_range() const { return rect(first_of(true)); }
  Legion::Rect<1> side_range() const { return rect(first_of(false)); }
  // The private points, then the piece's shared points (point tasks: requirements 0 and 1).
  std::vector<Legion::Rect<1>> point_ranges() const { return {rect(0), rect(1)}; }

  Legion::Rect<1> rect(int index) const {
    return runtime_->get_index_space_domain(ctx_, task_->regions[index].region.get_index_space()).bounds<1, coord_t>();
  }

 private:
  int find(Legion::FieldID f, int after, bool required = true) const {
    for (size_t i = after + 1; i < task_->regions.size(); i++)
      if (task_->regions[i].privilege_fields.count(f)) return static_cast<int>(i);
    if (required) {
      std::fprintf(stderr, "pennant: internal error: task %s has no requirement with field %u\n",
                   task_->get_task_name(), f);
      std::abort();
    }
    return -1;
  }
  // The first requirement holding zone fields (zones) or side fields (sides).
  int first_of(bool zones) const {
    for (size_t i = 0; i < task_->regions.size(); i++) {
      const Legion::FieldID f = *task_->regions[i].privilege_fields.begin();
      if (zones ? is_zone_field(f) : (!is_zone_field(f) && !is_point_field(f))) return static_cast<int>(i);
    }
    std::fprintf(stderr, "pennant: internal error: task %s has no %s requirement\n", task_->get_task_name(),
                 zones ? "zone" : "side");
    std::abort();
  }
  template <typename T>
  Col<T> col(int index, Legion::FieldID f) const {
    using Affine = Realm::AffineAccessor<T, 1, coord_t>;
    if (rect(index).empty()) return Col<T>{};
    const Legion::PhysicalRegion &region = regions_[index];
    Affine a;
    switch (task_->regions[index].privilege) {
      case LEGION_READ_ONLY:
        a = Legion::FieldAccessor<LEGION_READ_ONLY, T, 1, coord_t, Affine>(region, f).accessor;
        break;
      case LEGION_WRITE_DISCARD:
        a = Legion::FieldAccessor<LEGION_WRITE_DISCARD, T, 1, coord_t, Affine>(region, f).accessor;
        break;
      case LEGION_REDUCE: {
        using Red = Legion::ReductionAccessor<Legion::SumReduction<double>, false, 1, coord_t,
                                              Realm::AffineAccessor<double, 1, coord_t>>;
        const Red r(region, f, task_->regions[index].redop);
        return Col<T>{r.accessor.base, r.accessor.strides[0]};
      }
      default:
        a = Legion::FieldAccessor<LEGION_READ_WRITE, T, 1, coord_t, Affine>(region, f).accessor;
        break;
    }
    return Col<T>{a.base, a.strides[0]};
  }

  const Legion::Task *task_;
  const std::vector<Legion::PhysicalRegion> &regions_;
  Legion::Context ctx_;
  Legion::Runtime *runtime_;
};

// The time step of this cycle: the DtState future every dt-dependent phase task receives as futures[0].
inline double task_dt(const Legion::Task *task) {
  return task->futures.empty() ? 0.0 : task->futures[0].get_result<DtState>().dt;
}

inline const Params &task_params(const Legion::Task *task) { return *static_cast<const Params *>(task->args); }

// A phase task's body for executor Exec (CPU loop or CUDA kernels).
template <typename Exec, int ID>
void phase_task(const Legion::Task *task, const std::vector<Legion::PhysicalRegion> &regions, Legion::Context ctx,
                Legion::Runtime *runtime) {
  LegionSource src(task, regions, ctx, runtime);
  run_phase<Exec>(ID, src, task_params(task), task_dt(task));
}

template <typename Exec>
double dt_hydro_task(const Legion::Task *task, const std::vector<Legion::PhysicalRegion> &regions, Legion::Context ctx,
                     Legion::Runtime *runtime) {
  LegionSource src(task, regions, ctx, runtime);
  return run_phase<Exec>(CALC_DT_HYDRO_TASK_ID, src, task_params(task), task_dt(task));
}

// Registers the variants of every phase task for executor Exec on processors of `kind` (pennant.cc defines the
// registrar, which names the variant and marks it leaf).
Legion::TaskVariantRegistrar phase_registrar(Legion::TaskID id, Legion::Processor::Kind kind);
const char *task_name(Legion::TaskID id);

template <typename Exec, int ID = 1>
void register_phase_variants(Legion::Processor::Kind kind) {
  if constexpr (ID == CALC_DT_HYDRO_TASK_ID) {
    Legion::Runtime::preregister_task_variant<double, dt_hydro_task<Exec>>(phase_registrar(ID, kind), task_name(ID));
  } else {
    Legion::Runtime::preregister_task_variant<phase_task<Exec, ID>>(phase_registrar(ID, kind), task_name(ID));
    register_phase_variants<Exec, ID + 1>(kind);
  }
}

#ifdef MAPPEROPT_USE_CUDA
void register_gpu_variants();  // pennant.cu
#endif

}  // namespace pennant
