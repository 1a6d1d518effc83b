// mapperopt::DslMapper: the DefaultMapper subclass that carries out a DSL policy (docs/dsl-reference.md §5-§7; docs/compiler.md).
// A generated mapper library only provides the policy's tables and functions (mapperopt_dsl.h) and calls
// register_policy(); everything that talks to Legion is here, compiled once per Legion version.
//
// Process-wide state (`Shared`): the policy, the machine as the DSL sees it, the global variables of the load phase,
// the placement trace (-mapper-trace), the per-task profile (-mapper-profile), per-processor load for processor sets,
// and "print once" bookkeeping. One DslMapper object per local processor holds per-processor state (InstanceLimit
// counters, caches) and runs with the serialized non-reentrant sync model, so its own state needs no locks.
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "legion.h"
#include "mappers/default_mapper.h"
#include "mapperopt_dsl.h"

namespace mapperopt {
namespace dsl {

using namespace Legion;
using namespace Legion::Mapping;

const char *legion_version() { return LEGION_VERSION; }

namespace {

const char *const MAPPER_NAME = "mapperopt_dsl";

// ------------------------------------------------------------------------------------------ kinds

Processor::Kind realm_proc_kind(Kind k) {
  switch (k) {
    case CPU: return Processor::LOC_PROC;
    case GPU: return Processor::TOC_PROC;
    case OMP: return Processor::OMP_PROC;
    case IO: return Processor::IO_PROC;
    case PY: return Processor::PY_PROC;
    default: return Processor::NO_KIND;
  }
}

Kind dsl_proc_kind(Processor::Kind k) {
  switch (k) {
    case Processor::LOC_PROC: return CPU;
    case Processor::TOC_PROC: return GPU;
    case Processor::OMP_PROC: return OMP;
    case Processor::IO_PROC: return IO;
    case Processor::PY_PROC: return PY;
    default: return ANY;
  }
}

Memory::Kind realm_mem_kind(Kind k) {
  switch (k) {
    case SYSMEM: return Memory::SYSTEM_MEM;
    case FBMEM: return Memory::GPU_FB_MEM;
    case ZCMEM: return Memory::Z_COPY_MEM;
    case RDMEM: return Memory::REGDMA_MEM;
    case SOCKMEM: return Memory::SOCKET_MEM;
    default: return Memory::NO_MEMKIND;
  }
}

Kind dsl_mem_kind(Memory::Kind k) {
  switch (k) {
    case Memory::SYSTEM_MEM: return SYSMEM;
    case Memory::GPU_FB_MEM: return FBMEM;
    case Memory::Z_COPY_MEM: return ZCMEM;
    case Memory::REGDMA_MEM: return RDMEM;
    case Memory::SOCKET_MEM: return SOCKMEM;
    default: return ANY;
  }
}

// The Realm flag that sizes a memory kind, for R403 messages.
const char *size_flag(Kind k) {
  switch (k) {
    case SYSMEM: return "-ll:csize";
    case FBMEM: return "-ll:fsize";
    case ZCMEM: return "-ll:zsize";
    case RDMEM: return "-ll:rsize";
    case SOCKMEM: return "-ll:nsize";
    default: return "";
  }
}

std::string tuple_text(const std::vector<int64_t> &t) { return to_string(Value::tuple(t)); }

std::string json_ints(const std::vector<int64_t> &t) {
  std::string out = "[";
  for (size_t k = 0; k < t.size(); k++) out += (k ? ", " : "") + std::to_string(t[k]);
  return out + "]";
}

std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

[[noreturn]] void die(const std::string &line) {
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  std::abort();
}

// ------------------------------------------------------------------------------------------ shared state

struct ProfileStat {
  long long count = 0;
  long long points = 1;  // the largest launch (index-space volume) the task ran in
  long long total_ns = 0;
  long long max_ns = 0;
};

struct Shared {
  const Policy *policy = nullptr;
  Topology topo;
  std::vector<Value> globals;
  Ctx ctx{nullptr, nullptr};
  std::map<Processor, Proc> coords;                    // every application processor -> DSL coordinates
  std::vector<std::vector<Processor>> procs[NUM_PROC_KINDS];  // [kind][node] in enumeration order
  ShardingID sharding_base = 0;

