// features: a Legion program written after Legion's tutorials, knowing nothing of mapperopt, that uses what real
// programs use besides index launches over one partition. Each part builds its own regions and checks its result:
//   inline      an inline mapping in the top-level task: written there, updated by an index launch, read back
//   fillcopy    a fill, an index copy between the pieces of two regions, and a copy of a whole region
//   epoch       a must-epoch launch of two tasks that exchange values through a phase barrier and a region both
//               hold with simultaneous coherence
//   future      a single task's future passed to an index launch, whose future map feeds another index launch that
//               reduces its results into one future
//   projection  an index launch whose pieces a projection functor of the program's own chooses (in reverse order)
//   aliased     two partitions of one region, disjoint pieces and aliased pieces with ghost cells, used by
//               consecutive launches
//   attach      a host buffer attached to a region, updated by an index launch, then detached and read on the host
//   broadcast   an index launch whose points all reduce into one whole region, then one whose points all read it
//   concurrent  a concurrent index launch (its points run at the same time, each on a processor of its own) over as
//               many pieces as there are CPUs
// Flags: -part NAME (repeatable; default: every part), -n N (elements, default 1000), -pieces P (default 4).
// Prints "PART <name> OK" or "PART <name> FAILED: <what>" for each part run, then "ALL OK" (exit 0) or
// "FAILED: <names>" (exit 1). Each task of the must-epoch launch prints "EXCHANGE <index> <memory kind>": where the
// instance it was given lies.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "legion.h"

using namespace Legion;

enum TaskIDs {
  TOP_LEVEL_TASK_ID,
  SET_TASK_ID,
  INCREMENT_TASK_ID,
  SUM_TASK_ID,
  SCALE_TASK_ID,
  MAKE_SCALE_TASK_ID,
  CHECK_PIECE_TASK_ID,
  EXCHANGE_TASK_ID,
  ACCUMULATE_TASK_ID,
};
enum FieldIDs { FID_VAL = 1 };
enum ProjectionIDs { REVERSE_PROJECTION_ID = 7 };

// Values of "set": v[i] = a * i + b.
struct Line {
  int64_t a, b;
};
struct Exchange {
  int index;
  PhaseBarrier written, next;  // `next`: the phase after `written`, whose wait() waits for `written`
};

static int64_t line_sum(const Line &line, const Rect<1> &r) {  // sum of a*i + b over r
  int64_t s = 0;
  for (coord_t i = r.lo[0]; i <= r.hi[0]; i++) s += line.a * i + line.b;
  return s;
}

void set_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const Line line = *static_cast<const Line *>(task->args);
  const FieldAccessor<LEGION_WRITE_DISCARD, int64_t, 1> v(regions[0], FID_VAL);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) v[*p] = line.a * p[0] + line.b;
}

void increment_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_READ_WRITE, int64_t, 1> v(regions[0], FID_VAL);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) v[*p] = v[*p] + 1;
}

int64_t sum_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_READ_ONLY, int64_t, 1> v(regions[0], FID_VAL);
  int64_t s = 0;
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) s += v[*p];
  return s;
}

// Adds 1 to every element of its region, through a reduction.
void accumulate_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const ReductionAccessor<SumReduction<int64_t>, true /*exclusive*/, 1, coord_t, Realm::AffineAccessor<int64_t, 1, coord_t>>
      acc(regions[0], FID_VAL, LEGION_REDOP_SUM_INT64);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) acc[*p] <<= 1;
}

int64_t make_scale_task(const Task *, const std::vector<PhysicalRegion> &, Context, Runtime *) { return 3; }

// Multiplies its piece by the future it was given; returns the piece's new sum.
int64_t scale_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const int64_t factor = task->futures[0].get_result<int64_t>();
  const FieldAccessor<LEGION_READ_WRITE, int64_t, 1> v(regions[0], FID_VAL);
  int64_t s = 0;
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) {
    v[*p] = v[*p] * factor;
    s += v[*p];
  }
  return s;
}

// 1 when the value the future map gave this point (its local argument) is the sum the point's piece should have.
int64_t check_piece_task(const Task *task, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  const IndexPartition ip = *static_cast<const IndexPartition *>(task->args);
  const Rect<1> piece = runtime->get_index_space_domain(ctx, runtime->get_index_subspace(ctx, ip, task->index_point));
  const int64_t got = *static_cast<const int64_t *>(task->local_args);
  return got == 3 * line_sum(Line{1, 0}, piece) ? 1 : 0;
}

