// Circuit: sparse circuit simulation (docs docs/running.md). Definitions shared by the CPU code (circuit.cc) and
// the CUDA kernels (circuit.cu): IDs, the run parameters, the counter-based random numbers, the graph generator and
// the per-wire / per-node arithmetic, written once so that the CPU variants, the GPU variants and the sequential
// reference compute the same thing.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "legion.h"

#if defined(__CUDACC__)
#define CIRCUIT_HD __host__ __device__
#else
#define CIRCUIT_HD
#endif

namespace circuit {

using Legion::coord_t;

// ---- IDs ---------------------------------------------------------------------------------------------------------

enum TaskIDs {
  TOP_LEVEL_TASK_ID = 1,
  INIT_PIECE_TASK_ID,
  INIT_POINTERS_TASK_ID,
  CALCULATE_NEW_CURRENTS_TASK_ID,
  DISTRIBUTE_CHARGE_TASK_ID,
  UPDATE_VOLTAGES_TASK_ID,
  CHECK_CIRCUIT_TASK_ID,
};

constexpr int WIRE_SEGMENTS = 10;  // S: currents I0..I9, interior voltages v1..v9
constexpr float DELTA_T = 1e-6f;

// Field IDs are unique across the two field spaces so that one table can name them all.
enum NodeFields {
  FID_NODE_CAP = 0,
  FID_LEAKAGE,
  FID_CHARGE,
  FID_NODE_VOLTAGE,
};

enum WireFields {
  FID_IN_PTR = 10,
  FID_OUT_PTR,
  FID_INDUCTANCE,
  FID_RESISTANCE,
  FID_WIRE_CAP,
  FID_CURRENT_0,                                    // current_0 .. current_9
  FID_VOLTAGE_1 = FID_CURRENT_0 + WIRE_SEGMENTS,    // voltage_1 .. voltage_9
  FID_WIRE_END = FID_VOLTAGE_1 + WIRE_SEGMENTS - 1,
};

// ---- Run parameters (docs/running.md); plain data, passed to every task as its argument ----------------------

struct Params {
  int64_t pieces = 4;             // -p
  int64_t pieces_per_super = 1;   // -pps
  int64_t nodes_per_piece = 4;    // -npp
  int64_t wires_per_piece = 8;    // -wpp
  int64_t pct_local = 80;         // -pct: percentage of wires whose out-node is in the same piece
  int64_t loops = 5;              // -l: timed loops
  int64_t steps = 10000;          // -i: solver steps per wire per loop
  int64_t prune = 0;              // -prune: untimed loops before and after the timed ones
  int64_t warmup = 2;             // -warmup: further untimed loops before the timed ones (at least 1 in all)
  uint64_t seed = 12345;          // -seed
  int64_t corrupt = 0;            // -test-corrupt: perturb one initial voltage (tests the check; never for timing)

