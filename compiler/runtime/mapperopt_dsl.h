// The interface between a generated mapper (one small C++ file per DSL program) and mapperopt's support library
// (libmapperopt_dslrt.so, built once per Legion version). It deliberately does not include legion.h, so that a
// generated file compiles in a fraction of a second: the generated code only holds the statement tables and the
// DSL functions written against the dynamic `Value` type below; everything that talks to Legion (the
// DefaultMapper subclass, machine queries, name chains, tracing, profiling) lives in the support library.
//
// Semantics are those of docs/dsl-reference.md (§4-§11); run-time errors are thrown as DslError and reported by the
// mapper as one `[mapperopt] error Rnnn: ...` line on stderr before it aborts.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <utility>
#include <string>
#include <vector>

namespace mapperopt {
namespace dsl {

// Processor and memory kinds share one code space; ANY stands for `*` in a selector.
enum Kind : uint8_t {
  CPU = 0, GPU = 1, OMP = 2, IO = 3, PY = 4,
  SYSMEM = 8, FBMEM = 9, ZCMEM = 10, RDMEM = 11, SOCKMEM = 12, VIRTUAL = 13,
  ANY = 255,
};
constexpr int NUM_PROC_KINDS = 5;
inline bool is_proc_kind(Kind k) { return k <= PY; }
const char *kind_name(Kind k);

// A DSL source position, attached to every operation that can fail at run time. `func` is the enclosing DSL
// function, or nullptr at top level.
struct Site {
  const char *func;
  int line;
  int col;
};

// A run-time error of the DSL (dsl-reference.md §11.5): `code` is the R-number, `message` the text without context.
struct DslError {
  int code;
  std::string message;
  Site site;
};
[[noreturn]] void fail(int code, const std::string &message, const Site &site);

// One processor: kind, node (address space) and index among the node's processors of that kind.
struct Proc {
  Kind kind;
  int64_t node;
  int64_t index;
};
inline bool operator==(const Proc &a, const Proc &b) {
  return a.kind == b.kind && a.node == b.node && a.index == b.index;
}

// The machine as the DSL sees it: per processor kind, the number of processors per node (every node must have the
// same number, dsl-reference.md §9.1) and, per processor, the memory kinds with affinity to it (bit k-SYSMEM set for kind k).
struct Topology {
  int64_t nodes = 1;
  int64_t per_node[NUM_PROC_KINDS] = {0, 0, 0, 0, 0};
  bool symmetric[NUM_PROC_KINDS] = {true, true, true, true, true};
  std::vector<uint32_t> memories[NUM_PROC_KINDS];  // indexed node * per_node + index
  bool has_memory(const Proc &p, Kind mem) const;
};

struct Model;  // a machine model with its chain of transformations (opaque)

// A task as the DSL sees it (dsl-reference.md §10). `mapping` is true for the task being mapped, which has no processor yet.
struct TaskView {
  std::string name;
  std::vector<int64_t> ipoint;
  std::vector<int64_t> ispace;
  bool mapping = false;
  Proc proc{CPU, 0, 0};
  bool has_proc = false;
  std::shared_ptr<const TaskView> parent;
};

// A DSL value (dsl-reference.md §4). Tuples hold ints only; PROC holds one processor in `procs`, PROCSET several.
class Value {
 public:
  enum Type : uint8_t { NONE, INT, BOOL, TUPLE, MODEL, PROC, PROCSET, TASK, KIND };
  Type type = NONE;
  int64_t i = 0;  // INT, BOOL (0/1), KIND (a Kind)
  std::vector<int64_t> t;
  std::vector<Proc> procs;
  std::shared_ptr<const Model> model;
  std::shared_ptr<const TaskView> task;

