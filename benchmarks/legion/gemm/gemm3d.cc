// Johnson's 3-D algorithm, Solomonik's 2.5-D algorithm and COSMA on the GEMM layer (gemm.h). All three compute on
// an x × y × z processor grid: A is cut into x × y tiles, B into x × (z·S) and C into (z·S) × y, where S is the
// number of steps per product (Solomonik's r3; 1 for Johnson and COSMA). Step s is ONE task_4 index launch over
// the grid; point (i, j, l) computes A[i,j] +=(reduce) B[i,k] · C[k,j] with k = l·S + (i + j + s) mod S, so layer
// l works on its own chunk of the inner dimension and Legion sums the layers' partial A's (reduction privilege,
// float64 sum). The placement tasks put A on the face (i, j, 0), B on (i, 0, k) and C on (0, k, j); B is thereby
// broadcast along j, C along i, and the read-only placement of A after the last step (inside the timed region)
// folds the partial sums into A's home tiles.
//
// Flags: -n, -iters, -warmup, -check, -seed (gemm.h), the grid flags of docs/gemm.md (Johnson -gdim; Solomonik
// -rpoc -c -rpoc3; COSMA -gx -gy -gz or -procs), --describe, -mapper PATH.so, and the test hook -test-skip-step
// (the last step leaves out the last layer: the check must fail, exit status 2).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "app.h"
#include "gemm.h"

using namespace Legion;

namespace gemm {
namespace {

// The processor grid and the steps per product.
struct Grid3d {
  long long x, y, z, steps;
};

[[noreturn]] void usage_error(const std::string &what) {
  std::fprintf(stderr, "error: %s\n", what.c_str());
  std::fflush(stderr);
  std::exit(1);
}

long long positive_flag(int argc, char **argv, const char *flag, long long fallback) {
  const long long v = mapperopt::int_flag(argc, argv, flag, fallback);
  if (v < 1) usage_error(std::string(flag) + " must be at least 1");
  return v;
}

// COSMA's grid for P processors and an m × n × k product (A m × n, B m × k, C k × n): among all x·y·z = P, the one
// with the fewest words per processor, m k / (x z) + k n / (z y) + m n / (x y) (the tiles of B, C and A it holds;
// Kwasniewski et al., "Red-blue pebbling revisited", SC 2019). The square case ties between several grids; for the
// counts of COSMA's own table (2, 4, 8, 16, 32, 64 processors) the table's grid is taken, otherwise the first
// minimiser with the smallest z (the fewest partial sums to reduce).
Grid3d cosma_grid(long long procs, long long m, long long n, long long k) {
  const long long table[][4] = {{2, 2, 1, 1}, {4, 1, 2, 2}, {8, 2, 2, 2}, {16, 2, 2, 4}, {32, 2, 4, 4}, {64, 4, 4, 4}};
  if (m == n && n == k)
    for (const auto &row : table)
      if (row[0] == procs) return Grid3d{row[1], row[2], row[3], 1};
  Grid3d best{procs, 1, 1, 1};
  double best_cost = -1.0;
  for (long long z = 1; z <= procs; z++)
    for (long long x = 1; x * z <= procs; x++) {
      if (procs % (x * z) != 0) continue;
      const long long y = procs / (x * z);
      const double cost = double(m) * k / double(x * z) + double(k) * n / double(z * y) + double(m) * n / double(x * y);
      if (best_cost < 0 || cost < best_cost * (1 - 1e-12)) best = Grid3d{x, y, z, 1}, best_cost = cost;
    }
  return best;
}

// The processor count COSMA's grid is chosen for: -procs, else Legion's -ll:gpu if set, else -ll:cpu (default 1).
long long processor_count(int argc, char **argv) {
  if (mapperopt::flag_value(argc, argv, "-procs") != nullptr) return positive_flag(argc, argv, "-procs", 1);
  const long long gpus = mapperopt::int_flag(argc, argv, "-ll:gpu", 0);
  return gpus > 0 ? gpus : positive_flag(argc, argv, "-ll:cpu", 1);
}

Grid3d parse_grid(int argc, char **argv, Algorithm3d algorithm, long long n) {
  Grid3d g{1, 1, 1, 1};
  switch (algorithm) {
    case JOHNSON: {
      const long long d = positive_flag(argc, argv, "-gdim", 2);
      g = Grid3d{d, d, d, 1};
      break;
    }
    case SOLOMONIK: {
      const long long r = positive_flag(argc, argv, "-rpoc", 2);
      g = Grid3d{r, r, positive_flag(argc, argv, "-c", 2), positive_flag(argc, argv, "-rpoc3", r)};
      break;
    }
    case COSMA: {
      const int given = (mapperopt::flag_value(argc, argv, "-gx") != nullptr) +
                        (mapperopt::flag_value(argc, argv, "-gy") != nullptr) +
                        (mapperopt::flag_value(argc, argv, "-gz") != nullptr);
      if (given == 3)
        g = Grid3d{positive_flag(argc, argv, "-gx", 1), positive_flag(argc, argv, "-gy", 1),
                   positive_flag(argc, argv, "-gz", 1), 1};
      else if (given == 0)
        g = cosma_grid(processor_count(argc, argv), n, n, n);
      else
        usage_error("-gx, -gy and -gz go together (or none: the grid follows the processor count)");
      break;
    }
  }
  if (n < g.x || n < g.y || n < g.z * g.steps)
    usage_error("-n must be at least every tile count of the grid (every tile needs a row and a column)");
  return g;
}

// Projection functors: a 3-D launch point (i, j, l) -> a 2-D tile colour.
enum Role { A_HOME, B_FACE, C_FACE, B_STEP, C_STEP };
constexpr ProjectionID PROJ_A = 2000, PROJ_B_FACE = 2001, PROJ_C_FACE = 2002;
constexpr ProjectionID PROJ_STEP = 2010;  // B of step s: PROJ_STEP + 2 s; C of step s: PROJ_STEP + 2 s + 1

class GridProjection : public ProjectionFunctor {
 public:
  GridProjection(Role role, long long step, long long steps) : role_(role), step_(step), steps_(steps) {}
  bool is_functional() const override { return true; }
  bool is_exclusive() const override { return true; }
  unsigned get_depth() const override { return 0; }
  using ProjectionFunctor::project;
  LogicalRegion project(LogicalPartition upper_bound, const DomainPoint &point, const Domain &) override {
    const long long i = point[0], j = point[1], l = point[2];
    const long long k = l * steps_ + (i + j + step_) % steps_;
    Point<2> colour(i, j);
    switch (role_) {
      case A_HOME: colour = Point<2>(i, j); break;
      case B_FACE: colour = Point<2>(i, l); break;   // placement over (x, 1, z S)
      case C_FACE: colour = Point<2>(l, j); break;   // placement over (1, y, z S)
      case B_STEP: colour = Point<2>(i, k); break;
      case C_STEP: colour = Point<2>(k, j); break;
    }
    return runtime->get_logical_subregion_by_color(upper_bound, DomainPoint(colour));
  }