  std::mutex lock;  // guards everything below
  FILE *trace = nullptr;
  bool profile = false;
  std::map<std::pair<std::string, std::string>, ProfileStat> stats;  // (task, kind)
  std::set<std::string> said;                                        // "print once" keys
  std::map<Processor, long long> load;                               // mapped-but-unfinished tasks from sets
  // Single tasks placed on a member of a set in select_task_options and not yet mapped (a member of this node):
  // their count per member, and the member of each, by task.
  std::map<Processor, long long> chosen;
  std::map<UniqueID, Processor> chosen_task;
  std::set<const void *> matched;            // statement rows that selected something (R453 at exit)
  std::set<std::string> tasks_seen;          // names of the tasks this mapper mapped
  // (region tree, field) that tasks launched or mapped in this process reduce into -> the first such task.
  std::map<std::pair<RegionTreeID, FieldID>, std::string> reduced;
  long long mapped = 0;                      // map_task calls (0 at exit: the mapper was displaced, R454)
  FILE *record = nullptr;                    // MAPPEROPT_RECORD: one JSON line per task and launch kind
  std::set<std::string> recorded;
  std::map<std::string, std::vector<unsigned>> collective;  // task -> collective_requirements() of its index launch
  // The application's own mappers, kept with MAPPEROPT_KEEP_APP_MAPPER=1 for the tasks the DSL does not name
  // (handed over by the LD_PRELOAD shim; NO_PROC: for every processor).
  std::map<Processor, Mapping::Mapper *> app_mappers;
};

Shared *shared = nullptr;  // created by the first registration callback, never freed (used at exit)

std::string source_pos(const Site &s) {
  return std::string(shared->policy->source_name) + ":" + std::to_string(s.line) + ":" + std::to_string(s.col);
}

// Prints a message once per key: `[mapperopt] warning Rnnn: ...` and notes (dsl-reference.md §11.5).
void say_once(const std::string &key, const std::string &line) {
  {
    std::lock_guard<std::mutex> guard(shared->lock);
    if (!shared->said.insert(key).second) return;
  }
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

// Discovery (MAPPEROPT_RECORD): the answer a tunable got, so that DSL mappers can give the same one (`Tunable id =
// value;`) and `check` knows the size the program reads; `legion`: Legion's default mapper gave it, not the program's.
void record_tunable(const Mapper::SelectTunableInput &input, const Mapper::SelectTunableOutput &output, bool legion) {
  const size_t bytes = output.size;
  if (!shared->record || output.value == nullptr || (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)) return;
  int64_t value = 0;
  if (bytes == 1) value = *static_cast<const int8_t *>(output.value);
  if (bytes == 2) value = *static_cast<const int16_t *>(output.value);
  if (bytes == 4) value = *static_cast<const int32_t *>(output.value);
  if (bytes == 8) value = *static_cast<const int64_t *>(output.value);
  const std::string line = "{\"tunable\": " + std::to_string(input.tunable_id) + ", \"bytes\": " +
                           std::to_string(bytes) + ", \"value\": " + std::to_string(value) +
                           (legion ? ", \"legion\": true}\n" : "}\n");
  std::lock_guard<std::mutex> guard(shared->lock);
  std::fputs(line.c_str(), shared->record);
  std::fflush(shared->record);
}

// Records that statement row `rule` selected something (for the R453 notes at exit).
void mark(const void *rule) {
  std::lock_guard<std::mutex> guard(shared->lock);
  shared->matched.insert(rule);
}

// Records the fields of region trees that `task` reduces into. Every task passes here (select_task_options on the
// launching node, map_task where it runs) before a later operation on those fields can map, so collect() knows
// every reduction that may still be pending when a read-only requirement maps.
void note_reductions(const Task &task) {
  for (const RegionRequirement &req : task.regions)
    if (req.privilege == LEGION_REDUCE) {
      std::lock_guard<std::mutex> guard(shared->lock);
      for (FieldID fid : req.privilege_fields)
        shared->reduced.emplace(std::make_pair(req.parent.get_tree_id(), fid), task.get_task_name());
    }
}

bool collective_coherence(const RegionRequirement &req) {
  return (req.prop & LEGION_COLLECTIVE_MASK) == LEGION_COLLECTIVE_MASK;
}

// The requirements of an index launch that Legion maps collectively, each point waiting until every point of the
// launch is mapped: those with collective coherence, and those Legion's default mapper (so the DSL mapper) asks it to
// check, where every point names one region, read or reduced into; not when a point writes a region every point names.
std::vector<unsigned> collective_requirements(const Task &task) {
  std::vector<unsigned> found;
  if (!task.is_index_space) return found;
  auto one_region = [](const RegionRequirement &req) {
    return req.handle_type == LEGION_SINGULAR_PROJECTION ||
           (req.handle_type == LEGION_REGION_PROJECTION && req.projection == 0);
  };
  bool shared_write = false;
  for (const RegionRequirement &req : task.regions)
    if ((req.privilege & LEGION_WRITE_PRIV) && !collective_coherence(req) && one_region(req)) shared_write = true;
  for (unsigned idx = 0; idx < task.regions.size(); idx++) {
    const RegionRequirement &req = task.regions[idx];
    const unsigned privilege = unsigned(req.privilege) & unsigned(LEGION_READ_WRITE);  // without discard masks
    const bool read_or_reduce = privilege == LEGION_READ_PRIV || privilege == LEGION_REDUCE_PRIV;
    if (req.privilege_fields.empty() || req.privilege == LEGION_NO_ACCESS) continue;
    if (collective_coherence(req) || (!shared_write && read_or_reduce && one_region(req))) found.push_back(idx);
  }
  return found;
}

// DSL coordinates of an application processor (read-only after start-up, so no lock).
Proc coord_of(Processor p) {
  auto found = shared->coords.find(p);
  return found == shared->coords.end() ? Proc{dsl_proc_kind(p.kind()), int64_t(p.address_space()), -1} : found->second;
}

std::string proc_name(Processor p) {
  Value v;
  v.type = Value::PROC;
  v.procs.push_back(coord_of(p));
  return to_string(v);
}

std::string machine_text(Kind kind) {
  return "Machine(" + std::string(kind_name(kind)) + ") " +
         tuple_text({shared->topo.nodes, shared->topo.per_node[kind]});
}

// The one-line run-time error of dsl-reference.md §11.1: message, DSL position, then the decision's context.
[[noreturn]] void report(const DslError &e, const std::string &context) {
  // As the evaluator: "; <where>" for an error with a position, then ", <context>" (else "; <context>").
  std::string line = "[mapperopt] error R" + std::to_string(e.code) + ": " + e.message;
  if (e.site.line > 0)
    line += std::string("; ") + (e.site.func ? "in function '" + std::string(e.site.func) + "'" : "at top level") +
            " at " + source_pos(e.site);
  if (!context.empty()) line += (e.site.line > 0 ? ", " : "; ") + context;
  die(line + "\n");
}

void print_profile() {
  std::string out = "MAPPEROPT_PROFILE {\"schema\": \"mapperopt.profile/1\", \"tasks\": [";
  {
    std::lock_guard<std::mutex> guard(shared->lock);
    bool first = true;
    for (const auto &entry : shared->stats) {
      char buffer[256];
      std::snprintf(buffer, sizeof(buffer), ", \"count\": %lld, \"points\": %lld, \"total_s\": %.9g, \"max_s\": %.9g}",
                    entry.second.count, entry.second.points, entry.second.total_ns * 1e-9, entry.second.max_ns * 1e-9);
      out += std::string(first ? "" : ", ") + "{\"task\": " + json_string(entry.first.first) +
             ", \"kind\": " + json_string(entry.first.second) + buffer;
      first = false;
    }
  }
  out += "]}\n";
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
}

// ------------------------------------------------------------------------------------------ selectors

bool task_matches(const char *sel, const std::string &task) { return sel == nullptr || task == sel; }

// Region rank of dsl-reference.md §6.2, or false when the selector does not match requirement `index` with `chain`.
bool region_rank(const RegionSel &sel, unsigned index, const std::vector<std::string> &chain, int &a, int &b) {
  switch (sel.mode) {
    case RegionSel::ANY: a = 0, b = 0; return true;
    case RegionSel::INDEX: a = 2, b = 0; return sel.index == int64_t(index);
    case RegionSel::NAME:
      for (size_t j = 0; j < chain.size(); j++)
        if (chain[j] == sel.name) {
          a = 1, b = -int(j);
          return true;
        }
      return false;
  }
  return false;
}

struct Ranked {
  int key[5];  // task rank, region rank (2), third-field rank, source position
  const void *rule;
  bool operator<(const Ranked &o) const { return std::lexicographical_compare(o.key, o.key + 5, key, key + 5); }
};

// ------------------------------------------------------------------------------------------ the mapper

struct LayoutChoice {
  bool aos = false, c_order = false, exact = false, compact = false;
  bool align = false;
  std::string align_op;
  int64_t align_bytes = 0;
  bool order_set = false, dims_set = false;  // a Layout statement mentions interleaving / dimension order
  // From the task variant's layout constraints (variant_layouts): its ordering when no statement mentions
  // interleaving or dimension order, its alignments when none mentions alignment; `variant`: its constraint sets for
  // the requirement, whose fields, specialization (unless a statement says Compact) and other constraints
  // make_instances follows, and whose memory kind map_region does.
  std::vector<DimensionKind> ordering;
  bool ordering_contiguous = false;
  std::vector<AlignmentConstraint> alignments;
  std::vector<const LayoutConstraintSet *> variant;
};

// Set by the LD_PRELOAD shim, which runs users' programs: a layout aspect no Layout statement mentions follows the
// task variant's layout constraints, as in Legion's default mapper, so that the DSL's defaults never give a program a
// layout or a memory its variant rejects. Benchmarks keep the DSL's defaults (dsl-reference.md §7.3).
bool variant_layouts = false;

// A mapped task whose completion the mapper waits for (through a profiling response).
struct InFlight {
  std::string task;
  bool limited = false;
  Processor set_member = Processor::NO_PROC;  // the processor charged in Shared::load
};

class DslMapper : public DefaultMapper {
 public:
  DslMapper(MapperRuntime *rt, Machine machine, Processor local)
      : DefaultMapper(rt, machine, local, MAPPER_NAME), policy(*shared->policy) {}

  const char *get_mapper_name() const override { return MAPPER_NAME; }
  // Non-reentrant: InstanceLimit counters and caches are this object's state.
  MapperSyncModel get_mapper_sync_model() const override { return SERIALIZED_NON_REENTRANT_MAPPER_MODEL; }

  void select_task_options(const MapperContext ctx, const Task &task, TaskOptions &output) override;
  void slice_task(const MapperContext ctx, const Task &task, const SliceTaskInput &input,
                  SliceTaskOutput &output) override;
  void map_task(const MapperContext ctx, const Task &task, const MapTaskInput &input,
                MapTaskOutput &output) override;
  void replicate_task(MapperContext ctx, const Task &task, const ReplicateTaskInput &input,
                      ReplicateTaskOutput &output) override;
  void select_tasks_to_map(const MapperContext ctx, const SelectMappingInput &input,
                           SelectMappingOutput &output) override;
  void report_profiling(const MapperContext ctx, const Task &task, const TaskProfilingInfo &input) override;
  void memoize_operation(const MapperContext ctx, const Mappable &mappable, const MemoizeInput &input,
                         MemoizeOutput &output) override;
  void select_sharding_functor(const MapperContext ctx, const Task &task, const SelectShardingFunctorInput &input,
                               SelectShardingFunctorOutput &output) override;
  void select_tunable_value(const MapperContext ctx, const Task &task, const SelectTunableInput &input,
                            SelectTunableOutput &output) override;

  // The application's own mapper for the tasks the DSL does not name (MAPPEROPT_KEEP_APP_MAPPER=1), or nullptr.
  Mapping::Mapper *own_app = nullptr;

 protected:
  void default_policy_rank_processor_kinds(MapperContext ctx, const Task &task,
                                           std::vector<Processor::Kind> &ranking) override;

 private:
  Processor::Kind task_kind(MapperContext ctx, const Task &task);
  const MapRule *map_rule(const std::vector<MapRule> &rules, const std::string &task, Kind kind) const;
  int64_t instance_limit(const std::string &task, Kind kind) const;
  bool has_limit(const std::string &task) const;
  std::vector<Processor> place(const Task &task, const MapRule &rule, Processor::Kind kind,
                               const DomainPoint *point);
  Processor least_loaded(const std::vector<Processor> &set,
                         const std::map<Processor, long long> *given = nullptr);
  const std::vector<std::string> &name_chain(MapperContext ctx, LogicalRegion region);
  std::vector<Kind> memory_list(const std::string &task, unsigned index, const std::vector<std::string> &chain,
                                Kind proc) const;
  LayoutChoice layout(const std::string &task, unsigned index, const std::vector<std::string> &chain, Kind proc,
                      Kind mem) const;
  bool make_instances(MapperContext ctx, const RegionRequirement &req, Memory memory, const LayoutChoice &layout,
                      std::vector<PhysicalInstance> &made, size_t &footprint);
  bool make_instance(MapperContext ctx, const RegionRequirement &req, Memory memory, const LayoutChoice &layout,
                     const std::vector<FieldID> &fields, const std::vector<const LayoutConstraintSet *> &sets,
                     PhysicalInstance &result, size_t &footprint);
  std::string map_region(MapperContext ctx, const Task &task, unsigned index, Processor target, VariantID variant,
                         bool leaf, std::vector<PhysicalInstance> &instances);
  std::vector<const LayoutConstraintSet *> variant_sets(MapperContext ctx, const Task &task, VariantID variant,
                                                        unsigned index);
  std::string premapped(MapperContext ctx, const Task &task, unsigned index, Processor target,
                        const std::vector<PhysicalInstance> &instances);
  std::vector<unsigned> collect(MapperContext ctx, const Task &task);
  void trace(const std::string &line);
  Mapping::Mapper *delegate(const std::string &task) const;
  void trace_delegated(MapperContext ctx, const Task &task, const MapTaskOutput &output);
  void record(MapperContext ctx, const Task &task);

  const Policy &policy;
  std::map<TaskID, Processor::Kind> kinds;
  std::map<LogicalRegion, std::vector<std::string>> chains;
  // InstanceLimit bookkeeping for this processor (dsl-reference.md §7.4): admitted = selected but not yet mapped (points),
  // running = mapped but not yet finished; `waiting` are deferral events to trigger when a slot frees up.
  std::map<std::string, int64_t> admitted, running;
  std::vector<MapperEvent> waiting;
  std::unordered_map<UniqueID, InFlight> in_flight;
};

// The task as mapping functions see it (dsl-reference.md §10); `point` overrides the index point (slice_task, sharding).
std::shared_ptr<TaskView> view_of(const Task &task, bool mapping, const DomainPoint *point) {
  auto view = std::make_shared<TaskView>();
  view->name = task.get_task_name();
  if (task.is_index_space) {
    const Domain &d = task.index_domain;
    const DomainPoint lo = d.lo(), hi = d.hi(), p = point ? *point : task.index_point;
    for (int k = 0; k < d.get_dim(); k++) {
      view->ipoint.push_back(p[k] - lo[k]);
      view->ispace.push_back(hi[k] - lo[k] + 1);
    }
  } else {
    view->ipoint = {0};
    view->ispace = {1};
  }
  view->mapping = mapping;
  if (!mapping) {
    auto found = shared->coords.find(task.current_proc);
    if (found != shared->coords.end()) {
      view->proc = found->second;
      view->has_proc = true;
    }
  }
  if (const Task *parent = task.get_parent_task()) view->parent = view_of(*parent, false, nullptr);
  return view;
}

std::string decision_context(bool index, const TaskView &view) {
  return index ? "IndexTaskMap of task '" + view.name + "', point " + tuple_text(view.ipoint) + ", launch domain " +
                     tuple_text(view.ispace)
               : "SingleTaskMap of task '" + view.name + "'";
}

// Evaluates a mapping function and checks its result (R402, R410); returns the result's Realm processors.
std::vector<Processor> evaluate(const MapRule &rule, std::shared_ptr<TaskView> view, Kind kind,
                                const std::string &context) {
  Value arg;
  arg.type = Value::TASK;
  arg.task = view;
  Value result;
  const std::string full = context + "; machine " + machine_text(kind);
  try {
    result = rule.fn(shared->ctx, {arg});
  } catch (const DslError &e) {
    report(e, full);
  }
  if (result.type != Value::PROC && result.type != Value::PROCSET)
    report(DslError{410, "mapping function '" + std::string(rule.fn_name) + "' returned " + article(result.type) +
                             " (" + to_string(result) + "), not a processor or processor set", Site{nullptr, 0, 0}},
           full);
  if (result.procs[0].kind != kind)
    report(DslError{402, "mapping function '" + std::string(rule.fn_name) + "' returned " + to_string(result) +
                             ", a " + kind_name(result.procs[0].kind) + " processor, but task '" + view->name +
                             "' runs on " + kind_name(kind), Site{nullptr, 0, 0}},
           full);
  std::vector<Processor> out;
  for (const Proc &p : result.procs) out.push_back(shared->procs[p.kind][p.node][p.index]);
  return out;
}

Processor::Kind DslMapper::task_kind(MapperContext ctx, const Task &task) {
  auto found = kinds.find(task.task_id);
  if (found != kinds.end()) return found->second;
  const std::string name = task.get_task_name();
  std::vector<Ranked> ranked;
  for (const TaskRule &r : policy.tasks)
    if (task_matches(r.task, name)) ranked.push_back(Ranked{{r.task ? 1 : 0, 0, 0, 0, r.pos}, &r}), mark(&r);
  std::sort(ranked.begin(), ranked.end());
  std::vector<Processor::Kind> listed;
  for (const Ranked &r : ranked)
    for (Kind k : static_cast<const TaskRule *>(r.rule)->kinds)
      if (std::find(listed.begin(), listed.end(), realm_proc_kind(k)) == listed.end())
        listed.push_back(realm_proc_kind(k));
  if (listed.empty())  // no Task statement: the DefaultMapper's ranking, in the kinds the DSL can name
    for (Kind k : {GPU, OMP, CPU, IO, PY}) listed.push_back(realm_proc_kind(k));
  for (Processor::Kind k : listed) {
    std::vector<VariantID> variants;
    if (k == Processor::OMP_PROC || local_procs_by_kind(k).empty()) continue;
    runtime->find_valid_variants(ctx, task.task_id, variants, k);
    if (!variants.empty()) return kinds[task.task_id] = k;
  }
  // R404: nothing usable; name what was tried, the variants and the processors (as the evaluator words it).
  std::vector<Kind> tried, named;
  for (Processor::Kind k : listed) tried.push_back(dsl_proc_kind(k));
  std::string tried_text, variants, counts;
  for (Kind k : tried) tried_text += std::string(tried_text.empty() ? "" : ", ") + kind_name(k);
  named = tried;
  for (Kind k : {CPU, GPU, OMP, IO, PY}) {
    std::vector<VariantID> found_variants;
    if (k != OMP) runtime->find_valid_variants(ctx, task.task_id, found_variants, realm_proc_kind(k));
    if (found_variants.empty()) continue;
    variants += std::string(variants.empty() ? "" : ", ") + kind_name(k);
    if (std::find(named.begin(), named.end(), k) == named.end()) named.push_back(k);
  }
  for (Kind k : named)
    counts += std::string(counts.empty() ? "" : ", ") + kind_name(k) + " " +
              std::to_string(k == OMP ? 0 : local_procs_by_kind(realm_proc_kind(k)).size());
  die("[mapperopt] error R404: no usable processor kind for task '" + name + "': tried " + tried_text +
      "; variants " + (variants.empty() ? "unknown" : variants) + "; processors per node: " + counts + "\n");
}

void DslMapper::default_policy_rank_processor_kinds(MapperContext ctx, const Task &task,
                                                    std::vector<Processor::Kind> &ranking) {
  ranking.push_back(task_kind(ctx, task));
}

// Precedence (dsl-reference.md §7.6): a task name, then a kind selector, then `*`; the later of equal ranks.
const MapRule *DslMapper::map_rule(const std::vector<MapRule> &rules, const std::string &task, Kind kind) const {
  const MapRule *best = nullptr;
  auto rank = [](const MapRule &r) { return r.task != nullptr ? 2 : r.kind != ANY ? 1 : 0; };
  for (const MapRule &r : rules)
    if (task_matches(r.task, task) && (r.kind == ANY || r.kind == kind) &&
        (!best || rank(r) > rank(*best) || (rank(r) == rank(*best) && r.pos > best->pos)))
      best = &r;
  if (best) mark(best);
  return best;
}

int64_t DslMapper::instance_limit(const std::string &task, Kind kind) const {
  const LimitRule *best = nullptr;
  for (const LimitRule &r : policy.limits)
    if (task == r.task && (mark(&r), true) && (r.proc == ANY || r.proc == kind) &&
        (!best || (r.proc != ANY) > (best->proc != ANY) ||
         ((r.proc != ANY) == (best->proc != ANY) && r.pos > best->pos)))
      best = &r;
  return best ? best->count : -1;
}

bool DslMapper::has_limit(const std::string &task) const {
  for (const LimitRule &r : policy.limits)
    if (task == r.task) return true;
  return false;
}

// A set's member with the least load (the first of equals): its set-placed tasks mapped and not yet finished, its
// set-placed single tasks chosen and not yet mapped, and what `given` counts (the points of this slice_task call).
Processor DslMapper::least_loaded(const std::vector<Processor> &set, const std::map<Processor, long long> *given) {
  if (set.size() == 1) return set[0];
  std::lock_guard<std::mutex> guard(shared->lock);
  auto load = [&](const Processor &p) {
    long long n = shared->load[p] + shared->chosen[p];
    if (given) {
      auto found = given->find(p);
      if (found != given->end()) n += found->second;
    }
    return n;
  };
  Processor best = set[0];
  long long least = load(best);
  for (const Processor &p : set) {
    const long long n = load(p);
    if (n < least) best = p, least = n;
  }
  return best;
}

std::vector<Processor> DslMapper::place(const Task &task, const MapRule &rule, Processor::Kind kind,
                                        const DomainPoint *point) {
  std::shared_ptr<TaskView> view = view_of(task, true, point);
  return evaluate(rule, view, dsl_proc_kind(kind), decision_context(task.is_index_space, *view));
}

void DslMapper::select_task_options(const MapperContext ctx, const Task &task, TaskOptions &output) {
  note_reductions(task);
  if (shared->record && task.is_index_space) {
    std::lock_guard<std::mutex> guard(shared->lock);
    shared->collective.emplace(task.get_task_name(), collective_requirements(task));
  }
  if (Mapping::Mapper *app = delegate(task.get_task_name())) {
    app->select_task_options(ctx, task, output);
    return;
  }
  DefaultMapper::select_task_options(ctx, task, output);  // its kind choice goes through task_kind()
  const std::string name = task.get_task_name();
  // InstanceLimit (dsl-reference.md §7.4): a point held back beyond the limit would keep the mapped points of a
  // collectively mapped requirement waiting for it, never finishing: map such a requirement per point instead, or,
  // when its coherence makes Legion map it collectively anyway, hold back no point (select_tasks_to_map). Whatever
  // N is: the points of two launches in flight can share the slots between them, each launch waiting for the other.
  if (task.is_index_space && has_limit(name) && instance_limit(name, dsl_proc_kind(task_kind(ctx, task))) >= 0) {
    for (unsigned idx : collective_requirements(task)) {
      const RegionRequirement &req = task.regions[idx];
      const std::vector<std::string> &chain = name_chain(ctx, req.region);
      const std::string where = "requirement " + std::to_string(idx) + (chain.empty() ? "" : " (" + chain[0] + ")");
      say_once("R459 " + name + " " + std::to_string(idx),
               "[mapperopt] note R459: task '" + name + "' has an InstanceLimit: " + where +
                   (collective_coherence(req)
                        ? " has collective coherence: every point of its index launch is mapped together, so the "
                          "limit holds back none of them\n"
                        : std::string(", one region every point of its index launch ") +
                              (req.privilege == LEGION_REDUCE ? "reduces into" : "reads") +
                              ", is mapped per point, not collectively (Legion would keep every point waiting until "
                              "all are mapped, which the limit would deadlock)\n"));
      output.check_collective_regions.erase(idx);
    }
  }
  for (const ReplicateRule &r : policy.replicates)
    if (name == r.task) output.replicate = total_nodes > 1, mark(&r);
  if (!task.is_index_space)
    if (const MapRule *rule = map_rule(policy.single_maps, name, dsl_proc_kind(task_kind(ctx, task)))) {
      const std::vector<Processor> set = place(task, *rule, task_kind(ctx, task), nullptr);
      output.initial_proc = least_loaded(set);
      // Tasks launched back to back all choose before any is mapped: until map_task counts it as running, a task
      // given a member of a set counts as that member's load (when map_task runs here: a member of this node).
      if (set.size() > 1 && !output.replicate && output.initial_proc.address_space() == node_id) {
        std::lock_guard<std::mutex> guard(shared->lock);
        if (shared->chosen_task.emplace(task.get_unique_id(), output.initial_proc).second)
          shared->chosen[output.initial_proc]++;
      }
    }
}

void DslMapper::slice_task(const MapperContext ctx, const Task &task, const SliceTaskInput &input,
                           SliceTaskOutput &output) {
  const std::string name = task.get_task_name();
  if (Mapping::Mapper *app = delegate(name)) {
    app->slice_task(ctx, task, input, output);
    return;
  }
  const Processor::Kind kind = task_kind(ctx, task);
  const MapRule *rule = map_rule(policy.index_maps, name, dsl_proc_kind(kind));
  if (rule == nullptr) {
    DefaultMapper::slice_task(ctx, task, input, output);
    if (!has_limit(name)) return;
    // InstanceLimit counts point tasks: give each point its own slice so that admission is per point.
    std::vector<TaskSlice> points;
    for (const TaskSlice &slice : output.slices)
      for (Domain::DomainPointIterator it(slice.domain); it; it++)
        points.push_back(TaskSlice(Domain(it.p, it.p), slice.proc, false, false));
    output.slices.swap(points);
    return;
  }
  std::set<Processor> taken;  // by earlier points of a concurrent launch, which need one processor each
  std::map<Processor, long long> given;  // points placed on each member of a set by this call, not yet mapped
  for (Domain::DomainPointIterator it(input.domain); it; it++) {
    const DomainPoint point = it.p;
    std::vector<Processor> set = place(task, *rule, kind, &point);
    if (task.concurrent_task && set.size() > 1) {
      std::vector<Processor> free;
      for (const Processor &p : set)
        if (!taken.count(p)) free.push_back(p);
      if (!free.empty()) set.swap(free);
    }
    const Processor proc = least_loaded(set, &given);
    if (set.size() > 1) given[proc]++;
    if (task.concurrent_task) taken.insert(proc);
    output.slices.push_back(TaskSlice(Domain(point, point), proc, false, false));
  }
}

// The names along a region's tree, nearest first, each with what it names: the region, then the index space under
// it (when named differently), its parent partition and index partition, ... up to the root, then the field space.
// can_fail: unnamed levels are skipped; never wait: a blocking mapper call stalls the runtime.
std::vector<std::pair<std::string, const char *>> named_chain(MapperRuntime *runtime, MapperContext ctx,
                                                              LogicalRegion region) {
  std::vector<std::pair<std::string, const char *>> chain;
  auto add = [&](auto handle, const char *what) {
    const void *data = nullptr;
    size_t size = 0;
    if (!runtime->retrieve_semantic_information(ctx, handle, LEGION_NAME_SEMANTIC_TAG, data, size, true, false) ||
        data == nullptr || size == 0)
      return;
    std::string name(static_cast<const char *>(data), strnlen(static_cast<const char *>(data), size));
    for (const auto &entry : chain)
      if (entry.first == name) return;  // the same name on the region and its index space counts once
    chain.emplace_back(name, what);
  };
  LogicalRegion r = region;
  while (true) {
    add(r, "region");
    add(r.get_index_space(), "index_space");
    if (!runtime->has_parent_logical_partition(ctx, r)) break;
    LogicalPartition part = runtime->get_parent_logical_partition(ctx, r);
    add(part, "partition");
    add(part.get_index_partition(), "index_partition");
    r = runtime->get_parent_logical_region(ctx, part);
  }
  add(region.get_field_space(), "field_space");
  return chain;
}

const std::vector<std::string> &DslMapper::name_chain(MapperContext ctx, LogicalRegion region) {
  auto found = chains.find(region);
  if (found != chains.end()) return found->second;
  std::vector<std::string> chain;
  for (const auto &entry : named_chain(runtime, ctx, region)) chain.push_back(entry.first);
  return chains[region] = chain;
}

std::vector<Kind> DslMapper::memory_list(const std::string &task, unsigned index,
                                         const std::vector<std::string> &chain, Kind proc) const {
  std::vector<Ranked> ranked;
  for (const RegionRule &r : policy.regions) {
    int a, b;
    if (!task_matches(r.task, task) || !region_rank(r.region, index, chain, a, b)) continue;
    mark(&r);
    if (r.proc != ANY && r.proc != proc) continue;
    ranked.push_back(Ranked{{r.task ? 1 : 0, a, b, r.proc == ANY ? 0 : 1, r.pos}, &r});
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<Kind> out;
  for (const Ranked &r : ranked)
    for (Kind k : static_cast<const RegionRule *>(r.rule)->memories)
      if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  return out;
}

LayoutChoice DslMapper::layout(const std::string &task, unsigned index, const std::vector<std::string> &chain,
                               Kind proc, Kind mem) const {
  std::vector<Ranked> ranked;
  for (const LayoutRule &r : policy.layouts) {
    int a, b;
    if (!task_matches(r.task, task) || !region_rank(r.region, index, chain, a, b)) continue;
    mark(&r);
    if (r.target != ANY && r.target != proc && r.target != mem) continue;
    const int third = r.target == ANY ? 0 : is_proc_kind(r.target) ? 1 : 2;
    ranked.push_back(Ranked{{r.task ? 1 : 0, a, b, third, r.pos}, &r});
  }
  std::sort(ranked.begin(), ranked.end());
  // Each aspect comes from the highest-precedence statement that mentions it (dsl-reference.md §7.3).
  LayoutChoice out;
  out.exact = exact_region;
  bool order = false, dims = false, align = false;
  for (const Ranked &r : ranked) {
    const LayoutSpec &s = static_cast<const LayoutRule *>(r.rule)->layout;
    if (!order && s.order >= 0) order = out.order_set = true, out.aos = s.order == 1;
    if (!dims && s.dims >= 0) dims = out.dims_set = true, out.c_order = s.dims == 1;
    if (!align && s.align >= 0) {
      align = true;
      out.align = s.align == 1;
      if (out.align) out.align_op = s.align_op, out.align_bytes = s.align_bytes;
    }
    out.exact = out.exact || s.exact;
    out.compact = out.compact || s.compact;
  }
  return out;
}

EqualityKind equality_kind(const std::string &op) {
  if (op == "!=") return LEGION_NE_EK;
  if (op == "<") return LEGION_LT_EK;
  if (op == "<=") return LEGION_LE_EK;
  if (op == ">") return LEGION_GT_EK;
  if (op == ">=") return LEGION_GE_EK;
  return LEGION_EQ_EK;
}

// The instances of requirement `req` in `memory`, their sizes added to `footprint`: one of all the fields of the
// field space (better reuse; only the reduced ones for a reduction), like the DefaultMapper; but, where the variant's
// layout constraints list fields (variant_layouts), as in the DefaultMapper one of each list's fields the requirement
// uses, in its order, and one of the others when the requirement uses any.
bool DslMapper::make_instances(MapperContext ctx, const RegionRequirement &req, Memory memory,
                               const LayoutChoice &choice, std::vector<PhysicalInstance> &made, size_t &footprint) {
  std::vector<FieldID> rest;
  if (req.privilege == LEGION_REDUCE)
    rest.assign(req.privilege_fields.begin(), req.privilege_fields.end());
  else
    runtime->get_field_space_fields(ctx, req.region.get_field_space(), rest);
  std::set<FieldID> needed = req.privilege_fields;
  std::vector<const LayoutConstraintSet *> everywhere;  // the sets that list no field apply to every instance
  for (const LayoutConstraintSet *set : choice.variant)
    if (set->field_constraint.field_set.empty()) everywhere.push_back(set);
  footprint = 0;
  for (const LayoutConstraintSet *set : choice.variant) {
    std::vector<FieldID> fields;
    for (FieldID fid : set->field_constraint.field_set)
      if (needed.erase(fid)) fields.push_back(fid);
    if (fields.empty()) continue;
    for (FieldID fid : fields) rest.erase(std::remove(rest.begin(), rest.end(), fid), rest.end());
    std::vector<const LayoutConstraintSet *> sets = everywhere;
    sets.push_back(set);
    PhysicalInstance instance;
    size_t size = 0;
    const bool ok = make_instance(ctx, req, memory, choice, fields, sets, instance, size);
    footprint += size;
    if (!ok) return false;
    made.push_back(instance);
  }
  if (!made.empty() && needed.empty()) return true;
  PhysicalInstance instance;
  size_t size = 0;
  const bool ok = make_instance(ctx, req, memory, choice, rest, everywhere, instance, size);
  footprint += size;
  if (ok) made.push_back(instance);
  return ok;
}

// An instance of `fields` in `memory` with the layout `choice` and, for what no Layout statement sets, the variant's
// constraint sets `sets`: its specialization unless a statement says Compact, its field order and contiguity, and its
// tiling, dimension, offset, pointer and padding constraints (as the DefaultMapper makes an instance from them).
bool DslMapper::make_instance(MapperContext ctx, const RegionRequirement &req, Memory memory,
                              const LayoutChoice &choice, const std::vector<FieldID> &fields,
                              const std::vector<const LayoutConstraintSet *> &sets, PhysicalInstance &result,
                              size_t &footprint) {
  const bool reduce = req.privilege == LEGION_REDUCE;
  LayoutConstraintSet constraints;
  SpecializedConstraint special =
      reduce ? SpecializedConstraint(
                   choice.compact ? LEGION_COMPACT_REDUCTION_SPECIALIZE : LEGION_AFFINE_REDUCTION_SPECIALIZE,
                   req.redop, false, choice.exact)
             : SpecializedConstraint(choice.compact ? LEGION_COMPACT_SPECIALIZE : LEGION_AFFINE_SPECIALIZE, 0, false,
                                     choice.exact);
  bool contiguous = false, inorder = false;
  for (const LayoutConstraintSet *set : sets) {
    const SpecializedConstraint &s = set->specialized_constraint;
    const bool special_kind = s.kind == LEGION_COMPACT_SPECIALIZE || s.kind == LEGION_AFFINE_REDUCTION_SPECIALIZE ||
                              s.kind == LEGION_COMPACT_REDUCTION_SPECIALIZE;
    if (special_kind && !choice.compact)
      special = SpecializedConstraint(s.kind, s.redop ? s.redop : req.redop, false, special.exact, s.max_pieces,
                                      s.max_overhead);
    special.exact = special.exact || s.exact;
    contiguous = contiguous || set->field_constraint.contiguous;
    inorder = inorder || set->field_constraint.inorder;
    if (set->pointer_constraint.is_valid) constraints.add_constraint(set->pointer_constraint);
    if (set->padding_constraint.delta.get_dim() > 0) constraints.add_constraint(set->padding_constraint);
    for (const TilingConstraint &c : set->tiling_constraints) constraints.add_constraint(c);
    for (const DimensionConstraint &c : set->dimension_constraints) constraints.add_constraint(c);
    for (const OffsetConstraint &c : set->offset_constraints) constraints.add_constraint(c);
  }
  constraints.add_constraint(special);
  constraints.add_constraint(MemoryConstraint(memory.kind()));
  constraints.add_constraint(FieldConstraint(fields, contiguous, inorder));
  // Ordering (docs/dsl-reference.md §7.3): SOA+F X,Y,..,F; SOA+C ..,Y,X,F; AOS+F F,X,Y,..; AOS+C F,..,Y,X.
  const int dim = req.region.get_index_space().get_dim();
  std::vector<DimensionKind> order;
  for (int d = 0; d < dim; d++)
    order.push_back(static_cast<DimensionKind>(LEGION_DIM_X + (choice.c_order ? dim - 1 - d : d)));
  order.insert(choice.aos ? order.begin() : order.end(), LEGION_DIM_F);
  if (choice.ordering.empty())
    constraints.add_constraint(OrderingConstraint(order, false /*contiguous*/));
  else
    constraints.add_constraint(OrderingConstraint(choice.ordering, choice.ordering_contiguous));
  if (choice.align)
    for (FieldID fid : fields)
      constraints.add_constraint(
          AlignmentConstraint(fid, equality_kind(choice.align_op), size_t(choice.align_bytes)));
  for (const AlignmentConstraint &a : choice.alignments)
    if (std::find(fields.begin(), fields.end(), a.fid) != fields.end()) constraints.add_constraint(a);
  // Reduction instances too are found before created, as by the DefaultMapper (its reduction-reuse policy): points
  // reducing into one region share an instance that holds their pending reductions, where a fresh one per point
  // costs an allocation, an identity fill and a fold copy each.
  LogicalRegion target = default_policy_select_instance_region(ctx, memory, req, constraints, false, true);
  std::vector<LogicalRegion> regions(1, target);
  bool created = true;
  footprint = 0;
  const bool ok = runtime->find_or_create_physical_instance(ctx, memory, constraints, regions, result, created, true, 0,
                                                            special.exact, &footprint);
  if (ok && created) {
    const int priority =
        default_policy_select_garbage_collection_priority(ctx, TASK_MAPPING, memory, result, true, reduce);
    if (priority != 0 && !result.is_external_instance())
      runtime->set_garbage_collection_priority(ctx, result, priority);
  }
  return ok;
}

// {"op": ">=", "bytes": 128}: an alignment constraint as trace entries and discovery write it.
std::string alignment_json(const AlignmentConstraint &a) {
  static const char *const ops[] = {"<", "<=", ">", ">=", "==", "!="};  // Legion's EqualityKind order
  return "{\"op\": " + json_string(ops[a.eqk]) + ", \"bytes\": " + std::to_string(a.alignment) + "}";
}

std::string layout_json(const LayoutChoice &c) {
  std::string align = "null";
  if (c.align) align = "{\"op\": " + json_string(c.align_op) + ", \"bytes\": " + std::to_string(c.align_bytes) + "}";
  if (!c.align && !c.alignments.empty()) {  // the variant's (variant_layouts); the first one stands for all
    align = alignment_json(c.alignments.front());
  }
  return std::string("{\"order\": \"") + (c.aos ? "AOS" : "SOA") + "\", \"dims\": \"" + (c.c_order ? "C" : "F") +
         "\", \"align\": " + align + ", \"exact\": " + (c.exact ? "true" : "false") +
         ", \"compact\": " + (c.compact ? "true" : "false") + "}";
}

// The spatial dimensions (0 for X, 1 for Y, ...) an ordering constraint lists, fastest first: the dimension order a
// task variant's layout constraint fixes (follow_variant, record).
std::vector<int> spatial_order(const OrderingConstraint &ordering) {
  std::vector<int> dims;
  for (DimensionKind d : ordering.ordering)
    if (d >= LEGION_DIM_X && d < LEGION_DIM_F) dims.push_back(d - LEGION_DIM_X);
  return dims;
}

// The layout constraint sets the task's variant declares for requirement `index`.
std::vector<const LayoutConstraintSet *> DslMapper::variant_sets(MapperContext ctx, const Task &task,
                                                                 VariantID variant, unsigned index) {
  std::vector<const LayoutConstraintSet *> out;
  const TaskLayoutConstraintSet &sets = runtime->find_task_layout_constraints(ctx, task.task_id, variant);
  for (auto it = sets.layouts.lower_bound(index); it != sets.layouts.upper_bound(index); ++it)
    out.push_back(&runtime->find_layout_constraints(ctx, it->second));
  return out;
}

// The aspects of `choice` that no Layout statement mentions, from the variant's layout constraint sets for the
// requirement (variant_layouts): its ordering, and the interleaving or dimension order it implies when a statement
// gives the other one; its alignments; the sets themselves, for make_instances.
void follow_variant(const std::vector<const LayoutConstraintSet *> &sets, int dim, LayoutChoice &choice) {
  choice.variant = sets;
  for (const LayoutConstraintSet *found : sets) {
    const LayoutConstraintSet &set = *found;
    const std::vector<DimensionKind> &ordering = set.ordering_constraint.ordering;
    if (!ordering.empty()) {
      // First listed varies fastest: F first is AOS; a later dimension before X (the fastest spatial one is not X)
      // is C order.
      const bool aos = ordering.front() == LEGION_DIM_F;
      const std::vector<int> dims = spatial_order(set.ordering_constraint);
      const bool c_order = !dims.empty() && dims.front() != 0;
      if (!choice.order_set && !choice.dims_set) {
        choice.ordering = ordering;
        choice.ordering_contiguous = set.ordering_constraint.contiguous;
      }
      if (!choice.order_set) choice.aos = aos;
      if (!choice.dims_set) choice.c_order = c_order && dim > 1;
    }
    if (!choice.align)
      choice.alignments.insert(choice.alignments.end(), set.alignment_constraints.begin(),
                               set.alignment_constraints.end());
  }
}

// Maps requirement `index` on `target` (dsl-reference.md §7.2): the effective memory list with fallback on absence,
// failed allocation or a kind the variant's layout constraints forbid (variant_layouts), R452 for each fallback, R403
// when nothing works. Returns the trace entry's memory and layout.
std::string DslMapper::map_region(MapperContext ctx, const Task &task, unsigned index, Processor target,
                                  VariantID variant, bool leaf, std::vector<PhysicalInstance> &instances) {
  const RegionRequirement &req = task.regions[index];
  const std::string name = task.get_task_name();
  const std::vector<std::string> &chain = name_chain(ctx, req.region);
  const Kind proc = dsl_proc_kind(target.kind());
  std::vector<const LayoutConstraintSet *> sets;
  if (variant_layouts) sets = variant_sets(ctx, task, variant, index);
  const MemoryConstraint *needs = nullptr;  // the memory kind the variant requires
  for (const LayoutConstraintSet *set : sets)
    if (set->memory_constraint.is_valid()) needs = &set->memory_constraint;
  std::vector<Kind> listed = memory_list(name, index, chain, proc);
  const bool by_default = listed.empty();
  if (by_default && needs && dsl_mem_kind(needs->get_kind()) != ANY)  // no Region statement: the variant's, or ...
    listed.push_back(dsl_mem_kind(needs->get_kind()));
  else if (by_default)  // ... the DefaultMapper's choice
    listed.push_back(dsl_mem_kind(default_policy_select_target_memory(ctx, target, req).kind()));
  std::string names;
  for (const std::string &n : chain) names += (names.empty() ? "" : ", ") + n;
  const std::string where = "requirement " + std::to_string(index) + (chain.empty() ? "" : " (" + names + ")") +
                            " of task '" + name + "'";
  std::vector<std::string> reasons;
  for (Kind kind : listed) {
    std::string reason;
    if (kind == VIRTUAL) {
      if (!leaf) {
        instances.push_back(PhysicalInstance::get_virtual_instance());
        return "\"memory\": \"VIRTUAL\", \"layout\": null";
      }
      reason = "the variant is a leaf task";
    } else if (needs && needs->get_kind() != realm_mem_kind(kind)) {
      const Kind k = dsl_mem_kind(needs->get_kind());
      reason = std::string("the variant's layout constraint needs ") +
               (k != ANY ? kind_name(k) : "Realm memory kind " + std::to_string(int(needs->get_kind())));
    } else {
      Machine::MemoryQuery query(machine);
      query.has_affinity_to(target).only_kind(realm_mem_kind(kind));
      Memory best = Memory::NO_MEMORY;
      unsigned bandwidth = 0;
      for (Memory m : query) {
        std::vector<Machine::ProcessorMemoryAffinity> affinity;
        machine.get_proc_mem_affinity(affinity, target, m, false);
        const unsigned bw = affinity.empty() ? 0 : affinity[0].bandwidth;
        if (m.capacity() > 0 && (!best.exists() || bw > bandwidth)) best = m, bandwidth = bw;
      }
      if (!best.exists()) {
        Machine::MemoryQuery any(machine);
        any.local_address_space().only_kind(realm_mem_kind(kind));
        reason = any.count() == 0 ? "absent" : "not visible from " + proc_name(target);
      } else {
        LayoutChoice choice = layout(name, index, chain, proc, kind);
        if (variant_layouts) follow_variant(sets, req.region.get_index_space().get_dim(), choice);
        std::vector<PhysicalInstance> made;
        size_t footprint = 0;
        if (make_instances(ctx, req, best, choice, made, footprint)) {
          instances.insert(instances.end(), made.begin(), made.end());
          for (size_t k = 0; k < reasons.size(); k++)
            say_once("R452 " + name + " " + std::to_string(index) + " " + kind_name(listed[k]),
                     "[mapperopt] note R452: " + where + ": " + kind_name(listed[k]) + " skipped (" + reasons[k] +
                         "), using " + kind_name(kind) + "\n");
          return std::string("\"memory\": \"") + kind_name(kind) + "\", \"layout\": " + layout_json(choice);
        }
        reason = "allocation of " + std::to_string(footprint) + " bytes failed (capacity " +
                 std::to_string(best.capacity()) + " bytes; " + size_flag(kind) + " sizes it)";
      }
    }
    reasons.push_back(reason);
  }
  std::string detail;
  for (size_t k = 0; k < listed.size(); k++)
    detail += std::string(k ? "; " : "") + kind_name(listed[k]) + ": " + reasons[k];
  std::string kinds;
  for (Kind k : listed) kinds += std::string(kinds.empty() ? "" : ", ") + kind_name(k);
  die("[mapperopt] error R403: no memory of the list " + kinds + " can hold " + where + ": " + detail +
      "; processor " + proc_name(target) + "\n");
}

// A requirement of a must-epoch task that Legion premapped: the instance the epoch's mapping (map_must_epoch, the
// DefaultMapper's) chose for the requirements its tasks share, which map_task must leave as it is (a debug Legion
// rejects a changed one). Note R455 when a Region or Layout statement asked for something else. Returns the trace
// entry's memory (where the instance lies) and layout (null: not the DSL's).
std::string DslMapper::premapped(MapperContext ctx, const Task &task, unsigned index, Processor target,
                                 const std::vector<PhysicalInstance> &instances) {
  const std::string name = task.get_task_name();
  const std::vector<std::string> &chain = name_chain(ctx, task.regions[index].region);
  const Kind proc = dsl_proc_kind(target.kind());
  const Kind mem = instances.empty() ? ANY : dsl_mem_kind(instances[0].get_location().kind());
  const LayoutChoice choice = layout(name, index, chain, proc, mem);
  if (!memory_list(name, index, chain, proc).empty() || choice.order_set || choice.dims_set || choice.align ||
      choice.compact) {
    std::string names;
    for (const std::string &n : chain) names += (names.empty() ? "" : ", ") + n;
    say_once("R455 " + name + " " + std::to_string(index),
             "[mapperopt] note R455: requirement " + std::to_string(index) + (chain.empty() ? "" : " (" + names + ")") +
                 " of task '" + name + "' is shared by the tasks of a must-epoch launch: it uses the instance "
                 "Legion's must-epoch mapping chose (" + (mem == ANY ? "unknown memory" : kind_name(mem)) +
                 "), not one its Region and Layout statements give; the trace records where it lies\n");
  }
  return std::string("\"memory\": ") + (mem == ANY ? "null" : "\"" + std::string(kind_name(mem)) + "\"") +
         ", \"layout\": null";
}

std::vector<unsigned> DslMapper::collect(MapperContext ctx, const Task &task) {
  std::vector<unsigned> out;
  const std::string name = task.get_task_name();
  for (unsigned idx = 0; idx < task.regions.size(); idx++) {
    const RegionRequirement &req = task.regions[idx];
    const std::vector<std::string> &chain = name_chain(ctx, req.region);
    for (const CollectRule &r : policy.collects) {
      int a, b;
      if (!task_matches(r.task, name) || !region_rank(r.region, idx, chain, a, b)) continue;
      mark(&r);
      if (req.privilege == LEGION_READ_ONLY) {
        // Legion applies pending reductions into the instance of the read-only requirement that first reads them and
        // then holds no other valid copy: untracked, the reduced values would be lost (the next reader elsewhere
        // sees an instance never written). So fields that receive reductions are never collected.
        std::string reducer;
        {
          std::lock_guard<std::mutex> guard(shared->lock);
          for (FieldID fid : req.privilege_fields) {
            auto found = shared->reduced.find(std::make_pair(req.parent.get_tree_id(), fid));
            if (found != shared->reduced.end() && reducer.empty()) reducer = found->second;
          }
        }
        if (reducer.empty())
          out.push_back(idx);
        else
          say_once("R457 " + name + " " + std::to_string(idx),
                   "[mapperopt] note R457: CollectMemory: requirement " + std::to_string(idx) + " of task '" + name +
                       "' stays tracked: task '" + reducer + "' reduces into its region, and the read-only instance "
                       "that receives those reductions holds the only copy of the result (statement at line " +
                       std::to_string(r.line) + ")\n");
        break;
      }
      if (r.region.mode != RegionSel::ANY)
        say_once("R450 " + name + " " + std::to_string(idx),
                 "[mapperopt] warning R450: CollectMemory selects requirement " + std::to_string(idx) +
                     " of task '" + name + "', which is not read-only; ignored (statement at line " +
                     std::to_string(r.line) + ")\n");
    }
  }
  return out;
}

// The trace line of a task the application's own mapper mapped (MAPPEROPT_KEEP_APP_MAPPER=1): its processor when it
// chose exactly one, the memory of each chosen instance; `"mapper": "application"` tells it from the DSL's lines.
void DslMapper::trace_delegated(MapperContext ctx, const Task &task, const MapTaskOutput &output) {
  std::string proc = "null";
  if (!output.target_procs.empty()) {
    const Proc p = coord_of(output.target_procs[0]);
    const bool one = output.target_procs.size() == 1 && p.index >= 0;
    proc = "{\"kind\": \"" + std::string(kind_name(p.kind)) + "\", \"node\": " +
           (one ? std::to_string(p.node) : "null") + ", \"index\": " + (one ? std::to_string(p.index) : "null") + "}";
  }
  std::string regions;
  for (unsigned idx = 0; idx < task.regions.size(); idx++) {
    const std::vector<std::string> &chain = name_chain(ctx, task.regions[idx].region);
    std::string memory = "null";
    if (idx < output.chosen_instances.size() && !output.chosen_instances[idx].empty()) {
      const PhysicalInstance &inst = output.chosen_instances[idx][0];
      memory = inst.is_virtual_instance() ? "\"VIRTUAL\""
                                          : "\"" + std::string(kind_name(dsl_mem_kind(inst.get_location().kind()))) + "\"";
    }
    regions += std::string(idx ? ", " : "") + "{\"index\": " + std::to_string(idx) + ", \"name\": " +
               (chain.empty() ? "null" : json_string(chain[0])) + ", \"memory\": " + memory + ", \"layout\": null}";
  }
  std::string point = "null", domain = "null";
  if (task.is_index_space) {
    std::shared_ptr<TaskView> view = view_of(task, true, nullptr);
    point = json_ints(view->ipoint);
    domain = json_ints(view->ispace);
  }
  trace("{\"task\": " + json_string(task.get_task_name()) + ", \"point\": " + point + ", \"domain\": " + domain +
        ", \"proc\": " + proc + ", \"regions\": [" + regions + "], \"collect\": [], \"limited\": false, "
        "\"mapper\": \"application\"}\n");
}

void DslMapper::trace(const std::string &line) {
  std::lock_guard<std::mutex> guard(shared->lock);
  std::fputs(line.c_str(), shared->trace);
  std::fflush(shared->trace);
}

void DslMapper::map_task(const MapperContext ctx, const Task &task, const MapTaskInput &input,
                         MapTaskOutput &output) {
  const std::string name = task.get_task_name();
  {
    std::lock_guard<std::mutex> guard(shared->lock);
    shared->mapped++;
    shared->tasks_seen.insert(name);
    // A single task chosen for a member of a set (select_task_options) is now mapped: map_task counts it below.
    auto found = shared->chosen_task.find(task.get_unique_id());
    if (found != shared->chosen_task.end()) {
      long long &n = shared->chosen[found->second];
      n = n > 0 ? n - 1 : 0;
      shared->chosen_task.erase(found);
    }
  }
  note_reductions(task);
  if (shared->record) record(ctx, task);
  if (Mapping::Mapper *app = delegate(name)) {
    app->map_task(ctx, task, input, output);
    // As for the DSL's own choices: a must-epoch task runs where the epoch's mapping put it.
    if (task.must_epoch_task && task.target_proc.exists()) output.target_procs.assign(1, task.target_proc);
    if (shared->trace) trace_delegated(ctx, task, output);
    return;
  }
  const Processor::Kind kind = input.shard_processor.exists() ? input.shard_processor.kind() : task.target_proc.kind();
  const VariantInfo variant = default_find_preferred_variant(task, ctx, true, true, kind);
  output.chosen_variant = input.shard_processor.exists() ? input.shard_variant : variant.variant;
  output.task_priority = default_policy_select_task_priority(ctx, task);
  // Target processors: the DSL's choice when a map statement applies, else the DefaultMapper's.
  const MapRule *rule =
      map_rule(task.is_index_space ? policy.index_maps : policy.single_maps, name, dsl_proc_kind(kind));
  std::vector<Processor> set;
  if (input.shard_processor.exists()) {
    output.target_procs.push_back(input.shard_processor);
  } else if (rule != nullptr) {
    set = place(task, *rule, kind, nullptr);
    Processor chosen = std::find(set.begin(), set.end(), task.target_proc) != set.end() ? task.target_proc
                                                                                        : least_loaded(set);
    output.target_procs.push_back(chosen);
  } else {
    default_policy_select_target_processors(ctx, task, output.target_procs);
  }
  // A must-epoch launch runs where map_must_epoch put it; Legion overrides any other choice (with a warning), so
  // the mapping and the trace use that processor.
  const bool epoch_override = task.must_epoch_task && task.target_proc.exists() &&
                              output.target_procs[0] != task.target_proc;
  if (epoch_override) {
    if (rule != nullptr)
      say_once("R455 " + name, "[mapperopt] note R455: task '" + name + "' is part of a must-epoch launch: it runs "
                                   "on the processor Legion chose for the epoch (" + proc_name(task.target_proc) +
                                   "), not on the one its map statement (line " + std::to_string(rule->line) +
                                   ") gives; the trace records the processor used\n");
    output.target_procs.assign(1, task.target_proc);
    set.clear();
  }
  const Processor target = output.target_procs[0];
  // Regions: inner variants map everything virtually when all requirements are exclusive (as the DefaultMapper).
  bool all_virtual = variant.is_inner;
  for (const RegionRequirement &req : task.regions) all_virtual = all_virtual && req.prop == LEGION_EXCLUSIVE;
  std::string regions;
  for (unsigned idx = 0; idx < task.regions.size(); idx++) {
    const RegionRequirement &req = task.regions[idx];
    const std::vector<std::string> &chain = name_chain(ctx, req.region);
    std::string entry;
    if (std::find(input.premapped_regions.begin(), input.premapped_regions.end(), idx) !=
        input.premapped_regions.end()) {
      entry = premapped(ctx, task, idx, target, output.chosen_instances[idx]);
    } else if (all_virtual || (req.privilege == LEGION_REDUCE && !variant.is_leaf) || (req.tag & VIRTUAL_MAP)) {
      output.chosen_instances[idx].push_back(PhysicalInstance::get_virtual_instance());
      entry = "\"memory\": \"VIRTUAL\", \"layout\": null";
    } else if (req.privilege == LEGION_NO_ACCESS || req.privilege_fields.empty()) {
      entry = "\"memory\": null, \"layout\": null";
    } else {
      entry = map_region(ctx, task, idx, target, output.chosen_variant, variant.is_leaf,
                         output.chosen_instances[idx]);
    }
    regions += std::string(idx ? ", " : "") + "{\"index\": " + std::to_string(idx) +
               ", \"name\": " + (chain.empty() ? "null" : json_string(chain[0])) + ", " + entry + "}";
  }
  if (!task.output_regions.empty()) {
    const Memory out_memory = default_policy_select_output_target(ctx, target);
    for (unsigned i = 0; i < task.output_regions.size(); i++) {
      output.output_targets[i] = out_memory;
      default_policy_select_output_constraints(task, output.output_constraints[i], task.output_regions[i]);
    }
  }
  const std::vector<unsigned> collected = collect(ctx, task);
  output.untracked_valid_regions.insert(collected.begin(), collected.end());
  // Completion tracking through profiling responses: InstanceLimit slots, set load, and the profile.
  const Kind dkind = dsl_proc_kind(kind);
  const bool limited = instance_limit(name, dkind) >= 0;
  InFlight record{name, limited, set.size() > 1 ? target : Processor::NO_PROC};
  if (limited) {
    int64_t &pending = admitted[name];
    pending = pending > 0 ? pending - 1 : 0;
    running[name]++;
  }
  if (record.set_member.exists()) {
    std::lock_guard<std::mutex> guard(shared->lock);
    shared->load[target]++;
  }
  if (limited || record.set_member.exists() || shared->profile) {
    output.task_prof_requests.add_measurement<Realm::ProfilingMeasurements::OperationStatus>();
    if (shared->profile) output.task_prof_requests.add_measurement<Realm::ProfilingMeasurements::OperationTimeline>();
    in_flight[task.get_unique_id()] = record;
  }
  if (shared->trace) {
    // `placed_by` says who chose the processor: a map statement, or (none applying) Legion's default mapping, which
    // names one processor (GPU) or offers every local one of the kind (CPU, IO): Legion then runs the task on the
    // first of them to be free, after this call, so `index` is null and `candidates` lists the ones offered.
    const Proc p = coord_of(target);
    const bool one = output.target_procs.size() == 1 && p.index >= 0;
    const std::string proc = "{\"kind\": \"" + std::string(kind_name(p.kind)) + "\", \"node\": " +
                             std::to_string(p.node) + ", \"index\": " + (one ? std::to_string(p.index) : "null") +
                             "}";
    std::string placed = rule != nullptr ? "\"map\"" : "\"default\", \"candidates\": [";
    if (rule == nullptr) {
      for (size_t k = 0; k < output.target_procs.size(); k++) {
        const int64_t index = coord_of(output.target_procs[k]).index;
        placed += (k ? ", " : "") + (index >= 0 ? std::to_string(index) : std::string("null"));
      }
      placed += "]";
    }
    std::string point = "null", domain = "null";
    if (task.is_index_space) {
      std::shared_ptr<TaskView> view = view_of(task, true, nullptr);
      point = json_ints(view->ipoint);
      domain = json_ints(view->ispace);
    }
    std::string collect_json = "[";
    for (size_t k = 0; k < collected.size(); k++) collect_json += (k ? ", " : "") + std::to_string(collected[k]);
    trace("{\"task\": " + json_string(name) + ", \"point\": " + point + ", \"domain\": " + domain + ", \"proc\": " +
          proc + ", \"regions\": [" + regions + "], \"collect\": " + collect_json + "], \"limited\": " +
          (limited ? "true" : "false") + ", \"placed_by\": " + placed + "}\n");
  }
}

void DslMapper::replicate_task(MapperContext ctx, const Task &task, const ReplicateTaskInput &input,
                               ReplicateTaskOutput &output) {
  const std::string name = task.get_task_name();
  bool listed = false;
  for (const ReplicateRule &r : policy.replicates) listed = listed || name == r.task;
  if (!listed || task.get_depth() == 0) {
    DefaultMapper::replicate_task(ctx, task, input, output);
    return;
  }
  // ControlReplicate (dsl-reference.md §7.8): one shard per node on the task's processor kind.
  const Processor::Kind kind = task.target_proc.kind();
  const VariantInfo variant = default_find_preferred_variant(task, ctx, true, true, kind);
  if (!variant.is_replicable) {
    say_once("R451 " + name, "[mapperopt] note R451: ControlReplicate: task '" + name +
                                 "' has no replicable variant; it runs unreplicated\n");
    return;
  }
  output.chosen_variant = variant.variant;
  output.target_processors = remote_procs_by_kind(kind);
}

void DslMapper::select_tasks_to_map(const MapperContext ctx, const SelectMappingInput &input,
                                    SelectMappingOutput &output) {
  if (policy.limits.empty()) {
    DefaultMapper::select_tasks_to_map(ctx, input, output);
    return;
  }
  // The DefaultMapper's policy (up to max_schedule_count tasks of the deepest admissible level), where a task under
  // an InstanceLimit is admissible only while its in-flight count leaves room; a slot is taken only by a task that
  // is actually selected.
  const Kind kind = dsl_proc_kind(input.processor.exists() ? input.processor.kind() : local_kind);
  auto points = [](const Task *t) -> int64_t {
    return t->is_index_space ? int64_t(t->get_slice_domain().get_volume()) : 1;
  };
  auto admissible = [&](const Task *t) {
    const std::string name = t->get_task_name();
    const int64_t limit = instance_limit(name, kind);
    if (limit < 0) return true;
    for (const RegionRequirement &req : t->regions)  // Legion maps all points together (R459)
      if (t->is_index_space && collective_coherence(req)) return true;
    const int64_t busy = admitted[name] + running[name];
    return busy == 0 || busy + points(t) <= limit;  // an empty slot set always admits one task: no deadlock
  };
  int max_depth = -1;
  for (const Task *t : input.ready_tasks)
    if (admissible(t)) max_depth = std::max(max_depth, t->get_depth());
  unsigned count = 0;
  for (const Task *t : input.ready_tasks) {
    if (count >= max_schedule_count) break;
    if (!breadth_first_traversal && t->get_depth() != max_depth) continue;
    if (!admissible(t)) continue;
    output.map_tasks.insert(t);
    count++;
    if (instance_limit(t->get_task_name(), kind) >= 0) admitted[t->get_task_name()] += points(t);
  }
  if (output.map_tasks.empty() && !input.ready_tasks.empty()) {
    output.deferral_event = runtime->create_mapper_event(ctx);
    waiting.push_back(output.deferral_event);
  }
}

void DslMapper::report_profiling(const MapperContext ctx, const Task &task, const TaskProfilingInfo &input) {
  auto found = in_flight.find(task.get_unique_id());
  if (found == in_flight.end()) {  // nothing of ours to release (never assert: defect 7)
    if (Mapping::Mapper *app = delegate(task.get_task_name())) app->report_profiling(ctx, task, input);
    return;
  }
  if (!input.task_response) return;
  const InFlight record = found->second;
  in_flight.erase(found);
  if (record.limited) {
    int64_t &busy = running[record.task];
    busy = busy > 0 ? busy - 1 : 0;
    for (MapperEvent &event : waiting) runtime->trigger_mapper_event(ctx, event);
    waiting.clear();
  }
  if (record.set_member.exists()) {
    std::lock_guard<std::mutex> guard(shared->lock);
    shared->load[record.set_member]--;
  }
  if (shared->profile) {
    Realm::ProfilingMeasurements::OperationTimeline timeline;
    if (input.profiling_responses.get_measurement(timeline) && timeline.start_time >= 0 &&
        timeline.end_time >= timeline.start_time) {
      const long long ns = timeline.end_time - timeline.start_time;
      std::lock_guard<std::mutex> guard(shared->lock);
      ProfileStat &stat = shared->stats[{record.task, kind_name(dsl_proc_kind(task.current_proc.kind()))}];
      stat.count++;
      stat.total_ns += ns;
      stat.max_ns = std::max(stat.max_ns, ns);
      if (task.is_index_space) stat.points = std::max(stat.points, (long long)task.index_domain.get_volume());
    }
  }
}

void DslMapper::memoize_operation(const MapperContext ctx, const Mappable &mappable, const MemoizeInput &input,
                                  MemoizeOutput &output) {
  DefaultMapper::memoize_operation(ctx, mappable, input, output);
  // A replayed trace skips select_tasks_to_map and map_task, so a limited task must not be memoized; nor may
  // anything in a profiled execution, or the profile would miss every replayed execution of the traced loop.
  // Legion then records the trace again in every iteration, and its bookkeeping grows with each recording: the
  // run's time grows with the square of its iterations. mapperopt's runs pass -lg:no_physical_tracing (Legion then
  // never asks); a run without it is told once.
  const Task *task = mappable.as_task();
  const bool limited = task != nullptr && has_limit(task->get_task_name());
  if (!limited && !shared->profile) return;
  output.memoize = false;
  // Said once, so it names every reason the run has (the first task asked about may show only one of them).
  std::string why;
  if (shared->profile && !policy.limits.empty()) {
    std::vector<std::string> names;
    for (const LimitRule &r : policy.limits)
      if (std::find(names.begin(), names.end(), r.task) == names.end()) names.push_back(r.task);
    std::string listed;
    for (const std::string &n : names) listed += (listed.empty() ? "'" : ", '") + n + "'";
    why = "the run is profiled, " + std::string(names.size() > 1 ? "tasks " : "task ") + listed +
          (names.size() > 1 ? " have InstanceLimits" : " has an InstanceLimit") + ", and a task runs";
  } else {
    why = limited ? "task '" + std::string(task->get_task_name()) + "' has an InstanceLimit and runs"
                  : std::string("the run is profiled and has a task");
  }
  say_once("R458", "[mapperopt] note R458: " + why +
                       " in a traced loop: Legion cannot replay the trace (a replay would skip the mapper), "
                       "so it records it again every iteration and the run slows with the square of its "
                       "iterations; run with -lg:no_physical_tracing\n");
}

void DslMapper::select_sharding_functor(const MapperContext ctx, const Task &task,
                                        const SelectShardingFunctorInput &input,
                                        SelectShardingFunctorOutput &output) {
  const MapRule *rule = task.is_index_space
                            ? map_rule(policy.index_maps, task.get_task_name(), dsl_proc_kind(task_kind(ctx, task)))
                            : nullptr;
  if (rule == nullptr || shared->sharding_base == 0) {
    DefaultMapper::select_sharding_functor(ctx, task, input, output);
    return;
  }
  output.chosen_functor = shared->sharding_base + ShardingID(rule - policy.index_maps.data());
  output.slice_recurse = true;
}

// Under control replication, the node of an IndexTaskMap function's result is the shard owning the point.
class DslShardingFunctor : public ShardingFunctor {
 public:
  explicit DslShardingFunctor(const MapRule &rule) : rule(rule) {}
  ShardID shard(const DomainPoint &point, const Domain &domain, const size_t total_shards) override {
    auto view = std::make_shared<TaskView>();
    view->name = rule.task ? rule.task : "*";
    const DomainPoint lo = domain.lo(), hi = domain.hi();
    for (int k = 0; k < domain.get_dim(); k++) {
      view->ipoint.push_back(point[k] - lo[k]);
      view->ispace.push_back(hi[k] - lo[k] + 1);
    }
    view->mapping = true;
    Value arg;
    arg.type = Value::TASK;
    arg.task = view;
    const std::string context = "sharding for IndexTaskMap of task '" + view->name + "', point " +
                                tuple_text(view->ipoint) + ", launch domain " + tuple_text(view->ispace);
    Value result;
    try {
      result = rule.fn(shared->ctx, {arg});
    } catch (const DslError &e) {
      report(e, context);
    }
    if (result.type != Value::PROC && result.type != Value::PROCSET)
      report(DslError{410, "mapping function '" + std::string(rule.fn_name) + "' returned " +
                               article(result.type) + " (" + to_string(result) + "), not a processor or processor set",
                               Site{nullptr, 0, 0}},
             context);
    return ShardID(size_t(result.procs[0].node) % total_shards);
  }

 private:
  const MapRule &rule;
};


// True when some statement of the policy names task `name` (a `*` selector names no task).
bool named_by_policy(const Policy &policy, const std::string &name) {
  auto in = [&](const auto &rows) {
    for (const auto &r : rows)
      if (r.task != nullptr && name == r.task) return true;
    return false;
  };
  return in(policy.tasks) || in(policy.regions) || in(policy.layouts) || in(policy.limits) ||
         in(policy.collects) || in(policy.index_maps) || in(policy.single_maps) || in(policy.replicates);
}

Mapping::Mapper *DslMapper::delegate(const std::string &task) const {
  Mapping::Mapper *app = own_app;
  if (app == nullptr && !shared->app_mappers.empty()) {
    auto found = shared->app_mappers.find(local_proc);
    if (found == shared->app_mappers.end()) found = shared->app_mappers.find(Processor::NO_PROC);
    if (found != shared->app_mappers.end()) app = found->second;
  }
  return app != nullptr && !named_by_policy(policy, task) ? app : nullptr;
}

void DslMapper::select_tunable_value(const MapperContext ctx, const Task &task, const SelectTunableInput &input,
                                     SelectTunableOutput &output) {
  const TunableRule *rule = nullptr;
  for (const TunableRule &r : policy.tunables)
    if (r.id == int64_t(input.tunable_id) && (!rule || r.pos > rule->pos)) rule = &r;
  if (rule != nullptr) {
    mark(rule);
    void *value = std::malloc(rule->bytes);
    std::memcpy(value, &rule->value, rule->bytes);  // little-endian: the low bytes hold the value
    output.value = value;
    output.size = rule->bytes;
    output.take_ownership = true;
    return;
  }
  if (Mapping::Mapper *app = delegate("")) {
    app->select_tunable_value(ctx, task, input, output);
    record_tunable(input, output, false);
    return;
  }
  if (input.tunable_id >= DEFAULT_TUNABLE_LAST)
    die("[mapperopt] error R456: task '" + std::string(task.get_task_name()) + "' asks its mapper for tunable " +
        std::to_string(input.tunable_id) + ", which the DSL mapper does not answer; add `Tunable " +
        std::to_string(input.tunable_id) + " = VALUE;` (with the value's type, e.g. `int32`, when the program "
        "reads fewer than 8 bytes)\n");
  DefaultMapper::select_tunable_value(ctx, task, input, output);
  record_tunable(input, output, true);
}

std::string privilege_name(PrivilegeMode privilege) {
  const unsigned p = unsigned(privilege) & 7u;
  if (p == 0) return "no_access";
  if (p == unsigned(LEGION_READ_ONLY)) return "read_only";
  if (p == unsigned(LEGION_REDUCE)) return "reduce";
  if (p == unsigned(LEGION_READ_WRITE) && !(unsigned(privilege) & unsigned(LEGION_DISCARD_INPUT_MASK)))
    return "read_write";
  return "write_discard";
}

// Legion's built-in reduction operators by name ("sum_f64"); others as "redop_<id>".
std::string redop_name(ReductionOpID redop) {
  static const char *const kinds[] = {"sum", "diff", "prod", "div", "max", "min", "or", "and", "xor"};
  static const char *const types[] = {"bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
                                      "f16", "f32", "f64", "c32", "c64", "c128"};
  const long k = long(redop) - long(LEGION_REDOP_BASE);
  if (k >= 0 && k < long(LEGION_REDOP_KIND_TOTAL) * long(LEGION_TYPE_TOTAL))
    return std::string(kinds[k / LEGION_TYPE_TOTAL]) + "_" + types[k % LEGION_TYPE_TOTAL];
  return "redop_" + std::to_string(redop);
}

// Discovery (MAPPEROPT_RECORD): what the application description needs about this task, once per task name and
// launch kind: ids, variants per processor kind, launch domain, and per requirement its privilege, fields (names
// and sizes), the names along its region tree and whether Legion maps it collectively.
void DslMapper::record(MapperContext ctx, const Task &task) {
  const std::string name = task.get_task_name();
  {
    std::lock_guard<std::mutex> guard(shared->lock);
    if (!shared->recorded.insert(name + (task.is_index_space ? "\1index" : "\1single")).second) return;
  }
  std::string variants, variant_names;
  bool leaf = false, inner = false, first = true;
  std::vector<std::string> orders(task.regions.size());  // per requirement: "KIND": "C_order"|"F_order", ...
  std::vector<std::string> interleaves(task.regions.size());  // per requirement: "KIND": "AOS"|"SOA", ...
  std::vector<std::string> memories(task.regions.size());     // per requirement: "KIND": "SYSMEM", ...
  std::vector<std::string> alignments(task.regions.size());   // per requirement: "KIND": {"op": ">=", ...}, ...
  std::vector<std::string> constrained_by(task.regions.size());  // per requirement: "KIND": ["variant", ...], ...
  for (Kind k : {CPU, GPU, OMP, IO, PY}) {
    std::vector<VariantID> found;
    runtime->find_valid_variants(ctx, task.task_id, found, realm_proc_kind(k));
    if (found.empty()) continue;
    const std::string kind = json_string(kind_name(k));
    variants += std::string(variants.empty() ? "" : ", ") + kind;
    std::string names;
    for (VariantID v : found) {
      const char *vname = runtime->find_task_variant_name(ctx, task.task_id, v);
      names += std::string(names.empty() ? "" : ", ") + json_string(vname ? vname : std::to_string(v));
    }
    variant_names += std::string(variant_names.empty() ? "" : ", ") + kind + ": [" + names + "]";
    // The dimension order, the interleaving (fields first: AOS, last: SOA), the memory kind and the alignment (the
    // first constraint on a field the requirement uses) the layout constraints of the kind's variants fix for each
    // requirement (checks, the search's layouts): of every variant, since Legion's default mapper picks the one that
    // runs; an aspect several variants fix, as the first of them fixes it.
    std::vector<std::string> by(task.regions.size());  // per requirement: the variants of this kind that fix any
    for (VariantID v : found) {
      const TaskLayoutConstraintSet &sets = runtime->find_task_layout_constraints(ctx, task.task_id, v);
      const char *vname = runtime->find_task_variant_name(ctx, task.task_id, v);
      const std::string variant = json_string(vname ? vname : std::to_string(v));
      for (const auto &entry : sets.layouts) {
        if (entry.first >= task.regions.size()) continue;
        const size_t size = orders[entry.first].size() + interleaves[entry.first].size() +
                            memories[entry.first].size() + alignments[entry.first].size();
        const int dim = task.regions[entry.first].region.get_index_space().get_dim();
        const LayoutConstraintSet &set = runtime->find_layout_constraints(ctx, entry.second);
        const OrderingConstraint &ordering = set.ordering_constraint;
        for (const AlignmentConstraint &a : set.alignment_constraints)
          if (alignments[entry.first].find(kind + ":") == std::string::npos &&
              task.regions[entry.first].privilege_fields.count(a.fid))
            alignments[entry.first] +=
                std::string(alignments[entry.first].empty() ? "" : ", ") + kind + ": " + alignment_json(a);
        if (set.memory_constraint.is_valid() && dsl_mem_kind(set.memory_constraint.get_kind()) != ANY &&
            memories[entry.first].find(kind + ":") == std::string::npos)
          memories[entry.first] += std::string(memories[entry.first].empty() ? "" : ", ") + kind + ": \"" +
                                   kind_name(dsl_mem_kind(set.memory_constraint.get_kind())) + "\"";
        if (!ordering.ordering.empty() &&
            (ordering.ordering.front() == LEGION_DIM_F) != (ordering.ordering.back() == LEGION_DIM_F) &&
            interleaves[entry.first].find(kind + ":") == std::string::npos)
          interleaves[entry.first] += std::string(interleaves[entry.first].empty() ? "" : ", ") + kind + ": \"" +
                                      (ordering.ordering.front() == LEGION_DIM_F ? "AOS" : "SOA") + "\"";
        std::vector<int> dims;  // those of the requirement's dimensions the ordering lists, fastest first
        for (int d : spatial_order(ordering))
          if (d < dim) dims.push_back(d);
        const char *order = dim < 2 || int(dims.size()) != dim            ? nullptr
                            : std::is_sorted(dims.begin(), dims.end())    ? "F_order"
                            : std::is_sorted(dims.rbegin(), dims.rend()) ? "C_order"
                                                                         : nullptr;
        if (order != nullptr && orders[entry.first].find(kind + ":") == std::string::npos)
          orders[entry.first] += std::string(orders[entry.first].empty() ? "" : ", ") + kind + ": \"" + order + "\"";
        if (orders[entry.first].size() + interleaves[entry.first].size() + memories[entry.first].size() +
                alignments[entry.first].size() != size)
          by[entry.first] += std::string(by[entry.first].empty() ? "" : ", ") + variant;
      }
    }
    for (size_t idx = 0; idx < by.size(); idx++)
      if (!by[idx].empty())
        constrained_by[idx] += std::string(constrained_by[idx].empty() ? "" : ", ") + kind + ": [" + by[idx] + "]";
    if (first) {  // of the first kind: a leaf if any of its variants is one (VIRTUAL fails there), inner if all are
      leaf = false, inner = true;
      for (VariantID v : found) {
        leaf = leaf || runtime->is_leaf_variant(ctx, task.task_id, v);
        inner = inner && runtime->is_inner_variant(ctx, task.task_id, v);
      }
      first = false;
    }
  }
  // The variant this mapper runs where Legion put the task (map_task's own choice, the same call; its result is
  // cached per task and kind), or none where the program's own mapper maps it.
  std::string runs;  // "KIND": "variant"
  if (task.target_proc.exists() && delegate(name) == nullptr) {
    const VariantID chosen = default_find_preferred_variant(task, ctx, true, true, task.target_proc.kind()).variant;
    const char *vname = runtime->find_task_variant_name(ctx, task.task_id, chosen);
    runs = json_string(kind_name(dsl_proc_kind(task.target_proc.kind()))) + ": " +
           json_string(vname ? vname : std::to_string(chosen));
  }
  std::string domain = "null";
  if (task.is_index_space) domain = json_ints(view_of(task, true, nullptr)->ispace);
  const Task *parent = task.get_parent_task();
  std::vector<unsigned> collective;
  if (task.is_index_space) {
    std::lock_guard<std::mutex> guard(shared->lock);
    collective = shared->collective[name];
  }
  std::string regions;
  for (unsigned idx = 0; idx < task.regions.size(); idx++) {
    const RegionRequirement &req = task.regions[idx];
    std::string chain, fields, sizes;
    for (const auto &entry : named_chain(runtime, ctx, req.region))
      chain += std::string(chain.empty() ? "" : ", ") + "{\"name\": " + json_string(entry.first) +
               ", \"kind\": \"" + entry.second + "\"}";
    const FieldSpace fs = req.region.get_field_space();
    for (FieldID fid : req.privilege_fields) {
      const void *data = nullptr;
      size_t size = 0;
      std::string field = "field_" + std::to_string(fid);
      if (runtime->retrieve_semantic_information(ctx, fs, fid, LEGION_NAME_SEMANTIC_TAG, data, size, true, false) &&
          data != nullptr && size > 0)
        field.assign(static_cast<const char *>(data), strnlen(static_cast<const char *>(data), size));
      fields += std::string(fields.empty() ? "" : ", ") + json_string(field);
      sizes += std::string(sizes.empty() ? "" : ", ") + std::to_string(runtime->get_field_size(ctx, fs, fid));
    }
    regions += std::string(idx ? ", " : "") + "{\"index\": " + std::to_string(idx) + ", \"chain\": [" + chain +
               "], \"privilege\": \"" + privilege_name(req.privilege) + "\"" +
               (req.privilege == LEGION_REDUCE ? ", \"redop\": " + json_string(redop_name(req.redop)) : "") +
               (std::count(collective.begin(), collective.end(), idx) ? ", \"collective\": true" : "") +
               ", \"fields\": [" + fields + "], \"field_sizes\": [" + sizes + "], \"orders\": {" + orders[idx] +
               "}, \"interleaves\": {" + interleaves[idx] + "}, \"memories\": {" + memories[idx] +
               "}, \"alignments\": {" + alignments[idx] + "}, \"constrained_by\": {" + constrained_by[idx] +
               "}}";
  }
  const std::string line = "{\"task\": " + json_string(name) + ", \"task_id\": " + std::to_string(task.task_id) +
                           ", \"launch\": \"" + (task.is_index_space ? "index" : "single") + "\", \"variants\": [" +
                           variants + "], \"variant_names\": {" + variant_names + "}, \"runs\": {" + runs +
                           "}, \"inner\": " + (inner ? "true" : "false") + ", \"leaf\": " + (leaf ? "true" : "false") +
                           ", \"parent\": " +
                           (parent ? json_string(parent->get_task_name()) : "null") + ", \"domain\": " + domain +
                           ", \"must_epoch\": " + (task.must_epoch_task ? "true" : "false") + ", \"regions\": [" +
                           regions + "]}\n";
  std::lock_guard<std::mutex> guard(shared->lock);
  std::fputs(line.c_str(), shared->record);
  std::fflush(shared->record);
}

// The characters `a` and `b` have in common by Ratcliff/Obershelp matching (the longest common block, earliest in
// `a` then in `b`, and recursively both sides of it), as Python's difflib.SequenceMatcher, which check uses.
size_t matching(const std::string &a, size_t alo, size_t ahi, const std::string &b, size_t blo, size_t bhi) {
  size_t bi = alo, bj = blo, k = 0;
  for (size_t i = alo; i < ahi; i++)
    for (size_t j = blo; j < bhi; j++) {
      size_t n = 0;
      while (i + n < ahi && j + n < bhi && a[i + n] == b[j + n]) n++;
      if (n > k) bi = i, bj = j, k = n;
    }
  if (k == 0) return 0;
  return k + matching(a, alo, bi, b, blo, bj) + matching(a, bi + k, ahi, b, bj + k, bhi);
}

// The name of `names` that `word` is most likely a typo of, or "" (check's "did you mean": difflib's
// get_close_matches with its cutoff 0.6; of equal ratios the greatest name).
std::string closest(const std::string &word, const std::set<std::string> &names) {
  std::string best;
  double top = 0.6;
  for (const std::string &name : names) {
    const double ratio = 2.0 * matching(name, 0, name.size(), word, 0, word.size()) / (name.size() + word.size());
    if (ratio >= top) best = name, top = ratio;  // ascending order: a later name of the same ratio wins
  }
  return best;
}

// At exit: R454 when the DSL mapper mapped nothing (another mapper displaced it), else R453 once for every
// statement row whose task or region selector matched nothing in this run.
void report_unmatched() {
  if (shared->mapped == 0) {
    std::fputs("[mapperopt] warning R454: the DSL mapper mapped no task in this run: the application's own mapper "
               "replaced it (a registration the LD_PRELOAD shim could not intercept); the placement trace is empty "
               "and the DSL had no effect\n", stderr);
    std::fflush(stderr);
    return;
  }
  const Policy &policy = *shared->policy;
  auto note = [&](const void *rule, int line, const char *what, const char *task, const RegionSel *region) {
    if (shared->matched.count(rule)) return;
    if (task == nullptr && (region == nullptr || region->mode != RegionSel::NAME)) return;
    std::string why;
    if (task != nullptr && !shared->tasks_seen.count(task)) {
      why = "no task named '" + std::string(task) + "' was mapped";
      const std::string close = closest(task, shared->tasks_seen);
      if (!close.empty()) why += "; did you mean '" + close + "'?";
    }
    else if (region != nullptr && region->mode == RegionSel::NAME)
      why = "no region requirement" + (task ? " of task '" + std::string(task) + "'" : std::string()) +
            " has '" + region->name + "' among its names";
    else
      return;  // the task ran, but the statement's other fields never applied
    std::fprintf(stderr, "[mapperopt] note R453: %s:%d: this %s statement matched nothing in this run: %s\n",
                 policy.source_name, line, what, why.c_str());
  };
  for (const TaskRule &r : policy.tasks) note(&r, r.line, "Task", r.task, nullptr);
  for (const RegionRule &r : policy.regions) note(&r, r.line, "Region", r.task, &r.region);
  for (const LayoutRule &r : policy.layouts) note(&r, r.line, "Layout", r.task, &r.region);
  for (const LimitRule &r : policy.limits) note(&r, r.line, "InstanceLimit", r.task, nullptr);
  for (const CollectRule &r : policy.collects) note(&r, r.line, "CollectMemory", r.task, &r.region);
  for (const MapRule &r : policy.index_maps) note(&r, r.line, "IndexTaskMap", r.task, nullptr);
  for (const MapRule &r : policy.single_maps) note(&r, r.line, "SingleTaskMap", r.task, nullptr);
  for (const ReplicateRule &r : policy.replicates) note(&r, r.line, "ControlReplicate", r.task, nullptr);
  for (const TunableRule &r : policy.tunables)
    if (!shared->matched.count(&r))
      std::fprintf(stderr, "[mapperopt] note R453: %s:%d: this Tunable statement matched nothing in this run: the "
                   "application never asked for tunable %lld\n", policy.source_name, r.line, (long long)r.id);
  std::fflush(stderr);
}

// ------------------------------------------------------------------------------------------ registration

void build_topology(Machine machine) {
  Topology &topo = shared->topo;
  topo.nodes = machine.get_address_space_count();
  for (int k = 0; k < NUM_PROC_KINDS; k++) shared->procs[k].assign(topo.nodes, {});
  Machine::ProcessorQuery all(machine);
  for (Processor p : all) {
    const Kind kind = dsl_proc_kind(p.kind());
    if (kind != ANY) shared->procs[kind][p.address_space()].push_back(p);
  }
  for (int k = 0; k < NUM_PROC_KINDS; k++) {
    const std::vector<std::vector<Processor>> &nodes = shared->procs[k];
    topo.per_node[k] = int64_t(nodes[0].size());
    for (const std::vector<Processor> &node : nodes)
      topo.symmetric[k] = topo.symmetric[k] && node.size() == nodes[0].size();
    if (!topo.symmetric[k]) continue;  // Machine(K) reports it (dsl-reference.md §9.1)
    topo.memories[k].assign(topo.nodes * topo.per_node[k], 0);
    for (int64_t n = 0; n < topo.nodes; n++)
      for (int64_t i = 0; i < topo.per_node[k]; i++) {
        const Processor p = nodes[n][i];
        shared->coords[p] = Proc{Kind(k), n, i};
        Machine::MemoryQuery query(machine);
        query.has_affinity_to(p);
        for (Memory m : query) {
          const Kind mk = dsl_mem_kind(m.kind());
          if (mk != ANY && m.capacity() > 0) topo.memories[k][n * topo.per_node[k] + i] |= 1u << (mk - SYSMEM);
        }
      }
  }
  shared->ctx.topo = &topo;
}

const char *flag_value(const InputArgs &args, const char *flag) {
  for (int i = 1; i + 1 < args.argc; i++)
    if (std::strcmp(args.argv[i], flag) == 0) return args.argv[i + 1];
  return nullptr;
}

bool has_flag(const InputArgs &args, const char *flag) {
  for (int i = 1; i < args.argc; i++)
    if (std::strcmp(args.argv[i], flag) == 0) return true;
  return false;
}

void registration(Machine machine, Runtime *runtime, const std::set<Processor> &local_procs) {
  const InputArgs &args = Runtime::get_input_args();
  if (!shared->ctx.topo) {  // once per process: machine, load phase, flags
    build_topology(machine);
    const char *trace_path = flag_value(args, "-mapper-trace");
    if (trace_path == nullptr) trace_path = std::getenv("MAPPEROPT_TRACE");  // for programs that check their flags
    if (const char *path = trace_path && *trace_path ? trace_path : nullptr) {
      shared->trace = std::fopen(path, "a");
      if (!shared->trace) die("[mapperopt] error: cannot open the placement trace '" + std::string(path) + "'\n");
    }
    const char *profile_env = std::getenv("MAPPEROPT_PROFILE");
    if (has_flag(args, "-mapper-profile") || (profile_env && std::strcmp(profile_env, "1") == 0)) {
      shared->profile = true;
      std::atexit(print_profile);
    }
    if (const char *path = std::getenv("MAPPEROPT_RECORD")) {
      shared->record = std::fopen(path, "a");
      if (!shared->record) die("[mapperopt] error: cannot open the discovery record '" + std::string(path) + "'\n");
    }
    std::atexit(report_unmatched);
    shared->globals.assign(shared->policy->num_globals, Value());
    shared->ctx.globals = shared->globals.data();
    try {
      shared->policy->load(shared->ctx);
    } catch (const DslError &e) {
      report(e, "load phase");
    }
    if (!shared->policy->replicates.empty() && shared->topo.nodes == 1)
      say_once("R451", "[mapperopt] note R451: ControlReplicate on a single-node machine; ignored\n");
    if (shared->topo.nodes > 1 && !shared->policy->index_maps.empty()) {
      shared->sharding_base = runtime->generate_library_sharding_ids(MAPPER_NAME, shared->policy->index_maps.size());
      for (size_t k = 0; k < shared->policy->index_maps.size(); k++)
        runtime->register_sharding_functor(shared->sharding_base + ShardingID(k),
                                           new DslShardingFunctor(shared->policy->index_maps[k]), true);
    }
  }
  // One mapper object per local processor.
  for (Processor p : local_procs)
    runtime->replace_default_mapper(new DslMapper(runtime->get_mapper_runtime(), machine, p), p);
}

}  // namespace

}  // namespace dsl
}  // namespace mapperopt

// For the LD_PRELOAD shim: a DSL mapper object for one processor (the shim installs it where the application adds
// a mapper of its own), and the application's mappers kept for the tasks the DSL does not name.
extern "C" Legion::Mapping::Mapper *mapperopt_new_dsl_mapper(Legion::Mapping::MapperRuntime *runtime,
                                                             Legion::Machine machine, Legion::Processor proc,
                                                             Legion::Mapping::Mapper *app) {
  auto *mapper = new mapperopt::dsl::DslMapper(runtime, machine, proc);
  mapper->own_app = app;
  return mapper;
}

extern "C" void mapperopt_follow_variant_layouts() {
  mapperopt::dsl::variant_layouts = true;
}

extern "C" void mapperopt_keep_app_mapper(Legion::Mapping::Mapper *app, Legion::Processor proc) {
  std::lock_guard<std::mutex> guard(mapperopt::dsl::shared->lock);
  mapperopt::dsl::shared->app_mappers[proc] = app;
}

namespace mapperopt {
namespace dsl {

void register_policy(const Policy *policy) {
  if (shared == nullptr) shared = new Shared();
  shared->policy = policy;
  Runtime::add_registration_callback(registration);
}

}  // namespace dsl
}  // namespace mapperopt
