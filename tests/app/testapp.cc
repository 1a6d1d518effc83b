// testapp: a small Legion application for the compiler's tests (not a benchmark). It has named regions and
// partitions (name chains of several depths), 1-D and 2-D index launches, single launches, a reduction, an inner
// task with children, and tasks with CPU and IO variants, so that every DSL statement kind has something to act on.
//
// Flags: -p P (pieces of `grid`, default 4), -tx TX -ty TY (tiles of `mat`, default 2 x 2), -n N (points of `grid`,
// default 4096), -iters K (default 2), -report (each leaf task prints where it ran and the layout of its instances),
// -work-ms W (step sleeps W ms),
// --describe (the application description, docs/dsl-reference.md §12), -mapper PATH.so (and the mapper's -mapper-* flags).
//
// Region tree: grid -> blocks (P pieces, unnamed subregions); grid -> halves -> {left, unnamed} ; left -> left_blocks
// (2 unnamed pieces); mat (2-D) -> tiles (TX x TY); acc (reduction target); extra (used by spawn and its children).
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "app.h"
#include "describe.h"
#include "legion.h"

using namespace Legion;

enum TaskIDs { MAIN_ID = 1, INIT_ID, STEP_ID, TILE_ID, LEFT_WORK_ID, REDUCE_SUM_ID, CHECK_ID, SPAWN_ID, CHILD_ID };
enum FieldIDs { FID_VAL = 1, FID_AUX, FID_M, FID_SUM, FID_X };