 private:
  Role role_;
  long long step_, steps_;
};

Domain box(long long x, long long y, long long z) {
  return Domain(Rect<3>(Point<3>(0, 0, 0), Point<3>(x - 1, y - 1, z - 1)));
}

// The launch domains of the faces: A (x, y, 1), B (x, 1, z S), C (1, y, z S).
struct Faces {
  Domain a, b, c;
};

Faces faces_of(const Grid3d &g) {
  return Faces{box(g.x, g.y, 1), box(g.x, 1, g.z * g.steps), box(1, g.y, g.z * g.steps)};
}

void launch_face(Context ctx, Runtime *runtime, TaskID task, const Domain &domain, LogicalPartition part,
                 LogicalRegion parent, PrivilegeMode privilege, ProjectionID proj, const void *arg, size_t size) {
  IndexLauncher launcher(task, domain, TaskArgument(arg, size), ArgumentMap());
  launcher.add_region_requirement(tile_req(part, parent, privilege, proj));
  runtime->execute_index_space(ctx, launcher);
}

// taco_fill of each matrix (one launch per matrix, on its face), then task_1, task_2, task_3 (read-only).
void fill_and_place_3d(Context ctx, Runtime *runtime, const Matrices &m, const Config &config, const Faces &f) {
  const Domain domains[3] = {f.a, f.b, f.c};
  const LogicalPartition parts[3] = {m.A_tiles, m.B_tiles, m.C_tiles};
  const LogicalRegion parents[3] = {m.A, m.B, m.C};
  const ProjectionID projs[3] = {PROJ_A, PROJ_B_FACE, PROJ_C_FACE};
  const TaskID place[3] = {PLACE_A_TASK_ID, PLACE_B_TASK_ID, PLACE_C_TASK_ID};
  for (int r = 0; r < 3; r++) {
    const FillArgs args{config.inputs, r};
    launch_face(ctx, runtime, FILL_TASK_ID, domains[r], parts[r], parents[r], LEGION_WRITE_DISCARD, projs[r], &args,
                sizeof(args));
  }
  for (int r = 0; r < 3; r++)
    launch_face(ctx, runtime, place[r], domains[r], parts[r], parents[r], LEGION_READ_ONLY, projs[r], nullptr, 0);
}

const char *g_app;
Algorithm3d g_algorithm;

const char *grid_text(Algorithm3d algorithm) {
  switch (algorithm) {
    case JOHNSON: return "Johnson 3-D";
    case SOLOMONIK: return "Solomonik 2.5-D";
    case COSMA: return "COSMA";
  }
  return "";
}

void top_level_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  const InputArgs &args = Runtime::get_input_args();
  Config config = parse_config(args.argc, args.argv, 1);
  config.reduce = true;
  const Grid3d g = parse_grid(args.argc, args.argv, g_algorithm, config.n);
  std::printf("%s: A = B * C, n = %lld, %s grid %lld x %lld x %lld, %lld step(s) per product, %lld timed + %lld "
              "warm-up products, %s check\n",
              g_app, config.n, grid_text(g_algorithm), g.x, g.y, g.z, g.steps, config.iterations, config.warmup,
              config.inputs.kind == INPUT_DENSE ? "full-product" : "structured");
  std::fflush(stdout);
  const long long tiles[3][2] = {{g.x, g.y}, {g.x, g.z * g.steps}, {g.z * g.steps, g.y}};
  const Matrices m = create_matrices(ctx, runtime, config.n, tiles);
  const Faces f = faces_of(g);
  const Domain cube = box(g.x, g.y, g.z);
  {
    IndexLauncher launcher(INIT_CUBLAS_TASK_ID, cube, TaskArgument(), ArgumentMap());
    runtime->execute_index_space(ctx, launcher);
  }
  // Test hook: the last step leaves out the last layer, so that the check has something to catch.
  const bool skip = mapperopt::has_flag(args.argc, args.argv, "-test-skip-step");
  double total = 0.0;
  for (long long it = 0; it < config.warmup + config.iterations; it++) {
    fill_and_place_3d(ctx, runtime, m, config, f);
    runtime->issue_execution_fence(ctx).get_void_result();
    const double start = now_s();
    for (long long s = 0; s < g.steps; s++) {
      const bool trimmed = skip && s == g.steps - 1;
      if (trimmed && g.z == 1) continue;
      launch_gemm(ctx, runtime, m, config, trimmed ? box(g.x, g.y, g.z - 1) : cube, PROJ_A, PROJ_STEP + 2 * s,
                  PROJ_STEP + 2 * s + 1);
    }
    // Reading A where it was placed folds the layers' partial sums into its home tiles.
    launch_face(ctx, runtime, PLACE_A_TASK_ID, f.a, m.A_tiles, m.A, LEGION_READ_ONLY, PROJ_A, nullptr, 0);
    runtime->issue_execution_fence(ctx).get_void_result();
    const double elapsed = now_s() - start;
    if (it >= config.warmup) total += elapsed;
    std::printf("Execution time: %.3f ms.%s\n", elapsed * 1e3, it < config.warmup ? " (warm-up)" : "");
  }
  report(ctx, runtime, m, config, g_app, total);
}

}  // namespace

