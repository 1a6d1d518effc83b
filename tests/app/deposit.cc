// deposit: a particle-deposit program written as Legion tutorials write it, naming none of its regions. An index
// launch of `init_particles` (WRITE_DISCARD) fills the pieces of `particles`; then each of -s S steps (default 4)
// launches `deposit` over the pieces, argument 0 the piece (READ_ONLY), argument 1 the WHOLE `bins` region, which
// every point reduces into (LEGION_REDOP_SUM_INT64), and a single `sum_bins` task (READ_ONLY) whose Future is the
// running total. It prints "elapsed: <ms> ms" for the loop and "RESULT OK" when every total is right (else
// "RESULT WRONG", exit status 1). Flags: -n N particles (default 100000), -p P pieces (default 4), -trace (the loop
// between begin_trace and end_trace, as most Legion programs trace their main loop).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "legion.h"

using namespace Legion;

enum TaskIDs { TOP_LEVEL_TASK_ID, INIT_PARTICLES_TASK_ID, DEPOSIT_TASK_ID, SUM_BINS_TASK_ID };
enum FieldIDs { FID_X, FID_BIN };
static const int NBINS = 32;

void init_particles_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_WRITE_DISCARD, int64_t, 1> x(regions[0], FID_X);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) x[*p] = p[0] % 7 + 1;
}

void deposit_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_READ_ONLY, int64_t, 1> x(regions[0], FID_X);
  const ReductionAccessor<SumReduction<int64_t>, false, 1, coord_t, Realm::AffineAccessor<int64_t, 1, coord_t>> bins(
      regions[1], FID_BIN, LEGION_REDOP_SUM_INT64);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++)
    bins[Point<1>(p[0] % NBINS)] <<= x[*p];
}

int64_t sum_bins_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_READ_ONLY, int64_t, 1> bins(regions[0], FID_BIN);
  int64_t total = 0;
  for (int b = 0; b < NBINS; b++) total += bins[b];
  return total;
}

void top_level_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *rt) {
  long long n = 100000, pieces = 4, steps = 4;
  bool trace = false;
  const InputArgs &args = Runtime::get_input_args();
  for (int i = 1; i < args.argc; i++) {
    if (!std::strcmp(args.argv[i], "-trace")) trace = true;
    if (i + 1 == args.argc) break;
    if (!std::strcmp(args.argv[i], "-n")) n = std::atoll(args.argv[i + 1]);
    if (!std::strcmp(args.argv[i], "-p")) pieces = std::atoll(args.argv[i + 1]);
    if (!std::strcmp(args.argv[i], "-s")) steps = std::atoll(args.argv[i + 1]);
  }
  IndexSpace pis = rt->create_index_space(ctx, Rect<1>(0, n - 1));
  IndexSpace bis = rt->create_index_space(ctx, Rect<1>(0, NBINS - 1));
  FieldSpace pfs = rt->create_field_space(ctx), bfs = rt->create_field_space(ctx);
  rt->create_field_allocator(ctx, pfs).allocate_field(sizeof(int64_t), FID_X);
  rt->create_field_allocator(ctx, bfs).allocate_field(sizeof(int64_t), FID_BIN);
  LogicalRegion particles = rt->create_logical_region(ctx, pis, pfs);
  LogicalRegion bins = rt->create_logical_region(ctx, bis, bfs);
  IndexSpace cis = rt->create_index_space(ctx, Rect<1>(0, pieces - 1));
  LogicalPartition lp = rt->get_logical_partition(ctx, particles, rt->create_equal_partition(ctx, pis, cis));

  IndexLauncher init(INIT_PARTICLES_TASK_ID, cis, UntypedBuffer(), ArgumentMap());
  init.add_region_requirement(RegionRequirement(lp, 0, LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, particles));
  init.add_field(0, FID_X);
  rt->execute_index_space(ctx, init);
  rt->fill_field<int64_t>(ctx, bins, bins, FID_BIN, 0);
  int64_t per_step = 0;
  for (long long i = 0; i < n; i++) per_step += i % 7 + 1;

  Future start = rt->get_current_time_in_microseconds(ctx);
  std::vector<Future> sums;
  for (long long s = 0; s < steps; s++) {
    if (trace) rt->begin_trace(ctx, 1);
    IndexLauncher deposit(DEPOSIT_TASK_ID, cis, UntypedBuffer(), ArgumentMap());
    deposit.add_region_requirement(RegionRequirement(lp, 0, LEGION_READ_ONLY, LEGION_EXCLUSIVE, particles));
    deposit.add_field(0, FID_X);
    // every point reduces into the whole bins region (projection 0 of the region itself)
    deposit.add_region_requirement(RegionRequirement(bins, 0, LEGION_REDOP_SUM_INT64, LEGION_EXCLUSIVE, bins));
    deposit.add_field(1, FID_BIN);
    rt->execute_index_space(ctx, deposit);
    TaskLauncher sum(SUM_BINS_TASK_ID, UntypedBuffer());
    sum.add_region_requirement(RegionRequirement(bins, LEGION_READ_ONLY, LEGION_EXCLUSIVE, bins));
    sum.add_field(0, FID_BIN);
    sums.push_back(rt->execute_task(ctx, sum));
    if (trace) rt->end_trace(ctx, 1);
  }
  bool ok = true;
  for (long long s = 0; s < steps; s++) ok = ok && sums[s].get_result<int64_t>() == per_step * (s + 1);
  rt->issue_execution_fence(ctx);
  Future end = rt->get_current_time_in_microseconds(ctx);
  std::printf("elapsed: %.3f ms\n", (end.get_result<long long>() - start.get_result<long long>()) / 1000.0);
  std::printf(ok ? "RESULT OK\n" : "RESULT WRONG\n");
  rt->destroy_logical_region(ctx, particles);
  rt->destroy_logical_region(ctx, bins);
  rt->destroy_field_space(ctx, pfs);
  rt->destroy_field_space(ctx, bfs);
  rt->destroy_index_space(ctx, pis);
  rt->destroy_index_space(ctx, bis);
  rt->destroy_index_space(ctx, cis);
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
    TaskVariantRegistrar registrar(INIT_PARTICLES_TASK_ID, "init_particles");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf();
    Runtime::preregister_task_variant<init_particles_task>(registrar, "init_particles");
  }
  {
    TaskVariantRegistrar registrar(DEPOSIT_TASK_ID, "deposit");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf();
    Runtime::preregister_task_variant<deposit_task>(registrar, "deposit");
  }
  {
    TaskVariantRegistrar registrar(SUM_BINS_TASK_ID, "sum_bins");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf();
    Runtime::preregister_task_variant<int64_t, sum_bins_task>(registrar, "sum_bins");
  }
  return Runtime::start(argc, argv);
}
