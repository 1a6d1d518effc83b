// LD_PRELOAD shim: puts a compiled mapper into an unmodified Legion application.
//
//   LD_PRELOAD=libmapperopt_preload.so MAPPEROPT_MAPPER=/path/libmapperopt_mapper.so ./app [-mapper-trace t.jsonl]
//
// Its static initializer runs before the application's main (this library links Legion, so Legion's own static
// initializers have run), loads the mapper, checks its ABI and Legion version against this shim's, and lets it
// register itself with Runtime::add_registration_callback. The -mapper-* flags are read by the mapper from the
// command line as usual (or MAPPEROPT_TRACE / MAPPEROPT_PROFILE=1, for programs that reject unknown flags).
//
// The DSL mapper wins over the application's own: this library interposes Runtime::replace_default_mapper and
// Runtime::add_mapper (the application's calls resolve here first), so a mapper the application registers in
// `main` does not replace the DSL mapper, and one it adds under its own mapper ID gets a DSL mapper in its place.
// With MAPPEROPT_KEEP_APP_MAPPER=1 the application's mappers are kept for the tasks the DSL does not name.
// A layout aspect no Layout statement mentions follows the task variant's layout constraints (dsl-reference.md §7.3).
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "legion.h"
#include "mapperopt_abi.h"

namespace {

bool dsl_loaded = false;  // the constructor loaded a DSL mapper: interpose the application's registrations

using ReplaceFn = void (*)(Legion::Runtime *, Legion::Mapping::Mapper *, Legion::Processor);
using AddFn = void (*)(Legion::Runtime *, Legion::MapperID, Legion::Mapping::Mapper *, Legion::Processor);
using NewFn = Legion::Mapping::Mapper *(*)(Legion::Mapping::MapperRuntime *, Legion::Machine, Legion::Processor,
                                            Legion::Mapping::Mapper *);
using KeepFn = void (*)(Legion::Mapping::Mapper *, Legion::Processor);

// Legion's definition of an interposed function (next: after this library), or the support library's function.
void *next_symbol(const char *name, bool next = true) {
  void *fn = dlsym(next ? RTLD_NEXT : RTLD_DEFAULT, name);
  if (fn == nullptr) {
    std::fprintf(stderr, "[mapperopt] error: the LD_PRELOAD shim cannot find %s\n", name);
    std::fflush(stderr);
    std::abort();
  }
  return fn;
}

bool keep_app_mappers() {
  const char *keep = std::getenv("MAPPEROPT_KEEP_APP_MAPPER");
  return keep != nullptr && std::strcmp(keep, "1") == 0;
}

bool is_dsl_mapper(Legion::Mapping::Mapper *mapper) {
  return std::strcmp(mapper->get_mapper_name(), "mapperopt_dsl") == 0;
}

void say_displaced(const std::string &what, Legion::Mapping::Mapper *mapper) {
  static bool said = false;  // registration callbacks run one at a time
  if (said) return;
  said = true;
  std::fprintf(stderr, "[mapperopt] note: the application %s its own mapper ('%s'); %s\n", what.c_str(),
               mapper->get_mapper_name(),
               keep_app_mappers() ? "the DSL mapper takes its place and hands it the tasks the DSL does not name "
                                    "(MAPPEROPT_KEEP_APP_MAPPER=1)"
                                  : "the DSL mapper takes its place for every task (MAPPEROPT_KEEP_APP_MAPPER=1 keeps "
                                    "it for the tasks the DSL does not name)");
  std::fflush(stderr);
}

// The DSL mapper's library, for `say_loaded`: a plain pointer (into the environment), set before any dynamic
// initialisation of this library could reset a std::string.
const char *loaded_path = nullptr;

// One line, as Legion starts: a run by hand shows nothing else of the DSL mapper (it can map as the default one
// does). A registration callback, so that only the Legion program says it: every process a wrapper script starts
// (its shell, its tools) loads this library too. mapperopt's harness and AutoGuide take the line as no message of
// the program's (harness._HARMLESS, the catalog's noise).
void say_loaded(Legion::Machine, Legion::Runtime *, const std::set<Legion::Processor> &) {
  std::fprintf(stderr, "[mapperopt] note: the LD_PRELOAD shim loaded the DSL mapper %s\n", loaded_path);
  std::fflush(stderr);
}

[[noreturn]] void fail(const char *path, const char *what, const char *detail) {
  std::fprintf(stderr, "[mapperopt] error: cannot load mapper library '%s' (MAPPEROPT_MAPPER): %s%s\n", path, what,
               detail);
  std::fflush(stderr);
  std::exit(1);
}

__attribute__((constructor)) void load_preloaded_mapper() {
  const char *path = std::getenv("MAPPEROPT_MAPPER");
  if (path == nullptr || *path == '\0') {
    std::fputs("[mapperopt] warning: libmapperopt_preload.so is preloaded but MAPPEROPT_MAPPER is not set; "
               "the application keeps its own mapper\n", stderr);
    return;
  }
  void *lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) fail(path, "", dlerror());
  auto abi = reinterpret_cast<mapperopt_abi_version_fn>(dlsym(lib, "mapperopt_abi_version"));
  auto version = reinterpret_cast<mapperopt_legion_version_fn>(dlsym(lib, "mapperopt_legion_version"));
  auto reg = reinterpret_cast<mapperopt_register_mapper_fn>(dlsym(lib, "mapperopt_register_mapper"));
  if (!abi || !version || !reg) fail(path, "not a mapperopt mapper (missing exported functions)", "");
  if (abi() != MAPPEROPT_ABI_VERSION) fail(path, "built for another mapper ABI; recompile the mapper", "");
  if (std::strcmp(version(), LEGION_VERSION) != 0) {
    std::fprintf(stderr, "[mapperopt] error: mapper library '%s' was built against Legion %s, this application runs "
                 "%s; recompile the mapper\n", path, version(), LEGION_VERSION);
    std::fflush(stderr);
    std::exit(1);
  }
  reg();
  // A user's program: layouts the DSL leaves open follow the task variants' constraints, as Legion's default mapper
  // does, so that the mapper never gives a variant a layout it rejects that nobody wrote.
  reinterpret_cast<void (*)()>(next_symbol("mapperopt_follow_variant_layouts", false))();
  dsl_loaded = true;
  loaded_path = path;
  Legion::Runtime::add_registration_callback(say_loaded);
}

}  // namespace

