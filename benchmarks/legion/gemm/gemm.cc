// The GEMM layer (gemm.h): regions, partitions, inputs, checks, the CPU variants and the result line shared by
// the distributed matrix multiplies. The CPU leaf calls OpenBLAS from the `scipy-openblas32` wheel (found by
// mapperopt's toolchain, like Legion), single-threaded: each Legion CPU processor is one core.
#include <cblas.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "app.h"
#include "describe.h"
#include "gemm.h"

using namespace Legion;

namespace gemm {

double now_s() { return Realm::Clock::current_time_in_microseconds() * 1e-6; }

[[noreturn]] static void usage_error(const std::string &what) {
  std::fprintf(stderr, "error: %s\n", what.c_str());
  std::fflush(stderr);
  std::exit(1);
}

Config parse_config(int argc, char **argv, long long default_g) {
  Config c;
  c.n = mapperopt::int_flag(argc, argv, "-n", 256);
  c.g = mapperopt::int_flag(argc, argv, "-g", default_g);
  c.iterations = mapperopt::int_flag(argc, argv, "-iters", 10);
  c.warmup = mapperopt::int_flag(argc, argv, "-warmup", 2);
  c.reduce = mapperopt::has_flag(argc, argv, "-reduce");
  c.inputs.n = c.n;
  c.inputs.seed = (unsigned long long)mapperopt::int_flag(argc, argv, "-seed", 12345);
  const char *check = mapperopt::flag_value(argc, argv, "-check");
  if (check == nullptr)
    c.inputs.kind = c.n <= 512 ? INPUT_DENSE : INPUT_STRUCTURED;
  else if (std::strcmp(check, "full") == 0)
    c.inputs.kind = INPUT_DENSE;
  else if (std::strcmp(check, "structured") == 0)
    c.inputs.kind = INPUT_STRUCTURED;
  else
    usage_error(std::string("-check expects 'full' or 'structured', got '") + check + "'");
  if (c.g < 1) usage_error("-g must be at least 1");
  if (c.n < c.g) usage_error("-n must be at least -g (every tile needs a row and a column)");
  // Values stay exact in float64 while n * 64 < 2^53; the BLAS takes 32-bit sizes.
  if (c.n > (1LL << 30)) usage_error("-n is too large");
  if (c.iterations < 1) usage_error("-iters must be at least 1");
  if (c.warmup < 1) usage_error("-warmup must be at least 1");
  return c;
}

// ---------------------------------------------------------------------------------------------------------------
// Regions and partitions.

// rows x cols contiguous blocks of the n x n region.
static LogicalPartition tile_partition(Context ctx, Runtime *runtime, LogicalRegion region, IndexSpace grid,
                                       long long n, long long rows, long long cols, const char *name) {
  std::map<DomainPoint, Domain> rects;
  for (long long a = 0; a < rows; a++)
    for (long long b = 0; b < cols; b++)
      rects[DomainPoint(Point<2>(a, b))] =
          Domain(Rect<2>(Point<2>(block_lo(n, rows, a), block_lo(n, cols, b)),
                         Point<2>(block_lo(n, rows, a + 1) - 1, block_lo(n, cols, b + 1) - 1)));
  IndexPartition ip = runtime->create_partition_by_domain(ctx, region.get_index_space(), rects, grid,
                                                          false /*perform_intersections*/,
                                                          LEGION_DISJOINT_COMPLETE_KIND);
  runtime->attach_name(ip, name);
  LogicalPartition lp = runtime->get_logical_partition(ctx, region, ip);
  runtime->attach_name(lp, name);
  return lp;
}

Matrices create_matrices(Context ctx, Runtime *runtime, const Config &config) {
  const long long tiles[3][2] = {{config.g, config.g}, {config.g, config.g}, {config.g, config.g}};
  return create_matrices(ctx, runtime, config.n, tiles);
}

Matrices create_matrices(Context ctx, Runtime *runtime, long long n, const long long tiles[3][2]) {
  Matrices m;
  FieldSpace fs = runtime->create_field_space(ctx);
  runtime->attach_name(fs, "matrix_fields");
  {
    FieldAllocator a = runtime->create_field_allocator(ctx, fs);
    a.allocate_field(sizeof(double), FID_VAL);
  }
  runtime->attach_name(fs, FID_VAL, "val");
  const Rect<2> bounds(Point<2>(0, 0), Point<2>(n - 1, n - 1));
  IndexSpace is = runtime->create_index_space(ctx, Domain(bounds));
  runtime->attach_name(is, "matrix");
  LogicalRegion *regions[3] = {&m.A, &m.B, &m.C};
  const char *names[3] = {"A", "B", "C"};
  for (int r = 0; r < 3; r++) {
    *regions[r] = runtime->create_logical_region(ctx, is, fs);
    runtime->attach_name(*regions[r], names[r]);
  }
  LogicalPartition *parts[3] = {&m.A_tiles, &m.B_tiles, &m.C_tiles};
  const char *part_names[3] = {"A_tiles", "B_tiles", "C_tiles"};
  for (int r = 0; r < 3; r++) {
    IndexSpace colours = runtime->create_index_space(
        ctx, Domain(Rect<2>(Point<2>(0, 0), Point<2>(tiles[r][0] - 1, tiles[r][1] - 1))));
    runtime->attach_name(colours, (std::string(names[r]) + "_tile_grid").c_str());
    if (r == 0) m.grid = colours;
    *parts[r] = tile_partition(ctx, runtime, *regions[r], colours, n, tiles[r][0], tiles[r][1], part_names[r]);
  }
  return m;
}

RegionRequirement tile_req(LogicalPartition part, LogicalRegion parent, PrivilegeMode privilege, ProjectionID proj) {
  RegionRequirement rr(part, proj, privilege, LEGION_EXCLUSIVE, parent);
  rr.add_field(FID_VAL);
  return rr;
}

void fill_and_place(Context ctx, Runtime *runtime, const Matrices &m, const Config &config) {
  const Domain grid = runtime->get_index_space_domain(ctx, m.grid);
  const FillArgs args{config.inputs, 0};
  IndexLauncher fill(FILL_TASK_ID, grid, TaskArgument(&args, sizeof(FillArgs)), ArgumentMap());
  fill.add_region_requirement(tile_req(m.A_tiles, m.A, LEGION_WRITE_DISCARD));
  fill.add_region_requirement(tile_req(m.B_tiles, m.B, LEGION_WRITE_DISCARD));
  fill.add_region_requirement(tile_req(m.C_tiles, m.C, LEGION_WRITE_DISCARD));
  runtime->execute_index_space(ctx, fill);
  const TaskID place[3] = {PLACE_A_TASK_ID, PLACE_B_TASK_ID, PLACE_C_TASK_ID};
  const LogicalPartition parts[3] = {m.A_tiles, m.B_tiles, m.C_tiles};
  const LogicalRegion parents[3] = {m.A, m.B, m.C};
  for (int r = 0; r < 3; r++) {
    IndexLauncher launcher(place[r], grid, TaskArgument(), ArgumentMap());
    launcher.add_region_requirement(tile_req(parts[r], parents[r], LEGION_READ_ONLY));
    runtime->execute_index_space(ctx, launcher);
  }
}

void init_cublas(Context ctx, Runtime *runtime, const Matrices &m) {
  IndexLauncher launcher(INIT_CUBLAS_TASK_ID, runtime->get_index_space_domain(ctx, m.grid), TaskArgument(),
                         ArgumentMap());
  runtime->execute_index_space(ctx, launcher);
}

void launch_gemm(Context ctx, Runtime *runtime, const Matrices &m, const Config &config, const Domain &domain,
                 ProjectionID proj_a, ProjectionID proj_b, ProjectionID proj_c) {
  IndexLauncher launcher(GEMM_TASK_ID, domain, TaskArgument(), ArgumentMap());
  if (config.reduce) {
    RegionRequirement rr(m.A_tiles, proj_a, ReductionOpID(LEGION_REDOP_SUM_FLOAT64), LEGION_EXCLUSIVE, m.A);
    rr.add_field(FID_VAL);
    launcher.add_region_requirement(rr);
  } else {
    launcher.add_region_requirement(tile_req(m.A_tiles, m.A, LEGION_READ_WRITE, proj_a));
  }
  launcher.add_region_requirement(tile_req(m.B_tiles, m.B, LEGION_READ_ONLY, proj_b));
  launcher.add_region_requirement(tile_req(m.C_tiles, m.C, LEGION_READ_ONLY, proj_c));
  runtime->execute_index_space(ctx, launcher);
}

// ---------------------------------------------------------------------------------------------------------------
// CPU variants.

using AccRO = FieldAccessor<LEGION_READ_ONLY, double, 2, coord_t, Realm::AffineAccessor<double, 2, coord_t>>;
using AccRW = FieldAccessor<LEGION_READ_WRITE, double, 2, coord_t, Realm::AffineAccessor<double, 2, coord_t>>;
using AccWD = FieldAccessor<LEGION_WRITE_DISCARD, double, 2, coord_t, Realm::AffineAccessor<double, 2, coord_t>>;
using AccSum = ReductionAccessor<SumReduction<double>, false /*exclusive*/, 2, coord_t,
                                 Realm::AffineAccessor<double, 2, coord_t>>;

static Rect<2> rect_of(Runtime *runtime, Context ctx, const RegionRequirement &req) {
  return runtime->get_index_space_domain(ctx, req.region.get_index_space());
}

Tile row_major_tile(const char *task, const char *matrix, int param, double *base, const size_t strides[2],
                    long long rows, long long cols) {
  // strides in bytes: [0] between rows, [1] between columns. A dimension of extent 1 may have any stride.
  const long long row = (long long)(strides[0] / sizeof(double)), col = (long long)(strides[1] / sizeof(double));
  const long long ld = rows > 1 ? row : cols;
  if ((cols > 1 && col != 1) || ld < cols || strides[0] % sizeof(double) != 0) {
    std::fprintf(stderr,
                 " ** On entry to DGEMM parameter number %d had an illegal value\n"
                 "error: %s: the tile of %s (%lld x %lld) is not row-major: row stride %lld, column stride %lld elements "
                 "(the BLAS leaf needs SOA C_order instances: column stride 1, row stride >= %lld)\n",
                 param, task, matrix, rows, cols, row, col, cols);
    std::fflush(stderr);
    std::abort();
  }
  return Tile{base, rows, cols, ld};
}

// The row-major views of requirements 0 (A, read-write or sum-reduction), 1 (B) and 2 (C) of a task_4 point,
// checked in the order of the cuBLAS call's leading dimensions: C (lda, 8), B (ldb, 10), A (ldc, 13).
struct GemmTiles {
  Tile a, b, c;
};

static GemmTiles gemm_tiles(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx,
                            Runtime *runtime) {
  const Rect<2> ra = rect_of(runtime, ctx, task->regions[0]), rb = rect_of(runtime, ctx, task->regions[1]),
                rc = rect_of(runtime, ctx, task->regions[2]);
  size_t sa[2], sb[2], sc[2];
  double *pa;
  if (task->regions[0].privilege == LEGION_REDUCE) {
    const AccSum acc(regions[0], FID_VAL, LEGION_REDOP_SUM_FLOAT64);
    pa = acc.ptr(ra, sa, 1);
  } else {
    const AccRW acc(regions[0], FID_VAL);
    pa = acc.ptr(ra, sa, 1);
  }
  const AccRO accb(regions[1], FID_VAL), accc(regions[2], FID_VAL);
  double *pb = const_cast<double *>(accb.ptr(rb, sb, 1)), *pc = const_cast<double *>(accc.ptr(rc, sc, 1));
  const long long m = ra.hi[0] - ra.lo[0] + 1, n = ra.hi[1] - ra.lo[1] + 1, k = rb.hi[1] - rb.lo[1] + 1;
  if (rb.hi[0] - rb.lo[0] + 1 != m || rc.hi[0] - rc.lo[0] + 1 != k || rc.hi[1] - rc.lo[1] + 1 != n) {
    std::fprintf(stderr, "task_4: tile shapes do not match: A %lld x %lld, B %lld x %lld, C %lld x %lld\n", m, n,
                 (long long)(rb.hi[0] - rb.lo[0] + 1), k, (long long)(rc.hi[0] - rc.lo[0] + 1),
                 (long long)(rc.hi[1] - rc.lo[1] + 1));
    std::fflush(stderr);
    std::abort();
  }
  GemmTiles t;
  t.c = row_major_tile("task_4", "C", 8, pc, sc, k, n);
  t.b = row_major_tile("task_4", "B", 10, pb, sb, m, k);
  t.a = row_major_tile("task_4", "A", 13, pa, sa, m, n);
  return t;
}

static void gemm_cpu(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  const GemmTiles t = gemm_tiles(task, regions, ctx, runtime);
  scipy_cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)t.a.rows, (blasint)t.a.cols,
                    (blasint)t.b.cols, 1.0, t.b.p, (blasint)t.b.ld, t.c.p, (blasint)t.c.ld, 1.0, t.a.p,
                    (blasint)t.a.ld);
}