  static Value integer(int64_t v);
  static Value boolean(bool v);
  static Value kind(Kind k);
  static Value tuple(std::vector<int64_t> items);
};
const char *type_name(Value::Type type);
std::string article(Value::Type type);  // "an int", "a tuple", for messages
std::string to_string(const Value &v);  // the printed form of dsl-reference.md §7.11

// Evaluation context: the machine and the global variables of the policy (slots assigned by the generator).
struct Ctx {
  const Topology *topo;
  Value *globals;
};

// Operands and argument lists are passed as braced lists so that they are evaluated left to right, as the DSL
// (and its Python evaluator) does: that decides which error is reported first and the order of prints.

// ---- operators (dsl-reference.md §8) ----
struct Operands {
  const Value &a;
  const Value &b;
};
Value add(Operands x, const Site &s);
Value sub(Operands x, const Site &s);
Value mul(Operands x, const Site &s);
Value div(Operands x, const Site &s);  // floor division
Value mod(Operands x, const Site &s);  // remainder with the sign of the divisor
Value lt(Operands x, const Site &s);
Value le(Operands x, const Site &s);
Value gt(Operands x, const Site &s);
Value ge(Operands x, const Site &s);
Value eq(Operands x, const Site &s);
Value ne(Operands x, const Site &s);
Value neg(const Value &a, const Site &s);
Value lnot(const Value &a, const Site &s);
bool truth(const Value &a, const char *op, const Site &s);  // a bool operand of op: "&&", "||" or "?"

// ---- members and methods (dsl-reference.md §8.6, §9) ----
enum class Member : uint8_t { SIZE, VOLUME, LEN, IPOINT, ISPACE, PARENT };
enum class Method : uint8_t {
  HAS, MERGE, SPLIT, SWAP, SLICE, REVERSE, BALANCE_SPLIT, AUTO_SPLIT, GREEDY_SPLIT, PROCESSOR
};
Value member(const Value &obj, Member m, const Site &s);
Value method(const Ctx &cx, Method m, std::initializer_list<Value> obj_and_args, const Site &s);

// ---- tuples, indexing, machine models ----
// An element of a tuple literal or an index: a value, `*t` (unpack) or a lone `*` (wildcard).
struct Item {
  enum Mode : uint8_t { VALUE, UNPACK, WILDCARD };
  Item(Value v) : mode(VALUE), value(std::move(v)) {}
  Item(Mode m, Value v) : mode(m), value(std::move(v)) {}
  Mode mode;
  Value value;
};
inline Item unpack(Value v) { return Item(Item::UNPACK, std::move(v)); }
inline Item wildcard() { return Item(Item::WILDCARD, Value()); }
Value make_tuple(std::initializer_list<Item> items, const Site &s);
Value index(std::initializer_list<Item> obj_and_items, const Site &s);  // the first item is the indexed value
Value slice(std::initializer_list<Value> obj_lo_hi, const Site &s);     // NONE for an omitted bound
Value machine(const Ctx &cx, Kind kind, const Site &s);
// The older three-operand IndexTaskMap form (dsl-reference.md §7.6): `model[*result]`, an int result read as (result,).
Value index_by_result(const Value &model, const Value &result, const char *func, const Site &s);
// Checks a function's argument count and returns its arguments; `param` checks one against its declared type.
// Their errors carry no position, as in the evaluator: they concern the call as a whole.
const Value *arguments(std::initializer_list<Value> args, size_t count, const char *func);
const Value &param(const Value &arg, Value::Type type, const char *type_text, const char *name, const char *func);
void print(std::initializer_list<const char *> pieces, std::initializer_list<Value> args);

// tuple(e for x in t): `body` maps each element (an INT Value) to an INT Value; `var` is x, for messages.
template <class F>
Value comprehension(const Value &iterable, const char *var, F body, const Site &s) {
  if (iterable.type != Value::TUPLE)
    fail(408, std::string("type error: 'for ") + var + " in' needs a tuple, not " + article(iterable.type), s);
  std::vector<int64_t> out;
  out.reserve(iterable.t.size());
  for (int64_t x : iterable.t) {
    Value v = body(Value::integer(x));
    if (v.type != Value::INT)
      fail(408, "type error: a tuple comprehension must produce ints, not " + article(v.type), s);
    out.push_back(v.i);
  }
  return Value::tuple(std::move(out));
}

// ---- the statement tables of a policy (dsl-reference.md §6-§7) ----
using MapFn = Value (*)(Ctx &, std::initializer_list<Value> args);  // one Task argument

struct RegionSel {
  enum Mode : uint8_t { ANY, NAME, INDEX };
  Mode mode;
  const char *name;  // NAME
  int64_t index;     // INDEX (any size the DSL accepts: a large index never matches)
};

// One Layout statement's constraints; an aspect it does not mention is left unset (-1).
struct LayoutSpec {
  int8_t order;     // -1 unset, 0 SOA, 1 AOS
  int8_t dims;      // -1 unset, 0 F_order, 1 C_order
  int8_t align;     // -1 unset, 0 No_Align, 1 Align
  const char *align_op;  // "==", "!=", "<", "<=", ">", ">="
  int64_t align_bytes;
  bool exact;
  bool compact;
};

// `task` is nullptr for `*`. `pos` orders statements by source position; `line` is for messages.
struct TaskRule { int pos; int line; const char *task; std::vector<Kind> kinds; };
struct RegionRule { int pos; int line; const char *task; RegionSel region; Kind proc; std::vector<Kind> memories; };
struct LayoutRule { int pos; int line; const char *task; RegionSel region; Kind target; LayoutSpec layout; };
struct LimitRule { int pos; int line; const char *task; Kind proc; int64_t count; };
struct CollectRule { int pos; int line; const char *task; RegionSel region; };
struct MapRule { int pos; int line; const char *task; MapFn fn; const char *fn_name; Kind kind = ANY; };  // kind: a kind selector
struct ReplicateRule { int pos; int line; const char *task; };
// `Tunable id = value;`: the answer to the application's tunable `id`, `bytes` wide (little-endian truncation).
struct TunableRule { int pos; int line; int64_t id; int64_t value; int bytes; };

struct Policy {
  const char *source_name;  // the DSL file name used in messages
  const char *dsl_sha256;   // of the canonical DSL text the policy was generated from
  int num_globals;
  void (*load)(Ctx &);      // the load phase: global assignments and top-level prints, in order
  std::vector<TaskRule> tasks;
  std::vector<RegionRule> regions;
  std::vector<LayoutRule> layouts;
  std::vector<LimitRule> limits;
  std::vector<CollectRule> collects;
  std::vector<MapRule> index_maps;
  std::vector<MapRule> single_maps;
  std::vector<ReplicateRule> replicates;
  std::vector<TunableRule> tunables;
};

// Implemented by the support library; the generated file's exported functions forward to them.
const char *legion_version();
void register_policy(const Policy *policy);

}  // namespace dsl
}  // namespace mapperopt
