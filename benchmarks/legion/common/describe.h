// The application description (docs/interfaces.md, schema mapperopt.app/1) printed by `--describe`.
// Each application keeps one table of TaskInfo and RegionNode entries and uses it both to register its tasks
// and attach names and to print this description, so the two cannot drift apart.
#pragma once

#include <string>
#include <vector>

#include "legion.h"

namespace mapperopt {

struct RegionArg {
  std::vector<std::string> names;   // name chain: the nearest name first, ancestors after (dsl-reference.md §6.2)
  std::string privilege;            // read_only | read_write | write_discard | reduce | no_access
  std::vector<std::string> fields;
  std::string redop;                // e.g. "sum_f32" when privilege is reduce, else empty
  std::string layout;               // C_order or F_order when every variant requires that dimension order, else empty
  std::string interleave;           // SOA when the variants also reject AOS instances, else empty
  std::vector<std::string> layout_kinds;  // the processor kinds whose variants need layout/interleave; empty: all
};

struct TaskInfo {
  std::string name;
  std::vector<std::string> variants;  // "CPU", "GPU" (only the variants this build registers)
  std::string launch;                 // index | single | both
  bool inner = false;
  bool leaf = true;
  std::string parent;                 // the task that launches it
  std::vector<long long> domain;      // launch extents at this size; empty for single launches
  std::vector<RegionArg> regions;
};

struct RegionNode {
  std::string name;
  std::string kind;    // region | partition
  std::string parent;  // empty for a root region
};

// One region or partition of an application's region tree, in a table indexed by the application's region ids.
struct RegionTreeEntry {
  const char *name;
  bool partition;
  int parent;  // the index of its parent in the table, -1 for a root region
};

// The name chain of table entry `region`: its own name first, then its ancestors' (RegionArg::names).
inline std::vector<std::string> name_chain(const RegionTreeEntry *tree, int region) {
  std::vector<std::string> names;
  for (int r = region; r >= 0; r = tree[r].parent) names.push_back(tree[r].name);
  return names;
}

// The region tree of the description, from the `count` entries of `tree`.
inline std::vector<RegionNode> region_nodes(const RegionTreeEntry *tree, int count) {
  std::vector<RegionNode> nodes;
  for (int r = 0; r < count; r++)
    nodes.push_back({tree[r].name, tree[r].partition ? "partition" : "region",
                     tree[r].parent < 0 ? "" : tree[tree[r].parent].name});
  return nodes;
}

inline const char *privilege_name(Legion::PrivilegeMode privilege) {
  switch (privilege) {
    case LEGION_READ_ONLY: return "read_only";
    case LEGION_READ_WRITE: return "read_write";
    case LEGION_WRITE_DISCARD: return "write_discard";
    case LEGION_REDUCE: return "reduce";
    default: return "no_access";
  }
}

inline std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

inline std::string json_strings(const std::vector<std::string> &items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); i++) out += (i ? ", " : "") + json_string(items[i]);
  return out + "]";
}

inline std::string describe_json(const std::string &app, const std::vector<TaskInfo> &tasks,
                                 const std::vector<RegionNode> &tree) {
  std::string out = "{\"schema\": \"mapperopt.app/1\", \"app\": " + json_string(app) + ", \"tasks\": [";
  for (size_t t = 0; t < tasks.size(); t++) {
    const TaskInfo &task = tasks[t];
    out += std::string(t ? ", " : "") + "{\"name\": " + json_string(task.name) +
           ", \"variants\": " + json_strings(task.variants) + ", \"launch\": " + json_string(task.launch) +
           ", \"inner\": " + (task.inner ? "true" : "false") + ", \"leaf\": " + (task.leaf ? "true" : "false") +
           ", \"parent\": " + json_string(task.parent) + ", \"domain\": ";
    if (task.domain.empty()) {
      out += "null";
    } else {
      out += "[";
      for (size_t d = 0; d < task.domain.size(); d++) out += (d ? ", " : "") + std::to_string(task.domain[d]);
      out += "]";
    }
    out += ", \"regions\": [";
    for (size_t r = 0; r < task.regions.size(); r++) {
      const RegionArg &arg = task.regions[r];
      out += std::string(r ? ", " : "") + "{\"index\": " + std::to_string(r) + ", \"names\": " +
             json_strings(arg.names) + ", \"privilege\": " + json_string(arg.privilege) +
             ", \"fields\": " + json_strings(arg.fields);
      if (!arg.redop.empty()) out += ", \"redop\": " + json_string(arg.redop);
      if (!arg.layout.empty()) out += ", \"layout\": " + json_string(arg.layout);
      if (!arg.interleave.empty()) out += ", \"interleave\": " + json_string(arg.interleave);
      if (!arg.layout_kinds.empty()) out += ", \"layout_kinds\": " + json_strings(arg.layout_kinds);
      out += "}";
    }
    out += "]}";
  }
  out += "], \"region_tree\": [";
  for (size_t n = 0; n < tree.size(); n++) {
    out += std::string(n ? ", " : "") + "{\"name\": " + json_string(tree[n].name) + ", \"kind\": " +
           json_string(tree[n].kind) + ", \"parent\": " +
           (tree[n].parent.empty() ? std::string("null") : json_string(tree[n].parent)) + "}";
  }
  return out + "]}";
}

}  // namespace mapperopt