static void fill_cpu(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *runtime) {
  const FillArgs &args = *static_cast<const FillArgs *>(task->args);
  const Inputs &in = args.inputs;
  for (int r = 0; r < (int)task->regions.size(); r++) {
    const int which = args.first + r;
    const Rect<2> rect = rect_of(runtime, ctx, task->regions[r]);
    if (rect.empty()) continue;
    const AccWD acc(regions[r], FID_VAL);
    size_t s[2];
    double *p = acc.ptr(rect, s, 1);
    const long long s0 = s[0] / sizeof(double), s1 = s[1] / sizeof(double);
    for (long long i = rect.lo[0]; i <= rect.hi[0]; i++)
      for (long long j = rect.lo[1]; j <= rect.hi[1]; j++)
        p[(i - rect.lo[0]) * s0 + (j - rect.lo[1]) * s1] =
            which == 0 ? 0.0 : which == 1 ? b_value(in, i, j) : c_value(in, i, j);
  }
}

static void place_cpu(const Task *, const std::vector<PhysicalRegion> &, Context, Runtime *) {}

static void init_cublas_cpu(const Task *, const std::vector<PhysicalRegion> &, Context, Runtime *) {}

static CheckResult validate_cpu(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx,
                                Runtime *runtime) {
  const Inputs &in = *static_cast<const Inputs *>(task->args);
  CheckResult res{0.0, 0, 0, 0, 0.0, 0.0};
  const Rect<2> rect = rect_of(runtime, ctx, task->regions[0]);
  if (rect.empty()) return res;
  const AccRO acc(regions[0], FID_VAL);
  size_t s[2];
  const double *p = acc.ptr(rect, s, 1);
  const long long s0 = s[0] / sizeof(double), s1 = s[1] / sizeof(double);
  const long long rows = rect.hi[0] - rect.lo[0] + 1, cols = rect.hi[1] - rect.lo[1] + 1, n = in.n;
  // Expected values of the tile, row-major.
  std::vector<double> expected((size_t)(rows * cols), 0.0);
  if (in.kind == INPUT_DENSE) {
    // The full product of the tile's rows of B and columns of C (O(rows · cols · n)).
    std::vector<double> brow((size_t)n), ccols((size_t)(n * cols));
    for (long long k = 0; k < n; k++)
      for (long long c = 0; c < cols; c++) ccols[(size_t)(k * cols + c)] = c_value(in, k, rect.lo[1] + c);
    for (long long r = 0; r < rows; r++) {
      for (long long k = 0; k < n; k++) brow[(size_t)k] = b_value(in, rect.lo[0] + r, k);
      double *out = &expected[(size_t)(r * cols)];
      for (long long k = 0; k < n; k++) {
        const double b = brow[(size_t)k];
        const double *crow = &ccols[(size_t)(k * cols)];
        for (long long c = 0; c < cols; c++) out[c] += b * crow[c];
      }
    }
  } else {
    // sum_k (u_i + v_k)(w_k + z_j) = n u_i z_j + u_i W + z_j V + S with V = sum v, W = sum w, S = sum v w.
    double V = 0, W = 0, S = 0;
    for (long long k = 0; k < n; k++) {
      const double v = v_of(in, k), w = w_of(in, k);
      V += v, W += w, S += v * w;
    }
    std::vector<double> z((size_t)cols);
    for (long long c = 0; c < cols; c++) z[(size_t)c] = z_of(in, rect.lo[1] + c);
    for (long long r = 0; r < rows; r++) {
      const double u = u_of(in, rect.lo[0] + r);
      for (long long c = 0; c < cols; c++)
        expected[(size_t)(r * cols + c)] = double(n) * u * z[(size_t)c] + u * W + z[(size_t)c] * V + S;
    }
  }
  // Every term is a small integer, so the product is exact; the tolerance only absorbs a BLAS that reorders sums
  // through non-exact paths (none does for integers below 2^53).
  for (long long r = 0; r < rows; r++)
    for (long long c = 0; c < cols; c++) {
      const double value = p[r * s0 + c * s1], want = expected[(size_t)(r * cols + c)];
      const double err = std::fabs(value - want);
      if (!(err <= res.max_abs_err)) res.max_abs_err = std::isnan(err) ? INFINITY : err;
      if (err <= 1e-12 * double(n) * std::fmax(1.0, std::fabs(want))) continue;
      if (res.mismatches++ == 0) {
        res.i = rect.lo[0] + r;
        res.j = rect.lo[1] + c;
        res.value = value;
        res.expected = want;
      }
    }
  return res;
}