int main_3d(int argc, char **argv, Algorithm3d algorithm, const char *app) {
  const Config config = parse_config(argc, argv, 1);
  const Grid3d g = parse_grid(argc, argv, algorithm, config.n);
  if (mapperopt::has_flag(argc, argv, "--describe")) {
    const long long zs = g.z * g.steps;
    const std::vector<std::vector<long long>> domains = {
        {g.x, g.y, 1},        // taco_fill (A's face; B and C are filled on theirs, as task_2 and task_3)
        {g.x, g.y, 1},        // task_1
        {g.x, 1, zs},         // task_2
        {1, g.y, zs},         // task_3
        {g.x, g.y, g.z},      // init_cublas
        {g.x, g.y, g.z},      // task_4
        {g.x, g.y},           // taco_validate (A's tile grid)
    };
    std::printf("%s\n", describe_tasks(app, true, domains).c_str());
    return 0;
  }
  g_algorithm = algorithm;
  g_app = app;
  Runtime::set_top_level_task_id(TOP_LEVEL_TASK_ID);
  {
    TaskVariantRegistrar registrar(TOP_LEVEL_TASK_ID, "cpu");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    Runtime::preregister_task_variant<top_level_task>(registrar, "main");
  }
  register_tasks();
  Runtime::preregister_projection_functor(PROJ_A, new GridProjection(A_HOME, 0, 1));
  Runtime::preregister_projection_functor(PROJ_B_FACE, new GridProjection(B_FACE, 0, 1));
  Runtime::preregister_projection_functor(PROJ_C_FACE, new GridProjection(C_FACE, 0, 1));
  for (long long s = 0; s < g.steps; s++) {
    Runtime::preregister_projection_functor(PROJ_STEP + 2 * s, new GridProjection(B_STEP, s, g.steps));
    Runtime::preregister_projection_functor(PROJ_STEP + 2 * s + 1, new GridProjection(C_STEP, s, g.steps));
  }
  mapperopt::load_mapper(argc, argv);
  return Runtime::start(argc, argv);
}

}  // namespace gemm
