// probe: prints the machine as Legion sees it, as one JSON document (docs/interfaces.md,
// schema mapperopt.machine/1): nodes, processors of each kind per node, memories with capacity and the
// processors (by per-node index of their kind, in Realm's enumeration order) that have affinity to each.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "legion.h"

using namespace Legion;

enum TaskIDs { PROBE_TASK_ID = 1 };

static const char *proc_kind_name(Processor::Kind kind) {
  switch (kind) {
    case Processor::LOC_PROC: return "CPU";
    case Processor::TOC_PROC: return "GPU";
    case Processor::UTIL_PROC: return "UTIL";
    case Processor::IO_PROC: return "IO";
    case Processor::PY_PROC: return "PY";
    case Processor::OMP_PROC: return "OMP";
    default: return nullptr;
  }
}

static const char *mem_kind_name(Memory::Kind kind) {
  switch (kind) {
    case Memory::SYSTEM_MEM: return "SYSMEM";
    case Memory::GPU_FB_MEM: return "FBMEM";
    case Memory::Z_COPY_MEM: return "ZCMEM";
    case Memory::REGDMA_MEM: return "RDMEM";
    case Memory::SOCKET_MEM: return "SOCKMEM";
    default: return nullptr;  // internal memories (GPU dynamic, managed, disk, ...) are not DSL kinds
  }
}

void probe_task(const Task *, const std::vector<PhysicalRegion> &, Context, Runtime *) {
  Machine machine = Machine::get_machine();
  const unsigned nodes = machine.get_address_space_count();
  const char *kinds[] = {"CPU", "GPU", "UTIL", "IO", "PY", "OMP"};
  // (node, kind) -> processors in enumeration order; a processor's index is its position here.
  std::map<std::pair<unsigned, std::string>, std::vector<Processor>> procs;
  for (Machine::ProcessorQuery q(machine); Processor p : q) {
    const char *name = proc_kind_name(p.kind());
    if (name) procs[{p.address_space(), name}].push_back(p);
  }
  std::string out = "{\"schema\": \"mapperopt.machine/1\", \"nodes\": " + std::to_string(nodes) + ", \"processors\": {";
  for (size_t k = 0; k < 6; k++) {
    out += std::string(k ? ", " : "") + "\"" + kinds[k] + "\": [";
    for (unsigned n = 0; n < nodes; n++)
      out += (n ? ", " : "") + std::to_string(procs[{n, kinds[k]}].size());
    out += "]";
  }
  out += "}, \"memories\": [";
  bool first = true;
  for (Machine::MemoryQuery q(machine); Memory m : q) {
    const char *name = mem_kind_name(m.kind());
    if (!name || m.capacity() == 0) continue;
    out += std::string(first ? "" : ", ") + "{\"kind\": \"" + name + "\", \"node\": " +
           std::to_string(m.address_space()) + ", \"capacity\": " + std::to_string(m.capacity()) + ", \"procs\": {";
    first = false;
    bool first_kind = true;
    for (const char *kind : {"CPU", "GPU", "IO", "PY", "OMP"}) {
      const auto &list = procs[{m.address_space(), kind}];
      std::string indices;
      for (size_t i = 0; i < list.size(); i++)
        if (machine.has_affinity(list[i], m)) indices += (indices.empty() ? "" : ", ") + std::to_string(i);
      if (indices.empty()) continue;
      out += std::string(first_kind ? "" : ", ") + "\"" + kind + "\": [" + indices + "]";
      first_kind = false;
    }
    out += "}}";
  }
  out += "]}\n";
  fputs(out.c_str(), stdout);
  fflush(stdout);
}

int main(int argc, char **argv) {
  Runtime::set_top_level_task_id(PROBE_TASK_ID);
  TaskVariantRegistrar registrar(PROBE_TASK_ID, "probe");
  registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
  Runtime::preregister_task_variant<probe_task>(registrar, "probe");
  return Runtime::start(argc, argv);
}
