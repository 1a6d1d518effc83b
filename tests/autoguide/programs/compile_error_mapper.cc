// A mapper whose C++ does not compile (a processor kind returned where a processor is expected), standing in for
// generated code that fails to build. Built by tests/autoguide/capture.py, recipe cxx-compile-error.
#include "legion.h"
#include "mappers/default_mapper.h"

using namespace Legion;
using namespace Legion::Mapping;

class BrokenMapper : public DefaultMapper {
 public:
  BrokenMapper(MapperRuntime *rt, Machine machine, Processor local) : DefaultMapper(rt, machine, local, "broken") {}

  Processor default_policy_select_initial_processor(MapperContext ctx, const Task &task) override {
    return local_cpus[task.index_point.point_data[0] % local_cpus.size()].kind();
  }
};
