// A mapper that says why on standard error, then calls abort() when it maps its first leaf task, as a program's own
// failed check does: the process dies of SIGABRT after a message of its own. Loaded into a benchmark with `-mapper`;
// built and run by tests/autoguide/capture.py, recipe circuit-aborting_mapper.
#include <cstdio>
#include <cstdlib>

#include "legion.h"
#include "mappers/default_mapper.h"
#include "mapperopt_abi.h"

using namespace Legion;
using namespace Legion::Mapping;

namespace {

class AbortMapper : public DefaultMapper {
 public:
  AbortMapper(MapperRuntime *rt, Machine machine, Processor local) : DefaultMapper(rt, machine, local, "abort") {}

  void map_task(const MapperContext ctx, const Task &task, const MapTaskInput &input, MapTaskOutput &output) override {
    if (task.get_depth() > 0) {
      std::fprintf(stderr, "abort_mapper: giving up on task %s\n", task.get_task_name());
      std::fflush(stderr);
      std::abort();
    }
    DefaultMapper::map_task(ctx, task, input, output);
  }
};

void register_mappers(Machine machine, Runtime *runtime, const std::set<Processor> &local_procs) {
  for (Processor p : local_procs)
    runtime->replace_default_mapper(new AbortMapper(runtime->get_mapper_runtime(), machine, p), p);
}

}  // namespace

extern "C" {
int mapperopt_abi_version(void) { return MAPPEROPT_ABI_VERSION; }
const char *mapperopt_legion_version(void) { return LEGION_VERSION; }
void mapperopt_register_mapper(void) { Runtime::add_registration_callback(register_mappers); }
}
