// foreign: a small Legion program written the way Legion programs usually are, knowing nothing of mapperopt. Tests
// put a DSL mapper into it with the LD_PRELOAD shim. On purpose it:
//  - registers its own mapper in main (a DefaultMapper subclass that puts every task on the first CPU and answers
//    tunable 11), as many programs do;
//  - has task names with spaces ("Initialize Nodes");
//  - names its data only through index spaces, an index partition and a field space (no logical region names);
//  - asks its mapper for a tunable (ID 11: the number of pieces, read as an int);
//  - launches two tasks in a must-epoch launch.
// Each leaf task prints where it ran: "RAN <task> <point or -1> <CPU index> <memory kind of its instance>".
// At the end it prints "checksum <value> OK" when the sum is right (or "... WRONG") and exits 0 (1 when wrong).
// Flags: -n N (nodes, default 4000), -steps S (default 3).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "legion.h"
#include "mappers/default_mapper.h"

using namespace Legion;
using namespace Legion::Mapping;

enum TaskIDs { TOP_LEVEL_TASK_ID, INIT_TASK_ID, STEP_TASK_ID, SUM_TASK_ID, EPOCH_TASK_ID };
enum FieldIDs { FID_VALUE = 100, FID_WEIGHT };
enum { PIECES_TUNABLE = 11 };

static int cpu_index(Context ctx, Runtime *runtime) {
  const Processor me = runtime->get_executing_processor(ctx);
  Machine::ProcessorQuery cpus(Machine::get_machine());
  cpus.only_kind(Processor::LOC_PROC).same_address_space_as(me);
  int index = 0;
  for (Processor p : cpus) {
    if (p == me) break;
    index++;
  }
  return index;
}

static const char *memory_kind(const PhysicalRegion &region) {
  std::set<Memory> memories;
  region.get_memories(memories);
  if (memories.empty()) return "NONE";
  switch (memories.begin()->kind()) {
    case Memory::SYSTEM_MEM: return "SYSMEM";
    case Memory::REGDMA_MEM: return "RDMEM";
    case Memory::SOCKET_MEM: return "SOCKMEM";
    case Memory::Z_COPY_MEM: return "ZCMEM";
    default: return "OTHER";
  }
}

static void report(const Task *task, const PhysicalRegion *region, Context ctx, Runtime *runtime) {
  const long long point = task->is_index_space ? (long long)task->index_point[0] : -1;
  std::printf("RAN %s %lld %d %s\n", task->get_task_name(), point, cpu_index(ctx, runtime),
              region ? memory_kind(*region) : "NONE");
  std::fflush(stdout);
}

void init_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  const FieldAccessor<LEGION_WRITE_DISCARD, double, 1> value(regions[0], FID_VALUE);
  const FieldAccessor<LEGION_WRITE_DISCARD, double, 1> weight(regions[0], FID_WEIGHT);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) {
    value[*p] = double(p[0]);
    weight[*p] = 1.0;
  }
  report(task, &regions[0], ctx, runtime);
}

void step_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  const FieldAccessor<LEGION_READ_WRITE, double, 1> value(regions[0], FID_VALUE);
  const FieldAccessor<LEGION_READ_ONLY, double, 1> weight(regions[1], FID_WEIGHT);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++)
    value[*p] = value[*p] + weight[*p];
  report(task, &regions[0], ctx, runtime);
}

double sum_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  const FieldAccessor<LEGION_READ_ONLY, double, 1> value(regions[0], FID_VALUE);
  double sum = 0;
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) sum += value[*p];
  report(task, &regions[0], ctx, runtime);
  return sum;
}

void epoch_task(const Task *task, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  report(task, nullptr, ctx, runtime);
}