  int64_t superpieces() const { return pieces / pieces_per_super; }
  int64_t shared_per_piece() const { return (nodes_per_piece + 99) / 100; }  // snpp = ceil(1 % of npp)
  int64_t private_per_piece() const { return nodes_per_piece - shared_per_piece(); }
  int64_t num_nodes() const { return pieces * nodes_per_piece; }
  int64_t num_shared() const { return pieces * shared_per_piece(); }
  int64_t num_wires() const { return pieces * wires_per_piece; }
  // Untimed loops before the timed ones (always at least one) and after them.
  int64_t loops_before() const { return warmup + prune > 0 ? warmup + prune : 1; }
  int64_t loops_after() const { return prune; }
  int64_t total_loops() const { return loops_before() + loops + loops_after(); }
  // Node numbering (§1.2): all shared nodes first, piece by piece, then the private nodes piece by piece.
  int64_t first_shared(int64_t piece) const { return piece * shared_per_piece(); }
  int64_t first_private(int64_t piece) const { return num_shared() + piece * private_per_piece(); }
  int64_t first_wire(int64_t piece) const { return piece * wires_per_piece; }
};

// ---- Counter-based random numbers: a pure function of (seed, stream, piece, element) ----------------------------

enum RandomStream : uint64_t {
  RNG_NODE_CAP = 1,
  RNG_LEAKAGE,
  RNG_NODE_VOLTAGE,
  RNG_INDUCTANCE,
  RNG_RESISTANCE,
  RNG_WIRE_CAP,
  RNG_IN_NODE,
  RNG_OUT_LOCAL,
  RNG_OUT_NODE,
  RNG_OUT_NEIGHBOUR,
  RNG_OUT_SHARED,
  RNG_NEIGHBOURS,
};

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1), 53 random bits.
inline double uniform(uint64_t seed, uint64_t stream, uint64_t piece, uint64_t element) {
  uint64_t h = splitmix64(seed ^ 0x5EEDC1C17ull);
  h = splitmix64(h ^ stream);
  h = splitmix64(h ^ (piece * 0xD1B54A32D192ED03ull));
  h = splitmix64(h ^ element);
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

// ---- Initial values (§1.1) ---------------------------------------------------------------------------------------

struct NodeInit {
  float node_cap, leakage, charge, voltage;
};

inline NodeInit node_initial(const Params &p, int64_t piece, int64_t node) {
  NodeInit n;
  n.node_cap = static_cast<float>(uniform(p.seed, RNG_NODE_CAP, piece, node) + 1.0);
  n.leakage = static_cast<float>(0.1 * uniform(p.seed, RNG_LEAKAGE, piece, node));
  n.charge = 0.0f;
  n.voltage = static_cast<float>(2.0 * uniform(p.seed, RNG_NODE_VOLTAGE, piece, node) - 1.0);
  return n;
}

struct WireInit {
  float inductance, resistance, wire_cap;
};

inline WireInit wire_initial(const Params &p, int64_t piece, int64_t wire) {
  WireInit w;
  w.resistance = static_cast<float>(10.0 * uniform(p.seed, RNG_RESISTANCE, piece, wire) + 1.0);
  w.inductance = static_cast<float>((uniform(p.seed, RNG_INDUCTANCE, piece, wire) + 0.1) * DELTA_T * 1e-3);
  // C = 0.1·U with U in [0.001, 1] instead of the original's [0, 1): the per-step fixed-point solve diverges (to
  // Inf/NaN within a few hundred steps) when R·C < ~4e-6, i.e. for about 1 wire in 100 000 with U near 0.
  const double u = uniform(p.seed, RNG_WIRE_CAP, piece, wire);
  w.wire_cap = static_cast<float>(0.1 * (0.001 + 0.999 * u));
  return w;
}

// ---- Graph generation (§1.2), deterministic per piece -------------------------------------------------------------

// The neighbour pieces of `piece`: nn = min(5, P - 1) distinct ids drawn by rejection from a window of width 3.
inline std::vector<int64_t> neighbour_pieces(const Params &p, int64_t piece) {
  const int64_t P = p.pieces;
  const int64_t nn = P - 1 < 5 ? P - 1 : 5;
  int64_t w = 3;
  if (2 * w < nn) w = (nn + 1) / 2;
  int64_t lo = piece - w, hi = piece + w;
  if (piece - w < 0) {
    lo = 0;
    hi = nn < P - 1 ? nn : P - 1;
  } else if (piece + w >= P) {
    lo = P - 1 - nn > 0 ? P - 1 - nn : 0;
    hi = P - 1;
  }
  std::vector<int64_t> chosen;
  for (uint64_t draw = 0; static_cast<int64_t>(chosen.size()) < nn; draw++) {
    int64_t q = lo + static_cast<int64_t>(uniform(p.seed, RNG_NEIGHBOURS, piece, draw) * (hi - lo + 1));
    if (q > hi) q = hi;
    bool taken = (q == piece);
    for (int64_t c : chosen) taken = taken || (c == q);
    if (!taken) chosen.push_back(q);
  }
  return chosen;
}

// Endpoints of every wire of `piece` (global node ids), in wire order; returns the smallest and largest shared node
// id of a neighbour piece that an out-pointer references (lo > hi when there is none).
inline void generate_pointers(const Params &p, int64_t piece, std::vector<int64_t> &in_ptr,
                              std::vector<int64_t> &out_ptr, int64_t &ghost_lo, int64_t &ghost_hi) {
  const int64_t npp = p.nodes_per_piece, snpp = p.shared_per_piece();
  const std::vector<int64_t> neighbours = neighbour_pieces(p, piece);
  std::vector<int64_t> handed_out(neighbours.size(), 0);  // shared nodes of each neighbour referenced so far
  in_ptr.resize(p.wires_per_piece);
  out_ptr.resize(p.wires_per_piece);
  ghost_lo = INT64_MAX;
  ghost_hi = INT64_MIN;
  auto local_node = [&](uint64_t stream, int64_t wire) {
    int64_t u = static_cast<int64_t>(uniform(p.seed, stream, piece, wire) * npp);
    if (u >= npp) u = npp - 1;
    return u < snpp ? p.first_shared(piece) + u : p.first_private(piece) + (u - snpp);
  };
  for (int64_t w = 0; w < p.wires_per_piece; w++) {
    const int64_t wire = p.first_wire(piece) + w;
    in_ptr[w] = local_node(RNG_IN_NODE, wire);
    const bool local = neighbours.empty() || uniform(p.seed, RNG_OUT_LOCAL, piece, wire) * 100.0 < p.pct_local;
    if (local) {
      out_ptr[w] = local_node(RNG_OUT_NODE, wire);
      continue;
    }
    size_t k = static_cast<size_t>(uniform(p.seed, RNG_OUT_NEIGHBOUR, piece, wire) * neighbours.size());
    if (k >= neighbours.size()) k = neighbours.size() - 1;
    int64_t u = static_cast<int64_t>(uniform(p.seed, RNG_OUT_SHARED, piece, wire) * snpp);
    if (u >= handed_out[k]) u = handed_out[k]++;  // keep the referenced shared ids compact
    const int64_t node = p.first_shared(neighbours[k]) + u;
    out_ptr[w] = node;
    ghost_lo = node < ghost_lo ? node : ghost_lo;
    ghost_hi = node > ghost_hi ? node : ghost_hi;
  }
}

// ---- The arithmetic (§1.1), identical for CPU variants, GPU kernels and the reference -----------------------------

// One wire's calculate_new_currents: I[0..S-1] currents, v[0..S] voltages with v[0] = V(in), v[S] = V(out).
CIRCUIT_HD inline void solve_wire(float *I, float *v, float inductance, float resistance, float wire_cap,
                                  int64_t steps) {
  float I_old[WIRE_SEGMENTS], v_old[WIRE_SEGMENTS - 1];
#if defined(__CUDACC__)
#pragma unroll
#endif
  for (int i = 0; i < WIRE_SEGMENTS; i++) I_old[i] = I[i];
#if defined(__CUDACC__)
#pragma unroll
#endif
  for (int i = 1; i < WIRE_SEGMENTS; i++) v_old[i - 1] = v[i];
  const float recip_dt = 1.0f / DELTA_T;
  const float recip_resistance = 1.0f / resistance;
  const float recip_capacitance = 1.0f / wire_cap;
  for (int64_t step = 0; step < steps; step++) {
    // dV = R·I + L·dI/dt  =>  I = (dV − L·(I − I_old)/Δt) / R
#if defined(__CUDACC__)
#pragma unroll
#endif
    for (int i = 0; i < WIRE_SEGMENTS; i++)
      I[i] = ((v[i + 1] - v[i]) - inductance * (I[i] - I_old[i]) * recip_dt) * recip_resistance;
    // interior voltages from the charge that the neighbouring segments' currents leave behind
#if defined(__CUDACC__)
#pragma unroll
#endif
    for (int i = 1; i < WIRE_SEGMENTS; i++) v[i] = v_old[i - 1] + DELTA_T * (I[i - 1] - I[i]) * recip_capacitance;
  }
}

// update_voltages for one node; returns the new voltage (the charge becomes 0).
CIRCUIT_HD inline float new_voltage(float voltage, float charge, float node_cap, float leakage) {
  return (voltage + charge / node_cap) * (1.0f - leakage);
}

// Floating-point operations of one loop (§1.7).
inline double flops_per_loop(const Params &p) {
  const double W = static_cast<double>(p.num_wires()), N = static_cast<double>(p.num_nodes());
  return W * (WIRE_SEGMENTS * 6 + (WIRE_SEGMENTS - 1) * 4) * static_cast<double>(p.steps) + 4 * W + 4 * N;
}

// ---- Values returned by tasks -------------------------------------------------------------------------------------

struct GhostRange {  // init_pointers: the neighbour shared nodes a super-piece's wires reach; empty when lo > hi
  int64_t lo, hi;
};

struct CheckSums {  // check_circuit
  double sum_voltage, abs_voltage, sum_current, abs_current;
  int64_t nonfinite;        // number of NaN/Inf values
  int64_t first_bad_index;  // node or wire id of the first one, -1 if none
  int32_t first_bad_field;  // its field id
};

}  // namespace circuit
