// Room — fast: OpenMP's calls, or their one-thread answers in a build without OpenMP
// (-DRF_OPENMP=OFF; Apple's clang has none). The one place that includes <omp.h>: without it
// the compiler ignores every `#pragma omp` line (CMakeLists.txt silences its warning), each
// loop runs on the calling thread, and these stand-ins answer as OpenMP would with one thread.
#pragma once

#ifdef _OPENMP
#include <omp.h>
#else
inline int omp_get_max_threads() { return 1; }
inline int omp_get_num_threads() { return 1; }
inline int omp_get_thread_num() { return 0; }
inline void omp_set_num_threads(int) {}
#endif

namespace rf {

// Whether this build threads its loops (train.threads > 1 runs on one thread when it does not).
#ifdef _OPENMP
inline constexpr bool kOpenMP = true;
#else
inline constexpr bool kOpenMP = false;
#endif

}  // namespace rf
