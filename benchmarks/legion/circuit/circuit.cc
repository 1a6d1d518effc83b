// Circuit: sparse circuit simulation on Legion (docs docs/running.md), written for mapperopt from the published
// algorithm (Legion SC'12 circuit; Regent circuit_sparse.rg). A graph of nodes and wires is cut into pieces; each
// loop computes new wire currents, deposits the charge they carry on the nodes (sum reductions across pieces) and
// updates the node voltages. Region names, partitions and requirement order follow docs/running.md exactly:
// mapper policies address them by name.
//
// Flags: -p -pps -npp -wpp -pct -l -i -prune -seed -warmup (docs/running.md), -reference auto|on|off (the
// sequential reference check), -test-corrupt (perturbs one initial voltage so that the check must fail; tests only),
// --describe (prints the application description and exits), -mapper PATH.so (docs/interfaces.md).
#include <cassert>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <string>
#include <vector>

#include "app.h"
#include "circuit.h"
#include "describe.h"
#include "legion.h"

using namespace Legion;
using namespace circuit;

template <PrivilegeMode MODE, typename T>
using Accessor = FieldAccessor<MODE, T, 1, coord_t, Realm::AffineAccessor<T, 1, coord_t>>;
using SumAccessor = ReductionAccessor<SumReduction<float>, false /*exclusive*/, 1, coord_t,
                                      Realm::AffineAccessor<float, 1, coord_t>>;

// ---- Names: regions and partitions, fields, tasks (one table each; registration, launches and --describe use them)

enum RegionId {
  R_ALL_NODES,
  R_RP_ALL_NODES,
  R_ALL_PRIVATE,
  R_ALL_SHARED,
  R_RP_PRIVATE,
  R_RP_SHARED,
  R_RP_GHOST,
  R_ALL_WIRES,
  R_RP_WIRES,
  NUM_REGION_IDS,
};

// Indexed by RegionId; a parent is a RegionId, -1 for a root region.
static const mapperopt::RegionTreeEntry REGION_TREE[NUM_REGION_IDS] = {
    {"all_nodes", false, -1},
    {"rp_all_nodes", true, R_ALL_NODES},    // colour 0 = all_private, colour 1 = all_shared
    {"all_private", false, R_RP_ALL_NODES},
    {"all_shared", false, R_RP_ALL_NODES},
    {"rp_private", true, R_ALL_PRIVATE},    // disjoint, one block per super-piece
    {"rp_shared", true, R_ALL_SHARED},      // disjoint, one block per super-piece
    {"rp_ghost", true, R_ALL_SHARED},       // aliased: the shared nodes a super-piece's wires reach
    {"all_wires", false, -1},
    {"rp_wires", true, R_ALL_WIRES},        // equal partition by super-piece
};

static std::string field_name(FieldID fid) {
  switch (fid) {
    case FID_NODE_CAP: return "node_cap";
    case FID_LEAKAGE: return "leakage";
    case FID_CHARGE: return "charge";
    case FID_NODE_VOLTAGE: return "node_voltage";
    case FID_IN_PTR: return "in_ptr";
    case FID_OUT_PTR: return "out_ptr";
    case FID_INDUCTANCE: return "inductance";
    case FID_RESISTANCE: return "resistance";
    case FID_WIRE_CAP: return "wire_cap";
    default: break;
  }
  if (fid >= FID_CURRENT_0 && fid < FID_CURRENT_0 + WIRE_SEGMENTS)
    return "current_" + std::to_string(fid - FID_CURRENT_0);
  if (fid >= FID_VOLTAGE_1 && fid < FID_VOLTAGE_1 + WIRE_SEGMENTS - 1)
    return "voltage_" + std::to_string(fid - FID_VOLTAGE_1 + 1);
  return "field_" + std::to_string(fid);
}

static const std::vector<FieldID> NODE_FIELDS = {FID_NODE_CAP, FID_LEAKAGE, FID_CHARGE, FID_NODE_VOLTAGE};

static std::vector<FieldID> current_fields() {
  std::vector<FieldID> f;
  for (int i = 0; i < WIRE_SEGMENTS; i++) f.push_back(FID_CURRENT_0 + i);
  return f;
}

static std::vector<FieldID> current_and_voltage_fields() {
  std::vector<FieldID> f = current_fields();
  for (int i = 0; i < WIRE_SEGMENTS - 1; i++) f.push_back(FID_VOLTAGE_1 + i);
  return f;
}

static std::vector<FieldID> wire_fields() {
  std::vector<FieldID> f = {FID_IN_PTR, FID_OUT_PTR, FID_INDUCTANCE, FID_RESISTANCE, FID_WIRE_CAP};
  for (FieldID c : current_and_voltage_fields()) f.push_back(c);
  return f;
}

struct RequirementSpec {
  RegionId region;
  PrivilegeMode privilege;  // LEGION_REDUCE means a sum_f32 reduction
  std::vector<FieldID> fields;
};

struct TaskSpec {
  TaskID id;
  const char *name;
  bool gpu;    // has a GPU variant (registered only in a CUDA build)
  bool index;  // index launch over the super-pieces, else a single launch
  std::vector<RequirementSpec> requirements;
};

