// A mapper that picks a task's GPU variant while the task runs on a CPU, as a mapper that confuses processor kinds
// does. Loaded into a benchmark with `-mapper` (with -lg:safe_mapper Legion checks the choice); built and run by
// tests/autoguide/capture.py, recipe stencil-gpu_variant_on_cpu.
#include <vector>

#include "legion.h"
#include "mappers/default_mapper.h"
#include "mapperopt_abi.h"

using namespace Legion;
using namespace Legion::Mapping;

namespace {

class GpuVariantMapper : public DefaultMapper {
 public:
  GpuVariantMapper(MapperRuntime *rt, Machine machine, Processor local)
      : DefaultMapper(rt, machine, local, "autoguide_gpu_variant") {}

  void map_task(const MapperContext ctx, const Task &task, const MapTaskInput &input, MapTaskOutput &output) override {
    DefaultMapper::map_task(ctx, task, input, output);
    std::vector<VariantID> gpu;
    runtime->find_valid_variants(ctx, task.task_id, gpu, Processor::TOC_PROC);
    if (!gpu.empty()) output.chosen_variant = gpu[0];
  }
};

void register_mappers(Machine machine, Runtime *runtime, const std::set<Processor> &local_procs) {
  for (Processor p : local_procs)
    runtime->replace_default_mapper(new GpuVariantMapper(runtime->get_mapper_runtime(), machine, p), p);
}

}  // namespace

extern "C" {
int mapperopt_abi_version(void) { return MAPPEROPT_ABI_VERSION; }
const char *mapperopt_legion_version(void) { return LEGION_VERSION; }
void mapperopt_register_mapper(void) { Runtime::add_registration_callback(register_mappers); }
}
