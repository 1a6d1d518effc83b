// Test-only mapper for the Stencil application: Legion's DefaultMapper with every new instance forced to the
// layout named by the environment variable STENCIL_TEST_LAYOUT (SOA_F, SOA_C, AOS_F or AOS_C; default SOA_F).
// It checks that the GPU variants accept any layout and that the CPU `stencil` variant reports a non-unit x stride
// with the message AutoGuide keys on. Built as a shared library and loaded with `-mapper PATH.so`; not a product
// mapper (those come from the DSL compiler).
#include <cstdlib>
#include <cstring>
#include <vector>

#include "legion.h"
#include "mappers/default_mapper.h"
#include "mapperopt_abi.h"

using namespace Legion;
using namespace Legion::Mapping;

namespace {

class LayoutTestMapper : public DefaultMapper {
 public:
  LayoutTestMapper(MapperRuntime *rt, Machine machine, Processor local)
      : DefaultMapper(rt, machine, local, "stencil_layout_test") {
    const char *layout = std::getenv("STENCIL_TEST_LAYOUT");
    layout = layout ? layout : "SOA_F";
    aos_ = std::strncmp(layout, "AOS", 3) == 0;
    c_order_ = std::strlen(layout) > 4 && layout[4] == 'C';
  }

  // Replaces whatever ordering the caller (or a variant's layout constraint) asked for.
  void default_policy_select_constraints(MapperContext ctx, LayoutConstraintSet &constraints, Memory target_memory,
                                         const RegionRequirement &req) override {
    const int dim = req.region.get_index_space().get_dim();
    std::vector<DimensionKind> dims;
    for (int d = 0; d < dim; d++) dims.push_back(DimensionKind(LEGION_DIM_X + (c_order_ ? dim - 1 - d : d)));
    if (aos_)
      dims.insert(dims.begin(), LEGION_DIM_F);
    else
      dims.push_back(LEGION_DIM_F);
    constraints.ordering_constraint = OrderingConstraint(dims, false);
    DefaultMapper::default_policy_select_constraints(ctx, constraints, target_memory, req);
  }

 private:
  bool aos_ = false, c_order_ = false;
};

void register_mappers(Machine machine, Runtime *runtime, const std::set<Processor> &local_procs) {
  for (Processor p : local_procs)
    runtime->replace_default_mapper(new LayoutTestMapper(runtime->get_mapper_runtime(), machine, p), p);
}

}  // namespace

extern "C" {
int mapperopt_abi_version(void) { return MAPPEROPT_ABI_VERSION; }
const char *mapperopt_legion_version(void) { return LEGION_VERSION; }
void mapperopt_register_mapper(void) { Runtime::add_registration_callback(register_mappers); }
}