// The normative requirement order of docs/running.md.
static const std::vector<TaskSpec> &task_table() {
  static const std::vector<TaskSpec> table = [] {
    std::vector<FieldID> wire_values = {FID_INDUCTANCE, FID_RESISTANCE, FID_WIRE_CAP};
    for (FieldID f : current_and_voltage_fields()) wire_values.push_back(f);
    return std::vector<TaskSpec>{
        {INIT_PIECE_TASK_ID, "init_piece", false, true,
         {{R_RP_PRIVATE, LEGION_WRITE_DISCARD, NODE_FIELDS},
          {R_RP_SHARED, LEGION_WRITE_DISCARD, NODE_FIELDS},
          {R_RP_WIRES, LEGION_WRITE_DISCARD, wire_values}}},
        {INIT_POINTERS_TASK_ID, "init_pointers", false, true,
         {{R_RP_WIRES, LEGION_WRITE_DISCARD, {FID_IN_PTR, FID_OUT_PTR}}}},
        {CALCULATE_NEW_CURRENTS_TASK_ID, "calculate_new_currents", true, true,
         {{R_RP_PRIVATE, LEGION_READ_ONLY, {FID_NODE_VOLTAGE}},
          {R_RP_SHARED, LEGION_READ_ONLY, {FID_NODE_VOLTAGE}},
          {R_RP_GHOST, LEGION_READ_ONLY, {FID_NODE_VOLTAGE}},
          {R_RP_WIRES, LEGION_READ_ONLY, {FID_IN_PTR, FID_OUT_PTR, FID_INDUCTANCE, FID_RESISTANCE, FID_WIRE_CAP}},
          {R_RP_WIRES, LEGION_READ_WRITE, current_and_voltage_fields()}}},
        {DISTRIBUTE_CHARGE_TASK_ID, "distribute_charge", true, true,
         {{R_RP_PRIVATE, LEGION_READ_WRITE, {FID_CHARGE}},
          {R_RP_SHARED, LEGION_REDUCE, {FID_CHARGE}},
          {R_RP_GHOST, LEGION_REDUCE, {FID_CHARGE}},
          {R_RP_WIRES, LEGION_READ_ONLY,
           {FID_IN_PTR, FID_OUT_PTR, FID_CURRENT_0, FID_CURRENT_0 + WIRE_SEGMENTS - 1}}}},
        {UPDATE_VOLTAGES_TASK_ID, "update_voltages", true, true,
         {{R_RP_PRIVATE, LEGION_READ_WRITE, {FID_NODE_VOLTAGE, FID_CHARGE}},
          {R_RP_SHARED, LEGION_READ_WRITE, {FID_NODE_VOLTAGE, FID_CHARGE}},
          {R_RP_PRIVATE, LEGION_READ_ONLY, {FID_NODE_CAP, FID_LEAKAGE}},
          {R_RP_SHARED, LEGION_READ_ONLY, {FID_NODE_CAP, FID_LEAKAGE}}}},
        {CHECK_CIRCUIT_TASK_ID, "check_circuit", false, false,
         {{R_ALL_NODES, LEGION_READ_ONLY, {FID_NODE_VOLTAGE}},
          {R_ALL_WIRES, LEGION_READ_ONLY, current_fields()}}},
    };
  }();
  return table;
}

static const TaskSpec &task_spec(TaskID id) {
  for (const TaskSpec &t : task_table())
    if (t.id == id) return t;
  std::fprintf(stderr, "circuit: internal error: no task %u in the task table\n", id);
  std::abort();
}

static const char *TOP_LEVEL_TASK_NAME = "main";

#ifdef MAPPEROPT_USE_CUDA
static const bool CUDA_BUILD = true;
#else
static const bool CUDA_BUILD = false;
#endif

// ---- Command line -------------------------------------------------------------------------------------------------

enum class ReferenceMode { AUTO, ON, OFF };

// Sequential reference check only up to this many wires, and this much solver work, unless forced (-reference on).
static const int64_t REFERENCE_MAX_WIRES = 100000;
static const double REFERENCE_MAX_WIRE_STEPS = 2e8;  // about 2-3 s on one core
static const double CHECK_TOLERANCE = 1e-4;

[[noreturn]] static void usage_error(const std::string &message) {
  std::fprintf(stderr, "circuit: error: %s\n", message.c_str());
  std::fflush(stderr);
  std::exit(1);
}

static Params parse_params(int argc, char **argv) {
  Params p;
  p.pieces = mapperopt::int_flag(argc, argv, "-p", p.pieces);
  p.pieces_per_super = mapperopt::int_flag(argc, argv, "-pps", p.pieces_per_super);
  p.nodes_per_piece = mapperopt::int_flag(argc, argv, "-npp", p.nodes_per_piece);
  p.wires_per_piece = mapperopt::int_flag(argc, argv, "-wpp", p.wires_per_piece);
  p.pct_local = mapperopt::int_flag(argc, argv, "-pct", p.pct_local);
  p.loops = mapperopt::int_flag(argc, argv, "-l", p.loops);
  p.steps = mapperopt::int_flag(argc, argv, "-i", p.steps);
  p.prune = mapperopt::int_flag(argc, argv, "-prune", p.prune);
  p.warmup = mapperopt::int_flag(argc, argv, "-warmup", p.warmup);
  p.seed = static_cast<uint64_t>(mapperopt::int_flag(argc, argv, "-seed", static_cast<long long>(p.seed)));
  p.corrupt = mapperopt::has_flag(argc, argv, "-test-corrupt") ? 1 : 0;
  if (p.pieces < 1) usage_error("-p must be at least 1");
  if (p.pieces_per_super < 1 || p.pieces % p.pieces_per_super != 0)
    usage_error("-pps must be at least 1 and divide -p (" + std::to_string(p.pieces) + ")");
  if (p.nodes_per_piece < 1) usage_error("-npp must be at least 1");
  if (p.wires_per_piece < 1) usage_error("-wpp must be at least 1");
  if (p.pct_local < 0 || p.pct_local > 100) usage_error("-pct must be between 0 and 100");
  if (p.loops < 1) usage_error("-l must be at least 1");
  if (p.steps < 1) usage_error("-i must be at least 1");
  if (p.prune < 0) usage_error("-prune must not be negative");
  if (p.warmup < 0) usage_error("-warmup must not be negative");
  return p;
}

