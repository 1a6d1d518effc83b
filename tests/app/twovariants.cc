// twovariants: a small Legion program, tutorial style, whose task `axpy` has two CPU variants: `axpy` reads its
// fields through generic accessors (any layout), `axpy_raw` walks them with raw pointers, right only on SOA instances
// (each field contiguous, x fastest), which its layout constraint set asks for (an OrderingConstraint). Which of the
// two runs is Legion's choice (the default mapper's preferred variant). A region of n elements (fields x, y, z) is
// split into pieces; an index launch of `axpy` computes z = 2 x + y on each piece, `sum` adds z up.
// At the end it prints "checksum <value> OK" when the sum is right (or "... WRONG") and exits 0 (1 when wrong).
// Flags: -n N (elements, default 1000), -p P (pieces, default 4), -raw-first (register `axpy_raw` before `axpy`).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "legion.h"

using namespace Legion;

enum TaskIDs { TOP_LEVEL_TASK_ID, INIT_TASK_ID, AXPY_TASK_ID, SUM_TASK_ID };
enum FieldIDs { FID_X = 1, FID_Y, FID_Z };

void init_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_WRITE_DISCARD, double, 1> x(regions[0], FID_X);
  const FieldAccessor<LEGION_WRITE_DISCARD, double, 1> y(regions[0], FID_Y);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) {
    x[*p] = double(p[0]);
    y[*p] = 3.0 * double(p[0]);
  }
}

void axpy_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_READ_ONLY, double, 1> x(regions[0], FID_X);
  const FieldAccessor<LEGION_READ_ONLY, double, 1> y(regions[0], FID_Y);
  const FieldAccessor<LEGION_WRITE_DISCARD, double, 1> z(regions[1], FID_Z);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) z[*p] = 2.0 * x[*p] + y[*p];
}

// Walks x and y with unit stride from their first elements: right only because its variant asks for SOA instances.
void axpy_raw_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  typedef FieldAccessor<LEGION_READ_ONLY, double, 1, coord_t, Realm::AffineAccessor<double, 1, coord_t>> Reader;
  const Rect<1> piece = regions[0].get_bounds<1, coord_t>().bounds;
  const Reader x(regions[0], FID_X), y(regions[0], FID_Y);
  const FieldAccessor<LEGION_WRITE_DISCARD, double, 1> z(regions[1], FID_Z);
  const double *xs = x.ptr(piece.lo), *ys = y.ptr(piece.lo);
  for (coord_t i = 0; i < coord_t(piece.volume()); i++) z[piece.lo[0] + i] = 2.0 * xs[i] + ys[i];
}

double sum_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_READ_ONLY, double, 1> z(regions[0], FID_Z);
  double sum = 0;
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) sum += z[*p];
  return sum;
}

void top_level_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  long long n = 1000, pieces = 4;
  const InputArgs &args = Runtime::get_input_args();
  for (int i = 1; i + 1 < args.argc; i++) {
    if (!std::strcmp(args.argv[i], "-n")) n = std::atoll(args.argv[i + 1]);
    if (!std::strcmp(args.argv[i], "-p")) pieces = std::atoll(args.argv[i + 1]);
  }
  IndexSpace is = runtime->create_index_space(ctx, Rect<1>(0, n - 1));
  FieldSpace fs = runtime->create_field_space(ctx);
  {
    FieldAllocator allocator = runtime->create_field_allocator(ctx, fs);
    allocator.allocate_field(sizeof(double), FID_X);
    allocator.allocate_field(sizeof(double), FID_Y);
    allocator.allocate_field(sizeof(double), FID_Z);
  }
  LogicalRegion vectors = runtime->create_logical_region(ctx, is, fs);
  runtime->attach_name(vectors, "vectors");
  IndexSpace color_is = runtime->create_index_space(ctx, Rect<1>(0, pieces - 1));
  IndexPartition ip = runtime->create_equal_partition(ctx, is, color_is);
  LogicalPartition lp = runtime->get_logical_partition(ctx, vectors, ip);
  runtime->attach_name(lp, "pieces");

  IndexLauncher init(INIT_TASK_ID, color_is, UntypedBuffer(), ArgumentMap());
  init.add_region_requirement(RegionRequirement(lp, 0, LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, vectors));
  init.add_field(0, FID_X);
  init.add_field(0, FID_Y);
  runtime->execute_index_space(ctx, init);

  IndexLauncher axpy(AXPY_TASK_ID, color_is, UntypedBuffer(), ArgumentMap());
  axpy.add_region_requirement(RegionRequirement(lp, 0, LEGION_READ_ONLY, LEGION_EXCLUSIVE, vectors));
  axpy.add_field(0, FID_X);
  axpy.add_field(0, FID_Y);
  axpy.add_region_requirement(RegionRequirement(lp, 0, LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, vectors));
  axpy.add_field(1, FID_Z);
  runtime->execute_index_space(ctx, axpy);

  TaskLauncher sum(SUM_TASK_ID, UntypedBuffer());
  sum.add_region_requirement(RegionRequirement(vectors, LEGION_READ_ONLY, LEGION_EXCLUSIVE, vectors));
  sum.add_field(0, FID_Z);
  const double total = runtime->execute_task(ctx, sum).get_result<double>();
  const double expected = 5.0 * double(n - 1) * double(n) / 2.0;  // sum of 2 i + 3 i
  const bool ok = total == expected;
  std::printf("checksum %.1f %s\n", total, ok ? "OK" : "WRONG");
  runtime->destroy_logical_region(ctx, vectors);
  runtime->destroy_field_space(ctx, fs);
  runtime->destroy_index_space(ctx, is);
  runtime->destroy_index_space(ctx, color_is);
  if (!ok) std::exit(1);
}

static void register_axpy() {
  TaskVariantRegistrar registrar(AXPY_TASK_ID, "axpy");
  registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
  registrar.set_leaf();
  Runtime::preregister_task_variant<axpy_task>(registrar, "axpy");
}

static void register_axpy_raw() {
  LayoutConstraintRegistrar soa(FieldSpace::NO_SPACE, "SOA, x fastest");
  soa.add_constraint(OrderingConstraint({LEGION_DIM_X, LEGION_DIM_F}, false /*contiguous*/));
  const LayoutConstraintID soa_id = Runtime::preregister_layout(soa);
  TaskVariantRegistrar registrar(AXPY_TASK_ID, "axpy_raw");  // the variant's name; the task's comes last
  registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
  registrar.add_layout_constraint_set(0, soa_id);
  registrar.set_leaf();
  Runtime::preregister_task_variant<axpy_raw_task>(registrar, "axpy");
}

int main(int argc, char **argv) {
  bool raw_first = false;
  for (int i = 1; i < argc; i++) raw_first = raw_first || !std::strcmp(argv[i], "-raw-first");
  Runtime::set_top_level_task_id(TOP_LEVEL_TASK_ID);
  {
    TaskVariantRegistrar registrar(TOP_LEVEL_TASK_ID, "top_level");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    Runtime::preregister_task_variant<top_level_task>(registrar, "top_level");
  }
  {
    TaskVariantRegistrar registrar(INIT_TASK_ID, "init");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf();
    Runtime::preregister_task_variant<init_task>(registrar, "init");
  }
  if (raw_first) {
    register_axpy_raw();
    register_axpy();
  } else {
    register_axpy();
    register_axpy_raw();
  }
  {
    TaskVariantRegistrar registrar(SUM_TASK_ID, "sum");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf();
    Runtime::preregister_task_variant<double, sum_task>(registrar, "sum");
  }
  return Runtime::start(argc, argv);
}
