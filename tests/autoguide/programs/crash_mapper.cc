// A mapper that dereferences a null pointer when it maps its first leaf task, as a buggy mapper can: the process
// dies of SIGSEGV without any message. Loaded into a benchmark with `-mapper`; built and run by
// tests/autoguide/capture.py, recipe circuit-crashing_mapper.
#include "legion.h"
#include "mappers/default_mapper.h"
#include "mapperopt_abi.h"

using namespace Legion;
using namespace Legion::Mapping;

namespace {

class CrashMapper : public DefaultMapper {
 public:
  CrashMapper(MapperRuntime *rt, Machine machine, Processor local) : DefaultMapper(rt, machine, local, "crash") {}

  void map_task(const MapperContext ctx, const Task &task, const MapTaskInput &input, MapTaskOutput &output) override {
    if (task.get_depth() > 0) {
      volatile int *nowhere = nullptr;
      *nowhere = 1;
    }
    DefaultMapper::map_task(ctx, task, input, output);
  }
};

void register_mappers(Machine machine, Runtime *runtime, const std::set<Processor> &local_procs) {
  for (Processor p : local_procs)
    runtime->replace_default_mapper(new CrashMapper(runtime->get_mapper_runtime(), machine, p), p);
}

}  // namespace

extern "C" {
int mapperopt_abi_version(void) { return MAPPEROPT_ABI_VERSION; }
const char *mapperopt_legion_version(void) { return LEGION_VERSION; }
void mapperopt_register_mapper(void) { Runtime::add_registration_callback(register_mappers); }
}