static ReferenceMode parse_reference_mode(int argc, char **argv) {
  const char *mode = mapperopt::flag_value(argc, argv, "-reference");
  if (!mode || std::strcmp(mode, "auto") == 0) return ReferenceMode::AUTO;
  if (std::strcmp(mode, "on") == 0) return ReferenceMode::ON;
  if (std::strcmp(mode, "off") == 0) return ReferenceMode::OFF;
  usage_error(std::string("-reference expects auto, on or off, got '") + mode + "'");
}

// ---- --describe ---------------------------------------------------------------------------------------------------

static std::string describe(const Params &p) {
  std::vector<mapperopt::TaskInfo> tasks;  // the tasks `main` (the top-level task) launches
  for (const TaskSpec &spec : task_table()) {
    mapperopt::TaskInfo info;
    info.name = spec.name;
    info.variants = {"CPU"};
    if (spec.gpu && CUDA_BUILD) info.variants.push_back("GPU");
    info.launch = spec.index ? "index" : "single";
    info.parent = TOP_LEVEL_TASK_NAME;
    if (spec.index) info.domain = {static_cast<long long>(p.superpieces())};
    for (const RequirementSpec &req : spec.requirements) {
      mapperopt::RegionArg arg;
      arg.names = mapperopt::name_chain(REGION_TREE, req.region);
      arg.privilege = mapperopt::privilege_name(req.privilege);
      for (FieldID f : req.fields) arg.fields.push_back(field_name(f));
      if (req.privilege == LEGION_REDUCE) arg.redop = "sum_f32";
      info.regions.push_back(arg);
    }
    tasks.push_back(info);
  }
  return mapperopt::describe_json("circuit", tasks, mapperopt::region_nodes(REGION_TREE, NUM_REGION_IDS));
}

// ---- Tasks --------------------------------------------------------------------------------------------------------

static const Params &task_params(const Task *task) {
  assert(task->arglen == sizeof(Params));
  return *static_cast<const Params *>(task->args);
}

static Rect<1> region_bounds(Runtime *runtime, Context ctx, const RegionRequirement &req) {
  return runtime->get_index_space_domain(ctx, req.region.get_index_space()).bounds<1, coord_t>();
}

// init_piece: initial node values (private and shared nodes) and wire values of every piece of a super-piece.
void init_piece_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  assert(regions.size() == 3);
  const Params &p = task_params(task);
  const int64_t super = task->index_point[0];
  struct NodeAccessors {
    Accessor<LEGION_WRITE_DISCARD, float> cap, leakage, charge, voltage;
    explicit NodeAccessors(const PhysicalRegion &r)
        : cap(r, FID_NODE_CAP), leakage(r, FID_LEAKAGE), charge(r, FID_CHARGE), voltage(r, FID_NODE_VOLTAGE) {}
    void write(int64_t node, const NodeInit &n) const {
      cap[node] = n.node_cap;
      leakage[node] = n.leakage;
      charge[node] = n.charge;
      voltage[node] = n.voltage;
    }
  };
  const NodeAccessors private_nodes(regions[0]), shared_nodes(regions[1]);
  const Accessor<LEGION_WRITE_DISCARD, float> inductance(regions[2], FID_INDUCTANCE),
      resistance(regions[2], FID_RESISTANCE), wire_cap(regions[2], FID_WIRE_CAP);
  std::vector<Accessor<LEGION_WRITE_DISCARD, float>> segments;
  for (FieldID f : current_and_voltage_fields()) segments.emplace_back(regions[2], f);
  for (int64_t piece = super * p.pieces_per_super; piece < (super + 1) * p.pieces_per_super; piece++) {
    for (int64_t n = p.first_private(piece); n < p.first_private(piece) + p.private_per_piece(); n++) {
      NodeInit init = node_initial(p, piece, n);
      if (p.corrupt && n == p.first_private(0)) init.voltage += 1.0f;  // -test-corrupt
      private_nodes.write(n, init);
    }
    for (int64_t n = p.first_shared(piece); n < p.first_shared(piece) + p.shared_per_piece(); n++)
      shared_nodes.write(n, node_initial(p, piece, n));
    for (int64_t w = p.first_wire(piece); w < p.first_wire(piece) + p.wires_per_piece; w++) {
      const WireInit init = wire_initial(p, piece, w);
      inductance[w] = init.inductance;
      resistance[w] = init.resistance;
      wire_cap[w] = init.wire_cap;
      for (const auto &segment : segments) segment[w] = 0.0f;
    }
  }
}

// init_pointers: the wires' end nodes; returns the range of neighbour shared nodes they reach (rp_ghost).
GhostRange init_pointers_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  assert(regions.size() == 1);
  const Params &p = task_params(task);
  const int64_t super = task->index_point[0];
  const Accessor<LEGION_WRITE_DISCARD, Point<1>> in_ptr(regions[0], FID_IN_PTR), out_ptr(regions[0], FID_OUT_PTR);
  GhostRange ghost = {INT64_MAX, INT64_MIN};
  std::vector<int64_t> in, out;
  for (int64_t piece = super * p.pieces_per_super; piece < (super + 1) * p.pieces_per_super; piece++) {
    int64_t lo, hi;
    generate_pointers(p, piece, in, out, lo, hi);
    for (int64_t w = 0; w < p.wires_per_piece; w++) {
      in_ptr[p.first_wire(piece) + w] = Point<1>(in[w]);
      out_ptr[p.first_wire(piece) + w] = Point<1>(out[w]);
    }
    ghost.lo = lo < ghost.lo ? lo : ghost.lo;
    ghost.hi = hi > ghost.hi ? hi : ghost.hi;
  }
  return ghost;
}

