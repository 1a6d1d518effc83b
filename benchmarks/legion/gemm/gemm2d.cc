// Cannon, SUMMA and PUMMA on the GEMM layer (gemm.h). The tile grid is g x g; each timed product is g steps, and
// each step is ONE task_4 index launch over the grid whose communication is in its region requirements: A[i,j]
// through the identity projection, B[i,k] and C[k,j] through a projection functor per (matrix, step) that picks
// k = k(i, j, s) of the schedule. Legion moves (Cannon: shifts) or broadcasts (SUMMA, PUMMA) the tiles the mapper
// did not place where they are used.
//
// Flags: -n (matrix size), -g (tile grid g x g, default 2), -iters (timed products, default 10), -warmup (untimed
// products before them, default 2), -check full|structured (default: full up to n = 512), -seed, -reduce (task_4
// reduces into A with a float64 sum instead of reading and writing it, as the 3-D algorithms will), --describe,
// -mapper PATH.so (docs/interfaces.md), and the test hook -test-skip-step (the last step of every product is
// left out: the check must fail, exit status 2).
#include <cstdio>
#include <string>

#include "app.h"
#include "gemm.h"

using namespace Legion;

namespace gemm {
namespace {

constexpr ProjectionID PROJ_BASE = 1000;  // B of step s: PROJ_BASE + 2 s; C of step s: PROJ_BASE + 2 s + 1

long long step_k(Schedule schedule, long long i, long long j, long long s, long long g) {
  switch (schedule) {
    case CANNON: return (i + j + s) % g;
    case SUMMA: return s;
    case PUMMA: return (i + s) % g;
  }
  return s;
}

// Launch point (i, j) of step s -> B[i, k] (for_b) or C[k, j].
class StepProjection : public ProjectionFunctor {
 public:
  StepProjection(Schedule schedule, long long step, long long g, bool for_b)
      : schedule_(schedule), step_(step), g_(g), for_b_(for_b) {}
  bool is_functional() const override { return true; }
  bool is_exclusive() const override { return true; }
  unsigned get_depth() const override { return 0; }
  using ProjectionFunctor::project;
  LogicalRegion project(LogicalPartition upper_bound, const DomainPoint &point, const Domain &) override {
    const long long i = point[0], j = point[1], k = step_k(schedule_, i, j, step_, g_);
    return runtime->get_logical_subregion_by_color(upper_bound, DomainPoint(for_b_ ? Point<2>(i, k) : Point<2>(k, j)));
  }

 private:
  Schedule schedule_;
  long long step_, g_;
  bool for_b_;
};

Schedule g_schedule;
const char *g_app;

void top_level_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  const InputArgs &args = Runtime::get_input_args();
  const Config config = parse_config(args.argc, args.argv, 2);
  std::printf("%s: A = B * C, n = %lld, tile grid %lld x %lld, %lld timed + %lld warm-up products, %s check\n",
              g_app, config.n, config.g, config.g, config.iterations, config.warmup,
              config.inputs.kind == INPUT_DENSE ? "full-product" : "structured");
  std::fflush(stdout);
  const Matrices m = create_matrices(ctx, runtime, config);
  const Domain grid = runtime->get_index_space_domain(ctx, m.grid);
  init_cublas(ctx, runtime, m);
  // Test hook: leave out the last step, so that the check has something to catch.
  const long long steps = config.g - (mapperopt::has_flag(args.argc, args.argv, "-test-skip-step") ? 1 : 0);
  double total = 0.0;
  for (long long it = 0; it < config.warmup + config.iterations; it++) {
    fill_and_place(ctx, runtime, m, config);
    runtime->issue_execution_fence(ctx).get_void_result();
    const double start = now_s();
    for (long long s = 0; s < steps; s++)
      launch_gemm(ctx, runtime, m, config, grid, 0, PROJ_BASE + 2 * s, PROJ_BASE + 2 * s + 1);
    runtime->issue_execution_fence(ctx).get_void_result();
    const double elapsed = now_s() - start;
    if (it >= config.warmup) total += elapsed;
    std::printf("Execution time: %.3f ms.%s\n", elapsed * 1e3, it < config.warmup ? " (warm-up)" : "");
  }
  report(ctx, runtime, m, config, g_app, total);
}

}  // namespace

int main_2d(int argc, char **argv, Schedule schedule, const char *app) {
  const Config config = parse_config(argc, argv, 2);
  if (mapperopt::has_flag(argc, argv, "--describe")) {
    std::printf("%s\n", describe_2d(app, config).c_str());
    return 0;
  }
  g_schedule = schedule;
  g_app = app;
  Runtime::set_top_level_task_id(TOP_LEVEL_TASK_ID);
  {
    TaskVariantRegistrar registrar(TOP_LEVEL_TASK_ID, "cpu");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    Runtime::preregister_task_variant<top_level_task>(registrar, "main");
  }
  register_tasks();
  for (long long s = 0; s < config.g; s++) {
    Runtime::preregister_projection_functor(PROJ_BASE + 2 * s, new StepProjection(schedule, s, config.g, true));
    Runtime::preregister_projection_functor(PROJ_BASE + 2 * s + 1, new StepProjection(schedule, s, config.g, false));
  }
  mapperopt::load_mapper(argc, argv);
  return Runtime::start(argc, argv);
}

}  // namespace gemm
