// histogram: a small Legion program, tutorial style, whose index launch reduces into one whole region. A region of
// values is split into pieces; an index launch of `histogram` (one point per piece) reads its piece and adds 1 to the
// bin of each value in the WHOLE `bins` region, every point through the same requirement (a sum reduction with
// simultaneous coherence; `-collective` asks for collective coherence instead). Every point naming one region, read
// or reduced, is what Legion maps collectively: all points of the launch together.
// At the end it prints "HIST OK total <n * reps> ..." when every value was counted once per repetition (else
// "HIST WRONG ...") and exits 0 (1 when wrong). Flags: -n N (values, default 1 << 20), -p P (pieces, default 8),
// -reps R (launches of histogram, default 10), -collective.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "legion.h"

using namespace Legion;

enum TaskIDs { TOP_LEVEL_TASK_ID, FILL_TASK_ID, HISTOGRAM_TASK_ID, SHOW_TASK_ID };
enum FieldIDs { FID_VALUE = 1, FID_COUNT };
static const int NBINS = 64;

void fill_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_WRITE_DISCARD, int, 1> value(regions[0], FID_VALUE);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++)
    value[*p] = int(((unsigned long long)p[0] * 2654435761ULL >> 7) % NBINS);
}

void histogram_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_READ_ONLY, int, 1> value(regions[0], FID_VALUE);
  const ReductionAccessor<SumReduction<int64_t>, false, 1, coord_t, Realm::AffineAccessor<int64_t, 1, coord_t>> bins(
      regions[1], FID_COUNT, LEGION_REDOP_SUM_INT64);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) bins[Point<1>(value[*p])] <<= 1;
}

int64_t show_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_READ_ONLY, int64_t, 1> count(regions[0], FID_COUNT);
  int64_t total = 0;
  for (int b = 0; b < NBINS; b++) total += count[b];
  return total;
}

void top_level_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  long long n = 1 << 20, pieces = 8, reps = 10;
  bool collective = false;
  const InputArgs &args = Runtime::get_input_args();
  for (int i = 1; i < args.argc; i++) {
    if (!std::strcmp(args.argv[i], "-collective")) collective = true;
    if (i + 1 == args.argc) break;
    if (!std::strcmp(args.argv[i], "-n")) n = std::atoll(args.argv[i + 1]);
    if (!std::strcmp(args.argv[i], "-p")) pieces = std::atoll(args.argv[i + 1]);
    if (!std::strcmp(args.argv[i], "-reps")) reps = std::atoll(args.argv[i + 1]);
  }
  IndexSpace values_is = runtime->create_index_space(ctx, Rect<1>(0, n - 1));
  IndexSpace bins_is = runtime->create_index_space(ctx, Rect<1>(0, NBINS - 1));
  FieldSpace values_fs = runtime->create_field_space(ctx), bins_fs = runtime->create_field_space(ctx);
  {
    FieldAllocator allocator = runtime->create_field_allocator(ctx, values_fs);
    allocator.allocate_field(sizeof(int), FID_VALUE);
    runtime->attach_name(values_fs, FID_VALUE, "value");
  }
  {
    FieldAllocator allocator = runtime->create_field_allocator(ctx, bins_fs);
    allocator.allocate_field(sizeof(int64_t), FID_COUNT);
    runtime->attach_name(bins_fs, FID_COUNT, "count");
  }
  LogicalRegion data = runtime->create_logical_region(ctx, values_is, values_fs);
  LogicalRegion bins = runtime->create_logical_region(ctx, bins_is, bins_fs);
  runtime->attach_name(data, "data");
  runtime->attach_name(bins, "bins");
  IndexSpace color_is = runtime->create_index_space(ctx, Rect<1>(0, pieces - 1));
  IndexPartition ip = runtime->create_equal_partition(ctx, values_is, color_is);
  LogicalPartition lp = runtime->get_logical_partition(ctx, data, ip);
  runtime->attach_name(lp, "pieces");

  IndexLauncher fill(FILL_TASK_ID, color_is, UntypedBuffer(), ArgumentMap());
  fill.add_region_requirement(RegionRequirement(lp, 0, LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, data));
  fill.add_field(0, FID_VALUE);
  runtime->execute_index_space(ctx, fill);
  runtime->fill_field<int64_t>(ctx, bins, bins, FID_COUNT, 0);
  for (long long r = 0; r < reps; r++) {
    IndexLauncher histogram(HISTOGRAM_TASK_ID, color_is, UntypedBuffer(), ArgumentMap());
    histogram.add_region_requirement(RegionRequirement(lp, 0, LEGION_READ_ONLY, LEGION_EXCLUSIVE, data));
    histogram.add_field(0, FID_VALUE);
    // One region for every point: a region requirement, not a partition's.
    histogram.add_region_requirement(RegionRequirement(
        bins, LEGION_REDOP_SUM_INT64, collective ? LEGION_COLLECTIVE_SIMULTANEOUS : LEGION_SIMULTANEOUS, bins));
    histogram.add_field(1, FID_COUNT);
    runtime->execute_index_space(ctx, histogram);
  }
  TaskLauncher show(SHOW_TASK_ID, UntypedBuffer());
  show.add_region_requirement(RegionRequirement(bins, LEGION_READ_ONLY, LEGION_EXCLUSIVE, bins));
  show.add_field(0, FID_COUNT);
  const int64_t total = runtime->execute_task(ctx, show).get_result<int64_t>();
  const bool ok = total == n * reps;
  std::printf("HIST %s total %lld expected %lld\n", ok ? "OK" : "WRONG", (long long)total, n * reps);
  runtime->destroy_logical_region(ctx, data);
  runtime->destroy_logical_region(ctx, bins);
  runtime->destroy_field_space(ctx, values_fs);
  runtime->destroy_field_space(ctx, bins_fs);
  runtime->destroy_index_space(ctx, values_is);
  runtime->destroy_index_space(ctx, bins_is);
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
    TaskVariantRegistrar registrar(FILL_TASK_ID, "fill");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf();
    Runtime::preregister_task_variant<fill_task>(registrar, "fill");
  }
  {
    TaskVariantRegistrar registrar(HISTOGRAM_TASK_ID, "histogram");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf();
    Runtime::preregister_task_variant<histogram_task>(registrar, "histogram");
  }
  {
    TaskVariantRegistrar registrar(SHOW_TASK_ID, "show");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf();
    Runtime::preregister_task_variant<int64_t, show_task>(registrar, "show");
  }
  return Runtime::start(argc, argv);
}
