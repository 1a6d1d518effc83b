// timed: a tutorial-style Legion program that times its own work, as programs do. An index launch of `work` (one
// point per piece) runs -reps R times (default 3); the program then prints "elapsed: <ms per launch> ms" and
// "bandwidth: <MB of data per second of launch time> MB/s" (with -reps 0 no launch is timed: the first is 0/0, nan,
// and the second x/0, inf). Flag -scale F multiplies the printed elapsed time by F (1e-320: a metric whose
// reciprocal overflows). Flag -helper S: the top-level task first starts a helper process, as a program may
// start a logger or monitor, that detaches into a session of its own (setsid) and lives S seconds, keeping the
// program's standard output and error open. With TIMED_ASSERT set in the environment, `work` fails an assertion of the
// program's own (a bug of the program, not of its mapping).
#include <unistd.h>

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "legion.h"

using namespace Legion;

enum { TOP_ID = 1, WORK_ID = 2 };
enum { FID_X = 1 };

void work_task(const Task *, const std::vector<PhysicalRegion> &regions, Context, Runtime *) {
  assert(!std::getenv("TIMED_ASSERT") && "work: TIMED_ASSERT is set");
  const FieldAccessor<LEGION_READ_WRITE, double, 1> x(regions[0], FID_X);
  for (PointInRectIterator<1> p(regions[0].get_bounds<1, coord_t>().bounds); p(); p++) x[*p] = x[*p] * 0.5 + 1.0;
}

void top_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *runtime) {
  const InputArgs &args = Runtime::get_input_args();
  int reps = 3, helper_s = 0;
  double scale = 1;
  for (int i = 1; i + 1 < args.argc; i++) {
    if (!strcmp(args.argv[i], "-reps")) reps = atoi(args.argv[i + 1]);
    if (!strcmp(args.argv[i], "-helper")) helper_s = atoi(args.argv[i + 1]);
    if (!strcmp(args.argv[i], "-scale")) scale = atof(args.argv[i + 1]);
  }
  if (helper_s > 0 && fork() == 0) {
    setsid();
    sleep(helper_s);
    _exit(0);
  }
  const long n = 1 << 16;
  IndexSpace is = runtime->create_index_space(ctx, Rect<1>(0, n - 1));
  FieldSpace fs = runtime->create_field_space(ctx);
  runtime->create_field_allocator(ctx, fs).allocate_field(sizeof(double), FID_X);
  LogicalRegion data = runtime->create_logical_region(ctx, is, fs);
  runtime->fill_field(ctx, data, data, FID_X, 1.0);
  IndexSpace colors = runtime->create_index_space(ctx, Rect<1>(0, 3));
  LogicalPartition pieces =
      runtime->get_logical_partition(ctx, data, runtime->create_equal_partition(ctx, is, colors));
  double total_s = 0;
  for (int r = 0; r < reps; r++) {
    IndexTaskLauncher launcher(WORK_ID, colors, UntypedBuffer(), ArgumentMap());
    launcher.add_region_requirement(RegionRequirement(pieces, 0, LEGION_READ_WRITE, LEGION_EXCLUSIVE, data));
    launcher.add_field(0, FID_X);
    const double start = Realm::Clock::current_time();
    runtime->execute_index_space(ctx, launcher).wait_all_results();
    total_s += Realm::Clock::current_time() - start;
  }
  std::printf("elapsed: %g ms\n", total_s * 1e3 / reps * scale);
  std::printf("bandwidth: %g MB/s\n", n * sizeof(double) * 1e-6 / total_s);
}

int main(int argc, char **argv) {
  Runtime::set_top_level_task_id(TOP_ID);
  {
    TaskVariantRegistrar r(TOP_ID, "top");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    Runtime::preregister_task_variant<top_task>(r, "top");
  }
  {
    TaskVariantRegistrar r(WORK_ID, "work");
    r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    r.set_leaf();
    Runtime::preregister_task_variant<work_task>(r, "work");
  }
  return Runtime::start(argc, argv);
}
