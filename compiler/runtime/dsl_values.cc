// DSL values, operators and machine models (dsl-reference.md §4, §8, §9). Legion-free: the mapper (dsl_mapper.cc) fills a
// Topology from Realm's machine and everything here works on that.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

#include "mapperopt_dsl.h"

namespace mapperopt {
namespace dsl {

const char *kind_name(Kind k) {
  switch (k) {
    case CPU: return "CPU";
    case GPU: return "GPU";
    case OMP: return "OMP";
    case IO: return "IO";
    case PY: return "PY";
    case SYSMEM: return "SYSMEM";
    case FBMEM: return "FBMEM";
    case ZCMEM: return "ZCMEM";
    case RDMEM: return "RDMEM";
    case SOCKMEM: return "SOCKMEM";
    case VIRTUAL: return "VIRTUAL";
    case ANY: return "*";
  }
  return "?";
}

void fail(int code, const std::string &message, const Site &site) { throw DslError{code, message, site}; }

bool Topology::has_memory(const Proc &p, Kind mem) const {
  if (!is_proc_kind(p.kind) || mem < SYSMEM || mem == VIRTUAL || mem == ANY) return false;
  const std::vector<uint32_t> &masks = memories[p.kind];
  size_t at = size_t(p.node * per_node[p.kind] + p.index);
  return at < masks.size() && (masks[at] & (1u << (mem - SYSMEM))) != 0;
}

Value Value::integer(int64_t v) {
  Value out;
  out.type = INT;
  out.i = v;
  return out;
}

Value Value::boolean(bool v) {
  Value out;
  out.type = BOOL;
  out.i = v;
  return out;
}

Value Value::kind(Kind k) {
  Value out;
  out.type = KIND;
  out.i = k;
  return out;
}

Value Value::tuple(std::vector<int64_t> items) {
  Value out;
  out.type = TUPLE;
  out.t = std::move(items);
  return out;
}

std::string article(Value::Type type) {
  const char *name = type_name(type);
  return std::string(std::strchr("aeiouAEIMO", name[0]) ? "an " : "a ") + name;
}

const char *type_name(Value::Type type) {
  switch (type) {
    case Value::NONE: return "nothing";
    case Value::INT: return "int";
    case Value::BOOL: return "bool";
    case Value::TUPLE: return "tuple";
    case Value::MODEL: return "MSpace";
    case Value::PROC: return "processor";
    case Value::PROCSET: return "processor set";
    case Value::TASK: return "Task";
    case Value::KIND: return "kind";
  }
  return "?";
}

// ------------------------------------------------------------------------------------------ machine models

// A model is Machine(K) (`op == MACHINE`) or one transformation applied to `base`; `size` is this model's shape.
struct Model {
  enum Op { MACHINE, MERGE, SPLIT, SWAP, SLICE, REVERSE };
  Kind kind;
  std::vector<int64_t> size;
  Op op = MACHINE;
  int64_t a = 0, b = 0;          // MERGE d1,d2; SWAP d1,d2; SLICE d,lo; REVERSE d; SPLIT d
  std::vector<int64_t> factors;  // SPLIT: dimension a of base replaced by these (first varies fastest)
  std::shared_ptr<const Model> base;
  std::string ops;  // the transformations as written, e.g. ".merge(0, 1)", for messages
};

static std::string tuple_text(const std::vector<int64_t> &t) {
  std::string out = "(";
  for (size_t k = 0; k < t.size(); k++) out += (k ? ", " : "") + std::to_string(t[k]);
  return out + (t.size() == 1 ? ",)" : ")");
}

static std::string model_text(const Model &m) {
  return std::string("Machine(") + kind_name(m.kind) + ")" + m.ops + " " + tuple_text(m.size);
}

static std::string proc_text(const Proc &p) {
  return std::string(kind_name(p.kind)) + "[node " + std::to_string(p.node) + ", proc " + std::to_string(p.index) +
         "]";
}

std::string to_string(const Value &v) {
  switch (v.type) {
    case Value::INT: return std::to_string(v.i);
    case Value::BOOL: return v.i ? "True" : "False";
    case Value::TUPLE: return tuple_text(v.t);
    case Value::MODEL: return model_text(*v.model);
    case Value::PROC: return proc_text(v.procs[0]);
    case Value::PROCSET: {
      std::string out = "[";
      for (size_t k = 0; k < v.procs.size(); k++) out += (k ? ", " : "") + proc_text(v.procs[k]);
      return out + "]";
    }
    case Value::TASK: return v.task->name + " " + tuple_text(v.task->ipoint);
    case Value::KIND: return kind_name(Kind(v.i));
    case Value::NONE: break;
  }
  return "None";
}

// The base model's index of the processor at `idx` of `m` (applies the inverse of each transformation).
static std::vector<int64_t> to_base(const Model &m, std::vector<int64_t> idx) {
  if (m.op == Model::MACHINE) return idx;
  const std::vector<int64_t> &s = m.base->size;
  std::vector<int64_t> old;
  switch (m.op) {
    case Model::MERGE: {
      const int64_t d1 = m.a, d2 = m.b, p = d1 < d2 ? d1 : d1 - 1;
      const int64_t merged = idx[p];
      idx.erase(idx.begin() + p);
      old.resize(s.size());
      size_t next = 0;
      for (int64_t d = 0; d < int64_t(s.size()); d++)
        if (d != d1 && d != d2) old[d] = idx[next++];
      old[d1] = merged / s[d2];
      old[d2] = merged % s[d2];
      break;
    }
    case Model::SPLIT: {
      old.assign(idx.begin(), idx.begin() + m.a);
      int64_t value = 0, stride = 1;
      for (size_t k = 0; k < m.factors.size(); k++) {
        value += idx[m.a + k] * stride;
        stride *= m.factors[k];
      }
      old.push_back(value);
      old.insert(old.end(), idx.begin() + m.a + m.factors.size(), idx.end());
      break;
    }
    case Model::SWAP:
      old = idx;
      std::swap(old[m.a], old[m.b]);
      break;
    case Model::SLICE:
      old = idx;
      old[m.a] += m.b;
      break;
    case Model::REVERSE:
      old = idx;
      old[m.a] = s[m.a] - 1 - idx[m.a];
      break;
    case Model::MACHINE: break;
  }
  return to_base(*m.base, old);
}

static Proc proc_at(const Model &m, const std::vector<int64_t> &idx) {
  std::vector<int64_t> b = to_base(m, idx);
  return Proc{m.kind, b[0], b[1]};
}

// The index of processor `p` in `m` (dsl-reference.md §9.6), or false when `p` is not in `m` (e.g. cut off by slice).
static bool from_base(const Model &m, const Proc &p, std::vector<int64_t> &idx) {
  if (m.op == Model::MACHINE) {
    if (p.node < 0 || p.node >= m.size[0] || p.index < 0 || p.index >= m.size[1]) return false;
    idx = {p.node, p.index};
    return true;
  }
  std::vector<int64_t> old;
  if (!from_base(*m.base, p, old)) return false;
  const std::vector<int64_t> &s = m.base->size;
  switch (m.op) {
    case Model::MERGE: {
      const int64_t d1 = m.a, d2 = m.b, at = d1 < d2 ? d1 : d1 - 1;
      idx.clear();
      for (int64_t d = 0; d < int64_t(s.size()); d++)
        if (d != d1 && d != d2) idx.push_back(old[d]);
      idx.insert(idx.begin() + at, old[d1] * s[d2] + old[d2]);
      return true;
    }
    case Model::SPLIT: {
      idx.assign(old.begin(), old.begin() + m.a);
      int64_t value = old[m.a];
      for (int64_t f : m.factors) {
        idx.push_back(value % f);
        value /= f;
      }
      idx.insert(idx.end(), old.begin() + m.a + 1, old.end());
      return true;
    }
    case Model::SWAP:
      idx = old;
      std::swap(idx[m.a], idx[m.b]);
      return true;
    case Model::SLICE:
      idx = old;
      idx[m.a] -= m.b;
      return idx[m.a] >= 0 && idx[m.a] < m.size[m.a];
    case Model::REVERSE:
      idx = old;
      idx[m.a] = s[m.a] - 1 - old[m.a];
      return true;
    case Model::MACHINE: break;
  }
  return false;
}

static Value model_value(std::shared_ptr<const Model> m) {
  Value out;
  out.type = Value::MODEL;
  out.model = std::move(m);
  return out;
}

Value machine(const Ctx &cx, Kind kind, const Site &s) {
  if (!cx.topo->symmetric[kind])
    fail(409, std::string("Machine(") + kind_name(kind) + "): the nodes have different numbers of " +
                  kind_name(kind) + " processors", s);
  auto m = std::make_shared<Model>();
  m->kind = kind;
  m->size = {cx.topo->nodes, cx.topo->per_node[kind]};
  return model_value(m);
}

// ------------------------------------------------------------------------------------------ arithmetic

// R407 names the exact result, as the evaluator does ("integer overflow: 9223372036854775808 does not fit ...").
[[noreturn]] static void overflow(__int128 exact, const Site &s) {
  const bool negative = exact < 0;
  unsigned __int128 v = negative ? -(unsigned __int128)exact : (unsigned __int128)exact;
  std::string digits;
  do {
    digits.insert(digits.begin(), char('0' + int(v % 10)));
    v /= 10;
  } while (v != 0);
  fail(407, "integer overflow: " + std::string(negative ? "-" : "") + digits + " does not fit in 64 bits", s);
}

static int64_t int_op(char op, int64_t a, int64_t b, const Site &s) {
  int64_t r = 0;
  switch (op) {
    case '+':
      if (__builtin_add_overflow(a, b, &r)) overflow(__int128(a) + b, s);
      return r;
    case '-':
      if (__builtin_sub_overflow(a, b, &r)) overflow(__int128(a) - b, s);
      return r;
    case '*':
      if (__builtin_mul_overflow(a, b, &r)) overflow(__int128(a) * b, s);
      return r;
    case '/':
    case '%': {
      if (b == 0) fail(401, std::string(op == '/' ? "division" : "remainder") + " by zero: " + std::to_string(a) +
                                " " + op + " 0", s);
      if (a == std::numeric_limits<int64_t>::min() && b == -1) {
        if (op == '%') return 0;
        overflow(-__int128(a), s);
      }
      int64_t q = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) q--;  // floor, not C's truncation (dsl-reference.md §8.2)
      return op == '/' ? q : a - b * q;
    }
  }
  return 0;
}

[[noreturn]] static void binary_type_error(const char *op, const Value &a, const Value &b, const Site &s) {
  fail(408, std::string("type error: operator '") + op + "' cannot be applied to " + type_name(a.type) + " and " +
                type_name(b.type), s);
}

static Value arith(char op, const Value &a, const Value &b, const Site &s) {
  const char text[2] = {op, 0};
  if (a.type == Value::INT && b.type == Value::INT) return Value::integer(int_op(op, a.i, b.i, s));
  if (a.type == Value::TUPLE && b.type == Value::TUPLE) {
    if (a.t.size() != b.t.size())
      fail(408, std::string("length mismatch: ") + tuple_text(a.t) + " " + op + " " + tuple_text(b.t), s);
    std::vector<int64_t> out(a.t.size());
    for (size_t k = 0; k < out.size(); k++) out[k] = int_op(op, a.t[k], b.t[k], s);
    return Value::tuple(std::move(out));
  }
  if (a.type == Value::TUPLE && b.type == Value::INT) {
    std::vector<int64_t> out(a.t.size());
    for (size_t k = 0; k < out.size(); k++) out[k] = int_op(op, a.t[k], b.i, s);
    return Value::tuple(std::move(out));
  }
  if (a.type == Value::INT && b.type == Value::TUPLE) {
    std::vector<int64_t> out(b.t.size());
    for (size_t k = 0; k < out.size(); k++) out[k] = int_op(op, a.i, b.t[k], s);
    return Value::tuple(std::move(out));
  }
  binary_type_error(text, a, b, s);
}

Value add(Operands x, const Site &s) { return arith('+', x.a, x.b, s); }
Value sub(Operands x, const Site &s) { return arith('-', x.a, x.b, s); }
Value mul(Operands x, const Site &s) { return arith('*', x.a, x.b, s); }
Value div(Operands x, const Site &s) { return arith('/', x.a, x.b, s); }
Value mod(Operands x, const Site &s) { return arith('%', x.a, x.b, s); }

Value neg(const Value &a, const Site &s) {
  if (a.type == Value::INT) return Value::integer(int_op('-', 0, a.i, s));
  if (a.type == Value::TUPLE) {
    std::vector<int64_t> out(a.t.size());
    for (size_t k = 0; k < out.size(); k++) out[k] = int_op('-', 0, a.t[k], s);
    return Value::tuple(std::move(out));
  }
  fail(408, std::string("type error: operator '-' cannot be applied to ") + type_name(a.type), s);
}

bool truth(const Value &a, const char *op, const Site &s) {
  if (a.type != Value::BOOL)
    fail(408, op[0] == '?' ? "type error: the condition of '?' must be a bool, not " + article(a.type)
                           : std::string("type error: operator '") + op + "' cannot be applied to " + type_name(a.type),
         s);
  return a.i != 0;
}

Value lnot(const Value &a, const Site &s) {
  if (a.type != Value::BOOL)
    fail(408, std::string("type error: operator '!' cannot be applied to ") + type_name(a.type), s);
  return Value::boolean(!a.i);
}

static Value compare(const char *op, const Value &a, const Value &b, const Site &s) {
  if (a.type != Value::INT || b.type != Value::INT) binary_type_error(op, a, b, s);
  switch (op[0]) {
    case '<': return Value::boolean(op[1] ? a.i <= b.i : a.i < b.i);
    default: return Value::boolean(op[1] ? a.i >= b.i : a.i > b.i);
  }
}

Value lt(Operands x, const Site &s) { return compare("<", x.a, x.b, s); }
Value le(Operands x, const Site &s) { return compare("<=", x.a, x.b, s); }
Value gt(Operands x, const Site &s) { return compare(">", x.a, x.b, s); }
Value ge(Operands x, const Site &s) { return compare(">=", x.a, x.b, s); }

static bool equal(const char *op, const Value &a, const Value &b, const Site &s) {
  if (a.type != b.type || (a.type != Value::INT && a.type != Value::BOOL && a.type != Value::TUPLE))
    binary_type_error(op, a, b, s);
  return a.type == Value::TUPLE ? a.t == b.t : a.i == b.i;
}

Value eq(Operands x, const Site &s) { return Value::boolean(equal("==", x.a, x.b, s)); }
Value ne(Operands x, const Site &s) { return Value::boolean(!equal("!=", x.a, x.b, s)); }

// ------------------------------------------------------------------------------------------ members
// Messages follow the reference evaluator (mapperopt/dsl/evaluator.py, machine.py) word for word: the compiler's
// differential tests compare them.

static int64_t volume(const std::vector<int64_t> &t, const Site &s) {
  int64_t v = 1;
  for (int64_t x : t) v = int_op('*', v, x, s);
  return v;
}

[[noreturn]] static void no_member(const Value &obj, const char *name, const Site &s) {
  fail(408, "type error: " + article(obj.type) + " has no property '" + name + "'", s);
}

Value member(const Value &obj, Member m, const Site &s) {
  switch (m) {
    case Member::SIZE:
      if (obj.type == Value::MODEL) return Value::tuple(obj.model->size);
      if (obj.type == Value::TUPLE) return obj;
      no_member(obj, "size", s);
    case Member::VOLUME:
      if (obj.type == Value::MODEL) return Value::integer(volume(obj.model->size, s));
      if (obj.type == Value::TUPLE) return Value::integer(volume(obj.t, s));
      no_member(obj, "volume", s);
    case Member::LEN:
      if (obj.type == Value::MODEL) return Value::integer(int64_t(obj.model->size.size()));
      if (obj.type == Value::TUPLE) return Value::integer(int64_t(obj.t.size()));
      no_member(obj, "len", s);
    case Member::IPOINT:
      if (obj.type == Value::TASK) return Value::tuple(obj.task->ipoint);
      no_member(obj, "ipoint", s);
    case Member::ISPACE:
      if (obj.type == Value::TASK) return Value::tuple(obj.task->ispace);
      no_member(obj, "ispace", s);
    case Member::PARENT:
      if (obj.type != Value::TASK) no_member(obj, "parent", s);
      if (!obj.task->parent) fail(406, "task '" + obj.task->name + "' has no parent (it is the top-level task)", s);
      {
        Value out;
        out.type = Value::TASK;
        out.task = obj.task->parent;
        return out;
      }
  }
  no_member(obj, "?", s);
}

// ------------------------------------------------------------------------------------------ methods

static std::vector<int64_t> prime_factors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t p = 2; p * p <= n; p++)
    while (n % p == 0) {
      out.push_back(p);
      n /= p;
    }
  if (n > 1) out.push_back(n);
  return out;
}