// ---------------------------------------------------------------------------------------------------------------
// Validation and the result line.

void report(Context ctx, Runtime *runtime, const Matrices &m, const Config &config, const char *app,
            double time_s) {
  const Domain grid = runtime->get_index_space_domain(ctx, m.grid);
  IndexLauncher launcher(VALIDATE_TASK_ID, grid, TaskArgument(&config.inputs, sizeof(Inputs)), ArgumentMap());
  launcher.add_region_requirement(tile_req(m.A_tiles, m.A, LEGION_READ_ONLY));
  FutureMap checks = runtime->execute_index_space(ctx, launcher);
  CheckResult total{0.0, 0, 0, 0, 0.0, 0.0};
  for (Domain::DomainPointIterator it(grid); it; it++) {
    const CheckResult r = checks.get_result<CheckResult>(*it);
    if (!(r.max_abs_err <= total.max_abs_err)) total.max_abs_err = r.max_abs_err;
    if (r.mismatches > 0 && total.mismatches == 0) {
      total.i = r.i, total.j = r.j, total.value = r.value, total.expected = r.expected;
    }
    total.mismatches += r.mismatches;
  }
  const bool verified = total.mismatches == 0;
  const double n = double(config.n);
  const double gflops = 2.0 * n * n * n * double(config.iterations) / time_s / 1e9;
  std::printf("On 1 node achieved GFLOPS per node: %.3f.\n", gflops);
  const char *kind = config.inputs.kind == INPUT_DENSE ? "full_product" : "structured";
  if (!verified)
    std::printf("FAILURE: %lld mismatching values; first: A(%lld, %lld) = %.17g, expected %.17g\n",
                total.mismatches, total.i, total.j, total.value, total.expected);
  char check[512];
  const double err = std::isfinite(total.max_abs_err) ? total.max_abs_err : 1e308;
  if (verified)
    std::snprintf(check, sizeof(check), "{\"kind\": \"%s\", \"max_abs_err\": %.17g}", kind, err);
  else
    std::snprintf(check, sizeof(check),
                  "{\"kind\": \"%s\", \"max_abs_err\": %.17g, \"mismatches\": %lld, \"first_mismatch\": "
                  "{\"i\": %lld, \"j\": %lld, \"value\": %.17g, \"expected\": %.17g}}",
                  kind, err, total.mismatches, total.i, total.j,
                  std::isfinite(total.value) ? total.value : 1e308, total.expected);
  mapperopt::print_result(app, time_s, config.iterations, config.warmup, gflops, "GFLOPS", verified, check);
  if (!verified) Runtime::set_return_code(2);
}