// calculate_new_currents: the RLC solve of every wire of a super-piece (compute-bound).
void calculate_new_currents_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx,
                                 Runtime *runtime) {
  assert(regions.size() == 5);
  const Params &p = task_params(task);
  const Rect<1> private_rect = region_bounds(runtime, ctx, task->regions[0]);
  const Rect<1> shared_rect = region_bounds(runtime, ctx, task->regions[1]);
  const Rect<1> wires = region_bounds(runtime, ctx, task->regions[3]);
  const Accessor<LEGION_READ_ONLY, float> v_private(regions[0], FID_NODE_VOLTAGE),
      v_shared(regions[1], FID_NODE_VOLTAGE), v_ghost(regions[2], FID_NODE_VOLTAGE);
  const Accessor<LEGION_READ_ONLY, Point<1>> in_ptr(regions[3], FID_IN_PTR), out_ptr(regions[3], FID_OUT_PTR);
  const Accessor<LEGION_READ_ONLY, float> inductance(regions[3], FID_INDUCTANCE),
      resistance(regions[3], FID_RESISTANCE), wire_cap(regions[3], FID_WIRE_CAP);
  std::vector<Accessor<LEGION_READ_WRITE, float>> current, voltage;
  for (int i = 0; i < WIRE_SEGMENTS; i++) current.emplace_back(regions[4], FID_CURRENT_0 + i);
  for (int i = 0; i < WIRE_SEGMENTS - 1; i++) voltage.emplace_back(regions[4], FID_VOLTAGE_1 + i);
  auto node_voltage = [&](const Point<1> node) {
    if (private_rect.contains(node)) return v_private[node];
    if (shared_rect.contains(node)) return v_shared[node];
    return v_ghost[node];
  };
  for (coord_t w = wires.lo[0]; w <= wires.hi[0]; w++) {
    float I[WIRE_SEGMENTS], v[WIRE_SEGMENTS + 1];
    v[0] = node_voltage(in_ptr[w]);
    v[WIRE_SEGMENTS] = node_voltage(out_ptr[w]);
    for (int i = 0; i < WIRE_SEGMENTS; i++) I[i] = current[i][w];
    for (int i = 1; i < WIRE_SEGMENTS; i++) v[i] = voltage[i - 1][w];
    solve_wire(I, v, inductance[w], resistance[w], wire_cap[w], p.steps);
    for (int i = 0; i < WIRE_SEGMENTS; i++) current[i][w] = I[i];
    for (int i = 1; i < WIRE_SEGMENTS; i++) voltage[i - 1][w] = v[i];
  }
}

// distribute_charge: each wire takes −Δt·I0 from its in-node and gives Δt·I9 to its out-node.
void distribute_charge_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx,
                            Runtime *runtime) {
  assert(regions.size() == 4);
  const Rect<1> private_rect = region_bounds(runtime, ctx, task->regions[0]);
  const Rect<1> shared_rect = region_bounds(runtime, ctx, task->regions[1]);
  const Rect<1> wires = region_bounds(runtime, ctx, task->regions[3]);
  const Accessor<LEGION_READ_WRITE, float> charge_private(regions[0], FID_CHARGE);
  const SumAccessor charge_shared(regions[1], FID_CHARGE, LEGION_REDOP_SUM_FLOAT32);
  const SumAccessor charge_ghost(regions[2], FID_CHARGE, LEGION_REDOP_SUM_FLOAT32);
  const Accessor<LEGION_READ_ONLY, Point<1>> in_ptr(regions[3], FID_IN_PTR), out_ptr(regions[3], FID_OUT_PTR);
  const Accessor<LEGION_READ_ONLY, float> current_in(regions[3], FID_CURRENT_0),
      current_out(regions[3], FID_CURRENT_0 + WIRE_SEGMENTS - 1);
  auto deposit = [&](const Point<1> node, float charge) {
    if (private_rect.contains(node))
      charge_private[node] += charge;
    else if (shared_rect.contains(node))
      charge_shared[node] <<= charge;
    else
      charge_ghost[node] <<= charge;
  };
  for (coord_t w = wires.lo[0]; w <= wires.hi[0]; w++) {
    deposit(in_ptr[w], -DELTA_T * current_in[w]);
    deposit(out_ptr[w], DELTA_T * current_out[w]);
  }
}

// update_voltages: V ← (V + charge/node_cap)·(1 − leakage), charge ← 0, on the private and the shared nodes.
void update_voltages_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx,
                          Runtime *runtime) {
  assert(regions.size() == 4);
  for (int part = 0; part < 2; part++) {  // 0: private nodes (requirements 0, 2); 1: shared nodes (1, 3)
    const Rect<1> nodes = region_bounds(runtime, ctx, task->regions[part]);
    const Accessor<LEGION_READ_WRITE, float> voltage(regions[part], FID_NODE_VOLTAGE),
        charge(regions[part], FID_CHARGE);
    const Accessor<LEGION_READ_ONLY, float> cap(regions[part + 2], FID_NODE_CAP),
        leakage(regions[part + 2], FID_LEAKAGE);
    for (coord_t n = nodes.lo[0]; n <= nodes.hi[0]; n++) {
      voltage[n] = new_voltage(voltage[n], charge[n], cap[n], leakage[n]);
      charge[n] = 0.0f;
    }
  }
}

