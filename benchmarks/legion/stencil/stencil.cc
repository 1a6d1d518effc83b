// Stencil: the Parallel Research Kernels 2-D star stencil of radius 2 on Legion (docs/running.md).
//
// Grid G = [0, nx) x [0, ny) of float64 fields `input` and `output`, cut into ntx x nty tiles. Each tile stores its
// block of G plus its own R-wide halo (region `points`, partition `private`); halo data travels through four
// exchange buffers `xm`, `xp`, `ym`, `yp` (partitions `p??_out`: the slot a tile writes; `p??_in`: the neighbour's
// slot a tile reads). One step = `stencil` on every tile (copy the incoming strips into the halo, then
// output += sum of w * input over the star on the active points), then `increment` on every tile (input += 1 on
// the owned points, then write the outgoing strips). Initial input(i, j) = i + j and output = 0, so after T steps
// output = 2T on the active points and input = i + j + T everywhere (PRK's exact check).
//
// Flags: -nx -ny (grid including the border), -ntx -nty (tiles), -tsteps (timed steps), -tprune (untimed steps
// before and after; at least one warm-up step is always run), --describe, -mapper PATH.so (docs/interfaces.md),
// and the test hook -test-skip-halo (no halo exchange: the check fails, exit status 2).
// Build: sources stencil.cc [+ stencil.cu with -DMAPPEROPT_USE_CUDA], include dirs benchmarks/legion/common and
// this folder.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "app.h"
#include "describe.h"
#include "stencil.h"

using namespace Legion;
using namespace stencil;

