// constrained: a small Legion program, tutorial style, whose task variant registers layout constraints and relies on
// them, as Legion's default mapper honours them. A region of complex numbers (fields re, im) and their squared norms
// (field norm) is split into pieces; an index launch of `norm` reads each piece's (re, im) pairs through a pointer to
// `Complex`, which is right only because its variant asks for an instance of exactly the fields re, im, in that order
// and contiguous, interleaved (AOS); its norm output must be in system memory (MemoryConstraint).
// At the end it prints "checksum <value> OK" when the sum of the norms is right (or "... WRONG") and exits 0 (1 when
// wrong). Flags: -n N (elements, default 1000), -p P (pieces, default 4), -align (norm's variant also asks for its
// output field aligned to at least 128 bytes: an AlignmentConstraint).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "legion.h"

using namespace Legion;

enum TaskIDs { TOP_LEVEL_TASK_ID, INIT_TASK_ID, NORM_TASK_ID, SUM_TASK_ID };
enum FieldIDs { FID_RE = 1, FID_IM, FID_NORM };

struct Complex {
  double re, im;
};

void init_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_WRITE_DISCARD, double, 1> re(regions[0], FID_RE);
  const FieldAccessor<LEGION_WRITE_DISCARD, double, 1> im(regions[0], FID_IM);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) {
    re[*p] = double(p[0]);
    im[*p] = 2.0 * double(p[0]);
  }
}

// Reads the (re, im) pairs as an array of Complex: the variant's layout constraint makes that valid.
void norm_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const Rect<1> piece = regions[0].get_bounds<1, coord_t>().bounds;
  const FieldAccessor<LEGION_READ_ONLY, double, 1, coord_t, Realm::AffineAccessor<double, 1, coord_t>> re(
      regions[0], FID_RE);
  const FieldAccessor<LEGION_WRITE_DISCARD, double, 1> norm(regions[1], FID_NORM);
  const Complex *z = reinterpret_cast<const Complex *>(re.ptr(piece.lo));
  for (coord_t i = 0; i < coord_t(piece.volume()); i++) norm[piece.lo[0] + i] = z[i].re * z[i].re + z[i].im * z[i].im;
}

double sum_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  const FieldAccessor<LEGION_READ_ONLY, double, 1> norm(regions[0], FID_NORM);
  double sum = 0;
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) sum += norm[*p];
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
    allocator.allocate_field(sizeof(double), FID_RE);
    allocator.allocate_field(sizeof(double), FID_IM);
    allocator.allocate_field(sizeof(double), FID_NORM);
  }
  LogicalRegion numbers = runtime->create_logical_region(ctx, is, fs);
  runtime->attach_name(numbers, "numbers");
  IndexSpace color_is = runtime->create_index_space(ctx, Rect<1>(0, pieces - 1));
  IndexPartition ip = runtime->create_equal_partition(ctx, is, color_is);
  LogicalPartition lp = runtime->get_logical_partition(ctx, numbers, ip);
  runtime->attach_name(lp, "pieces");

  IndexLauncher init(INIT_TASK_ID, color_is, UntypedBuffer(), ArgumentMap());
  init.add_region_requirement(RegionRequirement(lp, 0, LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, numbers));
  init.add_field(0, FID_RE);
  init.add_field(0, FID_IM);
  runtime->execute_index_space(ctx, init);

  IndexLauncher norm(NORM_TASK_ID, color_is, UntypedBuffer(), ArgumentMap());
  norm.add_region_requirement(RegionRequirement(lp, 0, LEGION_READ_ONLY, LEGION_EXCLUSIVE, numbers));
  norm.add_field(0, FID_RE);
  norm.add_field(0, FID_IM);
  norm.add_region_requirement(RegionRequirement(lp, 0, LEGION_WRITE_DISCARD, LEGION_EXCLUSIVE, numbers));
  norm.add_field(1, FID_NORM);
  runtime->execute_index_space(ctx, norm);

  TaskLauncher sum(SUM_TASK_ID, UntypedBuffer());
  sum.add_region_requirement(RegionRequirement(numbers, LEGION_READ_ONLY, LEGION_EXCLUSIVE, numbers));
  sum.add_field(0, FID_NORM);
  const double total = runtime->execute_task(ctx, sum).get_result<double>();
  const double expected = 5.0 * double(n - 1) * double(n) * double(2 * n - 1) / 6.0;  // sum of |i + 2i i|^2
  const bool ok = total == expected;
  std::printf("checksum %.1f %s\n", total, ok ? "OK" : "WRONG");
  runtime->destroy_logical_region(ctx, numbers);
  runtime->destroy_field_space(ctx, fs);
  runtime->destroy_index_space(ctx, is);
  runtime->destroy_index_space(ctx, color_is);
  if (!ok) std::exit(1);
}

int main(int argc, char **argv) {
  bool align = false;
  for (int i = 1; i < argc; i++) align = align || !std::strcmp(argv[i], "-align");
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
  {
    // (re, im) pairs: exactly these two fields, in this order, contiguous, field fastest (AOS).
    LayoutConstraintRegistrar pairs(FieldSpace::NO_SPACE, "complex pairs");
    const std::vector<FieldID> fields = {FID_RE, FID_IM};
    pairs.add_constraint(FieldConstraint(fields, true /*contiguous*/, true /*inorder*/));
    pairs.add_constraint(OrderingConstraint({LEGION_DIM_F, LEGION_DIM_X}, false /*contiguous*/));
    const LayoutConstraintID pairs_id = Runtime::preregister_layout(pairs);
    LayoutConstraintRegistrar host(FieldSpace::NO_SPACE, "norms in system memory");
    host.add_constraint(MemoryConstraint(Memory::SYSTEM_MEM));
    if (align) host.add_constraint(AlignmentConstraint(FID_NORM, LEGION_GE_EK, 128));
    const LayoutConstraintID host_id = Runtime::preregister_layout(host);
    TaskVariantRegistrar registrar(NORM_TASK_ID, "norm");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.add_layout_constraint_set(0, pairs_id);
    registrar.add_layout_constraint_set(1, host_id);
    registrar.set_leaf();
    Runtime::preregister_task_variant<norm_task>(registrar, "norm");
  }
  {
    TaskVariantRegistrar registrar(SUM_TASK_ID, "sum");
    registrar.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    registrar.set_leaf();
    Runtime::preregister_task_variant<double, sum_task>(registrar, "sum");
  }
  return Runtime::start(argc, argv);
}
