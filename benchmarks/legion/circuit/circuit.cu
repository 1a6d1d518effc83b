// Circuit: GPU variants of the three compute tasks (calculate_new_currents, distribute_charge, update_voltages).
// Compiled only in CUDA builds (MAPPEROPT_USE_CUDA). The kernels read and write through Legion's affine accessors,
// so they work with any instance layout the mapper picks (SOA or AOS, either dimension order, any alignment); the
// per-wire and per-node arithmetic is circuit.h's, shared with the CPU variants and the reference.
#ifdef MAPPEROPT_USE_CUDA

#include <cassert>
#include <cstdio>
#include <cstdlib>

#include "circuit.h"
#include "cuda_task.h"
#include "legion.h"

using namespace Legion;
using namespace circuit;

namespace {

template <PrivilegeMode MODE, typename T>
using Accessor = FieldAccessor<MODE, T, 1, coord_t, Realm::AffineAccessor<T, 1, coord_t>>;
using SumAccessor = ReductionAccessor<SumReduction<float>, false /*exclusive: atomics*/, 1, coord_t,
                                      Realm::AffineAccessor<float, 1, coord_t>>;

using mapperopt::blocks_for;
using mapperopt::task_stream;
using mapperopt::THREADS_PER_BLOCK;

void check_cuda(cudaError_t err, const char *what) { mapperopt::check_cuda(err, "circuit", what); }

Rect<1> region_bounds(Runtime *runtime, Context ctx, const RegionRequirement &req) {
  return runtime->get_index_space_domain(ctx, req.region.get_index_space()).bounds<1, coord_t>();
}

// Node voltages as calculate_new_currents sees them: its private block, its own shared block, its ghost range.
struct NodeVoltages {
  Rect<1> private_rect, shared_rect;
  Accessor<LEGION_READ_ONLY, float> v_private, v_shared, v_ghost;

  __device__ float operator()(const Point<1> node) const {
    if (private_rect.contains(node)) return v_private[node];
    if (shared_rect.contains(node)) return v_shared[node];
    return v_ghost[node];
  }
};

struct CurrentsArgs {
  NodeVoltages nodes;
  Accessor<LEGION_READ_ONLY, Point<1>> in_ptr, out_ptr;
  Accessor<LEGION_READ_ONLY, float> inductance, resistance, wire_cap;
  Accessor<LEGION_READ_WRITE, float> current[WIRE_SEGMENTS], voltage[WIRE_SEGMENTS - 1];
  coord_t first_wire, num_wires;
  int64_t steps;
};

// One thread per wire; the wire's state lives in registers for all steps.
__global__ void __launch_bounds__(THREADS_PER_BLOCK) calculate_new_currents_kernel(const CurrentsArgs args) {
  const coord_t index = static_cast<coord_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= args.num_wires) return;
  const Point<1> w(args.first_wire + index);
  float I[WIRE_SEGMENTS], v[WIRE_SEGMENTS + 1];
  v[0] = args.nodes(args.in_ptr[w]);
  v[WIRE_SEGMENTS] = args.nodes(args.out_ptr[w]);
#pragma unroll
  for (int i = 0; i < WIRE_SEGMENTS; i++) I[i] = args.current[i][w];
#pragma unroll
  for (int i = 1; i < WIRE_SEGMENTS; i++) v[i] = args.voltage[i - 1][w];
  solve_wire(I, v, args.inductance[w], args.resistance[w], args.wire_cap[w], args.steps);
#pragma unroll
  for (int i = 0; i < WIRE_SEGMENTS; i++) args.current[i][w] = I[i];
#pragma unroll
  for (int i = 1; i < WIRE_SEGMENTS; i++) args.voltage[i - 1][w] = v[i];
}

struct ChargeArgs {
  Rect<1> private_rect, shared_rect;
  Accessor<LEGION_READ_WRITE, float> charge_private;
  SumAccessor charge_shared, charge_ghost;
  Accessor<LEGION_READ_ONLY, Point<1>> in_ptr, out_ptr;
  Accessor<LEGION_READ_ONLY, float> current_in, current_out;
  coord_t first_wire, num_wires;

  __device__ void deposit(const Point<1> node, float charge) const {
    if (private_rect.contains(node))
      atomicAdd(charge_private.ptr(node), charge);
    else if (shared_rect.contains(node))
      charge_shared[node] <<= charge;
    else
      charge_ghost[node] <<= charge;
  }
};

__global__ void __launch_bounds__(THREADS_PER_BLOCK) distribute_charge_kernel(const ChargeArgs args) {
  const coord_t index = static_cast<coord_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= args.num_wires) return;
  const Point<1> w(args.first_wire + index);
  args.deposit(args.in_ptr[w], -DELTA_T * args.current_in[w]);
  args.deposit(args.out_ptr[w], DELTA_T * args.current_out[w]);
}

struct VoltageArgs {
  Accessor<LEGION_READ_WRITE, float> voltage, charge;
  Accessor<LEGION_READ_ONLY, float> cap, leakage;
  coord_t first_node, num_nodes;
};

__global__ void __launch_bounds__(THREADS_PER_BLOCK) update_voltages_kernel(const VoltageArgs args) {
  const coord_t index = static_cast<coord_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= args.num_nodes) return;
  const Point<1> n(args.first_node + index);
  args.voltage[n] = new_voltage(args.voltage[n], args.charge[n], args.cap[n], args.leakage[n]);
  args.charge[n] = 0.0f;
}

