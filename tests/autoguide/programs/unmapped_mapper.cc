// A mapper that leaves region requirement 0 of every leaf task without an instance, as a mapper that ignores a
// failed allocation does: Legion then aborts without a message. Loaded into a benchmark with
// `-mapper`; built and run by tests/autoguide/capture.py, recipe stencil-unmapped_requirement.
#include "legion.h"
#include "mappers/default_mapper.h"
#include "mapperopt_abi.h"

using namespace Legion;
using namespace Legion::Mapping;

namespace {

class UnmappedMapper : public DefaultMapper {
 public:
  UnmappedMapper(MapperRuntime *rt, Machine machine, Processor local)
      : DefaultMapper(rt, machine, local, "autoguide_unmapped") {}

  void map_task(const MapperContext ctx, const Task &task, const MapTaskInput &input, MapTaskOutput &output) override {
    DefaultMapper::map_task(ctx, task, input, output);
    if (!task.regions.empty() && !output.chosen_instances.empty() && !output.chosen_instances[0].empty() &&
        !output.chosen_instances[0][0].is_virtual_instance())
      output.chosen_instances[0].clear();
  }
};

void register_mappers(Machine machine, Runtime *runtime, const std::set<Processor> &local_procs) {
  for (Processor p : local_procs)
    runtime->replace_default_mapper(new UnmappedMapper(runtime->get_mapper_runtime(), machine, p), p);
}

}  // namespace

extern "C" {
int mapperopt_abi_version(void) { return MAPPEROPT_ABI_VERSION; }
const char *mapperopt_legion_version(void) { return LEGION_VERSION; }
void mapperopt_register_mapper(void) { Runtime::add_registration_callback(register_mappers); }
}