// One of the two tasks of the must-epoch launch: writes its slot of the shared mailbox, arrives at the phase
// barrier, waits for the other task's arrival, and returns 1 when it reads the other task's value.
int64_t exchange_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  Exchange ex = *static_cast<const Exchange *>(task->args);
  std::set<Memory> memories;
  regions[0].get_memories(memories);
  for (Memory m : memories)
    std::printf("EXCHANGE %d %s\n", ex.index, m.kind() == Memory::SYSTEM_MEM    ? "SYSMEM"
                                              : m.kind() == Memory::REGDMA_MEM  ? "RDMEM"
                                              : m.kind() == Memory::Z_COPY_MEM  ? "ZCMEM"
                                                                                : "OTHER");
  std::fflush(stdout);
  const FieldAccessor<LEGION_READ_WRITE, int64_t, 1> mailbox(regions[0], FID_VAL);
  mailbox[ex.index] = 100 + ex.index;
  ex.written.arrive(1);
  ex.next.wait();
  return mailbox[1 - ex.index] == 100 + (1 - ex.index) ? 1 : 0;
}

// Point i of a launch over the pieces of a partition gets piece (last - i), whatever the launch domain.
class ReverseProjection : public ProjectionFunctor {
 public:
  bool is_functional() const override { return true; }
  unsigned get_depth() const override { return 0; }
  LogicalRegion project(LogicalPartition upper_bound, const DomainPoint &point, const Domain &) override {
    const Domain colors = runtime->get_index_partition_color_space(upper_bound.get_index_partition());
    return runtime->get_logical_subregion_by_color(upper_bound, DomainPoint(colors.hi()[0] - point[0]));
  }
};

struct Setup {
  Context ctx;
  Runtime *runtime;
  int64_t n;
  int pieces;
  IndexSpace elements, colors;
  FieldSpace fields;
};

static LogicalRegion make_region(const Setup &s, const char *name) {
  LogicalRegion r = s.runtime->create_logical_region(s.ctx, s.elements, s.fields);
  s.runtime->attach_name(r, name);
  return r;
}

static void set_values(const Setup &s, LogicalPartition lp, LogicalRegion parent, Line line) {
  IndexLauncher launcher(SET_TASK_ID, s.colors, TaskArgument(&line, sizeof(line)), ArgumentMap());
  launcher.add_region_requirement(RegionRequirement(lp, 0, LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, parent));
  launcher.add_field(0, FID_VAL);
  s.runtime->execute_index_space(s.ctx, launcher);
}

static void increment(const Setup &s, LogicalPartition lp, LogicalRegion parent) {
  IndexLauncher launcher(INCREMENT_TASK_ID, s.colors, TaskArgument(), ArgumentMap());
  launcher.add_region_requirement(RegionRequirement(lp, 0, LEGION_READ_WRITE, LEGION_EXCLUSIVE, parent));
  launcher.add_field(0, FID_VAL);
  s.runtime->execute_index_space(s.ctx, launcher);
}

static int64_t sum(const Setup &s, LogicalRegion r, LogicalRegion parent) {
  TaskLauncher launcher(SUM_TASK_ID, TaskArgument());
  launcher.add_region_requirement(RegionRequirement(r, LEGION_READ_ONLY, LEGION_EXCLUSIVE, parent));
  launcher.add_field(0, FID_VAL);
  return s.runtime->execute_task(s.ctx, launcher).get_result<int64_t>();
}

static LogicalPartition pieces_of(const Setup &s, LogicalRegion r) {
  IndexPartition ip = s.runtime->create_equal_partition(s.ctx, s.elements, s.colors);
  s.runtime->attach_name(ip, "pieces");
  return s.runtime->get_logical_partition(s.ctx, r, ip);
}

static Rect<1> all(const Setup &s) { return Rect<1>(0, s.n - 1); }