// A model derived from `obj` by `op`; `call` is the method call as written, e.g. "merge(0, 1)".
static std::shared_ptr<Model> derived(const Value &obj, Model::Op op, const std::string &call) {
  auto m = std::make_shared<Model>();
  m->kind = obj.model->kind;
  m->op = op;
  m->base = obj.model;
  m->ops = obj.model->ops + "." + call;
  return m;
}

// The stated limits of the evaluator: a machine model has at most MAX_DIMS dimensions, a tuple MAX_TUPLE elements.
constexpr int64_t MAX_DIMS = 16;
constexpr size_t MAX_TUPLE = 4096;

// R409 before making `factors` new dimensions out of one when the model would exceed MAX_DIMS.
static void room(const Model &m, int64_t factors, const std::string &call, const Site &s) {
  if (factors > MAX_DIMS - (int64_t(m.size.size()) - 1))
    fail(409, call + ": a machine model has at most " + std::to_string(MAX_DIMS) + " dimensions", s);
}

static Value split_into(const Value &obj, int64_t d, std::vector<int64_t> factors, const std::string &call) {
  auto m = derived(obj, Model::SPLIT, call);
  m->a = d;
  m->size.assign(obj.model->size.begin(), obj.model->size.begin() + d);
  m->size.insert(m->size.end(), factors.begin(), factors.end());
  m->size.insert(m->size.end(), obj.model->size.begin() + d + 1, obj.model->size.end());
  m->factors = std::move(factors);
  return model_value(m);
}