// check_circuit: sums of all node voltages and all wire currents, and the NaN/Inf count.
CheckSums check_circuit_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx,
                             Runtime *runtime) {
  assert(regions.size() == 2);
  CheckSums sums = {0, 0, 0, 0, 0, -1, -1};
  auto add = [&](double &sum, double &abs_sum, float value, int64_t index, FieldID fid) {
    if (!std::isfinite(value)) {
      if (sums.nonfinite++ == 0) {
        sums.first_bad_index = index;
        sums.first_bad_field = static_cast<int32_t>(fid);
      }
      return;
    }
    sum += value;
    abs_sum += std::fabs(value);
  };
  const Rect<1> nodes = region_bounds(runtime, ctx, task->regions[0]);
  const Accessor<LEGION_READ_ONLY, float> voltage(regions[0], FID_NODE_VOLTAGE);
  for (coord_t n = nodes.lo[0]; n <= nodes.hi[0]; n++)
    add(sums.sum_voltage, sums.abs_voltage, voltage[n], n, FID_NODE_VOLTAGE);
  const Rect<1> wires = region_bounds(runtime, ctx, task->regions[1]);
  for (int i = 0; i < WIRE_SEGMENTS; i++) {
    const Accessor<LEGION_READ_ONLY, float> current(regions[1], FID_CURRENT_0 + i);
    for (coord_t w = wires.lo[0]; w <= wires.hi[0]; w++)
      add(sums.sum_current, sums.abs_current, current[w], w, FID_CURRENT_0 + i);
  }
  return sums;
}

#ifdef MAPPEROPT_USE_CUDA
// GPU variants (circuit.cu).
void calculate_new_currents_gpu_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx,
                                     Runtime *runtime);
void distribute_charge_gpu_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx,
                                Runtime *runtime);
void update_voltages_gpu_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx,
                              Runtime *runtime);
#endif

// ---- Sequential reference (a plain reimplementation over the same generated graph) ------------------------------

static CheckSums reference_sums(const Params &p) {
  const int64_t N = p.num_nodes(), W = p.num_wires();
  std::vector<float> cap(N), leakage(N), charge(N, 0.0f), voltage(N);
  std::vector<float> inductance(W), resistance(W), wire_cap(W);
  std::vector<float> current(W * WIRE_SEGMENTS, 0.0f), interior(W * (WIRE_SEGMENTS - 1), 0.0f);
  std::vector<int64_t> in_ptr(W), out_ptr(W), in, out;
  for (int64_t piece = 0; piece < p.pieces; piece++) {
    auto init_node = [&](int64_t n) {
      const NodeInit init = node_initial(p, piece, n);
      cap[n] = init.node_cap;
      leakage[n] = init.leakage;
      voltage[n] = init.voltage;
    };
    for (int64_t n = p.first_private(piece); n < p.first_private(piece) + p.private_per_piece(); n++) init_node(n);
    for (int64_t n = p.first_shared(piece); n < p.first_shared(piece) + p.shared_per_piece(); n++) init_node(n);
    int64_t lo, hi;
    generate_pointers(p, piece, in, out, lo, hi);
    for (int64_t w = 0; w < p.wires_per_piece; w++) {
      const int64_t wire = p.first_wire(piece) + w;
      const WireInit init = wire_initial(p, piece, wire);
      inductance[wire] = init.inductance;
      resistance[wire] = init.resistance;
      wire_cap[wire] = init.wire_cap;
      in_ptr[wire] = in[w];
      out_ptr[wire] = out[w];
    }
  }
  for (int64_t loop = 0; loop < p.total_loops(); loop++) {
    for (int64_t w = 0; w < W; w++) {
      float *I = &current[w * WIRE_SEGMENTS];
      float v[WIRE_SEGMENTS + 1];
      v[0] = voltage[in_ptr[w]];
      v[WIRE_SEGMENTS] = voltage[out_ptr[w]];
      for (int i = 1; i < WIRE_SEGMENTS; i++) v[i] = interior[w * (WIRE_SEGMENTS - 1) + i - 1];
      solve_wire(I, v, inductance[w], resistance[w], wire_cap[w], p.steps);
      for (int i = 1; i < WIRE_SEGMENTS; i++) interior[w * (WIRE_SEGMENTS - 1) + i - 1] = v[i];
    }
    for (int64_t w = 0; w < W; w++) {
      charge[in_ptr[w]] += -DELTA_T * current[w * WIRE_SEGMENTS];
      charge[out_ptr[w]] += DELTA_T * current[w * WIRE_SEGMENTS + WIRE_SEGMENTS - 1];
    }
    for (int64_t n = 0; n < N; n++) {
      voltage[n] = new_voltage(voltage[n], charge[n], cap[n], leakage[n]);
      charge[n] = 0.0f;
    }
  }
  CheckSums sums = {0, 0, 0, 0, 0, -1, -1};
  for (float v : voltage) {
    sums.sum_voltage += v;
    sums.abs_voltage += std::fabs(v);
  }
  for (float c : current) {
    sums.sum_current += c;
    sums.abs_current += std::fabs(c);
  }
  return sums;
}

// ---- Top-level task -----------------------------------------------------------------------------------------------

struct Handles {
  LogicalRegion region[NUM_REGION_IDS];        // set for regions
  LogicalPartition partition[NUM_REGION_IDS];  // set for partitions
};

static RegionId root_of(RegionId region) {
  int r = region;
  while (REGION_TREE[r].parent >= 0) r = REGION_TREE[r].parent;
  return static_cast<RegionId>(r);
}