void top_level_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  long long n = 4000, steps = 3;
  const InputArgs &args = Runtime::get_input_args();
  for (int i = 1; i + 1 < args.argc; i++) {
    if (!std::strcmp(args.argv[i], "-n")) n = std::atoll(args.argv[i + 1]);
    if (!std::strcmp(args.argv[i], "-steps")) steps = std::atoll(args.argv[i + 1]);
  }
  const int pieces = runtime->select_tunable_value(ctx, PIECES_TUNABLE, 0, 0).get_result<int>();
  std::printf("pieces %d\n", pieces);

  IndexSpace node_is = runtime->create_index_space(ctx, Rect<1>(0, n - 1));
  runtime->attach_name(node_is, "node space");
  FieldSpace node_fs = runtime->create_field_space(ctx);
  runtime->attach_name(node_fs, "node_fields");
  {
    FieldAllocator allocator = runtime->create_field_allocator(ctx, node_fs);
    allocator.allocate_field(sizeof(double), FID_VALUE);
    runtime->attach_name(node_fs, FID_VALUE, "value");
    allocator.allocate_field(sizeof(double), FID_WEIGHT);
    runtime->attach_name(node_fs, FID_WEIGHT, "weight");
  }
  LogicalRegion nodes = runtime->create_logical_region(ctx, node_is, node_fs);
  IndexSpace color_is = runtime->create_index_space(ctx, Rect<1>(0, pieces - 1));
  IndexPartition node_ip = runtime->create_equal_partition(ctx, node_is, color_is);
  runtime->attach_name(node_ip, "node_pieces");
  LogicalPartition node_lp = runtime->get_logical_partition(ctx, nodes, node_ip);

  IndexLauncher init(INIT_TASK_ID, color_is, UntypedBuffer(), ArgumentMap());
  init.add_region_requirement(RegionRequirement(node_lp, 0, LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, nodes));
  init.add_field(0, FID_VALUE);
  init.add_field(0, FID_WEIGHT);
  runtime->execute_index_space(ctx, init);

  for (long long s = 0; s < steps; s++) {
    IndexLauncher step(STEP_TASK_ID, color_is, UntypedBuffer(), ArgumentMap());
    step.add_region_requirement(RegionRequirement(node_lp, 0, LEGION_READ_WRITE, LEGION_EXCLUSIVE, nodes));
    step.add_field(0, FID_VALUE);
    step.add_region_requirement(RegionRequirement(node_lp, 0, LEGION_READ_ONLY, LEGION_EXCLUSIVE, nodes));
    step.add_field(1, FID_WEIGHT);
    runtime->execute_index_space(ctx, step);
  }

  MustEpochLauncher epoch;
  for (int i = 0; i < 2; i++) epoch.add_single_task(DomainPoint(i), TaskLauncher(EPOCH_TASK_ID, UntypedBuffer()));
  runtime->execute_must_epoch(ctx, epoch).wait_all_results();

  TaskLauncher sum(SUM_TASK_ID, UntypedBuffer());
  sum.add_region_requirement(RegionRequirement(nodes, LEGION_READ_ONLY, LEGION_EXCLUSIVE, nodes));
  sum.add_field(0, FID_VALUE);
  const double total = runtime->execute_task(ctx, sum).get_result<double>();
  const double expected = double(n) * double(n - 1) / 2 + double(n) * double(steps);
  const bool ok = total == expected;
  std::printf("checksum %.1f %s\n", total, ok ? "OK" : "WRONG");
  runtime->destroy_logical_region(ctx, nodes);
  runtime->destroy_field_space(ctx, node_fs);
  runtime->destroy_index_space(ctx, node_is);
  runtime->destroy_index_space(ctx, color_is);
  if (!ok) std::exit(1);
}

// The program's own mapper: everything on the first CPU, and an answer to its tunable.
class FirstCpuMapper : public DefaultMapper {
 public:
  FirstCpuMapper(MapperRuntime *rt, Machine machine, Processor local)
      : DefaultMapper(rt, machine, local, "first_cpu_mapper") {
    Machine::ProcessorQuery cpus(machine);
    cpus.only_kind(Processor::LOC_PROC).local_address_space();
    first_cpu = cpus.first();
  }
  Processor default_policy_select_initial_processor(MapperContext, const Task &) override { return first_cpu; }
  void default_policy_select_target_processors(MapperContext, const Task &, std::vector<Processor> &target) override {
    target.assign(1, first_cpu);
  }
  void slice_task(const MapperContext, const Task &, const SliceTaskInput &input, SliceTaskOutput &output) override {
    output.slices.push_back(TaskSlice(input.domain, first_cpu, false, false));
  }
  void select_tunable_value(const MapperContext ctx, const Task &task, const SelectTunableInput &input,
                            SelectTunableOutput &output) override {
    if (input.tunable_id != PIECES_TUNABLE) {
      DefaultMapper::select_tunable_value(ctx, task, input, output);
      return;
    }
    int *value = static_cast<int *>(std::malloc(sizeof(int)));
    *value = 2;
    output.value = value;
    output.size = sizeof(int);
  }

 private:
  Processor first_cpu;
};

static void register_mappers(Machine machine, Runtime *runtime, const std::set<Processor> &local_procs) {
  for (Processor p : local_procs)
    runtime->replace_default_mapper(new FirstCpuMapper(runtime->get_mapper_runtime(), machine, p), p);
}

int main(int argc, char **argv) {
  Runtime::set_top_level_task_id(TOP_LEVEL_TASK_ID);
  {
    TaskVariantRegistrar registrar(TOP_LEVEL_TASK_ID, "top_level");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    Runtime::preregister_task_variant<top_level_task>(registrar, "top_level");
  }
  {
    TaskVariantRegistrar registrar(INIT_TASK_ID, "Initialize Nodes");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf();
    Runtime::preregister_task_variant<init_task>(registrar, "Initialize Nodes");
  }
  {
    TaskVariantRegistrar registrar(STEP_TASK_ID, "Update Values");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf();
    Runtime::preregister_task_variant<step_task>(registrar, "Update Values");
  }
  {
    TaskVariantRegistrar registrar(SUM_TASK_ID, "sum");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf();
    Runtime::preregister_task_variant<double, sum_task>(registrar, "sum");
  }
  {
    TaskVariantRegistrar registrar(EPOCH_TASK_ID, "epoch worker");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf();
    Runtime::preregister_task_variant<epoch_task>(registrar, "epoch worker");
  }
  Runtime::add_registration_callback(register_mappers);
  return Runtime::start(argc, argv);
}
