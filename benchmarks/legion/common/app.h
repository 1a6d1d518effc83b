// Helpers every mapperopt benchmark application shares (docs/interfaces.md): application flags,
// loading a compiled mapper library named by `-mapper PATH.so`, and the one machine-readable result line.
// Header-only so that each application is one translation unit plus its CUDA file.
#pragma once

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "legion.h"
#include "mapperopt_abi.h"

namespace mapperopt {

// The value following `flag` on the command line, or nullptr. Application flags never start with -lg: or -ll:.
inline const char *flag_value(int argc, char **argv, const char *flag) {
  for (int i = 1; i + 1 < argc; i++)
    if (std::strcmp(argv[i], flag) == 0) return argv[i + 1];
  return nullptr;
}

inline bool has_flag(int argc, char **argv, const char *flag) {
  for (int i = 1; i < argc; i++)
    if (std::strcmp(argv[i], flag) == 0) return true;
  return false;
}

// An integer flag such as `-p 4`; a malformed value is a usage error (exit 1) naming the flag.
inline long long int_flag(int argc, char **argv, const char *flag, long long fallback) {
  const char *text = flag_value(argc, argv, flag);
  if (!text) return fallback;
  char *end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (*text == '\0' || *end != '\0') {
    std::fprintf(stderr, "error: %s expects an integer, got '%s'\n", flag, text);
    std::exit(1);
  }
  return value;
}

[[noreturn]] inline void mapper_load_error(const char *path, const std::string &what) {
  std::fprintf(stderr, "[mapperopt] error: cannot load mapper library '%s': %s\n", path, what.c_str());
  std::fflush(stderr);
  std::exit(1);
}

// Loads the mapper named by `-mapper PATH.so`, if any, checks that it was built for this application's ABI and
// Legion version, and lets it register itself. Must run before Runtime::start. Without the flag Legion's default
// mapper is used.
inline void load_mapper(int argc, char **argv) {
  const char *path = flag_value(argc, argv, "-mapper");
  if (!path) {
    if (has_flag(argc, argv, "-mapper")) mapper_load_error("", "-mapper needs a path to a .so file");
    return;
  }
  void *lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!lib) mapper_load_error(path, dlerror());
  auto abi = reinterpret_cast<mapperopt_abi_version_fn>(dlsym(lib, "mapperopt_abi_version"));
  auto version = reinterpret_cast<mapperopt_legion_version_fn>(dlsym(lib, "mapperopt_legion_version"));
  auto reg = reinterpret_cast<mapperopt_register_mapper_fn>(dlsym(lib, "mapperopt_register_mapper"));
  if (!abi || !version || !reg) mapper_load_error(path, "not a mapperopt mapper (missing exported functions)");
  if (abi() != MAPPEROPT_ABI_VERSION)
    mapper_load_error(path, "built for mapper ABI " + std::to_string(abi()) + ", this application expects " +
                                std::to_string(MAPPEROPT_ABI_VERSION) + "; recompile the mapper");
  if (std::strcmp(version(), LEGION_VERSION) != 0)
    mapper_load_error(path, std::string("built against Legion ") + version() + ", this application runs " +
                                LEGION_VERSION + "; recompile the mapper");
  reg();
}

// Prints the result line `MAPPEROPT_RESULT {json}` (schema mapperopt.result/1) on stdout and flushes.
// `check_json` is a JSON object describing the correctness check, e.g. {"kind": "analytic", "max_abs_err": 0};
// `after`: the untimed iterations run after the timed ones (so that a profile of the whole run can be accounted).
inline void print_result(const char *app, double time_s, long long iterations, long long warmup, double throughput,
                         const char *unit, bool verified, const std::string &check_json, long long after = 0) {
  std::printf(
      "MAPPEROPT_RESULT {\"schema\": \"mapperopt.result/1\", \"app\": \"%s\", \"time_s\": %.9g, \"iterations\": %lld, "
      "\"warmup\": %lld, \"after\": %lld, \"throughput\": %.9g, \"unit\": \"%s\", \"verified\": %s, \"check\": %s}\n",
      app, time_s, iterations, warmup, after, throughput, unit, verified ? "true" : "false", check_json.c_str());
  std::fflush(stdout);
}

}  // namespace mapperopt