// The region requirement `spec` describes; partitions are projected with the identity functor (index launches).
static RegionRequirement make_requirement(const RequirementSpec &spec, const Handles &h) {
  const LogicalRegion parent = h.region[root_of(spec.region)];
  RegionRequirement req;
  if (REGION_TREE[spec.region].partition) {
    const LogicalPartition lp = h.partition[spec.region];
    req = spec.privilege == LEGION_REDUCE
              ? RegionRequirement(lp, 0, LEGION_REDOP_SUM_FLOAT32, LEGION_EXCLUSIVE, parent)
              : RegionRequirement(lp, 0, spec.privilege, LEGION_EXCLUSIVE, parent);
  } else {
    const LogicalRegion lr = h.region[spec.region];
    req = spec.privilege == LEGION_REDUCE ? RegionRequirement(lr, LEGION_REDOP_SUM_FLOAT32, LEGION_EXCLUSIVE, parent)
                                          : RegionRequirement(lr, spec.privilege, LEGION_EXCLUSIVE, parent);
  }
  for (FieldID f : spec.fields) req.add_field(f);
  return req;
}

static IndexLauncher index_launcher(TaskID id, const Handles &h, Rect<1> launch_domain, const Params &p) {
  const TaskSpec &spec = task_spec(id);
  assert(spec.index);
  IndexLauncher launcher(id, launch_domain, TaskArgument(&p, sizeof(p)), ArgumentMap());
  for (const RequirementSpec &req : spec.requirements) launcher.add_region_requirement(make_requirement(req, h));
  launcher.provenance = spec.name;
  return launcher;
}

static TaskLauncher single_launcher(TaskID id, const Handles &h, const Params &p) {
  const TaskSpec &spec = task_spec(id);
  assert(!spec.index);
  TaskLauncher launcher(id, TaskArgument(&p, sizeof(p)));
  for (const RequirementSpec &req : spec.requirements) launcher.add_region_requirement(make_requirement(req, h));
  launcher.provenance = spec.name;
  return launcher;
}

static double now_s() { return Realm::Clock::current_time_in_microseconds() * 1e-6; }

static std::string json_number(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", x);
  return buf;
}

// |got − ref| relative to |ref|, or to 1e-3 of the sum of magnitudes when the signed sum nearly cancels.
static double relative_error(double got, double ref, double ref_abs) {
  const double scale = std::fmax(std::fabs(ref), 1e-3 * ref_abs);
  return scale > 0 ? std::fabs(got - ref) / scale : std::fabs(got - ref);
}