// greedy_split: each prime factor of O (largest first) goes to the dimension with the largest remaining extent.
static std::vector<int64_t> greedy_factors(int64_t O, const std::vector<int64_t> &v) {
  std::vector<int64_t> f(v.size(), 1);
  std::vector<int64_t> primes = prime_factors(O);
  std::sort(primes.rbegin(), primes.rend());
  for (int64_t p : primes) {
    size_t best = 0;
    for (size_t k = 1; k < v.size(); k++)  // remaining extent v[k]/f[k], compared exactly
      if (__int128(v[k]) * f[best] > __int128(v[best]) * f[k]) best = k;
    f[best] *= p;
  }
  return f;
}

// auto_split: the factorisation of O minimising sum(O_i / v_i), ties to greedy_split's, else the smallest.
static std::vector<int64_t> auto_factors(int64_t O, const std::vector<int64_t> &v) {
  __int128 scale = 1;  // sum(O_i / v_i) * prod(v) is an integer
  for (int64_t x : v) scale *= x;
  auto cost = [&](const std::vector<int64_t> &f) {
    __int128 c = 0;
    for (size_t k = 0; k < f.size(); k++) c += __int128(f[k]) * (scale / v[k]);
    return c;
  };
  std::vector<int64_t> best, cur;
  __int128 best_cost = 0;
  // Enumerate k-tuples with product O in lexicographic order, keeping the first minimum.
  auto search = [&](auto &&self, int64_t rest) -> void {
    if (cur.size() + 1 == v.size()) {
      cur.push_back(rest);
      __int128 c = cost(cur);
      if (best.empty() || c < best_cost) {
        best = cur;
        best_cost = c;
      }
      cur.pop_back();
      return;
    }
    for (int64_t f = 1; f <= rest; f++)
      if (rest % f == 0) {
        cur.push_back(f);
        self(self, rest / f);
        cur.pop_back();
      }
  };
  search(search, O);
  std::vector<int64_t> greedy = greedy_factors(O, v);
  return cost(greedy) == best_cost ? greedy : best;
}

