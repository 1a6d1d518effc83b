// plain: a tiny Legion application that knows nothing about mapperopt (no -mapper flag, no mapperopt headers). The
// compiler's tests put a compiled mapper into it with the LD_PRELOAD shim (docs/compiler.md). It fills a named
// region through an index launch of `fill` over a named partition and prints, for each point, the processor that
// ran it ("PLAIN_RUN <point> <processor index among the node's CPUs>"). Like many programs, it asks Legion's default
// mapper how many CPUs there are (tunable DEFAULT_TUNABLE_LOCAL_CPUS, read as 8 bytes) and prints "PLAIN_CPUS <n>".
#include <cstdio>

#include "legion.h"
#include "mappers/default_mapper.h"

using namespace Legion;

enum { TOP_ID = 1, FILL_ID = 2 };
enum { FID_V = 1 };

void fill_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  const Processor me = runtime->get_executing_processor(ctx);
  Machine::ProcessorQuery cpus(Machine::get_machine());
  cpus.only_kind(Processor::LOC_PROC).same_address_space_as(me);
  int index = 0;
  for (Processor p : cpus) {
    if (p == me) break;
    index++;
  }
  const FieldAccessor<LEGION_WRITE_DISCARD, int, 1> v(regions[0], FID_V);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) v[*p] = int(p[0]);
  std::printf("PLAIN_RUN %lld %d\n", (long long)task->index_point[0], index);
  std::fflush(stdout);
}

void top_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  const size_t cpus = runtime->select_tunable_value(ctx, Mapping::DefaultMapper::DEFAULT_TUNABLE_LOCAL_CPUS)
                          .get_result<size_t>();
  std::printf("PLAIN_CPUS %zu\n", cpus);
  IndexSpace is = runtime->create_index_space(ctx, Rect<1>(0, 1023));
  FieldSpace fs = runtime->create_field_space(ctx);
  runtime->create_field_allocator(ctx, fs).allocate_field(sizeof(int), FID_V);
  LogicalRegion data = runtime->create_logical_region(ctx, is, fs);
  runtime->attach_name(data, "data");
  IndexSpace colors = runtime->create_index_space(ctx, Rect<1>(0, 3));
  LogicalPartition parts = runtime->get_logical_partition(ctx, data, runtime->create_equal_partition(ctx, is, colors));
  runtime->attach_name(parts, "parts");
  IndexTaskLauncher launcher(FILL_ID, colors, UntypedBuffer(), ArgumentMap());
  launcher.add_region_requirement(RegionRequirement(parts, 0, LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, data));
  launcher.add_field(0, FID_V);
  runtime->execute_index_space(ctx, launcher).wait_all_results();
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
  return Runtime::start(argc, argv);
}