namespace Legion {

// The application's mapper is never installed (nor freed: the application may hold it); kept, it serves the tasks the
// DSL does not name.
void Runtime::replace_default_mapper(Mapping::Mapper *mapper, Processor proc) {
  static ReplaceFn real = reinterpret_cast<ReplaceFn>(
      next_symbol("_ZN6Legion7Runtime22replace_default_mapperEPNS_7Mapping6MapperEN5Realm9ProcessorE"));
  if (!dsl_loaded || mapper == nullptr || is_dsl_mapper(mapper)) return real(this, mapper, proc);
  say_displaced("replaces the default mapper with", mapper);
  if (keep_app_mappers())
    reinterpret_cast<KeepFn>(next_symbol("mapperopt_keep_app_mapper", false))(mapper, proc);
}

// A mapper the application adds under its own ID: a DSL mapper is installed under that ID instead.
void Runtime::add_mapper(MapperID id, Mapping::Mapper *mapper, Processor proc) {
  static AddFn real = reinterpret_cast<AddFn>(
      next_symbol("_ZN6Legion7Runtime10add_mapperEjPNS_7Mapping6MapperEN5Realm9ProcessorE"));
  if (!dsl_loaded || mapper == nullptr || is_dsl_mapper(mapper)) return real(this, id, mapper, proc);
  say_displaced("adds, as mapper " + std::to_string(id) + ",", mapper);
  const NewFn make = reinterpret_cast<NewFn>(next_symbol("mapperopt_new_dsl_mapper", false));
  Mapping::Mapper *app = keep_app_mappers() ? mapper : nullptr;
  if (proc.exists()) {
    real(this, id, make(get_mapper_runtime(), Machine::get_machine(), proc, app), proc);
    return;
  }
  Machine::ProcessorQuery local(Machine::get_machine());
  local.local_address_space();
  for (Processor p : local)
    if (p.kind() != Processor::UTIL_PROC)
      real(this, id, make(get_mapper_runtime(), Machine::get_machine(), p, app), p);
}

}  // namespace Legion
