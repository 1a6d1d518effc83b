// Irregular graph: nodes coloured by a field, edges by preimage, ghosts by image.
#include "legion.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <vector>
using namespace Legion;

enum { TOP_ID = 1, INIT_NODES_ID, INIT_EDGES_ID, SPMV_ID, UPDATE_ID, TOTAL_ID };
enum { F_COLOR = 100, F_VAL, F_ACC };
enum { F_SRC = 200, F_DST, F_W };

struct Params { long n, e; int p, steps; };

static long color_of(long i, int p) { return ((i * 7919) % 97 + i / 3) % p; }
static long src_of(long e, long n) { return (e * 13 + e / 7) % n; }
static long dst_of(long e, long n) { return (e * 31 + 7) % n; }
static double w_of(long e) { return 0.5 / (1 + (e % 3)); }

void init_nodes(const Task *task, const std::vector<PhysicalRegion> &rs, Context ctx, Runtime *rt) {
  Params pr = *(const Params *)task->args;
  FieldAccessor<WRITE_DISCARD, Point<1>, 1> col(rs[0], F_COLOR);
  FieldAccessor<WRITE_DISCARD, double, 1> val(rs[0], F_VAL);
  FieldAccessor<WRITE_DISCARD, double, 1> acc(rs[0], F_ACC);
  for (long i = 0; i < pr.n; i++) { col[i] = Point<1>(color_of(i, pr.p)); val[i] = 1.0 + (i % 5); acc[i] = 0; }
}
void init_edges(const Task *task, const std::vector<PhysicalRegion> &rs, Context ctx, Runtime *rt) {
  Params pr = *(const Params *)task->args;
  FieldAccessor<WRITE_DISCARD, Point<1>, 1> s(rs[0], F_SRC), d(rs[0], F_DST);
  FieldAccessor<WRITE_DISCARD, double, 1> w(rs[0], F_W);
  for (long e = 0; e < pr.e; e++) { s[e] = Point<1>(src_of(e, pr.n)); d[e] = Point<1>(dst_of(e, pr.n)); w[e] = w_of(e); }
}
double spmv(const Task *task, const std::vector<PhysicalRegion> &rs, Context ctx, Runtime *rt) {
  FieldAccessor<READ_ONLY, double, 1> val(rs[0], F_VAL);
  FieldAccessor<READ_ONLY, Point<1>, 1> s(rs[1], F_SRC), d(rs[1], F_DST);
  FieldAccessor<READ_ONLY, double, 1> w(rs[1], F_W);
  ReductionAccessor<SumReduction<double>, false, 1, coord_t, Realm::AffineAccessor<double, 1, coord_t>> acc(rs[2], F_ACC, LEGION_REDOP_SUM_FLOAT64);
  Domain dom = rt->get_index_space_domain(ctx, task->regions[1].region.get_index_space());
  double local = 0;
  for (PointInDomainIterator<1> it(dom); it(); it++) {
    Point<1> sp = s[*it], dp = d[*it]; double c = w[*it] * val[sp];
    acc[dp] <<= c;
    local += c;
  }
  return local;
}
void update_simple(const Task *task, const std::vector<PhysicalRegion> &rs, Context ctx, Runtime *rt) {
  FieldAccessor<READ_WRITE, double, 1> val(rs[0], F_VAL), acc(rs[0], F_ACC);
  Domain dom = rt->get_index_space_domain(ctx, task->regions[0].region.get_index_space());
  for (PointInDomainIterator<1> it(dom); it(); it++) { val[*it] = 0.5 * val[*it] + acc[*it]; acc[*it] = 0; }
}
void update_other(const Task *task, const std::vector<PhysicalRegion> &rs, Context ctx, Runtime *rt) {
  FieldAccessor<READ_WRITE, double, 1> val(rs[0], F_VAL), acc(rs[0], F_ACC);
  Domain dom = rt->get_index_space_domain(ctx, task->regions[0].region.get_index_space());
  for (RectInDomainIterator<1> r(dom); r(); r++)
    for (PointInRectIterator<1> it(*r); it(); it++) { double a = acc[*it]; val[*it] = a + 0.5 * val[*it]; acc[*it] = 0; }
}
double total(const Task *task, const std::vector<PhysicalRegion> &rs, Context ctx, Runtime *rt) {
  FieldAccessor<READ_ONLY, double, 1> val(rs[0], F_VAL);
  Domain dom = rt->get_index_space_domain(ctx, task->regions[0].region.get_index_space());
  double t = 0;
  for (PointInDomainIterator<1> it(dom); it(); it++) t += val[*it];
  return t;
}