namespace {

struct Config {
  long long pieces = 4, tx = 2, ty = 2, n = 4096, iters = 2;
  bool report = false;
};

Config read_config(int argc, char **argv) {
  Config c;
  c.pieces = mapperopt::int_flag(argc, argv, "-p", c.pieces);
  c.tx = mapperopt::int_flag(argc, argv, "-tx", c.tx);
  c.ty = mapperopt::int_flag(argc, argv, "-ty", c.ty);
  c.n = mapperopt::int_flag(argc, argv, "-n", c.n);
  c.iters = mapperopt::int_flag(argc, argv, "-iters", c.iters);
  c.report = mapperopt::has_flag(argc, argv, "-report");
  return c;
}

std::vector<mapperopt::TaskInfo> task_table(const Config &c) {
  using mapperopt::RegionArg;
  const std::vector<long long> blocks = {c.pieces}, tiles = {c.tx, c.ty}, halves = {2};
  return {
      {"main", {"CPU"}, "single", false, false, "", {}, {}},
      {"init", {"CPU"}, "index", false, true, "main", blocks,
       {RegionArg{{"blocks", "grid"}, "write_discard", {"val", "aux"}, ""}}},
      {"step", {"CPU", "IO"}, "index", false, true, "main", blocks,
       {RegionArg{{"blocks", "grid"}, "read_only", {"val"}, ""},
        RegionArg{{"blocks", "grid"}, "read_write", {"aux"}, ""}}},
      {"tile", {"CPU"}, "index", false, true, "main", tiles,
       {RegionArg{{"tiles", "mat"}, "read_write", {"m"}, ""}}},
      {"left_work", {"CPU"}, "index", false, true, "main", halves,
       {RegionArg{{"left_blocks", "left", "halves", "grid"}, "read_write", {"val"}, ""}}},
      {"reduce_sum", {"CPU"}, "index", false, true, "main", blocks,
       {RegionArg{{"blocks", "grid"}, "read_only", {"val"}, ""},
        RegionArg{{"acc"}, "reduce", {"sum"}, "sum_f64"}}},
      {"check", {"CPU", "IO"}, "single", false, true, "main", {},
       {RegionArg{{"grid"}, "read_only", {"val", "aux"}, ""}, RegionArg{{"mat"}, "read_only", {"m"}, ""},
        RegionArg{{"acc"}, "read_only", {"sum"}, ""}, RegionArg{{"extra"}, "read_only", {"x"}, ""}}},
      {"spawn", {"CPU"}, "single", true, false, "main", {}, {RegionArg{{"extra"}, "read_write", {"x"}, ""}}},
      {"child", {"CPU"}, "single", false, true, "spawn", {}, {RegionArg{{"extra"}, "read_write", {"x"}, ""}}},
  };
}

std::vector<mapperopt::RegionNode> region_tree() {
  return {{"grid", "region", ""},        {"blocks", "partition", "grid"}, {"halves", "partition", "grid"},
          {"left", "region", "halves"},  {"left_blocks", "partition", "left"}, {"mat", "region", ""},
          {"tiles", "partition", "mat"}, {"acc", "region", ""},              {"extra", "region", ""}};
}

// -report: one line per leaf task, printed when its work is done, with its processor and, per region, its memory
// and instance layout. -work-ms W makes `step` sleep W ms first (InstanceLimit tests watch mapping and completion).
const char *mem_name(Memory::Kind k) {
  switch (k) {
    case Memory::SYSTEM_MEM: return "SYSMEM";
    case Memory::GPU_FB_MEM: return "FBMEM";
    case Memory::Z_COPY_MEM: return "ZCMEM";
    case Memory::REGDMA_MEM: return "RDMEM";
    case Memory::SOCKET_MEM: return "SOCKMEM";
    default: return "OTHER";
  }
}

std::string proc_json(Processor p) {
  const char *kind = p.kind() == Processor::LOC_PROC ? "CPU" : p.kind() == Processor::IO_PROC ? "IO" : "OTHER";
  Machine::ProcessorQuery q(Machine::get_machine());
  q.only_kind(p.kind()).same_address_space_as(p);
  long long index = 0;
  for (Processor other : q) {
    if (other == p) break;
    index++;
  }
  return std::string("{\"kind\": \"") + kind + "\", \"node\": " + std::to_string(p.address_space()) +
         ", \"index\": " + std::to_string(index) + "}";
}

// Strides in bytes of field `fid` (per dimension), its address modulo 4096 and its origin, from an affine accessor.
template <int DIM>
std::string layout_json(const PhysicalRegion &region, FieldID fid, PrivilegeMode priv) {
  const Rect<DIM> bounds = region.get_bounds<DIM, coord_t>().bounds;
  std::string strides = "[";
  uintptr_t base = 0;
  long long strides_of[DIM];
  if (priv == LEGION_READ_ONLY) {
    const FieldAccessor<LEGION_READ_ONLY, double, DIM, coord_t, Realm::AffineAccessor<double, DIM, coord_t>> a(region,
                                                                                                              fid);
    for (int d = 0; d < DIM; d++) strides_of[d] = a.accessor.strides[d];
    base = reinterpret_cast<uintptr_t>(a.ptr(bounds.lo));
  } else {
    const FieldAccessor<LEGION_READ_WRITE, double, DIM, coord_t, Realm::AffineAccessor<double, DIM, coord_t>> a(region,
                                                                                                               fid);
    for (int d = 0; d < DIM; d++) strides_of[d] = a.accessor.strides[d];
    base = reinterpret_cast<uintptr_t>(a.ptr(bounds.lo));
  }
  for (int d = 0; d < DIM; d++) strides += (d ? ", " : "") + std::to_string(strides_of[d]);
  // origin: the address point 0 would have; equal origins mean one instance shared by several subregions.
  long long origin = (long long)base;
  for (int d = 0; d < DIM; d++) origin -= (long long)bounds.lo[d] * strides_of[d];
  return "{\"field\": " + std::to_string(fid) + ", \"strides\": " + strides + "], \"address_mod_4096\": " +
         std::to_string(base % 4096) + ", \"origin\": " + std::to_string(origin) + "}";
}

void report(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  if (!mapperopt::has_flag(Runtime::get_input_args().argc, Runtime::get_input_args().argv, "-report")) return;
  std::string point = "null";
  if (task->is_index_space) {
    point = "[";
    for (int d = 0; d < task->index_point.get_dim(); d++)
      point += (d ? ", " : "") + std::to_string(task->index_point[d] - task->index_domain.lo()[d]);
    point += "]";
  }
  std::string out = std::string("TESTAPP_RUN {\"task\": \"") + task->get_task_name() + "\", \"point\": " + point +
                    ", \"proc\": " + proc_json(runtime->get_executing_processor(ctx)) + ", \"regions\": [";
  for (size_t r = 0; r < regions.size(); r++) {
    std::set<Memory> memories;
    regions[r].get_memories(memories);
    std::string mem = memories.empty() ? "VIRTUAL" : mem_name(memories.begin()->kind());
    out += std::string(r ? ", " : "") + "{\"index\": " + std::to_string(r) + ", \"memory\": \"" + mem +
           "\", \"fields\": [";
    const RegionRequirement &req = task->regions[r];
    if (req.privilege != LEGION_REDUCE && !memories.empty()) {
      size_t k = 0;
      for (FieldID fid : req.privilege_fields) {
        const PrivilegeMode priv = req.privilege == LEGION_READ_ONLY ? LEGION_READ_ONLY : LEGION_READ_WRITE;
        out += (k++ ? ", " : "") + (req.region.get_dim() == 1 ? layout_json<1>(regions[r], fid, priv)
                                                               : layout_json<2>(regions[r], fid, priv));
      }
    }
    out += "]}";
  }
  out += "]}\n";
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
}

// ------------------------------------------------------------------------------------------ leaf tasks

void init_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  const FieldAccessor<LEGION_WRITE_DISCARD, double, 1, coord_t, Realm::AffineAccessor<double, 1, coord_t>> val(
      regions[0], FID_VAL),
      aux(regions[0], FID_AUX);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) {
    val[*p] = double(p[0]);
    aux[*p] = 0.0;
  }
  report(task, regions, ctx, runtime);
}

