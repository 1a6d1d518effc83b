// The GEMM layer shared by the distributed matrix multiplies (docs/gemm.md): A = B · C on n x n float64
// matrices, each a 2-D logical region over [0, n)² (point (i, j) = row i, column j) with one field `val`.
//
// What the layer gives every algorithm: the regions and their tile partitions, the deterministic inputs and their
// O(n²) / full checks, and the tasks that do not depend on the algorithm:
//   taco_fill      fills tiles of A (zero), B and C (the inputs below)
//   task_1/2/3     placement: empty leaf tasks on tiles of A / B / C; their mapping decides where each tile lives
//   task_4         the leaf GEMM: A_tile += B_tile · C_tile, on the BLAS (CPU) or cuBLAS (GPU); requirement 0 may
//                  be read-write or a float64 sum reduction (LEGION_REDOP_SUM_FLOAT64), so 3-D algorithms that
//                  reduce partial products into A use the same leaf
//   taco_validate  compares tiles of A with the known product (future: CheckResult)
//   init_cublas    creates the cuBLAS handle of the GPU it runs on (a no-op on CPUs)
// The leaf reads its tile geometry from its region requirements only, never from the launch point, so it works in
// launches of any dimension.
//
// Both BLAS back ends need row-major tiles (SOA C_order: column stride one element). The leaf checks the instance
// strides itself and aborts with the BLAS's own wording (`DGEMM parameter number N had an illegal value`, N naming
// lda/ldb/ldc of the cuBLAS call) rather than computing with a layout it cannot use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "legion.h"

#if defined(__CUDACC__)
#define GEMM_HD __host__ __device__
#else
#define GEMM_HD
#endif

