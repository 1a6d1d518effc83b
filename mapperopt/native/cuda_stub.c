/* A stand-in for the NVIDIA driver library libcuda.so.1, used only on machines that have no driver.
 *
 * liblegion-legate.so.1 links to four driver symbols directly; Realm finds every other driver entry point through
 * cuGetProcAddress. Every call reports CUDA_ERROR_NO_DEVICE, so Realm disables its CUDA module and Legion runs on
 * CPUs. Built by mapperopt.toolchain at first use; never put on the library path where a real driver exists. */
#include <stddef.h>
#include <string.h>

typedef int CUresult;
#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NOT_FOUND 500
#define CUDA_ERROR_NO_DEVICE 100

static CUresult no_device(void) { return CUDA_ERROR_NO_DEVICE; }

CUresult cuGetErrorName(CUresult error, const char **name) {
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  *name = error == CUDA_ERROR_NO_DEVICE ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN";
  return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  if (!text) return CUDA_ERROR_INVALID_VALUE;
  *text = error == CUDA_ERROR_NO_DEVICE ? "no CUDA-capable device is detected (mapperopt libcuda stand-in)"
                                        : "unknown error (mapperopt libcuda stand-in)";
  return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(unsigned long long ptr) { (void)ptr; return CUDA_ERROR_NO_DEVICE; }
CUresult cuMemFreeHost(void *ptr) { (void)ptr; return CUDA_ERROR_NO_DEVICE; }

static CUresult lookup(const char *symbol, void **fn) {
  if (!symbol || !fn) return CUDA_ERROR_INVALID_VALUE;
  if (strcmp(symbol, "cuGetErrorName") == 0) *fn = (void *)cuGetErrorName;
  else if (strcmp(symbol, "cuGetErrorString") == 0) *fn = (void *)cuGetErrorString;
  else *fn = (void *)no_device;
  return CUDA_SUCCESS;
}

CUresult cuGetProcAddress(const char *symbol, void **fn, int version, unsigned long long flags) {
  (void)version; (void)flags;
  return lookup(symbol, fn);
}

CUresult cuGetProcAddress_v2(const char *symbol, void **fn, int version, unsigned long long flags, int *status) {
  (void)version; (void)flags;
  if (status) *status = 1; /* CU_GET_PROC_ADDRESS_SUCCESS */
  return lookup(symbol, fn);
}