static Value processor_of(const Value &task, const std::vector<Value> &args, const Site &s) {
  if (args.size() != 1 || args[0].type != Value::MODEL)
    fail(408, "type error: processor(m) takes one machine model", s);
  const Model &m = *args[0].model;
  const TaskView &t = *task.task;
  if (t.mapping || !t.has_proc)
    fail(406, "task '" + t.name + "' is being mapped and has no processor yet; use task.parent.processor(m)", s);
  if (t.proc.kind != m.kind)
    fail(406, "processor " + proc_text(t.proc) + " is not in " + model_text(m) + " (kind " + kind_name(t.proc.kind) +
                  ", model of " + kind_name(m.kind) + ")", s);
  std::vector<int64_t> idx;
  if (!from_base(m, t.proc, idx)) fail(406, "processor " + proc_text(t.proc) + " is not in " + model_text(m), s);
  return Value::tuple(std::move(idx));
}

static bool has_memory(const Ctx &cx, const std::vector<Value> &args, const std::vector<Proc> &procs, const Site &s) {
  if (args.size() != 1 || args[0].type != Value::KIND) fail(408, "type error: has(M) takes one memory kind", s);
  if (procs.empty()) return false;
  for (const Proc &p : procs)
    if (!cx.topo->has_memory(p, Kind(args[0].i))) return false;
  return true;
}

