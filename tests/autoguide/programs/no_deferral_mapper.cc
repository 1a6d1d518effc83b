// A mapper whose select_tasks_to_map holds back every ready task without giving Legion an event to wait on, as a
// broken InstanceLimit implementation does. Loaded into a benchmark with `-mapper`; built and run by
// tests/autoguide/capture.py, recipe circuit-held_back_tasks.
#include "legion.h"
#include "mappers/default_mapper.h"
#include "mapperopt_abi.h"

using namespace Legion;
using namespace Legion::Mapping;

namespace {

class NoDeferralMapper : public DefaultMapper {
 public:
  NoDeferralMapper(MapperRuntime *rt, Machine machine, Processor local)
      : DefaultMapper(rt, machine, local, "autoguide_no_deferral") {}

  // Maps only the top-level task; every other ready task is held back and no deferral event is returned.
  void select_tasks_to_map(const MapperContext ctx, const SelectMappingInput &input,
                           SelectMappingOutput &output) override {
    for (const Task *task : input.ready_tasks)
      if (task->get_depth() == 0) output.map_tasks.insert(task);
  }
};

void register_mappers(Machine machine, Runtime *runtime, const std::set<Processor> &local_procs) {
  for (Processor p : local_procs)
    runtime->replace_default_mapper(new NoDeferralMapper(runtime->get_mapper_runtime(), machine, p), p);
}

}  // namespace

extern "C" {
int mapperopt_abi_version(void) { return MAPPEROPT_ABI_VERSION; }
const char *mapperopt_legion_version(void) { return LEGION_VERSION; }
void mapperopt_register_mapper(void) { Runtime::add_registration_callback(register_mappers); }
}