namespace gemm {

enum TaskIDs {
  TOP_LEVEL_TASK_ID = 1,
  FILL_TASK_ID,
  PLACE_A_TASK_ID,  // task_1
  PLACE_B_TASK_ID,  // task_2
  PLACE_C_TASK_ID,  // task_3
  GEMM_TASK_ID,     // task_4
  VALIDATE_TASK_ID,
  INIT_CUBLAS_TASK_ID,
};

enum FieldIDs { FID_VAL = 1 };

// How B and C are generated (all values are small integers, so every product and sum is exact in float64).
enum InputKind : int {
  INPUT_DENSE = 0,       // B(i,k), C(k,j) independent pseudo-random in [-4, 4]; checked against the full product
  INPUT_STRUCTURED = 1,  // B(i,k) = u(i) + v(k), C(k,j) = w(k) + z(j); the product has a closed form (O(n²) check)
};

// Task argument of taco_validate.
struct Inputs {
  long long n;
  unsigned long long seed;
  int kind;  // InputKind
};

// Task argument of taco_fill: requirement r fills matrix first + r (0 = A with zeros, 1 = B, 2 = C), so one launch
// may fill all three matrices (2-D algorithms) or one (3-D algorithms, whose tile grids differ between matrices).
struct FillArgs {
  Inputs inputs;
  int first;
};

// splitmix64 finaliser: a counter-based generator, so every value depends only on (seed, stream, a, b).
GEMM_HD inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A pseudo-random integer in [-4, 4] as a double.
GEMM_HD inline double small_int(uint64_t seed, uint64_t stream, uint64_t a, uint64_t b) {
  return double((long long)(mix(seed ^ mix(stream ^ mix(a ^ mix(b)))) % 9ULL) - 4);
}

// The structured inputs' factors: B(i,k) = u(i) + v(k), C(k,j) = w(k) + z(j).
GEMM_HD inline double u_of(const Inputs &in, long long i) { return small_int(in.seed, 3, i, 0); }
GEMM_HD inline double v_of(const Inputs &in, long long k) { return small_int(in.seed, 4, k, 0); }
GEMM_HD inline double w_of(const Inputs &in, long long k) { return small_int(in.seed, 5, k, 0); }
GEMM_HD inline double z_of(const Inputs &in, long long j) { return small_int(in.seed, 6, j, 0); }

GEMM_HD inline double b_value(const Inputs &in, long long i, long long k) {
  return in.kind == INPUT_DENSE ? small_int(in.seed, 1, i, k) : u_of(in, i) + v_of(in, k);
}
GEMM_HD inline double c_value(const Inputs &in, long long k, long long j) {
  return in.kind == INPUT_DENSE ? small_int(in.seed, 2, k, j) : w_of(in, k) + z_of(in, j);
}

// Contiguous block t of `parts` over [0, n): [t n / parts, (t + 1) n / parts).
inline long long block_lo(long long n, long long parts, long long t) { return t * n / parts; }

// Result of taco_validate for one tile of A (reduced in the top-level task).
struct CheckResult {
  double max_abs_err;
  long long mismatches;
  long long i, j;  // first mismatch (row-major scan of the tile), valid when mismatches > 0
  double value, expected;
};

// A row-major view of one tile: element (r, c) of the tile is p[r * ld + c].
struct Tile {
  double *p;
  long long rows, cols, ld;
};

// The tile of requirement `index` as a row-major view, from the instance's byte strides along rows (dimension 0)
// and columns (dimension 1). `param` is the number of the matching leading-dimension parameter of DGEMM (8, 10
// or 13); a layout that is not row-major aborts with the BLAS's message for that parameter.
Tile row_major_tile(const char *task, const char *matrix, int param, double *base, const size_t strides[2],
                    long long rows, long long cols);

using TaskFn = void(const Legion::Task *, const std::vector<Legion::PhysicalRegion> &, Legion::Context,
                    Legion::Runtime *);

#ifdef MAPPEROPT_USE_CUDA
// GPU variants (gemm.cu).
TaskFn fill_gpu;
TaskFn gemm_gpu;
TaskFn init_cublas_gpu;
#endif

// ---------------------------------------------------------------------------------------------------------------
// The layer's interface for algorithm drivers (gemm.cc).

struct Config {
  long long n;
  long long g;            // the tile grid is g x g (2-D algorithms)
  long long iterations;   // timed products
  long long warmup;       // untimed products before them (at least 1)
  bool reduce;            // task_4 reduces into A (float64 sum) instead of reading and writing it (-reduce)
  Inputs inputs;
};

// The matrices, their tiles and the colour space of the tile grid.
struct Matrices {
  Legion::LogicalRegion A, B, C;
  Legion::LogicalPartition A_tiles, B_tiles, C_tiles;
  Legion::IndexSpace grid;  // colours (g, g)
};

// Parses -n, -g, -iters, -warmup, -check (full | structured; default full up to n = 512), -seed, -reduce; usage errors
// exit 1 naming the flag.
Config parse_config(int argc, char **argv, long long default_g);

// Creates A, B, C (field `val`) and their g x g tile partitions `A_tiles`, `B_tiles`, `C_tiles`, all named.
Matrices create_matrices(Legion::Context ctx, Legion::Runtime *runtime, const Config &config);

// The same with a tile grid per matrix: tiles[0] for A, [1] for B, [2] for C, each (row blocks, column blocks);
// `grid` is then A's colour space.
Matrices create_matrices(Legion::Context ctx, Legion::Runtime *runtime, long long n, const long long tiles[3][2]);

// A requirement on `part` (field val, exclusive) through projection functor `proj`.
Legion::RegionRequirement tile_req(Legion::LogicalPartition part, Legion::LogicalRegion parent,
                                   Legion::PrivilegeMode privilege, Legion::ProjectionID proj = 0);

// taco_fill over the tile grid (A = 0, B and C the inputs), then task_1, task_2, task_3 (placement, read-only).
void fill_and_place(Legion::Context ctx, Legion::Runtime *runtime, const Matrices &m, const Config &config);

// init_cublas over the tile grid (no regions).
void init_cublas(Legion::Context ctx, Legion::Runtime *runtime, const Matrices &m);

// A task_4 index launch over `domain`: requirement 0 A_tiles through `proj_a` (read-write, or a float64 sum
// reduction with `config.reduce`), 1 B_tiles through `proj_b` and 2 C_tiles through `proj_c` (read-only).
void launch_gemm(Legion::Context ctx, Legion::Runtime *runtime, const Matrices &m, const Config &config,
                 const Legion::Domain &domain, Legion::ProjectionID proj_a, Legion::ProjectionID proj_b,
                 Legion::ProjectionID proj_c);

// Runs taco_validate on every tile of A, prints the lines of a run and the result line (GFLOP/s counted as
// 2 n³ per product over `time_s` of `config.iterations` products), and sets the exit status (2 on a mismatch).
void report(Legion::Context ctx, Legion::Runtime *runtime, const Matrices &m, const Config &config,
            const char *app, double time_s);

// --describe for the 2-D algorithms: tasks and regions of this layer plus the g x g launches.
std::string describe_2d(const char *app, const Config &config);

// --describe with a launch domain per task, in the order taco_fill, task_1, task_2, task_3, init_cublas, task_4,
// taco_validate.
std::string describe_tasks(const char *app, bool reduce, const std::vector<std::vector<long long>> &domains);

// Registers the layer's task variants (call before Runtime::start).
void register_tasks();

double now_s();

// ---------------------------------------------------------------------------------------------------------------
// The 2-D algorithms (gemm2d.cc): one task_4 index launch over the g x g tile grid per step s = 0..g-1; point
// (i, j) computes A[i,j] += B[i,k] · C[k,j] with
//   Cannon  k = (i + j + s) mod g   (systolic shifts: every point uses a different k in each step)
//   SUMMA   k = s                   (row i broadcasts B[i,s], column j broadcasts C[s,j])
//   PUMMA   k = (i + s) mod g       (B[i,k] broadcast along row i, C[k,j] rolling along the columns)
enum Schedule { CANNON, SUMMA, PUMMA };

// The whole application: flags, --describe, -mapper, Legion start-up.
int main_2d(int argc, char **argv, Schedule schedule, const char *app);

// ---------------------------------------------------------------------------------------------------------------
// The 3-D algorithms (gemm3d.cc): task_4 index launches over an x × y × z processor grid whose point (i, j, l)
// adds its partial product into A[i,j] with a float64 sum reduction (the z layers' partial A's are reduced by
// Legion); docs/gemm.md gives the flags and the grids.
//   Johnson    x = y = z = g (-gdim), one launch per product
//   Solomonik  r × r × c (-rpoc, -c), layer l owns the l-th of c chunks of k; inside a chunk a Cannon over r3
//              sub-blocks (-rpoc3): r3 launches per product, sub-block q = (i + j + s) mod r3 in step s
//   COSMA      gx × gy × gz (-gx -gy -gz, or chosen from the processor count), one launch per product
enum Algorithm3d { JOHNSON, SOLOMONIK, COSMA };

int main_3d(int argc, char **argv, Algorithm3d algorithm, const char *app);

}  // namespace gemm