void step_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  const FieldAccessor<LEGION_READ_ONLY, double, 1, coord_t, Realm::AffineAccessor<double, 1, coord_t>> val(
      regions[0], FID_VAL);
  const FieldAccessor<LEGION_READ_WRITE, double, 1, coord_t, Realm::AffineAccessor<double, 1, coord_t>> aux(
      regions[1], FID_AUX);
  for (PointInRectIterator<1> p(regions[1].get_bounds<1, coord_t>().bounds); p(); p++) aux[*p] = aux[*p] + val[*p];
  const InputArgs &args = Runtime::get_input_args();
  const long long work_ms = mapperopt::int_flag(args.argc, args.argv, "-work-ms", 0);
  if (work_ms > 0) usleep(useconds_t(work_ms * 1000));
  report(task, regions, ctx, runtime);
}

void tile_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  const FieldAccessor<LEGION_READ_WRITE, double, 2, coord_t, Realm::AffineAccessor<double, 2, coord_t>> m(regions[0],
                                                                                                          FID_M);
  for (PointInRectIterator<2> p(regions[0].get_bounds<2, coord_t>().bounds); p(); p++) m[*p] = m[*p] + 1.0;
  report(task, regions, ctx, runtime);
}

void left_work_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  const FieldAccessor<LEGION_READ_WRITE, double, 1, coord_t, Realm::AffineAccessor<double, 1, coord_t>> val(
      regions[0], FID_VAL);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) val[*p] = val[*p] + 1.0;
  report(task, regions, ctx, runtime);
}

void reduce_sum_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  const FieldAccessor<LEGION_READ_ONLY, double, 1, coord_t, Realm::AffineAccessor<double, 1, coord_t>> val(
      regions[0], FID_VAL);
  const ReductionAccessor<SumReduction<double>, true, 1, coord_t, Realm::AffineAccessor<double, 1, coord_t>> sum(
      regions[1], FID_SUM, LEGION_REDOP_SUM_FLOAT64);
  double total = 0;
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) total += val[*p];
  sum[Point<1>(0)] <<= total;
  report(task, regions, ctx, runtime);
}

void child_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  const FieldAccessor<LEGION_READ_WRITE, double, 1, coord_t, Realm::AffineAccessor<double, 1, coord_t>> x(regions[0],
                                                                                                          FID_X);
  x[Point<1>(0)] = x[Point<1>(0)] + 1.0;
  report(task, regions, ctx, runtime);
}

