// heat: a 1-D heat stencil as a new user writes one, timing its own steps and checking its own result. A row of
// -n N cells (default 1000) holds heat; each of -steps S steps (default 10) is an index launch of `step` over 4
// pieces that reads the whole row `cur` and writes its piece of `next` (then the two swap). The ends are insulated,
// so the total heat stays what it was: a `total` task sums the row and the top-level task prints
// "time: <ms of the steps> ms" and its own check, `MAPPEROPT_RESULT {"verified": ..., "check": {"total": ...,
// "expected": ...}}`, its numbers printed with %f as C programs print them. Flag -leak makes the left end lose heat
// (a bug of the program): the check fails, and the program still exits 0.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "legion.h"

using namespace Legion;

enum { TOP_ID = 1, STEP_ID = 2, TOTAL_ID = 3 };
enum { FID_T = 1 };

void step_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const bool leak = *static_cast<const bool *>(task->args);
  const FieldAccessor<LEGION_READ_ONLY, double, 1> cur(regions[0], FID_T);
  const FieldAccessor<LEGION_WRITE_DISCARD, double, 1> next(regions[1], FID_T);
  const Rect<1> row = regions[0].get_bounds<1, coord_t>().bounds;
  for (PointInRectIterator<1> p(regions[1].get_bounds<1, coord_t>().bounds); p(); p++) {
    const double left = *p == row.lo ? (leak ? 0.0 : cur[*p]) : cur[*p - 1];
    const double right = *p == row.hi ? cur[*p] : cur[*p + 1];
    next[*p] = cur[*p] + 0.25 * (left - 2 * cur[*p] + right);
  }
}

double total_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_READ_ONLY, double, 1> t(regions[0], FID_T);
  double sum = 0;
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) sum += t[*p];
  return sum;
}

void top_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  const InputArgs &args = Runtime::get_input_args();
  long n = 1000;
  int steps = 10;
  bool leak = false;
  for (int i = 1; i < args.argc; i++) {
    if (!strcmp(args.argv[i], "-n") && i + 1 < args.argc) n = atol(args.argv[i + 1]);
    if (!strcmp(args.argv[i], "-steps") && i + 1 < args.argc) steps = atoi(args.argv[i + 1]);
    leak = leak || !strcmp(args.argv[i], "-leak");
  }
  IndexSpace is = runtime->create_index_space(ctx, Rect<1>(0, n - 1));
  FieldSpace fs = runtime->create_field_space(ctx);
  runtime->create_field_allocator(ctx, fs).allocate_field(sizeof(double), FID_T);
  LogicalRegion rows[2] = {runtime->create_logical_region(ctx, is, fs), runtime->create_logical_region(ctx, is, fs)};
  runtime->attach_name(rows[0], "cur");
  runtime->attach_name(rows[1], "next");
  IndexSpace colors = runtime->create_index_space(ctx, Rect<1>(0, 3));
  IndexPartition ip = runtime->create_equal_partition(ctx, is, colors);
  double expected = 0;
  {  // cell i holds i % 7 units of heat
    InlineLauncher fill(RegionRequirement(rows[0], LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, rows[0]));
    fill.add_field(FID_T);
    PhysicalRegion mapped = runtime->map_region(ctx, fill);
    const FieldAccessor<LEGION_WRITE_DISCARD, double, 1> t(mapped, FID_T);
    for (long i = 0; i < n; i++) expected += t[i] = double(i % 7);
    runtime->unmap_region(ctx, mapped);
  }
  const double start = Realm::Clock::current_time();
  for (int s = 0; s < steps; s++) {
    const LogicalRegion cur = rows[s % 2], next = rows[(s + 1) % 2];
    IndexTaskLauncher step(STEP_ID, colors, UntypedBuffer(&leak, sizeof(leak)), ArgumentMap());
    step.add_region_requirement(RegionRequirement(cur, LEGION_READ_ONLY, LEGION_EXCLUSIVE, cur));
    step.add_field(0, FID_T);
    const LogicalPartition pieces = runtime->get_logical_partition(ctx, next, ip);
    step.add_region_requirement(RegionRequirement(pieces, 0, LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, next));
    step.add_field(1, FID_T);
    runtime->execute_index_space(ctx, step).wait_all_results();
  }
  const double elapsed_ms = (Realm::Clock::current_time() - start) * 1e3;
  TaskLauncher sum(TOTAL_ID, UntypedBuffer());
  sum.add_region_requirement(RegionRequirement(rows[steps % 2], LEGION_READ_ONLY, LEGION_EXCLUSIVE, rows[steps % 2]));
  sum.add_field(0, FID_T);
  const double total = runtime->execute_task(ctx, sum).get_result<double>();
  const bool ok = std::fabs(total - expected) <= 1e-9 * expected;
  std::printf("time: %.3f ms\n", elapsed_ms);
  std::printf("MAPPEROPT_RESULT {\"verified\": %s, \"check\": {\"total\": %f, \"expected\": %f}}\n",
              ok ? "true" : "false", total, expected);
}

int main(int argc, char **argv) {
  Runtime::set_top_level_task_id(TOP_ID);
  {
    TaskVariantRegistrar r(TOP_ID, "top");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    Runtime::preregister_task_variant<top_task>(r, "top");
  }
  {
    TaskVariantRegistrar r(STEP_ID, "step");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    r.set_leaf();
    Runtime::preregister_task_variant<step_task>(r, "step");
  }
  {
    TaskVariantRegistrar r(TOTAL_ID, "total");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    r.set_leaf();
    Runtime::preregister_task_variant<double, total_task>(r, "total");
  }
  return Runtime::start(argc, argv);
}