static std::vector<Proc> all_procs(const Model &m, const Site &s) {
  std::vector<Proc> out;
  const int64_t n = volume(m.size, s);
  std::vector<int64_t> idx(m.size.size(), 0);
  for (int64_t k = 0; k < n; k++) {
    out.push_back(proc_at(m, idx));
    for (int64_t d = int64_t(idx.size()) - 1; d >= 0 && ++idx[d] == m.size[d]; d--) idx[d] = 0;
  }
  return out;
}

[[noreturn]] static void bad_dim(const Model &m, int64_t d, const char *what, const Site &s) {
  fail(409, std::string(what) + ": dimension " + std::to_string(d) + " is out of range for the " +
                std::to_string(m.size.size()) + "-dimensional model " + model_text(m), s);
}

static int64_t dim(const Model &m, int64_t d, const char *what, const Site &s) {
  if (d < 0 || d >= int64_t(m.size.size())) bad_dim(m, d, what, s);
  return d;
}

static int64_t splittable(const Model &m, int64_t d, const char *what, const Site &s) {
  dim(m, d, what, s);
  if (m.size[d] < 1)
    fail(409, std::string(what) + ": dimension " + std::to_string(d) + " of " + model_text(m) + " is empty", s);
  return m.size[d];
}

static std::vector<int64_t> extents(const Value &v, const char *what, const Site &s) {
  bool ok = !v.t.empty();
  for (int64_t x : v.t) ok = ok && x >= 1;
  if (!ok)
    fail(409, std::string(what) + ": the extents " + tuple_text(v.t) +
                  " must be a non-empty tuple of positive integers", s);
  return v.t;
}