// An inner task: launches two children on its region (mapped virtually by the DefaultMapper's rule).
void spawn_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  const RegionRequirement &req = task->regions[0];
  for (int k = 0; k < 2; k++) {
    TaskLauncher launcher(CHILD_ID, UntypedBuffer());
    launcher.add_region_requirement(RegionRequirement(req.region, LEGION_READ_WRITE, LEGION_EXCLUSIVE, req.region));
    launcher.add_field(0, FID_X);
    runtime->execute_task(ctx, launcher);
  }
}

// Verifies every result; returns the number of wrong values.
long long check_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  const Config c = *static_cast<const Config *>(task->args);
  const FieldAccessor<LEGION_READ_ONLY, double, 1, coord_t, Realm::AffineAccessor<double, 1, coord_t>> val(
      regions[0], FID_VAL),
      aux(regions[0], FID_AUX), sum(regions[2], FID_SUM), x(regions[3], FID_X);
  const FieldAccessor<LEGION_READ_ONLY, double, 2, coord_t, Realm::AffineAccessor<double, 2, coord_t>> m(regions[1],
                                                                                                         FID_M);
  long long wrong = 0;
  const long long left_end = c.n / 2;  // `left` is the first half; left_work adds 1 per iteration
  double expected_sum = 0;
  for (long long i = 0; i < c.n; i++) {
    const double v = double(i) + (i < left_end ? double(c.iters) : 0.0);
    if (val[i] != v) wrong++;
    expected_sum += v;
  }
  // step runs before left_work in each iteration: aux = sum over k < iters of (i + [left] * k)
  for (long long i = 0; i < c.n; i++) {
    const double a = double(c.iters) * i + (i < left_end ? double(c.iters * (c.iters - 1) / 2) : 0.0);
    if (aux[i] != a) wrong++;
  }
  for (PointInRectIterator<2> p(regions[1].get_bounds<2, coord_t>().bounds); p(); p++)
    if (m[*p] != double(c.iters)) wrong++;
  if (sum[0] != expected_sum) wrong++;
  if (x[0] != 2.0) wrong++;
  report(task, regions, ctx, runtime);
  return wrong;
}

// ------------------------------------------------------------------------------------------ top level