static std::string part_inline(const Setup &s) {
  LogicalRegion r = make_region(s, "inline_data");
  InlineLauncher mapping(RegionRequirement(r, LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, r));
  mapping.add_field(FID_VAL);
  PhysicalRegion pr = s.runtime->map_region(s.ctx, mapping);
  pr.wait_until_valid();
  {
    const FieldAccessor<LEGION_WRITE_DISCARD, int64_t, 1> v(pr, FID_VAL);
    for (coord_t i = 0; i < s.n; i++) v[i] = 2 * i;
  }
  s.runtime->unmap_region(s.ctx, pr);
  increment(s, pieces_of(s, r), r);
  InlineLauncher reading(RegionRequirement(r, LEGION_READ_ONLY, LEGION_EXCLUSIVE, r));
  reading.add_field(FID_VAL);
  pr = s.runtime->map_region(s.ctx, reading);
  pr.wait_until_valid();
  std::string why;
  {
    const FieldAccessor<LEGION_READ_ONLY, int64_t, 1> v(pr, FID_VAL);
    for (coord_t i = 0; i < s.n && why.empty(); i++)
      if (v[i] != 2 * i + 1) why = "element " + std::to_string(i) + " is " + std::to_string(v[i]);
  }
  s.runtime->unmap_region(s.ctx, pr);
  return why;
}

static std::string part_fillcopy(const Setup &s) {
  LogicalRegion a = make_region(s, "copy_source"), b = make_region(s, "copy_middle"), c = make_region(s, "copy_target");
  s.runtime->fill_field<int64_t>(s.ctx, a, a, FID_VAL, 7);
  LogicalPartition a_pieces = pieces_of(s, a), b_pieces = pieces_of(s, b);
  increment(s, a_pieces, a);  // 8 everywhere
  IndexCopyLauncher by_piece(s.colors);
  by_piece.add_copy_requirements(RegionRequirement(a_pieces, 0, LEGION_READ_ONLY, LEGION_EXCLUSIVE, a),
                                 RegionRequirement(b_pieces, 0, LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, b));
  by_piece.add_src_field(0, FID_VAL);
  by_piece.add_dst_field(0, FID_VAL);
  s.runtime->issue_copy_operation(s.ctx, by_piece);
  CopyLauncher whole;
  whole.add_copy_requirements(RegionRequirement(b, LEGION_READ_ONLY, LEGION_EXCLUSIVE, b),
                              RegionRequirement(c, LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, c));
  whole.add_src_field(0, FID_VAL);
  whole.add_dst_field(0, FID_VAL);
  s.runtime->issue_copy_operation(s.ctx, whole);
  const int64_t got = sum(s, c, c);
  return got == 8 * s.n ? "" : "the copy's sum is " + std::to_string(got) + ", not " + std::to_string(8 * s.n);
}

static std::string part_epoch(const Setup &s) {
  IndexSpace slots = s.runtime->create_index_space(s.ctx, Rect<1>(0, 1));
  LogicalRegion mailbox = s.runtime->create_logical_region(s.ctx, slots, s.fields);
  s.runtime->attach_name(mailbox, "mailbox");
  s.runtime->fill_field<int64_t>(s.ctx, mailbox, mailbox, FID_VAL, 0);
  const PhaseBarrier written = s.runtime->create_phase_barrier(s.ctx, 2);
  MustEpochLauncher epoch;
  const PhaseBarrier next = s.runtime->advance_phase_barrier(s.ctx, written);
  const Exchange ex[2] = {{0, written, next}, {1, written, next}};  // the launchers point at them until the launch
  for (int i = 0; i < 2; i++) {
    TaskLauncher launcher(EXCHANGE_TASK_ID, TaskArgument(&ex[i], sizeof(ex[i])));
    launcher.add_region_requirement(
        RegionRequirement(mailbox, LEGION_READ_WRITE, LEGION_SIMULTANEOUS, mailbox).add_field(FID_VAL));
    epoch.add_single_task(DomainPoint(i), launcher);
  }
  FutureMap results = s.runtime->execute_must_epoch(s.ctx, epoch);
  std::string why;
  for (int i = 0; i < 2; i++)
    if (results.get_result<int64_t>(DomainPoint(i)) != 1) why += "task " + std::to_string(i) + " read a wrong value; ";
  const int64_t total = sum(s, mailbox, mailbox);  // what the epoch left in the region
  if (total != 201) why += "after the epoch the mailbox sums to " + std::to_string(total) + ", not 201; ";
  s.runtime->destroy_phase_barrier(s.ctx, written);
  return why;
}