void top_level_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  const InputArgs &args = Runtime::get_input_args();
  const Params p = parse_params(args.argc, args.argv);
  const ReferenceMode reference_mode = parse_reference_mode(args.argc, args.argv);
  const int64_t S = p.superpieces();
  std::printf("circuit: %" PRId64 " pieces in %" PRId64 " super-pieces, %" PRId64 " nodes (%" PRId64
              " shared), %" PRId64 " wires, %" PRId64 " steps, %" PRId64 " untimed + %" PRId64 " timed + %" PRId64
              " untimed loops\n",
              p.pieces, S, p.num_nodes(), p.num_shared(), p.num_wires(), p.steps, p.loops_before(), p.loops,
              p.loops_after());
  std::fflush(stdout);
  const double t_start = now_s();

  // Index spaces and fields.
  const IndexSpaceT<1> node_is = runtime->create_index_space(ctx, Rect<1>(0, p.num_nodes() - 1));
  const IndexSpaceT<1> wire_is = runtime->create_index_space(ctx, Rect<1>(0, p.num_wires() - 1));
  const IndexSpaceT<1> super_is = runtime->create_index_space(ctx, Rect<1>(0, S - 1));
  runtime->attach_name(node_is, "all_nodes");
  runtime->attach_name(wire_is, "all_wires");
  runtime->attach_name(super_is, "superpieces");
  const FieldSpace node_fs = runtime->create_field_space(ctx);
  const FieldSpace wire_fs = runtime->create_field_space(ctx);
  runtime->attach_name(node_fs, "nodes");
  runtime->attach_name(wire_fs, "wires");
  {
    FieldAllocator nodes = runtime->create_field_allocator(ctx, node_fs);
    for (FieldID f : NODE_FIELDS) {
      nodes.allocate_field(sizeof(float), f);
      runtime->attach_name(node_fs, f, field_name(f).c_str());
    }
    FieldAllocator wires = runtime->create_field_allocator(ctx, wire_fs);
    for (FieldID f : wire_fields()) {
      wires.allocate_field(f == FID_IN_PTR || f == FID_OUT_PTR ? sizeof(Point<1>) : sizeof(float), f);
      runtime->attach_name(wire_fs, f, field_name(f).c_str());
    }
  }

  // Regions and partitions (§1.3).
  // Every region and partition is named as soon as it exists, before any task that uses it is launched, so that
  // a mapper always finds the names.
  Handles h;
  auto name_region = [&](RegionId id, LogicalRegion lr) {
    runtime->attach_name(lr, REGION_TREE[id].name);
    h.region[id] = lr;
  };
  auto name_partition = [&](RegionId id, IndexPartition ip, LogicalRegion parent) {
    runtime->attach_name(ip, REGION_TREE[id].name);
    h.partition[id] = runtime->get_logical_partition(ctx, parent, ip);
    runtime->attach_name(h.partition[id], REGION_TREE[id].name);
  };
  name_region(R_ALL_NODES, runtime->create_logical_region(ctx, node_is, node_fs));
  name_region(R_ALL_WIRES, runtime->create_logical_region(ctx, wire_is, wire_fs));
  {
    const IndexSpaceT<1> two = runtime->create_index_space(ctx, Rect<1>(0, 1));
    std::map<DomainPoint, Domain> halves;
    halves[DomainPoint(0)] = Domain(Rect<1>(p.num_shared(), p.num_nodes() - 1));  // all_private
    halves[DomainPoint(1)] = Domain(Rect<1>(0, p.num_shared() - 1));              // all_shared
    const IndexPartition ip =
        runtime->create_partition_by_domain(ctx, node_is, halves, two, true, LEGION_DISJOINT_COMPLETE_KIND);
    name_partition(R_RP_ALL_NODES, ip, h.region[R_ALL_NODES]);
    name_region(R_ALL_PRIVATE, runtime->get_logical_subregion_by_color(ctx, h.partition[R_RP_ALL_NODES], 0));
    name_region(R_ALL_SHARED, runtime->get_logical_subregion_by_color(ctx, h.partition[R_RP_ALL_NODES], 1));
  }
  std::map<DomainPoint, Domain> private_blocks, shared_blocks;
  for (int64_t i = 0; i < S; i++) {
    const int64_t first = i * p.pieces_per_super, end = (i + 1) * p.pieces_per_super;
    private_blocks[DomainPoint(i)] = Domain(Rect<1>(p.first_private(first), p.first_private(end) - 1));
    shared_blocks[DomainPoint(i)] = Domain(Rect<1>(p.first_shared(first), p.first_shared(end) - 1));
  }
  name_partition(R_RP_PRIVATE,
                 runtime->create_partition_by_domain(ctx, h.region[R_ALL_PRIVATE].get_index_space(), private_blocks,
                                                     super_is, true, LEGION_DISJOINT_COMPLETE_KIND),
                 h.region[R_ALL_PRIVATE]);
  name_partition(R_RP_SHARED,
                 runtime->create_partition_by_domain(ctx, h.region[R_ALL_SHARED].get_index_space(), shared_blocks,
                                                     super_is, true, LEGION_DISJOINT_COMPLETE_KIND),
                 h.region[R_ALL_SHARED]);
  name_partition(R_RP_WIRES, runtime->create_equal_partition(ctx, wire_is, super_is), h.region[R_ALL_WIRES]);

  // Initialisation: values, then pointers, whose ghost ranges define rp_ghost.
  const Rect<1> launch_domain(0, S - 1);
  runtime->execute_index_space(ctx, index_launcher(INIT_PIECE_TASK_ID, h, launch_domain, p));
  const FutureMap ghost_ranges =
      runtime->execute_index_space(ctx, index_launcher(INIT_POINTERS_TASK_ID, h, launch_domain, p));
  std::map<DomainPoint, Domain> ghost_blocks;
  for (int64_t i = 0; i < S; i++) {
    const GhostRange g = ghost_ranges.get_result<GhostRange>(DomainPoint(i));
    ghost_blocks[DomainPoint(i)] = g.lo <= g.hi ? Domain(Rect<1>(g.lo, g.hi)) : Domain(Rect<1>(0, -1));
  }
  name_partition(R_RP_GHOST,
                 runtime->create_partition_by_domain(ctx, h.region[R_ALL_SHARED].get_index_space(), ghost_blocks,
                                                     super_is, true, LEGION_ALIASED_KIND),
                 h.region[R_ALL_SHARED]);
  runtime->issue_execution_fence(ctx).get_void_result();
  const double init_time = now_s() - t_start;
  std::printf("INIT TIME = %7.3f s\n", init_time);
  std::fflush(stdout);

  // The main loop: currents, charge, voltages on every super-piece; one trace per loop.
  const TraceID trace_id = runtime->generate_library_trace_ids("circuit", 1);
  const IndexLauncher currents = index_launcher(CALCULATE_NEW_CURRENTS_TASK_ID, h, launch_domain, p);
  const IndexLauncher charge = index_launcher(DISTRIBUTE_CHARGE_TASK_ID, h, launch_domain, p);
  const IndexLauncher voltages = index_launcher(UPDATE_VOLTAGES_TASK_ID, h, launch_domain, p);
  auto run_loops = [&](int64_t count) {
    for (int64_t l = 0; l < count; l++) {
      runtime->begin_trace(ctx, trace_id);
      runtime->execute_index_space(ctx, currents);
      runtime->execute_index_space(ctx, charge);
      runtime->execute_index_space(ctx, voltages);
      runtime->end_trace(ctx, trace_id);
    }
  };
  run_loops(p.loops_before());
  runtime->issue_execution_fence(ctx).get_void_result();
  const double t0 = now_s();
  run_loops(p.loops);
  runtime->issue_execution_fence(ctx).get_void_result();
  const double elapsed = now_s() - t0;
  run_loops(p.loops_after());
  const double gflops = 1e-9 * flops_per_loop(p) * static_cast<double>(p.loops) / elapsed;
  std::printf("ELAPSED TIME = %7.3f s\n", elapsed);
  std::printf("GFLOPS = %7.3f GFLOPS\n", gflops);
  std::fflush(stdout);

  // Check.
  const CheckSums got =
      runtime->execute_task(ctx, single_launcher(CHECK_CIRCUIT_TASK_ID, h, p)).get_result<CheckSums>();
  const bool small_enough = p.num_wires() <= REFERENCE_MAX_WIRES &&
                            static_cast<double>(p.num_wires()) * p.steps * p.total_loops() <= REFERENCE_MAX_WIRE_STEPS;
  const bool use_reference =
      reference_mode == ReferenceMode::ON || (reference_mode == ReferenceMode::AUTO && small_enough);
  bool verified = got.nonfinite == 0;
  std::string mismatch;
  if (!verified)
    mismatch = field_name(got.first_bad_field) + "[" + std::to_string(got.first_bad_index) + "] is not finite (" +
               std::to_string(got.nonfinite) + " values in all)";
  std::string check = "{\"kind\": \"" + std::string(use_reference ? "reference" : "finite") +
                      "\", \"sum_voltage\": " + json_number(got.sum_voltage) +
                      ", \"sum_current\": " + json_number(got.sum_current) +
                      ", \"nonfinite\": " + std::to_string(got.nonfinite);
  if (use_reference) {
    const CheckSums ref = reference_sums(p);
    const double err_v = relative_error(got.sum_voltage, ref.sum_voltage, ref.abs_voltage);
    const double err_i = relative_error(got.sum_current, ref.sum_current, ref.abs_current);
    check += ", \"ref_sum_voltage\": " + json_number(ref.sum_voltage) +
             ", \"ref_sum_current\": " + json_number(ref.sum_current) +
             ", \"rel_err_voltage\": " + json_number(err_v) + ", \"rel_err_current\": " + json_number(err_i) +
             ", \"tolerance\": " + json_number(CHECK_TOLERANCE);
    auto compare = [&](const char *what, double got_sum, double ref_sum, double err) {
      if (verified && !(err <= CHECK_TOLERANCE)) {
        verified = false;
        char buf[256];
        std::snprintf(buf, sizeof(buf), "%s: got %.9g, reference %.9g (relative error %.3g > %g)", what, got_sum,
                      ref_sum, err, CHECK_TOLERANCE);
        mismatch = buf;
      }
    };
    compare("sum_voltage", got.sum_voltage, ref.sum_voltage, err_v);
    compare("sum_current", got.sum_current, ref.sum_current, err_i);
  }
  if (!verified) check += ", \"mismatch\": " + mapperopt::json_string(mismatch);
  check += "}";
  if (verified) {
    std::printf("check: %s passed (sum_voltage %.9g, sum_current %.9g)\n", use_reference ? "reference" : "finite",
                got.sum_voltage, got.sum_current);
  } else {
    std::printf("check: FAILED: %s\n", mismatch.c_str());
    std::fprintf(stderr, "circuit: verification failed: %s\n", mismatch.c_str());
    std::fflush(stderr);
  }
  mapperopt::print_result("circuit", elapsed, p.loops, p.loops_before(), gflops, "GFLOPS", verified, check,
                          p.loops_after());
  if (!verified) Runtime::set_return_code(2);
}

