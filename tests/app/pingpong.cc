// pingpong: a Jacobi-style program that knows nothing about mapperopt. Two regions, "cur" and "next", over one index
// space "grid" are cut by one index partition "blocks" into as many pieces as Legion's default mapper says there
// are CPUs in all (tunable DEFAULT_TUNABLE_GLOBAL_CPUS, read as 8 bytes; printed as "PP_PIECES <n>"). The index
// launch of `fill` runs first on cur's pieces, then on next's (a ping-pong pair), printing "PP_FILL <point>"; then
// one of `step` reads cur's pieces and writes next's ("PP_STEP <point>").
// The field space is named "temp". Flag: -unnamed_grid (leave the index space unnamed: cur and next are then roots of
// the region tree, alike only in their field space); -named_pieces (name the logical partitions of cur and next
// "cur_pieces" and "next_pieces": partitions of one index partition, a ping-pong pair).
#include <cstdio>
#include <cstring>

#include "legion.h"
#include "mappers/default_mapper.h"

using namespace Legion;

enum { TOP_ID = 1, FILL_ID = 2, STEP_ID = 3 };
enum { FID_T = 1 };

void fill_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_WRITE_DISCARD, double, 1> t(regions[0], FID_T);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) t[*p] = double(p[0]);
  std::printf("PP_FILL %lld\n", (long long)task->index_point[0]);
  std::fflush(stdout);
}

void step_task(const Task *task, const std::vector<PhysicalRegion> &, Context, Runtime *) {
  std::printf("PP_STEP %lld\n", (long long)task->index_point[0]);
  std::fflush(stdout);
}

void top_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  const InputArgs &args = Runtime::get_input_args();
  bool named = true, named_pieces = false;
  for (int i = 1; i < args.argc; i++) {
    named = named && std::strcmp(args.argv[i], "-unnamed_grid") != 0;
    named_pieces = named_pieces || std::strcmp(args.argv[i], "-named_pieces") == 0;
  }
  const size_t pieces = runtime->select_tunable_value(ctx, Mapping::DefaultMapper::DEFAULT_TUNABLE_GLOBAL_CPUS)
                            .get_result<size_t>();
  std::printf("PP_PIECES %zu\n", pieces);
  IndexSpace grid = runtime->create_index_space(ctx, Rect<1>(0, 63));
  if (named) runtime->attach_name(grid, "grid");
  FieldSpace fs = runtime->create_field_space(ctx);
  runtime->attach_name(fs, "temp");
  runtime->create_field_allocator(ctx, fs).allocate_field(sizeof(double), FID_T);
  LogicalRegion cur = runtime->create_logical_region(ctx, grid, fs);
  LogicalRegion next = runtime->create_logical_region(ctx, grid, fs);
  runtime->attach_name(cur, "cur");
  runtime->attach_name(next, "next");
  IndexSpace colors = runtime->create_index_space(ctx, Rect<1>(0, coord_t(pieces) - 1));
  IndexPartition blocks = runtime->create_equal_partition(ctx, grid, colors);
  runtime->attach_name(blocks, "blocks");
  if (named_pieces) {
    runtime->attach_name(runtime->get_logical_partition(ctx, cur, blocks), "cur_pieces");
    runtime->attach_name(runtime->get_logical_partition(ctx, next, blocks), "next_pieces");
  }
  for (LogicalRegion r : {cur, next}) {
    IndexTaskLauncher launcher(FILL_ID, colors, UntypedBuffer(), ArgumentMap());
    launcher.add_region_requirement(RegionRequirement(runtime->get_logical_partition(ctx, r, blocks), 0,
                                                      LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, r));
    launcher.add_field(0, FID_T);
    runtime->execute_index_space(ctx, launcher).wait_all_results();
  }
  IndexTaskLauncher step(STEP_ID, colors, UntypedBuffer(), ArgumentMap());
  step.add_region_requirement(
      RegionRequirement(runtime->get_logical_partition(ctx, cur, blocks), 0, LEGION_READ_ONLY, LEGION_EXCLUSIVE, cur));
  step.add_field(0, FID_T);
  step.add_region_requirement(RegionRequirement(runtime->get_logical_partition(ctx, next, blocks), 0,
                                                LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, next));
  step.add_field(1, FID_T);
  runtime->execute_index_space(ctx, step).wait_all_results();
}

int main(int argc, char **argv) {
  Runtime::set_top_level_task_id(TOP_ID);
  {
    TaskVariantRegistrar r(TOP_ID, "top");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    Runtime::preregister_task_variant<top_task>(r, "top");
  }
  {
    TaskVariantRegistrar r(FILL_ID, "fill");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    r.set_leaf();
    Runtime::preregister_task_variant<fill_task>(r, "fill");
  }
  {
    TaskVariantRegistrar r(STEP_ID, "step");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    r.set_leaf();
    Runtime::preregister_task_variant<step_task>(r, "step");
  }
  return Runtime::start(argc, argv);
}
