// blocksum: a tutorial-style Legion program whose index launch reduces into a 1-element region that it leaves
// unnamed, as most tutorials leave their regions. A region `grid` (fields `temp` and `flux`, doubles) is split into
// the block partition `blocks`; per step an index launch of `update` (one point per block, READ_WRITE) adds 1 to each
// `temp`; then the sum region is filled with 0 and an index launch of `accumulate` reads its block's `temp` and adds
// it into the sum (a sum reduction, every point through the same requirement); a single task `check` prints
// "check: total = <sum>, expected <n * (steps + 1)>: PASSED" (or FAILED, and exits 1). Tasks are registered under
// enum IDs (UPDATE_TASK_ID, ...) and the names "update", "accumulate" and "check". Flags: -n N (elements, default
// 4096), -b B (blocks, default 4), -steps S (default 3), -unnamed (attach no name at all: no region, partition or
// field name).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "legion.h"

using namespace Legion;

enum TaskIDs { TOP_LEVEL_TASK_ID, UPDATE_TASK_ID, ACCUMULATE_TASK_ID, CHECK_TASK_ID };
enum FieldIDs { FID_TEMP = 1, FID_FLUX, FID_SUM = 300 };

void update_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_READ_WRITE, double, 1> temp(regions[0], FID_TEMP);
  const FieldAccessor<LEGION_READ_WRITE, double, 1> flux(regions[0], FID_FLUX);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) {
    flux[*p] = 1.0;
    temp[*p] = temp[*p] + flux[*p];
  }
}

void accumulate_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_READ_ONLY, double, 1> temp(regions[0], FID_TEMP);
  const ReductionAccessor<SumReduction<double>, false, 1, coord_t, Realm::AffineAccessor<double, 1, coord_t>> sum(
      regions[1], FID_SUM, LEGION_REDOP_SUM_FLOAT64);
  double local = 0;
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) local += temp[*p];
  sum[Point<1>(0)] <<= local;
}

double check_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_READ_ONLY, double, 1> sum(regions[0], FID_SUM);
  return sum[Point<1>(0)];
}

void top_level_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  long long n = 4096, blocks = 4, steps = 3;
  bool named = true;
  const InputArgs &args = Runtime::get_input_args();
  for (int i = 1; i < args.argc; i++) {
    if (!std::strcmp(args.argv[i], "-unnamed")) named = false;
    if (i + 1 == args.argc) break;
    if (!std::strcmp(args.argv[i], "-n")) n = std::atoll(args.argv[i + 1]);
    if (!std::strcmp(args.argv[i], "-b")) blocks = std::atoll(args.argv[i + 1]);
    if (!std::strcmp(args.argv[i], "-steps")) steps = std::atoll(args.argv[i + 1]);
  }
  IndexSpace grid_is = runtime->create_index_space(ctx, Rect<1>(0, n - 1));
  IndexSpace sum_is = runtime->create_index_space(ctx, Rect<1>(0, 0));
  FieldSpace grid_fs = runtime->create_field_space(ctx), sum_fs = runtime->create_field_space(ctx);
  {
    FieldAllocator allocator = runtime->create_field_allocator(ctx, grid_fs);
    allocator.allocate_field(sizeof(double), FID_TEMP);
    allocator.allocate_field(sizeof(double), FID_FLUX);
  }
  runtime->create_field_allocator(ctx, sum_fs).allocate_field(sizeof(double), FID_SUM);
  LogicalRegion grid = runtime->create_logical_region(ctx, grid_is, grid_fs);
  LogicalRegion sum = runtime->create_logical_region(ctx, sum_is, sum_fs);
  IndexSpace color_is = runtime->create_index_space(ctx, Rect<1>(0, blocks - 1));
  LogicalPartition lp = runtime->get_logical_partition(ctx, grid, runtime->create_equal_partition(ctx, grid_is,
                                                                                                    color_is));
  if (named) {  // the sum region stays unnamed
    runtime->attach_name(grid_fs, FID_TEMP, "temp");
    runtime->attach_name(grid_fs, FID_FLUX, "flux");
    runtime->attach_name(grid, "grid");
    runtime->attach_name(lp, "blocks");
  }
  runtime->fill_field<double>(ctx, grid, grid, FID_TEMP, 1.0);
  runtime->fill_field<double>(ctx, grid, grid, FID_FLUX, 0.0);
  for (long long s = 0; s < steps; s++) {
    IndexTaskLauncher update(UPDATE_TASK_ID, color_is, UntypedBuffer(), ArgumentMap());
    update.add_region_requirement(RegionRequirement(lp, 0, LEGION_READ_WRITE, LEGION_EXCLUSIVE, grid));
    update.add_field(0, FID_TEMP);
    update.add_field(0, FID_FLUX);
    runtime->execute_index_space(ctx, update);
  }
  runtime->fill_field<double>(ctx, sum, sum, FID_SUM, 0.0);
  IndexTaskLauncher accumulate(ACCUMULATE_TASK_ID, color_is, UntypedBuffer(), ArgumentMap());
  accumulate.add_region_requirement(RegionRequirement(lp, 0, LEGION_READ_ONLY, LEGION_EXCLUSIVE, grid));
  accumulate.add_field(0, FID_TEMP);
  // One region for every point: a region requirement, not a partition's.
  accumulate.add_region_requirement(RegionRequirement(sum, LEGION_REDOP_SUM_FLOAT64, LEGION_SIMULTANEOUS, sum));
  accumulate.add_field(1, FID_SUM);
  runtime->execute_index_space(ctx, accumulate);
  TaskLauncher check(CHECK_TASK_ID, UntypedBuffer());
  check.add_region_requirement(RegionRequirement(sum, LEGION_READ_ONLY, LEGION_EXCLUSIVE, sum));
  check.add_field(0, FID_SUM);
  const double total = runtime->execute_task(ctx, check).get_result<double>();
  const double expected = double(n) * double(steps + 1);
  const bool ok = total == expected;
  std::printf("check: total = %.1f, expected %.1f: %s\n", total, expected, ok ? "PASSED" : "FAILED");
  runtime->destroy_logical_region(ctx, grid);
  runtime->destroy_logical_region(ctx, sum);
  runtime->destroy_field_space(ctx, grid_fs);
  runtime->destroy_field_space(ctx, sum_fs);
  runtime->destroy_index_space(ctx, grid_is);
  runtime->destroy_index_space(ctx, sum_is);
  runtime->destroy_index_space(ctx, color_is);
  if (!ok) std::exit(1);
}

int main(int argc, char **argv) {
  Runtime::set_top_level_task_id(TOP_LEVEL_TASK_ID);
  {
    TaskVariantRegistrar registrar(TOP_LEVEL_TASK_ID, "top_level");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    Runtime::preregister_task_variant<top_level_task>(registrar, "top_level");
  }
  {
    TaskVariantRegistrar registrar(UPDATE_TASK_ID, "update");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf();
    Runtime::preregister_task_variant<update_task>(registrar, "update");
  }
  {
    TaskVariantRegistrar registrar(ACCUMULATE_TASK_ID, "accumulate");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf();
    Runtime::preregister_task_variant<accumulate_task>(registrar, "accumulate");
  }
  {
    TaskVariantRegistrar registrar(CHECK_TASK_ID, "check");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf();
    Runtime::preregister_task_variant<double, check_task>(registrar, "check");
  }
  return Runtime::start(argc, argv);
}