void main_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  const InputArgs &args = Runtime::get_input_args();
  const Config c = read_config(args.argc, args.argv);
  FieldSpace fs1 = runtime->create_field_space(ctx), fs2 = runtime->create_field_space(ctx);
  {
    FieldAllocator a = runtime->create_field_allocator(ctx, fs1);
    a.allocate_field(sizeof(double), FID_VAL);
    a.allocate_field(sizeof(double), FID_AUX);
    a.allocate_field(sizeof(double), FID_SUM);
    a.allocate_field(sizeof(double), FID_X);
    FieldAllocator b = runtime->create_field_allocator(ctx, fs2);
    b.allocate_field(sizeof(double), FID_M);
    runtime->attach_name(fs1, FID_VAL, "val");
    runtime->attach_name(fs1, FID_AUX, "aux");
    runtime->attach_name(fs1, FID_SUM, "sum");
    runtime->attach_name(fs1, FID_X, "x");
    runtime->attach_name(fs2, FID_M, "m");
  }
  IndexSpace is = runtime->create_index_space(ctx, Rect<1>(0, c.n - 1));
  LogicalRegion grid = runtime->create_logical_region(ctx, is, fs1);
  runtime->attach_name(grid, "grid");
  IndexSpace piece_space = runtime->create_index_space(ctx, Rect<1>(0, c.pieces - 1));
  IndexPartition ip = runtime->create_equal_partition(ctx, is, piece_space);
  LogicalPartition blocks = runtime->get_logical_partition(ctx, grid, ip);
  runtime->attach_name(blocks, "blocks");
  IndexSpace two = runtime->create_index_space(ctx, Rect<1>(0, 1));
  LogicalPartition halves = runtime->get_logical_partition(ctx, grid, runtime->create_equal_partition(ctx, is, two));
  runtime->attach_name(halves, "halves");
  LogicalRegion left = runtime->get_logical_subregion_by_color(ctx, halves, DomainPoint(Point<1>(0)));
  runtime->attach_name(left, "left");
  LogicalPartition left_blocks = runtime->get_logical_partition(
      ctx, left, runtime->create_equal_partition(ctx, left.get_index_space(), two));
  runtime->attach_name(left_blocks, "left_blocks");

  IndexSpace mis = runtime->create_index_space(ctx, Rect<2>(Point<2>(0, 0), Point<2>(8 * c.tx - 1, 8 * c.ty - 1)));
  LogicalRegion mat = runtime->create_logical_region(ctx, mis, fs2);
  runtime->attach_name(mat, "mat");
  IndexSpace tile_space = runtime->create_index_space(ctx, Rect<2>(Point<2>(0, 0), Point<2>(c.tx - 1, c.ty - 1)));
  LogicalPartition tiles =
      runtime->get_logical_partition(ctx, mat, runtime->create_equal_partition(ctx, mis, tile_space));
  runtime->attach_name(tiles, "tiles");
  LogicalRegion acc = runtime->create_logical_region(ctx, runtime->create_index_space(ctx, Rect<1>(0, 0)), fs1);
  runtime->attach_name(acc, "acc");
  LogicalRegion extra = runtime->create_logical_region(ctx, runtime->create_index_space(ctx, Rect<1>(0, 0)), fs1);
  runtime->attach_name(extra, "extra");
  runtime->fill_field(ctx, mat, mat, FID_M, 0.0);
  runtime->fill_field(ctx, acc, acc, FID_SUM, 0.0);
  runtime->fill_field(ctx, extra, extra, FID_X, 0.0);

  {
    IndexTaskLauncher l(INIT_ID, piece_space, UntypedBuffer(), ArgumentMap());
    l.add_region_requirement(RegionRequirement(blocks, 0, LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, grid));
    l.add_field(0, FID_VAL);
    l.add_field(0, FID_AUX);
    runtime->execute_index_space(ctx, l);
  }
  for (long long it = 0; it < c.iters; it++) {
    IndexTaskLauncher s(STEP_ID, piece_space, UntypedBuffer(), ArgumentMap());
    s.add_region_requirement(RegionRequirement(blocks, 0, LEGION_READ_ONLY, LEGION_EXCLUSIVE, grid));
    s.add_field(0, FID_VAL);
    s.add_region_requirement(RegionRequirement(blocks, 0, LEGION_READ_WRITE, LEGION_EXCLUSIVE, grid));
    s.add_field(1, FID_AUX);
    runtime->execute_index_space(ctx, s);
    IndexTaskLauncher t(TILE_ID, tile_space, UntypedBuffer(), ArgumentMap());
    t.add_region_requirement(RegionRequirement(tiles, 0, LEGION_READ_WRITE, LEGION_EXCLUSIVE, mat));
    t.add_field(0, FID_M);
    runtime->execute_index_space(ctx, t);
    IndexTaskLauncher w(LEFT_WORK_ID, two, UntypedBuffer(), ArgumentMap());
    w.add_region_requirement(RegionRequirement(left_blocks, 0, LEGION_READ_WRITE, LEGION_EXCLUSIVE, grid));
    w.add_field(0, FID_VAL);
    runtime->execute_index_space(ctx, w);
  }
  {
    IndexTaskLauncher r(REDUCE_SUM_ID, piece_space, UntypedBuffer(), ArgumentMap());
    r.add_region_requirement(RegionRequirement(blocks, 0, LEGION_READ_ONLY, LEGION_EXCLUSIVE, grid));
    r.add_field(0, FID_VAL);
    r.add_region_requirement(RegionRequirement(acc, LEGION_REDOP_SUM_FLOAT64, LEGION_EXCLUSIVE, acc));
    r.add_field(1, FID_SUM);
    runtime->execute_index_space(ctx, r);
  }
  {
    TaskLauncher s(SPAWN_ID, UntypedBuffer());
    s.add_region_requirement(RegionRequirement(extra, LEGION_READ_WRITE, LEGION_EXCLUSIVE, extra));
    s.add_field(0, FID_X);
    runtime->execute_task(ctx, s);
  }
  TaskLauncher check(CHECK_ID, UntypedBuffer(&c, sizeof(c)));
  check.add_region_requirement(RegionRequirement(grid, LEGION_READ_ONLY, LEGION_EXCLUSIVE, grid));
  check.add_field(0, FID_VAL);
  check.add_field(0, FID_AUX);
  check.add_region_requirement(RegionRequirement(mat, LEGION_READ_ONLY, LEGION_EXCLUSIVE, mat));
  check.add_field(1, FID_M);
  check.add_region_requirement(RegionRequirement(acc, LEGION_READ_ONLY, LEGION_EXCLUSIVE, acc));
  check.add_field(2, FID_SUM);
  check.add_region_requirement(RegionRequirement(extra, LEGION_READ_ONLY, LEGION_EXCLUSIVE, extra));
  check.add_field(3, FID_X);
  const long long wrong = runtime->execute_task(ctx, check).get_result<long long>();
  const std::string details = "{\"kind\": \"exact\", \"wrong\": " + std::to_string(wrong) + "}";
  mapperopt::print_result("testapp", 0.0, c.iters, 0, 0.0, "none", wrong == 0, details);
  if (wrong != 0) std::exit(2);
}

