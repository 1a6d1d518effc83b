// The contract between a benchmark application and a compiled mapperopt mapper library (docs/interfaces.md).
// Both sides include this header; a change that breaks either side bumps MAPPEROPT_ABI_VERSION.
#pragma once

#define MAPPEROPT_ABI_VERSION 1

extern "C" {
// Exported by every mapper library: the ABI version it was built for.
typedef int (*mapperopt_abi_version_fn)(void);
// Exported by every mapper library: the LEGION_VERSION string of the headers it was compiled against.
typedef const char *(*mapperopt_legion_version_fn)(void);
// Exported by every mapper library: registers the mapper with Runtime::add_registration_callback.
// Called by the application before Runtime::start.
typedef void (*mapperopt_register_mapper_fn)(void);
}
