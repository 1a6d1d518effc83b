// LD_PRELOAD shim: puts a compiled mapper into an unmodified Legion application.
//
//   LD_PRELOAD=libmapperopt_preload.so MAPPEROPT_MAPPER=/path/libmapperopt_mapper.so ./app [-mapper-trace t.jsonl]
//
// Its static initializer runs before the application's main (this library links Legion, so Legion's own static
// initializers have run), loads the mapper, checks its ABI and Legion version against this shim's, and lets it
// register itself with Runtime::add_registration_callback. The -mapper-* flags are read by the mapper from the
// command line as usual. If the application also replaces the default mapper itself, the later registration wins.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "legion_defines.h"
#include "mapperopt_abi.h"

namespace {

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
}

}  // namespace
