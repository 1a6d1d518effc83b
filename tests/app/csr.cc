// csr: a CSR sparse matrix-vector power iteration, Legion tutorial style (a user's program as reported, kept close to
// it). Regions rows (row ranges), vec (fields x, y), nnz (col, val) and total; the nonzeros are partitioned by the
// image of the row ranges, x is read through the image of the columns (x_ghost). Index launches over -p points:
// init_rows, init_nnz, then -s steps of spmv (reads x through x_ghost, writes y) and update (reads y, writes x,
// sum-reduces into total). The top-level task checks the result against a serial computation and prints PASS or
// FAIL, and the loop's time ("loop took N ms"). With CSR_FAULT=hang in the environment, spmv's point 1 hangs; with
// CSR_FAULT=segv it dereferences a null pointer (a crash of the program's own code, whatever the mapping).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <vector>
#include <unistd.h>
#include "legion.h"
using namespace Legion;

enum TaskIDs { TOP_LEVEL_TASK_ID, INIT_ROWS_TASK_ID, INIT_NNZ_TASK_ID, SPMV_TASK_ID, UPDATE_TASK_ID };
enum FieldIDs { FID_RANGE = 100, FID_X = 200, FID_Y = 201, FID_COL = 300, FID_VAL = 301, FID_SUM = 400 };
static const int K = 5;  // nonzeros per row

struct Args { long n; };

static inline long colof(long i, int k, long n) {
  switch (k) { case 0: return i; case 1: return (i + 1) % n; case 2: return (i + n - 1) % n;
    case 3: return (i * 7 + 3) % n; default: return (i * 13 + 11) % n; }
}
static inline double valof(long i, int k) { return k == 0 ? 0.5 : 0.1 + 0.01 * ((i + k) % 7); }

void init_rows_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *rt) {
  const FieldAccessor<WRITE_DISCARD, Rect<1>, 1> range(regions[0], FID_RANGE);
  const FieldAccessor<WRITE_DISCARD, double, 1> x(regions[1], FID_X);
  Rect<1> r = rt->get_index_space_domain(ctx, task->regions[0].region.get_index_space());
  for (PointInRectIterator<1> p(r); p(); p++) {
    range[*p] = Rect<1>(Point<1>((*p)[0] * K), Point<1>((*p)[0] * K + K - 1));
    x[*p] = 1.0 + 0.001 * ((*p)[0] % 17);
  }
}

void init_nnz_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *rt) {
  long n = *(const long *)task->args;
  const FieldAccessor<WRITE_DISCARD, Point<1>, 1> col(regions[0], FID_COL);
  const FieldAccessor<WRITE_DISCARD, double, 1> val(regions[0], FID_VAL);
  Rect<1> r = rt->get_index_space_domain(ctx, task->regions[0].region.get_index_space());
  for (PointInRectIterator<1> p(r); p(); p++) {
    long j = (*p)[0]; long i = j / K; int k = j % K;
    col[*p] = Point<1>(colof(i, k, n)); val[*p] = valof(i, k);
  }
}

void spmv_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *rt) {
  const char *fault = getenv("CSR_FAULT");
  if (fault && task->index_point[0] == 1 && !strcmp(fault, "hang")) { while (true) sleep(1); }
  if (fault && task->index_point[0] == 1 && !strcmp(fault, "segv")) { volatile int *q = nullptr; *q = 1; }
  const FieldAccessor<READ_ONLY, Rect<1>, 1> range(regions[0], FID_RANGE);
  const FieldAccessor<READ_ONLY, Point<1>, 1> col(regions[1], FID_COL);
  const FieldAccessor<READ_ONLY, double, 1> val(regions[1], FID_VAL);
  const FieldAccessor<READ_ONLY, double, 1> x(regions[2], FID_X);
  const FieldAccessor<WRITE_DISCARD, double, 1> y(regions[3], FID_Y);
  Rect<1> r = rt->get_index_space_domain(ctx, task->regions[3].region.get_index_space());
  for (PointInRectIterator<1> p(r); p(); p++) {
    Rect<1> rg = range[*p]; double s = 0;
    for (coord_t j = rg.lo[0]; j <= rg.hi[0]; j++) s += val[j] * x[col[j]];
    y[*p] = s;
  }
}

void update_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *rt) {
  const FieldAccessor<READ_ONLY, double, 1> y(regions[0], FID_Y);
  const FieldAccessor<READ_WRITE, double, 1> x(regions[1], FID_X);
  const ReductionAccessor<SumReduction<double>, false, 1, coord_t, Realm::AffineAccessor<double, 1, coord_t>>
      sum(regions[2], FID_SUM, LEGION_REDOP_SUM_FLOAT64);
  Rect<1> r = rt->get_index_space_domain(ctx, task->regions[0].region.get_index_space());
  double local = 0;
  for (PointInRectIterator<1> p(r); p(); p++) { double v = y[*p]; x[*p] = v; local += v; }
  sum[Point<1>(0)] <<= local;
}