static std::string part_future(const Setup &s) {
  LogicalRegion r = make_region(s, "scaled");
  LogicalPartition lp = pieces_of(s, r);
  set_values(s, lp, r, Line{1, 0});
  const Future factor = s.runtime->execute_task(s.ctx, TaskLauncher(MAKE_SCALE_TASK_ID, TaskArgument()));
  IndexLauncher scale(SCALE_TASK_ID, s.colors, TaskArgument(), ArgumentMap());
  scale.add_future(factor);
  scale.add_region_requirement(RegionRequirement(lp, 0, LEGION_READ_WRITE, LEGION_EXCLUSIVE, r));
  scale.add_field(0, FID_VAL);
  const FutureMap piece_sums = s.runtime->execute_index_space(s.ctx, scale);
  const IndexPartition ip = lp.get_index_partition();
  IndexLauncher check(CHECK_PIECE_TASK_ID, s.colors, TaskArgument(&ip, sizeof(ip)), ArgumentMap(piece_sums));
  const int64_t good = s.runtime->execute_index_space(s.ctx, check, LEGION_REDOP_SUM_INT64).get_result<int64_t>();
  const int64_t total = sum(s, r, r), expected = 3 * line_sum(Line{1, 0}, all(s));
  if (good != s.pieces) return std::to_string(s.pieces - good) + " pieces got a wrong sum from the future map";
  return total == expected ? "" : "the sum is " + std::to_string(total) + ", not " + std::to_string(expected);
}

static std::string part_projection(const Setup &s) {
  LogicalRegion r = make_region(s, "reversed");
  LogicalPartition lp = pieces_of(s, r);
  set_values(s, lp, r, Line{0, 0});
  IndexLauncher launcher(INCREMENT_TASK_ID, s.colors, TaskArgument(), ArgumentMap());
  launcher.add_region_requirement(
      RegionRequirement(lp, REVERSE_PROJECTION_ID, LEGION_READ_WRITE, LEGION_EXCLUSIVE, r).add_field(FID_VAL));
  s.runtime->execute_index_space(s.ctx, launcher);  // every piece once: 1 everywhere
  // Only the first half of the points: the second half of the pieces gets 1 more.
  IndexSpace half = s.runtime->create_index_space(s.ctx, Rect<1>(0, s.pieces / 2 - 1));
  IndexLauncher some(INCREMENT_TASK_ID, half, TaskArgument(), ArgumentMap());
  some.add_region_requirement(
      RegionRequirement(lp, REVERSE_PROJECTION_ID, LEGION_READ_WRITE, LEGION_EXCLUSIVE, r).add_field(FID_VAL));
  s.runtime->execute_index_space(s.ctx, some);
  std::string why;
  for (int c = 0; c < s.pieces; c++) {
    LogicalRegion piece = s.runtime->get_logical_subregion_by_color(s.ctx, lp, DomainPoint(c));
    const Rect<1> bounds = s.runtime->get_index_space_domain(s.ctx, piece.get_index_space());
    const int64_t got = sum(s, piece, r), expected = (c >= s.pieces - s.pieces / 2 ? 2 : 1) * bounds.volume();
    if (got != expected) why += "piece " + std::to_string(c) + " sums to " + std::to_string(got) + "; ";
  }
  return why;
}

static std::string part_aliased(const Setup &s) {
  LogicalRegion r = make_region(s, "stencil");
  LogicalPartition disjoint = pieces_of(s, r);
  const coord_t block = (s.n + s.pieces - 1) / s.pieces;
  Transform<1, 1> transform;
  transform[0][0] = block;
  IndexPartition ghost_ip =
      s.runtime->create_partition_by_restriction(s.ctx, s.elements, s.colors, transform, Rect<1>(-1, block));
  s.runtime->attach_name(ghost_ip, "ghosts");
  LogicalPartition ghost = s.runtime->get_logical_partition(s.ctx, r, ghost_ip);
  std::string why;
  for (int round = 0; round < 2 && why.empty(); round++) {
    if (round == 0)
      set_values(s, disjoint, r, Line{1, 0});
    else
      increment(s, disjoint, r);
    IndexLauncher sums(SUM_TASK_ID, s.colors, TaskArgument(), ArgumentMap());
    sums.add_region_requirement(RegionRequirement(ghost, 0, LEGION_READ_ONLY, LEGION_EXCLUSIVE, r));
    sums.add_field(0, FID_VAL);
    const FutureMap got = s.runtime->execute_index_space(s.ctx, sums);
    for (int c = 0; c < s.pieces; c++) {
      const Rect<1> bounds = s.runtime->get_index_space_domain(
          s.ctx, s.runtime->get_index_subspace(s.ctx, ghost_ip, DomainPoint(c)));
      const int64_t expected = line_sum(Line{1, round}, bounds), value = got.get_result<int64_t>(DomainPoint(c));
      if (value != expected)
        why += "round " + std::to_string(round) + ": ghost piece " + std::to_string(c) + " sums to " +
               std::to_string(value) + ", not " + std::to_string(expected) + "; ";
    }
  }
  return why;
}

