// rotate: a Legion program, knowing nothing of mapperopt, whose tasks are launched on other regions from launch to
// launch. A region "grid" (field "v") is cut by an equal partition "blocks" whose 4 subregions are named on their own
// ("block_0" ... "block_3"). `scan` is index launched over 4 points twice: first every point reads the whole of
// grid, then each point writes its block. Then `touch` is single launched -steps S times (default 12) on one of 10
// regions "r0" ... "r9" in turn (r0, r1, ..., r9, r0, ...), each launch also writing the region "log", so that each
// is mapped after the one before. Prints "ROTATE OK".
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "legion.h"

using namespace Legion;

enum { TOP_ID = 1, SCAN_ID = 2, TOUCH_ID = 3 };
enum { FID_V = 1 };
enum { BLOCKS = 4, RINGS = 10 };

void scan_task(const Task *, const std::vector<PhysicalRegion> &, Context, Runtime *) {}

void touch_task(const Task *, const std::vector<PhysicalRegion> &, Context, Runtime *) {}

void top_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  const InputArgs &args = Runtime::get_input_args();
  int steps = 12;
  for (int i = 1; i + 1 < args.argc; i++)
    if (std::strcmp(args.argv[i], "-steps") == 0) steps = std::atoi(args.argv[i + 1]);
  IndexSpace is = runtime->create_index_space(ctx, Rect<1>(0, 63));
  FieldSpace fs = runtime->create_field_space(ctx);
  runtime->create_field_allocator(ctx, fs).allocate_field(sizeof(double), FID_V);
  runtime->attach_name(fs, FID_V, "v");
  LogicalRegion grid = runtime->create_logical_region(ctx, is, fs);
  runtime->attach_name(grid, "grid");
  runtime->fill_field<double>(ctx, grid, grid, FID_V, 0.0);
  IndexSpace colors = runtime->create_index_space(ctx, Rect<1>(0, BLOCKS - 1));
  IndexPartition ip = runtime->create_equal_partition(ctx, is, colors);
  LogicalPartition blocks = runtime->get_logical_partition(ctx, grid, ip);
  runtime->attach_name(blocks, "blocks");
  for (int b = 0; b < BLOCKS; b++) {
    char name[32];
    std::snprintf(name, sizeof(name), "block_%d", b);
    runtime->attach_name(runtime->get_logical_subregion_by_color(ctx, blocks, b), name);
  }
  {
    IndexTaskLauncher whole(SCAN_ID, colors, UntypedBuffer(), ArgumentMap());
    whole.add_region_requirement(RegionRequirement(grid, 0, LEGION_READ_ONLY, LEGION_EXCLUSIVE, grid));
    whole.add_field(0, FID_V);
    runtime->execute_index_space(ctx, whole);
    IndexTaskLauncher each(SCAN_ID, colors, UntypedBuffer(), ArgumentMap());
    each.add_region_requirement(RegionRequirement(blocks, 0, LEGION_READ_WRITE, LEGION_EXCLUSIVE, grid));
    each.add_field(0, FID_V);
    runtime->execute_index_space(ctx, each);
  }
  IndexSpace one = runtime->create_index_space(ctx, Rect<1>(0, 0));
  LogicalRegion log = runtime->create_logical_region(ctx, one, fs);
  runtime->attach_name(log, "log");
  runtime->fill_field<double>(ctx, log, log, FID_V, 0.0);
  LogicalRegion rings[RINGS];
  for (int k = 0; k < RINGS; k++) {
    char name[32];
    std::snprintf(name, sizeof(name), "r%d", k);
    rings[k] = runtime->create_logical_region(ctx, one, fs);
    runtime->attach_name(rings[k], name);
    runtime->fill_field<double>(ctx, rings[k], rings[k], FID_V, 0.0);
  }
  Future last;
  for (int s = 0; s < steps; s++) {
    TaskLauncher touch(TOUCH_ID, UntypedBuffer());
    touch.add_region_requirement(RegionRequirement(rings[s % RINGS], LEGION_READ_WRITE, LEGION_EXCLUSIVE,
                                                   rings[s % RINGS]));
    touch.add_field(0, FID_V);
    touch.add_region_requirement(RegionRequirement(log, LEGION_READ_WRITE, LEGION_EXCLUSIVE, log));
    touch.add_field(1, FID_V);
    last = runtime->execute_task(ctx, touch);
  }
  if (steps > 0) last.get_void_result();
  std::printf("ROTATE OK\n");
}

int main(int argc, char **argv) {
  Runtime::set_top_level_task_id(TOP_ID);
  {
    TaskVariantRegistrar r(TOP_ID, "top");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    Runtime::preregister_task_variant<top_task>(r, "top");
  }
  {
    TaskVariantRegistrar r(SCAN_ID, "scan");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    r.set_leaf();
    Runtime::preregister_task_variant<scan_task>(r, "scan");
  }
  {
    TaskVariantRegistrar r(TOUCH_ID, "touch");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    r.set_leaf();
    Runtime::preregister_task_variant<touch_task>(r, "touch");
  }
  return Runtime::start(argc, argv);
}
