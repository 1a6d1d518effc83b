// pingghost: a 1-D Jacobi-style program that knows nothing about mapperopt, the usual Legion ping-pong with ghost
// cells. Two regions, "cur" and "next", over one index space, each cut twice by the same two index partitions: an
// equal partition into 4 blocks ("cur_blocks", "next_blocks") and an aliased one of each block with a cell either side
// ("cur_ghost", "next_ghost"). `init` writes cur's blocks; then each of -steps launches of `step` (4 points) reads the
// ghost partition of one region and writes the blocks of the other, cur to next on even steps and next to cur on odd
// ones; `sum` reads the last region written and prints "PG_SUM <sum>".
// Flag: -unnamed (leave the index space, the field space and the index partitions unnamed: cur and next are then roots
// of the region tree, alike only in their fields); -ab (name the partitions "blocks_a", "blocks_b", "ghost_a",
// "ghost_b": names that do not hold their region's, as a program with grid_a and grid_b has).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "legion.h"

using namespace Legion;

enum { TOP_ID = 1, INIT_ID = 2, STEP_ID = 3, SUM_ID = 4 };
enum { FID_V = 1 };

void init_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_WRITE_DISCARD, double, 1> a(regions[0], FID_V);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) a[*p] = double(p[0] % 7);
}

void step_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_READ_ONLY, double, 1> src(regions[0], FID_V);
  const FieldAccessor<LEGION_WRITE_DISCARD, double, 1> dst(regions[1], FID_V);
  const Rect<1> g = regions[0].get_bounds<1, coord_t>().bounds;
  for (PointInRectIterator<1> p(regions[1].get_bounds<1, coord_t>().bounds); p(); p++) {
    const double l = p[0] > g.lo[0] ? src[p[0] - 1] : src[*p], h = p[0] < g.hi[0] ? src[p[0] + 1] : src[*p];
    dst[*p] = (l + src[*p] + h) / 3.0;
  }
}

double sum_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_READ_ONLY, double, 1> a(regions[0], FID_V);
  double s = 0;
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) s += a[*p];
  return s;
}

void top_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *rt) {
  const InputArgs &args = Runtime::get_input_args();
  bool named = true, ab = false;
  int steps = 4;
  for (int i = 1; i < args.argc; i++) {
    named = named && std::strcmp(args.argv[i], "-unnamed") != 0;
    ab = ab || std::strcmp(args.argv[i], "-ab") == 0;
    if (std::strcmp(args.argv[i], "-steps") == 0 && i + 1 < args.argc) steps = std::atoi(args.argv[i + 1]);
  }
  const coord_t n = 64, blocks = 4;
  IndexSpace cells = rt->create_index_space(ctx, Rect<1>(0, n - 1));
  FieldSpace fs = rt->create_field_space(ctx);
  rt->create_field_allocator(ctx, fs).allocate_field(sizeof(double), FID_V);
  LogicalRegion cur = rt->create_logical_region(ctx, cells, fs), next = rt->create_logical_region(ctx, cells, fs);
  rt->attach_name(cur, "cur");
  rt->attach_name(next, "next");
  IndexSpace colors = rt->create_index_space(ctx, Rect<1>(0, blocks - 1));
  IndexPartition blockip = rt->create_equal_partition(ctx, cells, colors);
  std::map<DomainPoint, Domain> ghosts;
  for (coord_t c = 0; c < blocks; c++) {
    const Rect<1> b = rt->get_index_space_domain(ctx, rt->get_index_subspace(ctx, blockip, c));
    ghosts[DomainPoint(Point<1>(c))] = Domain(Rect<1>(std::max<coord_t>(b.lo[0] - 1, 0), std::min(b.hi[0] + 1, n - 1)));
  }
  IndexPartition ghostip = rt->create_partition_by_domain(ctx, cells, ghosts, colors, true, LEGION_ALIASED_COMPLETE_KIND);
  if (named) {
    rt->attach_name(cells, "cells");
    rt->attach_name(fs, "vals");
    rt->attach_name(blockip, "blockip");
    rt->attach_name(ghostip, "ghostip");
  }
  LogicalPartition cb = rt->get_logical_partition(cur, blockip), nb = rt->get_logical_partition(next, blockip);
  LogicalPartition cg = rt->get_logical_partition(cur, ghostip), ng = rt->get_logical_partition(next, ghostip);
  rt->attach_name(cb, ab ? "blocks_a" : "cur_blocks");
  rt->attach_name(nb, ab ? "blocks_b" : "next_blocks");
  rt->attach_name(cg, ab ? "ghost_a" : "cur_ghost");
  rt->attach_name(ng, ab ? "ghost_b" : "next_ghost");
  {
    IndexTaskLauncher l(INIT_ID, colors, UntypedBuffer(), ArgumentMap());
    l.add_region_requirement(RegionRequirement(cb, 0, LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, cur));
    l.add_field(0, FID_V);
    rt->execute_index_space(ctx, l);
  }
  for (int s = 0; s < steps; s++) {
    const bool even = s % 2 == 0;
    IndexTaskLauncher l(STEP_ID, colors, UntypedBuffer(), ArgumentMap());
    l.add_region_requirement(RegionRequirement(even ? cg : ng, 0, LEGION_READ_ONLY, LEGION_EXCLUSIVE, even ? cur : next));
    l.add_field(0, FID_V);
    l.add_region_requirement(RegionRequirement(even ? nb : cb, 0, LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, even ? next : cur));
    l.add_field(1, FID_V);
    rt->execute_index_space(ctx, l);
  }
  LogicalRegion last = steps % 2 ? next : cur;
  TaskLauncher sl(SUM_ID, UntypedBuffer());
  sl.add_region_requirement(RegionRequirement(last, LEGION_READ_ONLY, LEGION_EXCLUSIVE, last));
  sl.add_field(0, FID_V);
  std::printf("PG_SUM %.10e\n", rt->execute_task(ctx, sl).get_result<double>());
}

int main(int argc, char **argv) {
  Runtime::set_top_level_task_id(TOP_ID);
  {
    TaskVariantRegistrar r(TOP_ID, "top");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    Runtime::preregister_task_variant<top_task>(r, "top");
  }
  {
    TaskVariantRegistrar r(INIT_ID, "init");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    r.set_leaf();
    Runtime::preregister_task_variant<init_task>(r, "init");
  }
  {
    TaskVariantRegistrar r(STEP_ID, "step");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    r.set_leaf();
    Runtime::preregister_task_variant<step_task>(r, "step");
  }
  {
    TaskVariantRegistrar r(SUM_ID, "sum");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    r.set_leaf();
    Runtime::preregister_task_variant<double, sum_task>(r, "sum");
  }
  return Runtime::start(argc, argv);
}