static std::string part_attach(const Setup &s) {
  std::vector<int64_t> buffer(s.n);
  for (int64_t i = 0; i < s.n; i++) buffer[i] = 5 * i;
  LogicalRegion r = make_region(s, "attached");
  AttachLauncher attach(LEGION_EXTERNAL_INSTANCE, r, r);
  const std::vector<FieldID> fields(1, FID_VAL);
  attach.initialize_constraints(false /*column major*/, true /*soa*/, fields);
  attach.privilege_fields.insert(FID_VAL);
  Realm::ExternalMemoryResource resource(buffer.data(), buffer.size() * sizeof(int64_t));
  attach.external_resource = &resource;
  PhysicalRegion pr = s.runtime->attach_external_resource(s.ctx, attach);
  increment(s, pieces_of(s, r), r);
  const int64_t got = sum(s, r, r), expected = line_sum(Line{5, 1}, all(s));
  s.runtime->detach_external_resource(s.ctx, pr).wait();
  std::string why;
  if (got != expected) why = "the attached region sums to " + std::to_string(got) + "; ";
  for (int64_t i = 0; i < s.n; i++)
    if (buffer[i] != 5 * i + 1) {
      why += "after detach, host element " + std::to_string(i) + " is " + std::to_string(buffer[i]);
      break;
    }
  return why;
}

static std::string part_broadcast(const Setup &s) {
  LogicalRegion r = make_region(s, "broadcast");
  s.runtime->fill_field<int64_t>(s.ctx, r, r, FID_VAL, 1);
  IndexLauncher accumulate(ACCUMULATE_TASK_ID, s.colors, TaskArgument(), ArgumentMap());
  accumulate.add_region_requirement(
      RegionRequirement(r, LEGION_REDOP_SUM_INT64, LEGION_EXCLUSIVE, r).add_field(FID_VAL));
  s.runtime->execute_index_space(s.ctx, accumulate);
  IndexLauncher read(SUM_TASK_ID, s.colors, TaskArgument(), ArgumentMap());
  read.add_region_requirement(RegionRequirement(r, LEGION_READ_ONLY, LEGION_EXCLUSIVE, r).add_field(FID_VAL));
  const int64_t got = s.runtime->execute_index_space(s.ctx, read, LEGION_REDOP_SUM_INT64).get_result<int64_t>();
  const int64_t expected = s.pieces * s.n * (1 + s.pieces);
  return got == expected ? "" : "the points read " + std::to_string(got) + " in all, not " + std::to_string(expected);
}

static std::string part_concurrent(const Setup &s) {
  LogicalRegion r = make_region(s, "concurrent_data");
  LogicalPartition lp = pieces_of(s, r);
  set_values(s, lp, r, Line{0, 0});
  Machine::ProcessorQuery cpus(Machine::get_machine());
  cpus.only_kind(Processor::LOC_PROC);
  const coord_t points = std::min<coord_t>(s.pieces, coord_t(cpus.count()));
  IndexLauncher launcher(INCREMENT_TASK_ID, s.runtime->create_index_space(s.ctx, Rect<1>(0, points - 1)),
                         TaskArgument(), ArgumentMap());
  launcher.add_region_requirement(
      RegionRequirement(lp, 0, LEGION_READ_WRITE, LEGION_EXCLUSIVE, r).add_field(FID_VAL));
  launcher.concurrent = true;
  s.runtime->execute_index_space(s.ctx, launcher);
  int64_t expected = 0;
  for (coord_t c = 0; c < points; c++)
    expected += s.runtime->get_index_space_domain(s.ctx, s.runtime->get_index_subspace(s.ctx, lp.get_index_partition(),
                                                                                       DomainPoint(c))).get_volume();
  const int64_t got = sum(s, r, r);
  return got == expected ? "" : "the sum is " + std::to_string(got) + ", not " + std::to_string(expected);
}

