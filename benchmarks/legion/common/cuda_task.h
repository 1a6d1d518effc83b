// Helpers the applications' GPU variants share (CUDA sources only): the task's stream, the blocks covering a range
// and stopping with the application's name on a CUDA error.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "realm/cuda/cuda_module.h"

namespace mapperopt {

constexpr int THREADS_PER_BLOCK = 256;

// A GPU variant has no way to report a failure to Legion: print "<app>: CUDA error in <what>: <message>" and abort.
inline void check_cuda(cudaError_t err, const char *app, const char *what) {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "%s: CUDA error in %s: %s (%s)\n", app, what, cudaGetErrorString(err), cudaGetErrorName(err));
    std::fflush(stderr);
    std::abort();
  }
}

// The stream Realm gives this task; work on it is captured by the task's completion event, so the task needs no
// context synchronisation at its end.
inline cudaStream_t task_stream() {
  cudaStream_t stream = Realm::Cuda::get_task_cuda_stream();
  Realm::Cuda::set_task_ctxsync_required(false);
  return stream;
}

// Blocks of THREADS_PER_BLOCK threads covering `count` items.
inline unsigned blocks_for(long long count) {
  return static_cast<unsigned>((count + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK);
}

}  // namespace mapperopt