// ---------------------------------------------------------------------------------------------------------------
// --describe.

// How many of task `id`'s requirements, from the first, its variants constrain to row-major instances: the BLAS
// leaf's, and those of the tasks whose instances it reuses under Legion's default mapper (taco_fill, the placement
// tasks). taco_validate reads A through its strides, so it takes any order. register_tasks registers these and
// --describe reports them, so the two agree.
static unsigned row_major_requirements(TaskID id) {
  switch (id) {
    case FILL_TASK_ID:
    case GEMM_TASK_ID: return 3;
    case PLACE_A_TASK_ID:
    case PLACE_B_TASK_ID:
    case PLACE_C_TASK_ID: return 1;
    default: return 0;
  }
}

static mapperopt::RegionArg arg(const char *partition, const char *region, const char *privilege) {
  mapperopt::RegionArg a;
  a.names = {partition, region};
  a.privilege = privilege;
  a.fields = {"val"};
  return a;
}

std::string describe_2d(const char *app, const Config &config) {
  return describe_tasks(app, config.reduce, std::vector<std::vector<long long>>(7, {config.g, config.g}));
}

std::string describe_tasks(const char *app, bool reduce, const std::vector<std::vector<long long>> &domains) {
  struct Entry {
    TaskID id;
    const char *name;
    bool gpu;
    std::vector<mapperopt::RegionArg> regions;
  };
  const std::vector<Entry> entries = {
      {FILL_TASK_ID, "taco_fill", true,
       {arg("A_tiles", "A", "write_discard"), arg("B_tiles", "B", "write_discard"),
        arg("C_tiles", "C", "write_discard")}},
      {PLACE_A_TASK_ID, "task_1", true, {arg("A_tiles", "A", "read_only")}},
      {PLACE_B_TASK_ID, "task_2", true, {arg("B_tiles", "B", "read_only")}},
      {PLACE_C_TASK_ID, "task_3", true, {arg("C_tiles", "C", "read_only")}},
      {INIT_CUBLAS_TASK_ID, "init_cublas", true, {}},
      {GEMM_TASK_ID, "task_4", true,
       {arg("A_tiles", "A", reduce ? "reduce" : "read_write"), arg("B_tiles", "B", "read_only"),
        arg("C_tiles", "C", "read_only")}},
      {VALIDATE_TASK_ID, "taco_validate", false, {arg("A_tiles", "A", "read_only")}},
  };
  std::vector<mapperopt::TaskInfo> tasks;
  for (size_t t = 0; t < entries.size(); t++) {
    const Entry &e = entries[t];
    mapperopt::TaskInfo info;
    info.name = e.name;
    info.variants = {"CPU"};
#ifdef MAPPEROPT_USE_CUDA
    if (e.gpu) info.variants.push_back("GPU");
#endif
    info.launch = "index";
    info.parent = "main";
    info.domain = domains[t];
    info.regions = e.regions;
    for (size_t r = 0; r < info.regions.size(); r++) {
      if (info.regions[r].privilege == "reduce") info.regions[r].redop = "sum_f64";
      if (r < row_major_requirements(e.id)) info.regions[r].layout = "C_order";
    }
    tasks.push_back(info);
  }
  std::vector<mapperopt::RegionNode> tree;
  for (const char *r : {"A", "B", "C"}) {
    tree.push_back({r, "region", ""});
    tree.push_back({std::string(r) + "_tiles", "partition", r});
  }
  return mapperopt::describe_json(app, tasks, tree);
}

