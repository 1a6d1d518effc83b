// shards: a small Legion program in the SPMD style of Legion's examples/spmd_cgsolver. A must-epoch launch starts one
// `shard` task per piece (-s S, default 2); every shard names every piece with simultaneous coherence and no access
// (NO_ACCESS_FLAG), as shards that exchange data through phase barriers do, so the shards share each piece's region.
// Legion's default mapper cannot map such a launch with two shards or more (its must-epoch mapping looks for a task
// that accesses a shared region to choose the instance's memory, finds none and aborts); with -s 1 nothing is shared
// and the program prints "shards OK" and exits 0. Run it with at least S CPUs (each shard takes one).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "legion.h"

using namespace Legion;

enum TaskIDs { TOP_LEVEL_TASK_ID, SHARD_TASK_ID };
enum FieldIDs { FID_VALUE = 1 };

void shard_task(const Task *, const std::vector<PhysicalRegion> &, Context, Runtime *) {}

void top_level_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  long long shards = 2;
  const InputArgs &args = Runtime::get_input_args();
  for (int i = 1; i + 1 < args.argc; i++)
    if (!std::strcmp(args.argv[i], "-s")) shards = std::atoll(args.argv[i + 1]);
  IndexSpace is = runtime->create_index_space(ctx, Rect<1>(0, 64 * shards - 1));
  FieldSpace fs = runtime->create_field_space(ctx);
  runtime->create_field_allocator(ctx, fs).allocate_field(sizeof(double), FID_VALUE);
  LogicalRegion lr = runtime->create_logical_region(ctx, is, fs);
  runtime->fill_field<double>(ctx, lr, lr, FID_VALUE, 0.0);
  IndexPartition ip = runtime->create_equal_partition(ctx, is, runtime->create_index_space(ctx, Rect<1>(0, shards - 1)));
  LogicalPartition lp = runtime->get_logical_partition(ctx, lr, ip);
  MustEpochLauncher epoch;
  for (long long s = 0; s < shards; s++) {
    TaskLauncher launcher(SHARD_TASK_ID, UntypedBuffer());
    for (long long piece = 0; piece < shards; piece++)
      launcher.add_region_requirement(
          RegionRequirement(runtime->get_logical_subregion_by_color(ctx, lp, piece), LEGION_READ_WRITE,
                            LEGION_SIMULTANEOUS, lr)
              .add_field(FID_VALUE)
              .add_flags(LEGION_NO_ACCESS_FLAG));
    epoch.add_single_task(DomainPoint(Point<1>(s)), launcher);
  }
  runtime->execute_must_epoch(ctx, epoch).wait_all_results();
  std::printf("shards OK\n");
}

int main(int argc, char **argv) {
  Runtime::set_top_level_task_id(TOP_LEVEL_TASK_ID);
  {
    TaskVariantRegistrar registrar(TOP_LEVEL_TASK_ID, "top_level");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    Runtime::preregister_task_variant<top_level_task>(registrar, "top_level");
  }
  {
    TaskVariantRegistrar registrar(SHARD_TASK_ID, "shard");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf();
    Runtime::preregister_task_variant<shard_task>(registrar, "shard");
  }
  return Runtime::start(argc, argv);
}