Value method(const Ctx &cx, Method which, std::initializer_list<Value> obj_and_args, const Site &s) {
  static const char *const names[] = {"has", "merge", "split", "swap", "slice", "reverse", "balance_split",
                                      "auto_split", "greedy_split", "processor"};
  // Argument types of the machine-model methods (the evaluator's table).
  static const char *const signatures[] = {"kind", "int, int", "int, int", "int, int", "int, int, int", "int",
                                           "int, int", "int, tuple", "int, tuple", ""};
  const Value &obj = *obj_and_args.begin();
  const std::vector<Value> args(obj_and_args.begin() + 1, obj_and_args.end());
  const char *name = names[int(which)];
  if (which == Method::PROCESSOR && obj.type == Value::TASK) return processor_of(obj, args, s);
  if (which == Method::HAS && obj.type == Value::PROC) return Value::boolean(has_memory(cx, args, obj.procs, s));
  if (obj.type != Value::MODEL || which == Method::PROCESSOR)
    fail(408, "type error: " + article(obj.type) + " has no method '" + name + "'", s);
  std::string given, call;
  for (size_t k = 0; k < args.size(); k++) {
    given += std::string(k ? ", " : "") + type_name(args[k].type);
    call += (k ? ", " : "") + to_string(args[k]);
  }
  if (given != signatures[int(which)])
    fail(408, std::string("type error: ") + name + " takes (" + signatures[int(which)] + "), given (" + given + ")", s);
  call = std::string(name) + "(" + call + ")";
  const Model &m = *obj.model;
  switch (which) {
    case Method::HAS: return Value::boolean(has_memory(cx, args, all_procs(m, s), s));
    case Method::MERGE: {
      const int64_t d1 = dim(m, args[0].i, name, s), d2 = dim(m, args[1].i, name, s);
      if (d1 == d2) fail(409, call + ": the two dimensions must differ", s);
      auto out = derived(obj, Model::MERGE, call);
      out->a = d1;
      out->b = d2;
      for (int64_t d = 0; d < int64_t(m.size.size()); d++)
        if (d != d1 && d != d2) out->size.push_back(m.size[d]);
      out->size.insert(out->size.begin() + (d1 < d2 ? d1 : d1 - 1), int_op('*', m.size[d1], m.size[d2], s));
      return model_value(out);
    }
    case Method::SPLIT: {
      const int64_t d = dim(m, args[0].i, name, s), f = args[1].i;
      if (f < 1 || m.size[d] % f != 0)
        fail(409, call + ": the factor must be >= 1 and divide the size " + std::to_string(m.size[d]) +
                      " of dimension " + std::to_string(d), s);
      room(m, 2, call, s);
      return split_into(obj, d, {f, m.size[d] / f}, call);
    }
    case Method::SWAP: {
      const int64_t d1 = dim(m, args[0].i, name, s), d2 = dim(m, args[1].i, name, s);
      if (d1 == d2) fail(409, call + ": the two dimensions must differ", s);
      auto out = derived(obj, Model::SWAP, call);
      out->a = d1;
      out->b = d2;
      out->size = m.size;
      std::swap(out->size[d1], out->size[d2]);
      return model_value(out);
    }
    case Method::SLICE: {
      const int64_t d = dim(m, args[0].i, name, s), lo = args[1].i, hi = args[2].i;
      if (lo < 0 || lo > hi || hi >= m.size[d])
        fail(409, call + ": needs 0 <= lo <= hi < " + std::to_string(m.size[d]) + " (size of dimension " +
                      std::to_string(d) + ")", s);
      auto out = derived(obj, Model::SLICE, call);
      out->a = d;
      out->b = lo;
      out->size = m.size;
      out->size[d] = hi - lo + 1;
      return model_value(out);
    }
    case Method::REVERSE: {
      auto out = derived(obj, Model::REVERSE, call);
      out->a = dim(m, args[0].i, name, s);
      out->size = m.size;
      return model_value(out);
    }
    case Method::BALANCE_SPLIT: {
      const int64_t d = args[0].i, size = splittable(m, d, name, s), n = args[1].i;
      if (n < 2) fail(409, call + ": the number of factors must be >= 2", s);
      room(m, n, call, s);
      std::vector<int64_t> f(n, 1);
      for (int64_t p : prime_factors(size)) *std::min_element(f.begin(), f.end()) *= p;
      std::sort(f.rbegin(), f.rend());
      return split_into(obj, d, std::move(f), call);
    }
    case Method::AUTO_SPLIT:
    case Method::GREEDY_SPLIT: {
      const int64_t d = args[0].i, size = splittable(m, d, name, s);
      const std::vector<int64_t> v = extents(args[1], name, s);
      room(m, int64_t(v.size()), call, s);
      return split_into(obj, d, which == Method::AUTO_SPLIT ? auto_factors(size, v) : greedy_factors(size, v), call);
    }
    case Method::PROCESSOR: break;
  }
  fail(408, "type error: " + article(obj.type) + " has no method '" + name + "'", s);
}

