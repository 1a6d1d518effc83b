// twofields: one task launched several times on different fields, as Legion programs often do. A region `grid`
// has two fields, `a` and `b` (names attached), and a named equal partition `blocks`. The top-level task index
// launches `scale` over `blocks` on field `a` and then on field `b`, and launches the single task `total` on
// `a` and then on `b` of the whole region; last, `scale` once more as a single task on `b` of the whole region.
// Each `scale` doubles its field; `total` prints "TWOFIELDS <field> <sum>" (a holds 1, b holds 10 per element
// before doubling).
#include <cstdio>

#include "legion.h"

using namespace Legion;

enum { TOP_ID = 1, SCALE_ID = 2, TOTAL_ID = 3 };
enum { FID_A = 1, FID_B = 2 };

void scale_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldID fid = task->regions[0].instance_fields[0];
  const FieldAccessor<LEGION_READ_WRITE, double, 1> v(regions[0], fid);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) v[*p] = 2 * v[*p];
}

void total_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldID fid = task->regions[0].instance_fields[0];
  const FieldAccessor<LEGION_READ_ONLY, double, 1> v(regions[0], fid);
  double sum = 0;
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) sum += v[*p];
  std::printf("TWOFIELDS %s %g\n", fid == FID_A ? "a" : "b", sum);
}

void top_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  IndexSpace is = runtime->create_index_space(ctx, Rect<1>(0, 99));
  FieldSpace fs = runtime->create_field_space(ctx);
  {
    FieldAllocator alloc = runtime->create_field_allocator(ctx, fs);
    alloc.allocate_field(sizeof(double), FID_A);
    alloc.allocate_field(sizeof(double), FID_B);
  }
  runtime->attach_name(fs, FID_A, "a");
  runtime->attach_name(fs, FID_B, "b");
  LogicalRegion grid = runtime->create_logical_region(ctx, is, fs);
  runtime->attach_name(grid, "grid");
  runtime->fill_field<double>(ctx, grid, grid, FID_A, 1.0);
  runtime->fill_field<double>(ctx, grid, grid, FID_B, 10.0);
  IndexSpace colors = runtime->create_index_space(ctx, Rect<1>(0, 3));
  LogicalPartition blocks = runtime->get_logical_partition(ctx, grid, runtime->create_equal_partition(ctx, is, colors));
  runtime->attach_name(blocks, "blocks");
  for (FieldID fid : {FID_A, FID_B}) {
    IndexTaskLauncher scale(SCALE_ID, colors, UntypedBuffer(), ArgumentMap());
    scale.add_region_requirement(RegionRequirement(blocks, 0, LEGION_READ_WRITE, LEGION_EXCLUSIVE, grid));
    scale.add_field(0, fid);
    runtime->execute_index_space(ctx, scale);
    TaskLauncher total(TOTAL_ID, UntypedBuffer());
    total.add_region_requirement(RegionRequirement(grid, LEGION_READ_ONLY, LEGION_EXCLUSIVE, grid));
    total.add_field(0, fid);
    runtime->execute_task(ctx, total).get_void_result();
  }
  TaskLauncher whole(SCALE_ID, UntypedBuffer());
  whole.add_region_requirement(RegionRequirement(grid, LEGION_READ_WRITE, LEGION_EXCLUSIVE, grid));
  whole.add_field(0, FID_B);
  runtime->execute_task(ctx, whole);
}

int main(int argc, char **argv) {
  Runtime::set_top_level_task_id(TOP_ID);
  {
    TaskVariantRegistrar r(TOP_ID, "top");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    Runtime::preregister_task_variant<top_task>(r, "top");
  }
  {
    TaskVariantRegistrar r(SCALE_ID, "scale");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    r.set_leaf();
    Runtime::preregister_task_variant<scale_task>(r, "scale");
  }
  {
    TaskVariantRegistrar r(TOTAL_ID, "total");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    r.set_leaf();
    Runtime::preregister_task_variant<total_task>(r, "total");
  }
  return Runtime::start(argc, argv);
}