void top_level_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx, Runtime *rt) {
  Args a{1 << 20}; int pieces = 4, steps = 10;
  const InputArgs &ia = Runtime::get_input_args();
  for (int i = 1; i < ia.argc; i++) {
    if (!strcmp(ia.argv[i], "-n")) a.n = atol(ia.argv[++i]);
    else if (!strcmp(ia.argv[i], "-p")) pieces = atoi(ia.argv[++i]);
    else if (!strcmp(ia.argv[i], "-s")) steps = atoi(ia.argv[++i]);
  }
  long n = a.n;
  printf("spmv: n=%ld nnz=%ld pieces=%d steps=%d\n", n, n * K, pieces, steps);
  IndexSpace row_is = rt->create_index_space(ctx, Rect<1>(0, n - 1));
  IndexSpace nnz_is = rt->create_index_space(ctx, Rect<1>(0, n * K - 1));
  IndexSpace one_is = rt->create_index_space(ctx, Rect<1>(0, 0));
  FieldSpace row_fs = rt->create_field_space(ctx), vec_fs = rt->create_field_space(ctx),
             nnz_fs = rt->create_field_space(ctx), sum_fs = rt->create_field_space(ctx);
  { FieldAllocator fa = rt->create_field_allocator(ctx, row_fs); fa.allocate_field(sizeof(Rect<1>), FID_RANGE); }
  { FieldAllocator fa = rt->create_field_allocator(ctx, vec_fs); fa.allocate_field(sizeof(double), FID_X); fa.allocate_field(sizeof(double), FID_Y); }
  { FieldAllocator fa = rt->create_field_allocator(ctx, nnz_fs); fa.allocate_field(sizeof(Point<1>), FID_COL); fa.allocate_field(sizeof(double), FID_VAL); }
  { FieldAllocator fa = rt->create_field_allocator(ctx, sum_fs); fa.allocate_field(sizeof(double), FID_SUM); }
  LogicalRegion rows = rt->create_logical_region(ctx, row_is, row_fs);
  LogicalRegion vec = rt->create_logical_region(ctx, row_is, vec_fs);
  LogicalRegion nnz = rt->create_logical_region(ctx, nnz_is, nnz_fs);
  LogicalRegion total = rt->create_logical_region(ctx, one_is, sum_fs);
  rt->attach_name(rows, "rows"); rt->attach_name(vec, "vec"); rt->attach_name(nnz, "nnz"); rt->attach_name(total, "total");
  rt->fill_field<double>(ctx, total, total, FID_SUM, 0.0);

  IndexSpace colors = rt->create_index_space(ctx, Rect<1>(0, pieces - 1));
  IndexPartition row_ip = rt->create_equal_partition(ctx, row_is, colors);
  LogicalPartition rows_lp = rt->get_logical_partition(ctx, rows, row_ip);
  LogicalPartition vec_lp = rt->get_logical_partition(ctx, vec, row_ip);
  rt->attach_name(rows_lp, "row_blocks"); rt->attach_name(vec_lp, "vec_blocks");

  ArgumentMap am;
  { IndexLauncher l(INIT_ROWS_TASK_ID, colors, TaskArgument(NULL, 0), am);
    l.add_region_requirement(RegionRequirement(rows_lp, 0, WRITE_DISCARD, EXCLUSIVE, rows)); l.add_field(0, FID_RANGE);
    l.add_region_requirement(RegionRequirement(vec_lp, 0, WRITE_DISCARD, EXCLUSIVE, vec)); l.add_field(1, FID_X);
    rt->execute_index_space(ctx, l); }
  IndexPartition nnz_ip = rt->create_partition_by_image_range(ctx, nnz_is, rows_lp, rows, FID_RANGE, colors);
  LogicalPartition nnz_lp = rt->get_logical_partition(ctx, nnz, nnz_ip);
  rt->attach_name(nnz_lp, "nnz_blocks");
  { IndexLauncher l(INIT_NNZ_TASK_ID, colors, TaskArgument(&n, sizeof(n)), am);
    l.add_region_requirement(RegionRequirement(nnz_lp, 0, WRITE_DISCARD, EXCLUSIVE, nnz)); l.add_field(0, FID_COL); l.add_field(0, FID_VAL);
    rt->execute_index_space(ctx, l); }
  IndexPartition ghost_ip = rt->create_partition_by_image(ctx, row_is, nnz_lp, nnz, FID_COL, colors);
  LogicalPartition ghost_lp = rt->get_logical_partition(ctx, vec, ghost_ip);
  rt->attach_name(ghost_lp, "x_ghost");

  double t0 = Realm::Clock::current_time();
  for (int s = 0; s < steps; s++) {
    IndexLauncher l(SPMV_TASK_ID, colors, TaskArgument(&a, sizeof(a)), am);
    l.add_region_requirement(RegionRequirement(rows_lp, 0, READ_ONLY, EXCLUSIVE, rows)); l.add_field(0, FID_RANGE);
    l.add_region_requirement(RegionRequirement(nnz_lp, 0, READ_ONLY, EXCLUSIVE, nnz)); l.add_field(1, FID_COL); l.add_field(1, FID_VAL);
    l.add_region_requirement(RegionRequirement(ghost_lp, 0, READ_ONLY, EXCLUSIVE, vec)); l.add_field(2, FID_X);
    l.add_region_requirement(RegionRequirement(vec_lp, 0, WRITE_DISCARD, EXCLUSIVE, vec)); l.add_field(3, FID_Y);
    rt->execute_index_space(ctx, l);
    IndexLauncher u(UPDATE_TASK_ID, colors, TaskArgument(&a, sizeof(a)), am);
    u.add_region_requirement(RegionRequirement(vec_lp, 0, READ_ONLY, EXCLUSIVE, vec)); u.add_field(0, FID_Y);
    u.add_region_requirement(RegionRequirement(vec_lp, 0, READ_WRITE, EXCLUSIVE, vec)); u.add_field(1, FID_X);
    u.add_region_requirement(RegionRequirement(total, 0, LEGION_REDOP_SUM_FLOAT64, EXCLUSIVE, total)); u.add_field(2, FID_SUM);
    rt->execute_index_space(ctx, u);
  }
  // check
  InlineLauncher il(RegionRequirement(vec, READ_ONLY, EXCLUSIVE, vec)); il.add_field(FID_X);
  PhysicalRegion pr = rt->map_region(ctx, il); pr.wait_until_valid();
  InlineLauncher it(RegionRequirement(total, READ_ONLY, EXCLUSIVE, total)); it.add_field(FID_SUM);
  PhysicalRegion pt = rt->map_region(ctx, it); pt.wait_until_valid();
  double t1 = Realm::Clock::current_time();
  const FieldAccessor<READ_ONLY, double, 1> xa(pr, FID_X);
  const FieldAccessor<READ_ONLY, double, 1> sa(pt, FID_SUM);
  std::vector<double> x(n), y(n); for (long i = 0; i < n; i++) x[i] = 1.0 + 0.001 * (i % 17);
  double ref_total = 0;
  for (int s = 0; s < steps; s++) {
    for (long i = 0; i < n; i++) { double acc = 0; for (int k = 0; k < K; k++) acc += valof(i, k) * x[colof(i, k, n)]; y[i] = acc; }
    for (long i = 0; i < n; i++) { x[i] = y[i]; ref_total += y[i]; }
  }
  double maxerr = 0;
  for (long i = 0; i < n; i++) maxerr = std::max(maxerr, fabs(xa[Point<1>(i)] - x[i]) / fabs(x[i]));
  double terr = fabs(sa[Point<1>(0)] - ref_total) / fabs(ref_total);
  printf("spmv: loop took %.3f ms\n", (t1 - t0) * 1e3);
  printf("spmv: max rel err %.3e, total rel err %.3e: %s\n", maxerr, terr, (maxerr < 1e-9 && terr < 1e-9) ? "PASS" : "FAIL");
  rt->unmap_region(ctx, pr); rt->unmap_region(ctx, pt);
}