// ------------------------------------------------------------------------------------------ tuples and indexing

static std::vector<int64_t> unpacked(const Value &v, const Site &s) {
  if (v.type != Value::TUPLE) fail(408, "type error: '*' unpacks a tuple, not " + article(v.type), s);
  return v.t;
}

Value make_tuple(std::initializer_list<Item> items, const Site &s) {
  std::vector<int64_t> out;
  for (const Item &item : items) {
    if (item.mode == Item::UNPACK) {
      const std::vector<int64_t> t = unpacked(item.value, s);
      out.insert(out.end(), t.begin(), t.end());
      if (out.size() > MAX_TUPLE)
        fail(408, "a tuple has at most " + std::to_string(MAX_TUPLE) + " elements, not " +
                      std::to_string(out.size()), s);
    } else {
      if (item.value.type != Value::INT)
        fail(408, "type error: a tuple element must be an int, not " + article(item.value.type), s);
      out.push_back(item.value.i);
    }
  }
  return Value::tuple(std::move(out));
}

static void check_range(const Model &m, const std::vector<int64_t> &idx, const Site &s) {
  for (size_t d = 0; d < idx.size(); d++)
    if (idx[d] < 0 || idx[d] >= m.size[d])
      fail(400, "processor index out of bound: index " + std::to_string(idx[d]) +
                    (idx[d] < 0 ? " < 0" : " >= size " + std::to_string(m.size[d])) + " in dimension " +
                    std::to_string(d) + " of " + model_text(m), s);
}

// m[i0, ..., *, ...]: `wild[d]` marks a wildcard (dsl-reference.md §9.2).
static Value index_model(const Model &m, std::vector<int64_t> idx, const std::vector<bool> &wild, const Site &s) {
  if (idx.size() != m.size.size())
    fail(408, std::to_string(idx.size()) + " index value(s) for the " + std::to_string(m.size.size()) +
                  "-dimensional model " + model_text(m), s);
  Value out;
  if (std::find(wild.begin(), wild.end(), true) == wild.end()) {
    check_range(m, idx, s);
    out.type = Value::PROC;
    out.procs.push_back(proc_at(m, idx));
    return out;
  }
  for (size_t d = 0; d < idx.size(); d++)
    if (!wild[d] && (idx[d] < 0 || idx[d] >= m.size[d])) check_range(m, idx, s);  // wildcards read as 0
  int64_t count = 1;
  for (size_t d = 0; d < idx.size(); d++)
    if (wild[d]) count *= m.size[d];
  if (count == 0) fail(400, "processor index out of bound: the wildcard selects no processor of " + model_text(m), s);
  out.type = Value::PROCSET;
  for (int64_t k = 0; k < count; k++) {  // the wildcard dimensions, the last one fastest
    out.procs.push_back(proc_at(m, idx));
    for (int64_t d = int64_t(idx.size()) - 1; d >= 0; d--) {
      if (!wild[d]) continue;
      if (++idx[d] < m.size[d]) break;
      idx[d] = 0;
    }
  }
  std::vector<int64_t> nodes;
  for (const Proc &p : out.procs)
    if (std::find(nodes.begin(), nodes.end(), p.node) == nodes.end()) nodes.push_back(p.node);
  if (nodes.size() > 1) {
    std::sort(nodes.begin(), nodes.end());
    std::string list = "[";
    for (size_t k = 0; k < nodes.size(); k++) list += (k ? ", " : "") + std::to_string(nodes[k]);
    fail(405, "processor set spans nodes " + list + "] in " + model_text(m) +
                  "; all processors of a set must be on one node", s);
  }
  std::sort(out.procs.begin(), out.procs.end(), [](const Proc &a, const Proc &b) { return a.index < b.index; });
  out.procs.erase(std::unique(out.procs.begin(), out.procs.end()), out.procs.end());
  return out;
}