namespace {

// ---------------------------------------------------------------------------------------------------------------
// Names and requirement tables: used for registration, launches, attach_name and --describe alike.

enum RegionIDs { R_POINTS, R_XM, R_XP, R_YM, R_YP, NUM_REGIONS };
const char *const REGION_NAMES[NUM_REGIONS] = {"points", "xm", "xp", "ym", "yp"};

enum PartitionIDs {
  P_PRIVATE,
  P_XM_OUT, P_XP_OUT, P_YM_OUT, P_YP_OUT,
  P_XM_IN, P_XP_IN, P_YM_IN, P_YP_IN,
  NUM_PARTITIONS
};
const char *const PARTITION_NAMES[NUM_PARTITIONS] = {"private", "pxm_out", "pxp_out", "pym_out", "pyp_out",
                                                     "pxm_in",  "pxp_in",  "pym_in",  "pyp_in"};
const RegionIDs PARTITION_PARENT[NUM_PARTITIONS] = {R_POINTS, R_XM, R_XP, R_YM, R_YP, R_XM, R_XP, R_YM, R_YP};

const char *field_name(FieldID fid) { return fid == FID_INPUT ? "input" : "output"; }

struct ReqSpec {
  PartitionIDs partition;  // the requirement is on partition[t] of the launch point t (identity projection)
  PrivilegeMode privilege;
  std::vector<FieldID> fields;
};

struct TaskSpec {
  TaskID id;
  const char *name;
  bool gpu;  // has a GPU variant (registered only when built with CUDA)
  std::vector<ReqSpec> reqs;
};

// docs/running.md; the order of `reqs` is the normative requirement order.
const std::vector<TaskSpec> &task_table() {
  static const std::vector<TaskSpec> table = {
      {INIT_TILE_TASK_ID, "init_tile", true,
       {{P_PRIVATE, LEGION_WRITE_DISCARD, {FID_INPUT, FID_OUTPUT}},
        {P_XM_OUT, LEGION_WRITE_DISCARD, {FID_INPUT}},
        {P_XP_OUT, LEGION_WRITE_DISCARD, {FID_INPUT}},
        {P_YM_OUT, LEGION_WRITE_DISCARD, {FID_INPUT}},
        {P_YP_OUT, LEGION_WRITE_DISCARD, {FID_INPUT}}}},
      {STENCIL_TASK_ID, "stencil", true,
       {{P_PRIVATE, LEGION_READ_WRITE, {FID_INPUT, FID_OUTPUT}},
        {P_XM_IN, LEGION_READ_ONLY, {FID_INPUT}},
        {P_XP_IN, LEGION_READ_ONLY, {FID_INPUT}},
        {P_YM_IN, LEGION_READ_ONLY, {FID_INPUT}},
        {P_YP_IN, LEGION_READ_ONLY, {FID_INPUT}}}},
      {INCREMENT_TASK_ID, "increment", true,
       {{P_PRIVATE, LEGION_READ_WRITE, {FID_INPUT}},
        {P_XM_OUT, LEGION_WRITE_DISCARD, {FID_INPUT}},
        {P_XP_OUT, LEGION_WRITE_DISCARD, {FID_INPUT}},
        {P_YM_OUT, LEGION_WRITE_DISCARD, {FID_INPUT}},
        {P_YP_OUT, LEGION_WRITE_DISCARD, {FID_INPUT}}}},
      {CHECK_TASK_ID, "check", false, {{P_PRIVATE, LEGION_READ_ONLY, {FID_INPUT, FID_OUTPUT}}}},
  };
  return table;
}

const TaskSpec &spec_of(TaskID id) {
  for (const TaskSpec &spec : task_table())
    if (spec.id == id) return spec;
  std::abort();
}

// ---------------------------------------------------------------------------------------------------------------
// Command line.

struct Config {
  Grid grid;
  long long tsteps, tprune;
  long long warmup() const { return tprune > 1 ? tprune : 1; }  // untimed steps before the timed ones
  long long total_steps() const { return warmup() + tsteps + tprune; }
};

[[noreturn]] void usage_error(const std::string &what) {
  std::fprintf(stderr, "error: %s\n", what.c_str());
  std::fflush(stderr);
  std::exit(1);
}

Config parse_config(int argc, char **argv) {
  Config c;
  c.grid.nx = mapperopt::int_flag(argc, argv, "-nx", 12);
  c.grid.ny = mapperopt::int_flag(argc, argv, "-ny", 12);
  c.grid.ntx = mapperopt::int_flag(argc, argv, "-ntx", 4);
  c.grid.nty = mapperopt::int_flag(argc, argv, "-nty", 4);
  c.tsteps = mapperopt::int_flag(argc, argv, "-tsteps", 20);
  c.tprune = mapperopt::int_flag(argc, argv, "-tprune", 5);
  c.grid.skip_halo = mapperopt::has_flag(argc, argv, "-test-skip-halo") ? 1 : 0;
  const Grid &g = c.grid;
  if (g.ntx < 1 || g.nty < 1) usage_error("-ntx and -nty must be at least 1");
  if (g.nx < 2 * RADIUS + 1 || g.ny < 2 * RADIUS + 1)
    usage_error("-nx and -ny must be at least " + std::to_string(2 * RADIUS + 1) + " (the grid includes a " +
                std::to_string(RADIUS) + "-wide border)");
  // Each halo must come from the adjacent tile only: every tile is at least R points wide.
  if (g.nx / g.ntx < RADIUS || g.ny / g.nty < RADIUS)
    usage_error("tiles must be at least " + std::to_string(RADIUS) + " points wide: need nx/ntx >= " +
                std::to_string(RADIUS) + " and ny/nty >= " + std::to_string(RADIUS));
  if (c.tsteps < 1) usage_error("-tsteps must be at least 1");
  if (c.tprune < 0) usage_error("-tprune must not be negative");
  // Values stay exact in float64 far beyond this; the bound only guards against nonsense sizes.
  if (g.nx + g.ny + c.total_steps() > (1LL << 50)) usage_error("problem too large for an exact check");
  return c;
}

// ---------------------------------------------------------------------------------------------------------------
// --describe (docs/interfaces.md).

std::string describe(const Config &c) {
  std::vector<mapperopt::TaskInfo> tasks;
  for (const TaskSpec &spec : task_table()) {
    mapperopt::TaskInfo info;
    info.name = spec.name;
    info.variants = {"CPU"};
#ifdef MAPPEROPT_USE_CUDA
    if (spec.gpu) info.variants.push_back("GPU");
#endif
    info.launch = "index";
    info.inner = false;
    info.leaf = true;
    info.parent = "main";
    info.domain = {c.grid.ntx * c.grid.nty};
    for (const ReqSpec &req : spec.reqs) {
      mapperopt::RegionArg arg;
      arg.names = {PARTITION_NAMES[req.partition], REGION_NAMES[PARTITION_PARENT[req.partition]]};
      arg.privilege = mapperopt::privilege_name(req.privilege);
      for (FieldID f : req.fields) arg.fields.push_back(field_name(f));
      info.regions.push_back(arg);
    }
    tasks.push_back(info);
  }
  std::vector<mapperopt::RegionNode> tree;
  for (int r = 0; r < NUM_REGIONS; r++) tree.push_back({REGION_NAMES[r], "region", ""});
  for (int p = 0; p < NUM_PARTITIONS; p++)
    tree.push_back({PARTITION_NAMES[p], "partition", REGION_NAMES[PARTITION_PARENT[p]]});
  return mapperopt::describe_json("stencil", tasks, tree);
}

// ---------------------------------------------------------------------------------------------------------------
// CPU variants.

template <PrivilegeMode MODE>
using Acc = FieldAccessor<MODE, double, 2, coord_t, Realm::AffineAccessor<double, 2, coord_t>>;

Rect<2> domain_of(Runtime *runtime, Context ctx, const RegionRequirement &req) {
  return runtime->get_index_space_domain(ctx, req.region.get_index_space());
}

// Copies a strip between a buffer slot and the tile's storage: to_buffer ? buffer = tile : tile = buffer.
void copy_strip(const View &tile, const View &buffer, const Strip &s, bool to_buffer) {
  for (long long y = s.rect.lo[1]; y <= s.rect.hi[1]; y++)
    for (long long x = s.rect.lo[0]; x <= s.rect.hi[0]; x++) {
      double *t = tile.at(x + s.shift_x, y + s.shift_y);
      double *b = buffer.at(x, y);
      if (to_buffer)
        *b = *t;
      else
        *t = *b;
    }
}

// Writes the four outgoing strips (requirements 1..4, write-discard) from the tile's `input`.
void write_strips(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime,
                  const Tile &tile, const View &input) {
  for (int r = 1; r <= 4; r++) {
    const Rect<2> slot = domain_of(runtime, ctx, task->regions[r]);
    if (slot.empty()) continue;
    const Acc<LEGION_WRITE_DISCARD> acc(regions[r], FID_INPUT);
    copy_strip(input, view_of(acc, slot), strip_of(tile, r, slot, true), true);
  }
}

void init_tile_cpu(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  assert(regions.size() == 5 && task->arglen == sizeof(Grid));
  const Grid &g = *static_cast<const Grid *>(task->args);
  const Tile tile = tile_of(g, task->index_point[0]);
  const Rect<2> rect = domain_of(runtime, ctx, task->regions[0]);
  const Acc<LEGION_WRITE_DISCARD> in_acc(regions[0], FID_INPUT), out_acc(regions[0], FID_OUTPUT);
  const View input = view_of(in_acc, rect), output = view_of(out_acc, rect);
  // The whole storage block, halo included (halo values are replaced before they are read).
  for (long long y = rect.lo[1]; y <= rect.hi[1]; y++)
    for (long long x = rect.lo[0]; x <= rect.hi[0]; x++) {
      *input.at(x, y) = double((x - tile.ox) + (y - tile.oy));
      *output.at(x, y) = 0.0;
    }
  write_strips(task, regions, ctx, runtime, tile, input);
}

void stencil_cpu(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  assert(regions.size() == 5 && task->arglen == sizeof(Grid));
  const Grid &g = *static_cast<const Grid *>(task->args);
  const Tile tile = tile_of(g, task->index_point[0]);
  const Rect<2> rect = domain_of(runtime, ctx, task->regions[0]);
  const Acc<LEGION_READ_WRITE> in_acc(regions[0], FID_INPUT), out_acc(regions[0], FID_OUTPUT);
  size_t in_stride = 0, out_stride = 0;
  const View input = view_of(in_acc, rect, &in_stride), output = view_of(out_acc, rect, &out_stride);
  // This kernel walks x with unit stride. The message is the one the paper's AutoGuide keys on
  // (docs/running.md); only an F_order (x fastest) SOA layout satisfies it.
  if (in_stride != sizeof(double) || out_stride != sizeof(double)) {
    std::fprintf(stderr, "Assertion failed: stride does not match expected value.\n");
    std::fflush(stderr);
    std::abort();
  }
  for (int r = 1; r <= 4 && !g.skip_halo; r++) {
    const Rect<2> slot = domain_of(runtime, ctx, task->regions[r]);
    if (slot.empty()) continue;
    const Acc<LEGION_READ_ONLY> acc(regions[r], FID_INPUT);
    copy_strip(input, view_of(acc, slot), strip_of(tile, r, slot, false), false);
  }
  if (tile.ax0 >= tile.ax1 || tile.ay0 >= tile.ay1) return;
  const long long sy = input.sy, n = tile.ax1 - tile.ax0;
  for (long long y = tile.ay0; y < tile.ay1; y++) {
    const double *__restrict__ c = input.at(tile.ax0 + tile.ox, y + tile.oy);
    double *__restrict__ o = output.at(tile.ax0 + tile.ox, y + tile.oy);
    for (long long i = 0; i < n; i++) {
      double sum = 0.0;
      for (int k = 1; k <= RADIUS; k++) {
        const double w = 1.0 / (2.0 * k * RADIUS);
        sum += w * (c[i + k] - c[i - k]) + w * (c[i + k * sy] - c[i - k * sy]);
      }
      o[i] += sum;
    }
  }
}

void increment_cpu(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  assert(regions.size() == 5 && task->arglen == sizeof(Grid));
  const Grid &g = *static_cast<const Grid *>(task->args);
  const Tile tile = tile_of(g, task->index_point[0]);
  const Rect<2> rect = domain_of(runtime, ctx, task->regions[0]);
  const Acc<LEGION_READ_WRITE> in_acc(regions[0], FID_INPUT);
  const View input = view_of(in_acc, rect);
  for (long long y = tile.y0; y < tile.y1; y++)
    for (long long x = tile.x0; x < tile.x1; x++) *input.at(x + tile.ox, y + tile.oy) += 1.0;
  write_strips(task, regions, ctx, runtime, tile, input);
}

// PRK's tolerance: relative 1e-8.
constexpr double EPSILON = 1e-8;

CheckResult check_cpu(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  assert(regions.size() == 1 && task->arglen == sizeof(CheckArgs));
  const CheckArgs &args = *static_cast<const CheckArgs *>(task->args);
  const Tile tile = tile_of(args.grid, task->index_point[0]);
  const Rect<2> rect = domain_of(runtime, ctx, task->regions[0]);
  const Acc<LEGION_READ_ONLY> in_acc(regions[0], FID_INPUT), out_acc(regions[0], FID_OUTPUT);
  const View input = view_of(in_acc, rect), output = view_of(out_acc, rect);
  CheckResult result{0.0, 0, 0, 0, 0, 0.0, 0.0};
  const double T = double(args.steps);
  auto compare = [&](int field, long long x, long long y, double value, double expected) {
    const double err = std::fabs(value - expected);
    if (!(err <= result.max_abs_err)) result.max_abs_err = std::isnan(err) ? INFINITY : err;
    if (err <= EPSILON * std::fmax(1.0, std::fabs(expected))) return;
    if (result.mismatches++ == 0) {
      result.field = field;
      result.x = x;
      result.y = y;
      result.value = value;
      result.expected = expected;
    }
  };
  for (long long y = tile.y0; y < tile.y1; y++)
    for (long long x = tile.x0; x < tile.x1; x++) {
      compare(FID_INPUT, x, y, *input.at(x + tile.ox, y + tile.oy), double(x + y) + T);
      const bool active = x >= tile.ax0 && x < tile.ax1 && y >= tile.ay0 && y < tile.ay1;
      compare(FID_OUTPUT, x, y, *output.at(x + tile.ox, y + tile.oy), active ? 2.0 * T : 0.0);
    }
  return result;
}

// ---------------------------------------------------------------------------------------------------------------
// Top level.

struct Tree {
  LogicalRegion regions[NUM_REGIONS];
  LogicalPartition partitions[NUM_PARTITIONS];
};

Tree create_tree(Context ctx, Runtime *runtime, const Grid &g, IndexSpace colors) {
  const long long R = RADIUS, ntiles = g.ntx * g.nty;
  Tree tree;
  FieldSpace fs_points = runtime->create_field_space(ctx);
  FieldSpace fs_buffer = runtime->create_field_space(ctx);
  runtime->attach_name(fs_points, "points_fields");
  runtime->attach_name(fs_buffer, "buffer_fields");
  {
    FieldAllocator a = runtime->create_field_allocator(ctx, fs_points);
    a.allocate_field(sizeof(double), FID_INPUT);
    a.allocate_field(sizeof(double), FID_OUTPUT);
    FieldAllocator b = runtime->create_field_allocator(ctx, fs_buffer);
    b.allocate_field(sizeof(double), FID_INPUT);
  }
  for (FieldID f : {FID_INPUT, FID_OUTPUT}) runtime->attach_name(fs_points, f, field_name(f));
  runtime->attach_name(fs_buffer, FID_INPUT, field_name(FID_INPUT));

  const Rect<2> bounds[NUM_REGIONS] = {
      Rect<2>(Point<2>(0, 0), Point<2>(g.nx + g.ntx * 2 * R - 1, g.ny + g.nty * 2 * R - 1)),  // points
      Rect<2>(Point<2>(0, 0), Point<2>(g.ntx * R - 1, g.ny - 1)),                            // xm
      Rect<2>(Point<2>(0, 0), Point<2>(g.ntx * R - 1, g.ny - 1)),                            // xp
      Rect<2>(Point<2>(0, 0), Point<2>(g.nx - 1, g.nty * R - 1)),                            // ym
      Rect<2>(Point<2>(0, 0), Point<2>(g.nx - 1, g.nty * R - 1)),                            // yp
  };
  for (int r = 0; r < NUM_REGIONS; r++) {
    IndexSpace is = runtime->create_index_space(ctx, Domain(bounds[r]));
    runtime->attach_name(is, REGION_NAMES[r]);
    tree.regions[r] = runtime->create_logical_region(ctx, is, r == R_POINTS ? fs_points : fs_buffer);
    runtime->attach_name(tree.regions[r], REGION_NAMES[r]);
  }

  // Colour t -> rectangle, per partition.
  std::map<DomainPoint, Domain> rects[NUM_PARTITIONS];
  const Rect<2> empty(Point<2>(0, 0), Point<2>(-1, -1));
  for (long long t = 0; t < ntiles; t++) {
    const Tile tile = tile_of(g, t);
    const DomainPoint c = DomainPoint(Point<1>(t));
    auto xslot = [&](long long ix) {  // slot of tile (ix, tile.iy) in xm / xp
      return Rect<2>(Point<2>(ix * R, tile.y0), Point<2>((ix + 1) * R - 1, tile.y1 - 1));
    };
    auto yslot = [&](long long iy) {  // slot of tile (tile.ix, iy) in ym / yp
      return Rect<2>(Point<2>(tile.x0, iy * R), Point<2>(tile.x1 - 1, (iy + 1) * R - 1));
    };
    rects[P_PRIVATE][c] = Domain(Rect<2>(Point<2>(tile.x0 + tile.ox - R, tile.y0 + tile.oy - R),
                                         Point<2>(tile.x1 + tile.ox + R - 1, tile.y1 + tile.oy + R - 1)));
    rects[P_XM_OUT][c] = rects[P_XP_OUT][c] = Domain(xslot(tile.ix));
    rects[P_YM_OUT][c] = rects[P_YP_OUT][c] = Domain(yslot(tile.iy));
    rects[P_XM_IN][c] = Domain(tile.ix > 0 ? xslot(tile.ix - 1) : empty);
    rects[P_XP_IN][c] = Domain(tile.ix + 1 < g.ntx ? xslot(tile.ix + 1) : empty);
    rects[P_YM_IN][c] = Domain(tile.iy > 0 ? yslot(tile.iy - 1) : empty);
    rects[P_YP_IN][c] = Domain(tile.iy + 1 < g.nty ? yslot(tile.iy + 1) : empty);
  }
  for (int p = 0; p < NUM_PARTITIONS; p++) {
    const bool complete = p <= P_YP_OUT;
    const LogicalRegion parent = tree.regions[PARTITION_PARENT[p]];
    IndexPartition ip = runtime->create_partition_by_domain(
        ctx, parent.get_index_space(), rects[p], colors, true /*perform_intersections*/,
        complete ? LEGION_DISJOINT_COMPLETE_KIND : LEGION_DISJOINT_INCOMPLETE_KIND);
    runtime->attach_name(ip, PARTITION_NAMES[p]);
    tree.partitions[p] = runtime->get_logical_partition(ctx, parent, ip);
    runtime->attach_name(tree.partitions[p], PARTITION_NAMES[p]);
  }
  return tree;
}

FutureMap launch(Context ctx, Runtime *runtime, const Tree &tree, TaskID id, const Domain &domain,
                 const TaskArgument &arg) {
  const TaskSpec &spec = spec_of(id);
  IndexLauncher launcher(id, domain, arg, ArgumentMap());
  for (const ReqSpec &req : spec.reqs) {
    RegionRequirement rr(tree.partitions[req.partition], 0 /*identity projection*/, req.privilege,
                         LEGION_EXCLUSIVE, tree.regions[PARTITION_PARENT[req.partition]]);
    for (FieldID f : req.fields) rr.add_field(f);
    launcher.add_region_requirement(rr);
  }
  launcher.provenance = spec.name;
  return runtime->execute_index_space(ctx, launcher);
}

double now_s() { return Realm::Clock::current_time_in_microseconds() * 1e-6; }

void top_level_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  const InputArgs &args = Runtime::get_input_args();
  const Config config = parse_config(args.argc, args.argv);
  const Grid &g = config.grid;
  const long long ntiles = g.ntx * g.nty;
  std::printf("Stencil (PRK star, radius %d): grid %lld x %lld, tiles %lld x %lld, steps %lld timed + %lld "
              "warm-up + %lld after\n",
              RADIUS, g.nx, g.ny, g.ntx, g.nty, config.tsteps, config.warmup(), config.tprune);
  std::fflush(stdout);