// ---------------------------------------------------------------------------------------------------------------
// Registration.

template <TaskFn *FN>
static void register_variant(TaskID id, const char *name, Processor::Kind kind, LayoutConstraintID row_major) {
  TaskVariantRegistrar registrar(id, kind == Processor::TOC_PROC ? "gpu" : "cpu");
  registrar.add_constraint(ProcessorConstraint(kind));
  registrar.set_leaf(true);
  // Row-major tiles, so that Legion's default mapper makes instances the BLAS can use (a DSL mapper chooses its
  // own layouts; task_4 checks them).
  for (unsigned r = 0; r < row_major_requirements(id); r++) registrar.add_layout_constraint_set(r, row_major);
  Runtime::preregister_task_variant<FN>(registrar, name);
}

void register_tasks() {
  LayoutConstraintRegistrar c_order;
  c_order.add_constraint(OrderingConstraint({LEGION_DIM_Y, LEGION_DIM_X, LEGION_DIM_F}, false /*contiguous*/));
  const LayoutConstraintID row_major = Runtime::preregister_layout(c_order);
  register_variant<fill_cpu>(FILL_TASK_ID, "taco_fill", Processor::LOC_PROC, row_major);
  register_variant<place_cpu>(PLACE_A_TASK_ID, "task_1", Processor::LOC_PROC, row_major);
  register_variant<place_cpu>(PLACE_B_TASK_ID, "task_2", Processor::LOC_PROC, row_major);
  register_variant<place_cpu>(PLACE_C_TASK_ID, "task_3", Processor::LOC_PROC, row_major);
  register_variant<gemm_cpu>(GEMM_TASK_ID, "task_4", Processor::LOC_PROC, row_major);
  register_variant<init_cublas_cpu>(INIT_CUBLAS_TASK_ID, "init_cublas", Processor::LOC_PROC, row_major);
  {
    TaskVariantRegistrar registrar(VALIDATE_TASK_ID, "cpu");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf(true);
    for (unsigned r = 0; r < row_major_requirements(VALIDATE_TASK_ID); r++)
      registrar.add_layout_constraint_set(r, row_major);
    Runtime::preregister_task_variant<CheckResult, validate_cpu>(registrar, "taco_validate");
  }
#ifdef MAPPEROPT_USE_CUDA
  register_variant<fill_gpu>(FILL_TASK_ID, "taco_fill", Processor::TOC_PROC, row_major);
  register_variant<place_cpu>(PLACE_A_TASK_ID, "task_1", Processor::TOC_PROC, row_major);
  register_variant<place_cpu>(PLACE_B_TASK_ID, "task_2", Processor::TOC_PROC, row_major);
  register_variant<place_cpu>(PLACE_C_TASK_ID, "task_3", Processor::TOC_PROC, row_major);
  register_variant<gemm_gpu>(GEMM_TASK_ID, "task_4", Processor::TOC_PROC, row_major);
  register_variant<init_cublas_gpu>(INIT_CUBLAS_TASK_ID, "init_cublas", Processor::TOC_PROC, row_major);
#endif
  // One BLAS thread per Legion CPU processor: -ll:cpu decides how many cores compute.
  scipy_openblas_set_num_threads(1);
}

}  // namespace gemm