template <typename T, T (*TASK)(const Task *, const std::vector<PhysicalRegion> &, Context, Runtime *)>
void register_leaf(TaskID id, const char *name, bool io) {
  for (Processor::Kind kind : {Processor::LOC_PROC, Processor::IO_PROC}) {
    if (kind == Processor::IO_PROC && !io) continue;
    TaskVariantRegistrar r(id, name);
    r.add_constraint(ProcessorConstraint(kind));
    r.set_leaf();
    Runtime::preregister_task_variant<T, TASK>(r, name);
  }
}

template <void (*TASK)(const Task *, const std::vector<PhysicalRegion> &, Context, Runtime *)>
void register_void_leaf(TaskID id, const char *name, bool io) {
  for (Processor::Kind kind : {Processor::LOC_PROC, Processor::IO_PROC}) {
    if (kind == Processor::IO_PROC && !io) continue;
    TaskVariantRegistrar r(id, name);
    r.add_constraint(ProcessorConstraint(kind));
    r.set_leaf();
    Runtime::preregister_task_variant<TASK>(r, name);
  }
}

}  // namespace

int main(int argc, char **argv) {
  const Config c = read_config(argc, argv);
  if (mapperopt::has_flag(argc, argv, "--describe")) {
    std::printf("%s\n", mapperopt::describe_json("testapp", task_table(c), region_tree()).c_str());
    return 0;
  }
  Runtime::set_top_level_task_id(MAIN_ID);
  {
    TaskVariantRegistrar r(MAIN_ID, "main");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    r.set_replicable();
    Runtime::preregister_task_variant<main_task>(r, "main");
  }
  register_void_leaf<init_task>(INIT_ID, "init", false);
  register_void_leaf<step_task>(STEP_ID, "step", true);
  register_void_leaf<tile_task>(TILE_ID, "tile", false);
  register_void_leaf<left_work_task>(LEFT_WORK_ID, "left_work", false);
  register_void_leaf<reduce_sum_task>(REDUCE_SUM_ID, "reduce_sum", false);
  register_void_leaf<child_task>(CHILD_ID, "child", false);
  register_leaf<long long, check_task>(CHECK_ID, "check", true);
  {
    TaskVariantRegistrar r(SPAWN_ID, "spawn");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    r.set_inner();
    Runtime::preregister_task_variant<spawn_task>(r, "spawn");
  }
  mapperopt::load_mapper(argc, argv);
  return Runtime::start(argc, argv);
}