  const Rect<1> color_rect(0, ntiles - 1);
  const Domain domain(color_rect);
  IndexSpace colors = runtime->create_index_space(ctx, domain);
  runtime->attach_name(colors, "tiles");
  const Tree tree = create_tree(ctx, runtime, g, colors);
  const TaskArgument grid_arg(&g, sizeof(Grid));

  launch(ctx, runtime, tree, INIT_TILE_TASK_ID, domain, grid_arg);
  const TraceID trace = runtime->generate_dynamic_trace_id();
  auto step = [&]() {
    runtime->begin_trace(ctx, trace);
    launch(ctx, runtime, tree, STENCIL_TASK_ID, domain, grid_arg);
    launch(ctx, runtime, tree, INCREMENT_TASK_ID, domain, grid_arg);
    runtime->end_trace(ctx, trace);
  };
  for (long long s = 0; s < config.warmup(); s++) step();
  runtime->issue_execution_fence(ctx).get_void_result();
  const double start = now_s();
  for (long long s = 0; s < config.tsteps; s++) step();
  runtime->issue_execution_fence(ctx).get_void_result();
  const double time = now_s() - start;
  for (long long s = 0; s < config.tprune; s++) step();

  const CheckArgs check_args{g, config.total_steps()};
  FutureMap checks = launch(ctx, runtime, tree, CHECK_TASK_ID, domain, TaskArgument(&check_args, sizeof(check_args)));
  CheckResult total{0.0, 0, 0, 0, 0, 0.0, 0.0};
  for (long long t = 0; t < ntiles; t++) {
    const CheckResult r = checks.get_result<CheckResult>(DomainPoint(Point<1>(t)));
    if (!(r.max_abs_err <= total.max_abs_err)) total.max_abs_err = r.max_abs_err;
    if (r.mismatches > 0 && total.mismatches == 0) total = CheckResult{total.max_abs_err, 0, r.field, r.x, r.y,
                                                                       r.value, r.expected};
    total.mismatches += r.mismatches;
  }
  const bool verified = total.mismatches == 0;