void top_level_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  Setup s{ctx, runtime, 1000, 4, {}, {}, {}};
  std::vector<std::string> parts;
  const InputArgs &args = Runtime::get_input_args();
  for (int i = 1; i + 1 < args.argc; i++) {
    if (!std::strcmp(args.argv[i], "-n")) s.n = std::atoll(args.argv[i + 1]);
    if (!std::strcmp(args.argv[i], "-pieces")) s.pieces = std::atoi(args.argv[i + 1]);
    if (!std::strcmp(args.argv[i], "-part")) parts.push_back(args.argv[i + 1]);
  }
  using Part = std::string (*)(const Setup &);
  const std::vector<std::pair<std::string, Part>> known = {
      {"inline", part_inline},         {"fillcopy", part_fillcopy}, {"epoch", part_epoch},
      {"future", part_future},         {"projection", part_projection}, {"aliased", part_aliased},
      {"attach", part_attach},         {"broadcast", part_broadcast},   {"concurrent", part_concurrent}};
  if (parts.empty())
    for (const auto &k : known) parts.push_back(k.first);
  s.elements = runtime->create_index_space(ctx, Rect<1>(0, s.n - 1));
  s.colors = runtime->create_index_space(ctx, Rect<1>(0, s.pieces - 1));
  s.fields = runtime->create_field_space(ctx);
  runtime->create_field_allocator(ctx, s.fields).allocate_field(sizeof(int64_t), FID_VAL);
  runtime->attach_name(s.fields, FID_VAL, "val");
  std::string failed;
  for (const std::string &name : parts) {
    Part run = nullptr;
    for (const auto &k : known)
      if (k.first == name) run = k.second;
    const std::string why = run ? run(s) : "no such part";
    std::printf("PART %s %s%s\n", name.c_str(), why.empty() ? "OK" : "FAILED: ", why.c_str());
    std::fflush(stdout);
    if (!why.empty()) failed += (failed.empty() ? "" : " ") + name;
  }
  if (failed.empty())
    std::printf("ALL OK\n");
  else
    std::printf("FAILED: %s\n", failed.c_str());
  std::fflush(stdout);
  if (!failed.empty()) std::exit(1);
}

template <typename T, T (*TASK)(const Task *, const std::vector<PhysicalRegion> &, Context, Runtime *)>
static void leaf(TaskID id, const char *name) {
  TaskVariantRegistrar registrar(id, name);
  registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
  registrar.set_leaf();
  Runtime::preregister_task_variant<T, TASK>(registrar, name);
}

template <void (*TASK)(const Task *, const std::vector<PhysicalRegion> &, Context, Runtime *)>
static void leaf(TaskID id, const char *name) {
  TaskVariantRegistrar registrar(id, name);
  registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
  registrar.set_leaf();
  Runtime::preregister_task_variant<TASK>(registrar, name);
}

int main(int argc, char **argv) {
  Runtime::set_top_level_task_id(TOP_LEVEL_TASK_ID);
  {
    TaskVariantRegistrar registrar(TOP_LEVEL_TASK_ID, "top_level");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    Runtime::preregister_task_variant<top_level_task>(registrar, "top_level");
  }
  leaf<set_task>(SET_TASK_ID, "set");
  leaf<increment_task>(INCREMENT_TASK_ID, "increment");
  leaf<int64_t, sum_task>(SUM_TASK_ID, "sum");
  leaf<int64_t, make_scale_task>(MAKE_SCALE_TASK_ID, "make_scale");
  leaf<int64_t, scale_task>(SCALE_TASK_ID, "scale");
  leaf<int64_t, check_piece_task>(CHECK_PIECE_TASK_ID, "check_piece");
  leaf<int64_t, exchange_task>(EXCHANGE_TASK_ID, "exchange");
  leaf<accumulate_task>(ACCUMULATE_TASK_ID, "accumulate");
  Runtime::preregister_projection_functor(REVERSE_PROJECTION_ID, new ReverseProjection());
  return Runtime::start(argc, argv);
}