Value index(std::initializer_list<Item> obj_and_items, const Site &s) {
  const Value &obj = obj_and_items.begin()->value;
  std::vector<int64_t> idx;
  std::vector<bool> wild;
  for (const Item *it = obj_and_items.begin() + 1; it != obj_and_items.end(); ++it) {
    if (it->mode == Item::WILDCARD) {
      idx.push_back(0);
      wild.push_back(true);
    } else if (it->mode == Item::UNPACK) {
      for (int64_t x : unpacked(it->value, s)) {
        idx.push_back(x);
        wild.push_back(false);
      }
    } else {
      if (it->value.type != Value::INT)
        fail(408, "type error: an index must be an int, not " + article(it->value.type), s);
      idx.push_back(it->value.i);
      wild.push_back(false);
    }
  }
  if (obj.type == Value::MODEL) return index_model(*obj.model, idx, wild, s);
  if (obj.type != Value::TUPLE) fail(408, "type error: " + article(obj.type) + " cannot be indexed", s);
  if (idx.size() != 1 || wild[0])
    fail(408, "a tuple takes exactly one integer index, " + std::to_string(idx.size()) + " given", s);
  const int64_t k = idx[0], n = int64_t(obj.t.size());
  if (k < -n || k >= n) fail(408, "tuple index " + std::to_string(k) + " out of range for " + tuple_text(obj.t), s);
  return Value::integer(obj.t[k < 0 ? k + n : k]);
}

Value index_by_result(const Value &model, const Value &result, const char *func, const Site &s) {
  if (model.type != Value::MODEL)
    fail(408, std::string("type error: the machine of a three-operand IndexTaskMap is ") + article(model.type) +
                  ", not a machine model", s);
  Value r = result.type == Value::INT ? Value::tuple({result.i}) : result;
  if (r.type != Value::TUPLE || r.t.size() != model.model->size.size())
    fail(408, std::string("'") + func + "' returned " + to_string(result) + "; expected an int or a tuple of " +
                  std::to_string(model.model->size.size()) + " ints", s);
  return index({model, unpack(r)}, s);
}

Value slice(std::initializer_list<Value> obj_lo_hi, const Site &s) {
  const Value &obj = obj_lo_hi.begin()[0], &lo = obj_lo_hi.begin()[1], &hi = obj_lo_hi.begin()[2];
  std::vector<int64_t> t;
  if (obj.type == Value::MODEL)
    t = obj.model->size;
  else if (obj.type == Value::TUPLE)
    t = obj.t;
  else
    fail(408, "type error: " + article(obj.type) + " cannot be sliced", s);
  const int64_t n = int64_t(t.size());
  auto bound = [&](const Value &v, int64_t fallback) {  // Python's slice semantics
    if (v.type == Value::NONE) return fallback;
    if (v.type != Value::INT) fail(408, "type error: a slice bound must be an int, not " + article(v.type), s);
    const int64_t b = v.i < 0 ? v.i + n : v.i;
    return std::min(std::max(b, int64_t(0)), n);
  };
  const int64_t a = bound(lo, 0), b = bound(hi, n);
  return Value::tuple(a < b ? std::vector<int64_t>(t.begin() + a, t.begin() + b) : std::vector<int64_t>());
}

const Value *arguments(std::initializer_list<Value> args, size_t count, const char *func) {
  if (args.size() != count)
    fail(408, std::string("'") + func + "' takes " + std::to_string(count) + " argument(s), " +
                  std::to_string(args.size()) + " given", Site{nullptr, 0, 0});
  return args.begin();
}

const Value &param(const Value &arg, Value::Type type, const char *type_text, const char *name, const char *func) {
  if (arg.type != type)
    fail(408, std::string("type error: parameter '") + name + "' of '" + func + "' is " + type_text +
                  ", the argument is " + article(arg.type) + " (" + to_string(arg) + ")", Site{nullptr, 0, 0});
  return arg;
}

void print(std::initializer_list<const char *> pieces, std::initializer_list<Value> args) {
  std::string line;
  auto arg = args.begin();
  for (const char *piece : pieces) {
    line += piece;
    if (arg != args.end()) line += to_string(*arg++);
  }
  line += "\n";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace dsl
}  // namespace mapperopt