  // PRK flop count: 2 * (4R + 1) + 1 = 19 flops per active point per step.
  const double active = double(g.nx - 2 * RADIUS) * double(g.ny - 2 * RADIUS);
  const double gflops = (2.0 * (4 * RADIUS + 1) + 1) * active * double(config.tsteps) / time / 1e9;
  // Memory traffic per step, counting each value once however often the kernels touch it: `stencil` reads input
  // and output and writes output on every active point (3 x 8 bytes), `increment` reads and writes input on every
  // point of G (2 x 8 bytes). The halo strips (4R values per tile row/column, twice per step) are not counted.
  const double bytes_per_step = 24.0 * active + 16.0 * double(g.nx) * double(g.ny);
  const double bandwidth = bytes_per_step * double(config.tsteps) / time / 1e9;
  std::printf("ELAPSED TIME = %7.3f s\n", time);
  std::printf("GFLOPS = %7.3f GFLOPS\n", gflops);
  std::printf("BANDWIDTH = %.3f GB/s\n", bandwidth);
  if (!verified)
    std::printf("FAILURE: %lld mismatching values; first: %s(%lld, %lld) = %.17g, expected %.17g\n",
                total.mismatches, field_name(total.field), total.x, total.y, total.value, total.expected);

  char check[512];
  if (verified) {
    std::snprintf(check, sizeof(check), "{\"kind\": \"analytic\", \"max_abs_err\": %.17g}", total.max_abs_err);
  } else {
    std::snprintf(check, sizeof(check),
                  "{\"kind\": \"analytic\", \"max_abs_err\": %.17g, \"mismatches\": %lld, \"first_mismatch\": "
                  "{\"field\": \"%s\", \"x\": %lld, \"y\": %lld, \"value\": %.17g, \"expected\": %.17g}}",
                  std::isfinite(total.max_abs_err) ? total.max_abs_err : 1e308, total.mismatches,
                  field_name(total.field), total.x, total.y, std::isfinite(total.value) ? total.value : 1e308,
                  total.expected);
  }
  mapperopt::print_result("stencil", time, config.tsteps, config.warmup(), gflops, "GFLOPS", verified, check,
                          config.tprune);
  if (!verified) Runtime::set_return_code(2);
}