// ---- Registration -------------------------------------------------------------------------------------------------

// A leaf variant of task `id` for processors of `kind`, named after the task (`<task>_cpu`, `<task>_gpu`).
static TaskVariantRegistrar leaf_registrar(TaskID id, Processor::Kind kind) {
  static std::list<std::string> names;  // variant names must outlive registration
  names.push_back(std::string(task_spec(id).name) + (kind == Processor::TOC_PROC ? "_gpu" : "_cpu"));
  TaskVariantRegistrar registrar(id, names.back().c_str());
  registrar.add_constraint(ProcessorConstraint(kind));
  registrar.set_leaf();
  return registrar;
}

int main(int argc, char **argv) {
  const Params params = parse_params(argc, argv);
  parse_reference_mode(argc, argv);
  if (mapperopt::has_flag(argc, argv, "--describe")) {
    std::printf("%s\n", describe(params).c_str());
    std::fflush(stdout);
    return 0;
  }
  mapperopt::load_mapper(argc, argv);
  Runtime::set_top_level_task_id(TOP_LEVEL_TASK_ID);
  {
    TaskVariantRegistrar registrar(TOP_LEVEL_TASK_ID, "main_cpu");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_inner();
    Runtime::preregister_task_variant<top_level_task>(registrar, TOP_LEVEL_TASK_NAME);
  }
  const Processor::Kind CPU = Processor::LOC_PROC;
  Runtime::preregister_task_variant<init_piece_task>(leaf_registrar(INIT_PIECE_TASK_ID, CPU),
                                                     task_spec(INIT_PIECE_TASK_ID).name);
  Runtime::preregister_task_variant<GhostRange, init_pointers_task>(leaf_registrar(INIT_POINTERS_TASK_ID, CPU),
                                                                    task_spec(INIT_POINTERS_TASK_ID).name);
  Runtime::preregister_task_variant<calculate_new_currents_task>(
      leaf_registrar(CALCULATE_NEW_CURRENTS_TASK_ID, CPU), task_spec(CALCULATE_NEW_CURRENTS_TASK_ID).name);
  Runtime::preregister_task_variant<distribute_charge_task>(leaf_registrar(DISTRIBUTE_CHARGE_TASK_ID, CPU),
                                                            task_spec(DISTRIBUTE_CHARGE_TASK_ID).name);
  Runtime::preregister_task_variant<update_voltages_task>(leaf_registrar(UPDATE_VOLTAGES_TASK_ID, CPU),
                                                          task_spec(UPDATE_VOLTAGES_TASK_ID).name);
  Runtime::preregister_task_variant<CheckSums, check_circuit_task>(leaf_registrar(CHECK_CIRCUIT_TASK_ID, CPU),
                                                                   task_spec(CHECK_CIRCUIT_TASK_ID).name);
#ifdef MAPPEROPT_USE_CUDA
  const Processor::Kind GPU = Processor::TOC_PROC;
  Runtime::preregister_task_variant<calculate_new_currents_gpu_task>(
      leaf_registrar(CALCULATE_NEW_CURRENTS_TASK_ID, GPU), task_spec(CALCULATE_NEW_CURRENTS_TASK_ID).name);
  Runtime::preregister_task_variant<distribute_charge_gpu_task>(leaf_registrar(DISTRIBUTE_CHARGE_TASK_ID, GPU),
                                                                task_spec(DISTRIBUTE_CHARGE_TASK_ID).name);
  Runtime::preregister_task_variant<update_voltages_gpu_task>(leaf_registrar(UPDATE_VOLTAGES_TASK_ID, GPU),
                                                              task_spec(UPDATE_VOLTAGES_TASK_ID).name);
#endif
  return Runtime::start(argc, argv);
}
