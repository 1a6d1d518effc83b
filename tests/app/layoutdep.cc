// layoutdep: a tiny Legion program whose kernel assumes the layout Legion's default mapper gives (x fastest, SOA
// F_order) without registering a layout constraint, as users' kernels often do. An index launch of `fill` over a 2x2
// partition of an N x N grid (-n N, default 64) writes each cell's value; a single `check` task then prints
// "check: OK" or "check: WRONG (...)" and the program exits 0 either way. With LAYOUTDEP_BUG=hang in the
// environment, `fill` hangs when its instance is not x-fastest (a C_order or AOS layout); with LAYOUTDEP_BUG=wrong it
// writes one wrong value instead (silently wrong numbers).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "legion.h"

using namespace Legion;

enum { TOP_ID = 1, FILL_ID = 2, CHECK_ID = 3 };
enum { FID_V = 1 };

static double value(coord_t x, coord_t y) { return double(x) + 1000.0 * double(y); }

void fill_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *rt) {
  const FieldAccessor<LEGION_WRITE_DISCARD, double, 2> v(regions[0], FID_V);
  Rect<2> r = rt->get_index_space_domain(ctx, task->regions[0].region.get_index_space());
  for (PointInRectIterator<2> p(r); p(); p++) v[*p] = value((*p)[0], (*p)[1]);
  const char *bug = getenv("LAYOUTDEP_BUG");
  if (bug && r.hi[0] > r.lo[0]) {
    const FieldAccessor<LEGION_READ_WRITE, double, 2, coord_t, Realm::AffineAccessor<double, 2, coord_t> > aff(
        regions[0], FID_V);
    if (aff.accessor.strides[0] != sizeof(double)) {  // not x-fastest
      if (!strcmp(bug, "hang")) {
        while (true) sleep(1);
      }
      aff[r.lo] = aff[r.lo] + 1e-3;
    }
  }
}

void check_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *rt) {
  const FieldAccessor<LEGION_READ_ONLY, double, 2> v(regions[0], FID_V);
  Rect<2> r = rt->get_index_space_domain(ctx, task->regions[0].region.get_index_space());
  long wrong = 0;
  for (PointInRectIterator<2> p(r); p(); p++) wrong += v[*p] != value((*p)[0], (*p)[1]);
  if (wrong)
    printf("check: WRONG (%ld cells differ)\n", wrong);
  else
    printf("check: OK\n");
}

void top_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *rt) {
  long n = 64;
  const InputArgs &args = Runtime::get_input_args();
  for (int i = 1; i < args.argc - 1; i++)
    if (!strcmp(args.argv[i], "-n")) n = atol(args.argv[i + 1]);
  IndexSpace is = rt->create_index_space(ctx, Rect<2>(Point<2>(0, 0), Point<2>(n - 1, n - 1)));
  rt->attach_name(is, "cells");
  FieldSpace fs = rt->create_field_space(ctx);
  rt->attach_name(fs, "vals");
  {
    FieldAllocator fa = rt->create_field_allocator(ctx, fs);
    fa.allocate_field(sizeof(double), FID_V);
    rt->attach_name(fs, FID_V, "v");
  }
  LogicalRegion grid = rt->create_logical_region(ctx, is, fs);
  rt->attach_name(grid, "grid");
  IndexSpace colors = rt->create_index_space(ctx, Rect<2>(Point<2>(0, 0), Point<2>(1, 1)));
  IndexPartition ip = rt->create_equal_partition(ctx, is, colors);
  LogicalPartition tiles = rt->get_logical_partition(grid, ip);
  rt->attach_name(tiles, "tiles");
  IndexTaskLauncher fill(FILL_ID, colors, TaskArgument(), ArgumentMap());
  fill.add_region_requirement(RegionRequirement(tiles, 0, LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, grid));
  fill.add_field(0, FID_V);
  rt->execute_index_space(ctx, fill);
  TaskLauncher check(CHECK_ID, TaskArgument());
  check.add_region_requirement(RegionRequirement(grid, LEGION_READ_ONLY, LEGION_EXCLUSIVE, grid));
  check.add_field(0, FID_V);
  rt->execute_task(ctx, check).wait();
}

int main(int argc, char **argv) {
  Runtime::set_top_level_task_id(TOP_ID);
  {
    TaskVariantRegistrar r(TOP_ID, "top_level");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    Runtime::preregister_task_variant<top_task>(r, "top_level");
  }
  {
    TaskVariantRegistrar r(FILL_ID, "fill");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    r.set_leaf();
    Runtime::preregister_task_variant<fill_task>(r, "fill");
  }
  {
    TaskVariantRegistrar r(CHECK_ID, "check");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    r.set_leaf();
    Runtime::preregister_task_variant<check_task>(r, "check");
  }
  return Runtime::start(argc, argv);
}