int main(int argc, char **argv) {
  Runtime::set_top_level_task_id(TOP_LEVEL_TASK_ID);
  { TaskVariantRegistrar r(TOP_LEVEL_TASK_ID, "top_level"); r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    Runtime::preregister_task_variant<top_level_task>(r, "top_level"); }
  { TaskVariantRegistrar r(INIT_ROWS_TASK_ID, "init_rows"); r.add_constraint(ProcessorConstraint(Processor::LOC_PROC)); r.set_leaf();
    Runtime::preregister_task_variant<init_rows_task>(r, "init_rows"); }
  { TaskVariantRegistrar r(INIT_NNZ_TASK_ID, "init_nnz"); r.add_constraint(ProcessorConstraint(Processor::LOC_PROC)); r.set_leaf();
    Runtime::preregister_task_variant<init_nnz_task>(r, "init_nnz"); }
  { TaskVariantRegistrar r(SPMV_TASK_ID, "spmv"); r.add_constraint(ProcessorConstraint(Processor::LOC_PROC)); r.set_leaf();
    Runtime::preregister_task_variant<spmv_task>(r, "spmv"); }
  { TaskVariantRegistrar r(UPDATE_TASK_ID, "update"); r.add_constraint(ProcessorConstraint(Processor::LOC_PROC)); r.set_leaf();
    Runtime::preregister_task_variant<update_task>(r, "update"); }
  return Runtime::start(argc, argv);
}