void top(const Task *task, const std::vector<PhysicalRegion> &rs, Context ctx, Runtime *rt) {
  Params pr{20000, 80000, 4, 10};
  const InputArgs &a = Runtime::get_input_args();
  for (int i = 1; i < a.argc; i++) {
    if (!strcmp(a.argv[i], "-n")) pr.n = atol(a.argv[++i]);
    else if (!strcmp(a.argv[i], "-e")) pr.e = atol(a.argv[++i]);
    else if (!strcmp(a.argv[i], "-p")) pr.p = atoi(a.argv[++i]);
    else if (!strcmp(a.argv[i], "-steps")) pr.steps = atoi(a.argv[++i]);
  }
  IndexSpace nodes_is = rt->create_index_space(ctx, Rect<1>(0, pr.n - 1));
  IndexSpace edges_is = rt->create_index_space(ctx, Rect<1>(0, pr.e - 1));
  rt->attach_name(nodes_is, "node_is"); rt->attach_name(edges_is, "edge_is");
  FieldSpace nfs = rt->create_field_space(ctx), efs = rt->create_field_space(ctx);
  rt->attach_name(nfs, "node_fields"); rt->attach_name(efs, "edge_fields");
  { FieldAllocator fa = rt->create_field_allocator(ctx, nfs);
    fa.allocate_field(sizeof(Point<1>), F_COLOR); fa.allocate_field(sizeof(double), F_VAL); fa.allocate_field(sizeof(double), F_ACC);
    rt->attach_name(nfs, F_COLOR, "color"); rt->attach_name(nfs, F_VAL, "val"); rt->attach_name(nfs, F_ACC, "acc"); }
  { FieldAllocator fa = rt->create_field_allocator(ctx, efs);
    fa.allocate_field(sizeof(Point<1>), F_SRC); fa.allocate_field(sizeof(Point<1>), F_DST); fa.allocate_field(sizeof(double), F_W);
    rt->attach_name(efs, F_SRC, "src"); rt->attach_name(efs, F_DST, "dst"); rt->attach_name(efs, F_W, "w"); }
  LogicalRegion nodes = rt->create_logical_region(ctx, nodes_is, nfs);
  LogicalRegion edges = rt->create_logical_region(ctx, edges_is, efs);
  rt->attach_name(nodes, "nodes"); rt->attach_name(edges, "edges");

  { TaskLauncher l(INIT_NODES_ID, TaskArgument(&pr, sizeof(pr)));
    l.add_region_requirement(RegionRequirement(nodes, WRITE_DISCARD, EXCLUSIVE, nodes));
    l.add_field(0, F_COLOR); l.add_field(0, F_VAL); l.add_field(0, F_ACC); rt->execute_task(ctx, l); }
  { TaskLauncher l(INIT_EDGES_ID, TaskArgument(&pr, sizeof(pr)));
    l.add_region_requirement(RegionRequirement(edges, WRITE_DISCARD, EXCLUSIVE, edges));
    l.add_field(0, F_SRC); l.add_field(0, F_DST); l.add_field(0, F_W); rt->execute_task(ctx, l); }

  IndexSpace colors = rt->create_index_space(ctx, Rect<1>(0, pr.p - 1));
  IndexPartition owned_ip = rt->create_partition_by_field(ctx, nodes, nodes, F_COLOR, colors);
  IndexPartition edge_ip = rt->create_partition_by_preimage(ctx, owned_ip, edges, edges, F_SRC, colors);
  LogicalPartition edge_lp = rt->get_logical_partition(ctx, edges, edge_ip);
  IndexPartition ghost_ip = rt->create_partition_by_image(ctx, nodes_is, edge_lp, edges, F_DST, colors);
  LogicalPartition owned_lp = rt->get_logical_partition(ctx, nodes, owned_ip);
  LogicalPartition ghost_lp = rt->get_logical_partition(ctx, nodes, ghost_ip);
  rt->attach_name(owned_lp, "owned"); rt->attach_name(ghost_lp, "ghost"); rt->attach_name(edge_lp, "edge_pieces");

  double t0 = Realm::Clock::current_time_in_microseconds();
  Future flow;
  for (int s = 0; s < pr.steps; s++) {
    IndexLauncher l(SPMV_ID, colors, TaskArgument(), ArgumentMap());
    l.add_region_requirement(RegionRequirement(owned_lp, 0, READ_ONLY, EXCLUSIVE, nodes)); l.add_field(0, F_VAL);
    l.add_region_requirement(RegionRequirement(edge_lp, 0, READ_ONLY, EXCLUSIVE, edges));
    l.add_field(1, F_SRC); l.add_field(1, F_DST); l.add_field(1, F_W);
    l.add_region_requirement(RegionRequirement(ghost_lp, 0, LEGION_REDOP_SUM_FLOAT64, EXCLUSIVE, nodes)); l.add_field(2, F_ACC);
    flow = rt->execute_index_space(ctx, l, LEGION_REDOP_SUM_FLOAT64);
    IndexLauncher u(UPDATE_ID, colors, TaskArgument(), ArgumentMap());
    u.add_region_requirement(RegionRequirement(owned_lp, 0, READ_WRITE, EXCLUSIVE, nodes));
    u.add_field(0, F_VAL); u.add_field(0, F_ACC);
    rt->execute_index_space(ctx, u);
  }
  TaskLauncher tl(TOTAL_ID, TaskArgument());
  tl.add_region_requirement(RegionRequirement(nodes, READ_ONLY, EXCLUSIVE, nodes)); tl.add_field(0, F_VAL);
  double tot = rt->execute_task(ctx, tl).get_result<double>();
  double fl = flow.get_result<double>();
  double t1 = Realm::Clock::current_time_in_microseconds();

  // serial reference
  std::vector<double> val(pr.n), acc(pr.n, 0.0);
  for (long i = 0; i < pr.n; i++) val[i] = 1.0 + (i % 5);
  double rfl = 0;
  for (int s = 0; s < pr.steps; s++) {
    rfl = 0;
    for (long e = 0; e < pr.e; e++) { double c = w_of(e) * val[src_of(e, pr.n)]; acc[dst_of(e, pr.n)] += c; rfl += c; }
    for (long i = 0; i < pr.n; i++) { val[i] = 0.5 * val[i] + acc[i]; acc[i] = 0; }
  }
  double rtot = 0; for (long i = 0; i < pr.n; i++) rtot += val[i];
  bool ok = fabs(tot - rtot) <= 1e-9 * fabs(rtot) && fabs(fl - rfl) <= 1e-9 * fabs(rfl);
  printf("total %.12e ref %.12e flow %.12e ref %.12e\n", tot, rtot, fl, rfl);
  printf("solve took %.3f ms\n", (t1 - t0) / 1000.0);
  printf("check: %s\n", ok ? "OK" : "FAILED");
}