const Params &task_params(const Task *task) { return *static_cast<const Params *>(task->args); }

}  // namespace

void calculate_new_currents_gpu_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx,
                                     Runtime *runtime) {
  assert(regions.size() == 5);
  const Rect<1> wires = region_bounds(runtime, ctx, task->regions[3]);
  if (wires.empty()) return;
  CurrentsArgs args;
  args.nodes.private_rect = region_bounds(runtime, ctx, task->regions[0]);
  args.nodes.shared_rect = region_bounds(runtime, ctx, task->regions[1]);
  args.nodes.v_private = Accessor<LEGION_READ_ONLY, float>(regions[0], FID_NODE_VOLTAGE);
  args.nodes.v_shared = Accessor<LEGION_READ_ONLY, float>(regions[1], FID_NODE_VOLTAGE);
  args.nodes.v_ghost = Accessor<LEGION_READ_ONLY, float>(regions[2], FID_NODE_VOLTAGE);
  args.in_ptr = Accessor<LEGION_READ_ONLY, Point<1>>(regions[3], FID_IN_PTR);
  args.out_ptr = Accessor<LEGION_READ_ONLY, Point<1>>(regions[3], FID_OUT_PTR);
  args.inductance = Accessor<LEGION_READ_ONLY, float>(regions[3], FID_INDUCTANCE);
  args.resistance = Accessor<LEGION_READ_ONLY, float>(regions[3], FID_RESISTANCE);
  args.wire_cap = Accessor<LEGION_READ_ONLY, float>(regions[3], FID_WIRE_CAP);
  for (int i = 0; i < WIRE_SEGMENTS; i++)
    args.current[i] = Accessor<LEGION_READ_WRITE, float>(regions[4], FID_CURRENT_0 + i);
  for (int i = 0; i < WIRE_SEGMENTS - 1; i++)
    args.voltage[i] = Accessor<LEGION_READ_WRITE, float>(regions[4], FID_VOLTAGE_1 + i);
  args.first_wire = wires.lo[0];
  args.num_wires = wires.volume();
  args.steps = task_params(task).steps;
  calculate_new_currents_kernel<<<blocks_for(args.num_wires), THREADS_PER_BLOCK, 0, task_stream()>>>(args);
  check_cuda(cudaGetLastError(), "calculate_new_currents");
}

void distribute_charge_gpu_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx,
                                Runtime *runtime) {
  assert(regions.size() == 4);
  const Rect<1> wires = region_bounds(runtime, ctx, task->regions[3]);
  if (wires.empty()) return;
  ChargeArgs args;
  args.private_rect = region_bounds(runtime, ctx, task->regions[0]);
  args.shared_rect = region_bounds(runtime, ctx, task->regions[1]);
  args.charge_private = Accessor<LEGION_READ_WRITE, float>(regions[0], FID_CHARGE);
  args.charge_shared = SumAccessor(regions[1], FID_CHARGE, LEGION_REDOP_SUM_FLOAT32);
  args.charge_ghost = SumAccessor(regions[2], FID_CHARGE, LEGION_REDOP_SUM_FLOAT32);
  args.in_ptr = Accessor<LEGION_READ_ONLY, Point<1>>(regions[3], FID_IN_PTR);
  args.out_ptr = Accessor<LEGION_READ_ONLY, Point<1>>(regions[3], FID_OUT_PTR);
  args.current_in = Accessor<LEGION_READ_ONLY, float>(regions[3], FID_CURRENT_0);
  args.current_out = Accessor<LEGION_READ_ONLY, float>(regions[3], FID_CURRENT_0 + WIRE_SEGMENTS - 1);
  args.first_wire = wires.lo[0];
  args.num_wires = wires.volume();
  distribute_charge_kernel<<<blocks_for(args.num_wires), THREADS_PER_BLOCK, 0, task_stream()>>>(args);
  check_cuda(cudaGetLastError(), "distribute_charge");
}

void update_voltages_gpu_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context ctx,
                              Runtime *runtime) {
  assert(regions.size() == 4);
  const cudaStream_t stream = task_stream();
  for (int part = 0; part < 2; part++) {  // 0: private nodes (requirements 0, 2); 1: shared nodes (1, 3)
    const Rect<1> nodes = region_bounds(runtime, ctx, task->regions[part]);
    if (nodes.empty()) continue;
    VoltageArgs args;
    args.voltage = Accessor<LEGION_READ_WRITE, float>(regions[part], FID_NODE_VOLTAGE);
    args.charge = Accessor<LEGION_READ_WRITE, float>(regions[part], FID_CHARGE);
    args.cap = Accessor<LEGION_READ_ONLY, float>(regions[part + 2], FID_NODE_CAP);
    args.leakage = Accessor<LEGION_READ_ONLY, float>(regions[part + 2], FID_LEAKAGE);
    args.first_node = nodes.lo[0];
    args.num_nodes = nodes.volume();
    update_voltages_kernel<<<blocks_for(args.num_nodes), THREADS_PER_BLOCK, 0, stream>>>(args);
    check_cuda(cudaGetLastError(), "update_voltages");
  }
}

#endif  // MAPPEROPT_USE_CUDA