// ---------------------------------------------------------------------------------------------------------------
// Registration.

template <TaskFn *FN>
void register_variant(const TaskSpec &spec, Processor::Kind kind, LayoutConstraintID layout0 = 0) {
  TaskVariantRegistrar registrar(spec.id, kind == Processor::TOC_PROC ? "gpu" : "cpu");
  registrar.add_constraint(ProcessorConstraint(kind));
  registrar.set_leaf(true);
  if (layout0) registrar.add_layout_constraint_set(0, layout0);
  Runtime::preregister_task_variant<FN>(registrar, spec.name);
}

}  // namespace

int main(int argc, char **argv) {
  const Config config = parse_config(argc, argv);
  if (mapperopt::has_flag(argc, argv, "--describe")) {
    std::printf("%s\n", describe(config).c_str());
    return 0;
  }

  Runtime::set_top_level_task_id(TOP_LEVEL_TASK_ID);
  {
    TaskVariantRegistrar registrar(TOP_LEVEL_TASK_ID, "cpu");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    Runtime::preregister_task_variant<top_level_task>(registrar, "main");
  }
  // The CPU stencil kernel needs x fastest (SOA F_order); declaring it lets -lg:safe_mapper report a mapper that
  // violates it. The kernel checks the stride itself as well (the message AutoGuide keys on).
  LayoutConstraintRegistrar x_fastest;
  x_fastest.add_constraint(OrderingConstraint({LEGION_DIM_X, LEGION_DIM_Y, LEGION_DIM_F}, false /*contiguous*/));
  const LayoutConstraintID x_fastest_id = Runtime::preregister_layout(x_fastest);

  register_variant<init_tile_cpu>(spec_of(INIT_TILE_TASK_ID), Processor::LOC_PROC);
  register_variant<stencil_cpu>(spec_of(STENCIL_TASK_ID), Processor::LOC_PROC, x_fastest_id);
  register_variant<increment_cpu>(spec_of(INCREMENT_TASK_ID), Processor::LOC_PROC);
  {
    TaskVariantRegistrar registrar(CHECK_TASK_ID, "cpu");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf(true);
    Runtime::preregister_task_variant<CheckResult, check_cpu>(registrar, spec_of(CHECK_TASK_ID).name);
  }
#ifdef MAPPEROPT_USE_CUDA
  register_variant<init_tile_gpu>(spec_of(INIT_TILE_TASK_ID), Processor::TOC_PROC);
  register_variant<stencil_gpu>(spec_of(STENCIL_TASK_ID), Processor::TOC_PROC);
  register_variant<increment_gpu>(spec_of(INCREMENT_TASK_ID), Processor::TOC_PROC);
#endif

  mapperopt::load_mapper(argc, argv);
  return Runtime::start(argc, argv);
}