int main(int argc, char **argv) {
  Runtime::set_top_level_task_id(TOP_ID);
  { TaskVariantRegistrar r(TOP_ID, "top_level"); r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
    Runtime::preregister_task_variant<top>(r, "top_level"); }
  { TaskVariantRegistrar r(INIT_NODES_ID, "init_nodes"); r.add_constraint(ProcessorConstraint(Processor::LOC_PROC)); r.set_leaf();
    Runtime::preregister_task_variant<init_nodes>(r, "init_nodes"); }
  { TaskVariantRegistrar r(INIT_EDGES_ID, "init_edges"); r.add_constraint(ProcessorConstraint(Processor::LOC_PROC)); r.set_leaf();
    Runtime::preregister_task_variant<init_edges>(r, "init_edges"); }
  { TaskVariantRegistrar r(SPMV_ID, "spmv"); r.add_constraint(ProcessorConstraint(Processor::LOC_PROC)); r.set_leaf();
    Runtime::preregister_task_variant<double, spmv>(r, "spmv"); }
  { TaskVariantRegistrar r(UPDATE_ID, "update_simple"); r.add_constraint(ProcessorConstraint(Processor::LOC_PROC)); r.set_leaf();
    Runtime::preregister_task_variant<update_simple>(r, "update"); }
  { TaskVariantRegistrar r(UPDATE_ID, "update_rects"); r.add_constraint(ProcessorConstraint(Processor::LOC_PROC)); r.set_leaf();
    Runtime::preregister_task_variant<update_other>(r, "update"); }
  { TaskVariantRegistrar r(TOTAL_ID, "total"); r.add_constraint(ProcessorConstraint(Processor::LOC_PROC)); r.set_leaf();
    Runtime::preregister_task_variant<double, total>(r, "total"); }
  return Runtime::start(argc, argv);
}
