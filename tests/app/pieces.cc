// pieces: a Legion program written after Legion's circuit example, knowing nothing of mapperopt, that names each
// subregion of its partition on its own ("block_0", "block_1", ...; the partition is "blocks"), then fills the
// blocks with an index launch of `fill` over them (one block a point) and checks the result ("PIECES OK"). Its
// variant of `fill` has a name of its own, "fill_cpu", as in Legion's examples.
#include <cstdio>

#include "legion.h"

using namespace Legion;

enum { TOP_ID = 1, FILL_ID = 2 };
enum { FID_V = 1 };
enum { BLOCKS = 4 };

void fill_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_WRITE_DISCARD, int, 1> v(regions[0], FID_V);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++)
    v[*p] = int(task->index_point[0]);
}

void top_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  IndexSpace is = runtime->create_index_space(ctx, Rect<1>(0, 1023));
  FieldSpace fs = runtime->create_field_space(ctx);
  runtime->create_field_allocator(ctx, fs).allocate_field(sizeof(int), FID_V);
  LogicalRegion cells = runtime->create_logical_region(ctx, is, fs);
  runtime->attach_name(cells, "cells");
  IndexSpace colors = runtime->create_index_space(ctx, Rect<1>(0, BLOCKS - 1));
  IndexPartition ip = runtime->create_equal_partition(ctx, is, colors);
  runtime->attach_name(ip, "blocks");
  LogicalPartition blocks = runtime->get_logical_partition(ctx, cells, ip);
  for (int b = 0; b < BLOCKS; b++) {
    char name[32];
    std::snprintf(name, sizeof(name), "block_%d", b);
    runtime->attach_name(runtime->get_logical_subregion_by_color(ctx, blocks, b), name);
  }
  IndexTaskLauncher launcher(FILL_ID, colors, UntypedBuffer(), ArgumentMap());
  launcher.add_region_requirement(RegionRequirement(blocks, 0, LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, cells));
  launcher.add_field(0, FID_V);
  runtime->execute_index_space(ctx, launcher).wait_all_results();
  InlineLauncher mapping(RegionRequirement(cells, LEGION_READ_ONLY, LEGION_EXCLUSIVE, cells));
  mapping.add_field(FID_V);
  PhysicalRegion all = runtime->map_region(ctx, mapping);
  const FieldAccessor<LEGION_READ_ONLY, int, 1> v(all, FID_V);
  int wrong = 0;
  for (int i = 0; i < 1024; i++) wrong += v[i] != i / (1024 / BLOCKS);
  runtime->unmap_region(ctx, all);
  std::printf(wrong ? "PIECES FAILED: %d wrong\n" : "PIECES OK\n", wrong);
}

int main(int argc, char **argv) {
  Runtime::set_top_level_task_id(TOP_ID);
  {
    TaskVariantRegistrar r(TOP_ID, "top");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    Runtime::preregister_task_variant<top_task>(r, "top");
  }
  {
    TaskVariantRegistrar r(FILL_ID, "fill_cpu");  // the variant's name; the task's is "fill"
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    r.set_leaf();
    Runtime::preregister_task_variant<fill_task>(r, "fill");
  }
  return Runtime::start(argc, argv);
}
