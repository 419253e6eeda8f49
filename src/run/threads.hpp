// Room — run: a run's threads, and what idle OpenMP threads do.
#pragma once

#include <cstddef>
#include <string>

#include "config/config.hpp"

namespace rf {

// Applies the run's threading setting (fast/threading.hpp, Threading): train.threads threads (0 = every
// core) for OpenMP and OpenBLAS, and the product split the fast path wants
// (model.fused), and the fast path's vector instruction set
// (model.isa; src/fast/simd.hpp). Returns the thread count in force.
// Same count → same results: no reduction in the library is split across threads by chance.
size_t apply_threading(const Config& config);
// The same with `threads` in place of train.threads (one rank of an MPI run: its share).
size_t apply_threading(const Config& config, size_t threads);

// The run log's line about threads: "threads 2 (OpenMP wait policy passive)", or in a build
// without OpenMP that every run is one thread, whatever train.threads asked for.
std::string threads_line(size_t threads);

// What idle OpenMP workers do, as libgomp reads $OMP_WAIT_POLICY at start-up: "active" or
// "passive" (any case, blanks around it allowed), else libgomp's default — spin a while, then
// sleep — when it is unset or any other value (libgomp warns and ignores it; the line says
// so). The roformer binary sets it to passive for itself when unset (src/cli/main.cpp), with a
// short spin first (kSpinCount); run logs print it, because with 2 threads it decides the speed.
// A GOMP_SPINCOUNT in the environment is named after the policy: libgomp spins that long
// first, whatever the policy says.
std::string openmp_wait_policy();

// How many times an idle OpenMP worker checks for new work before it sleeps, which the roformer
// binary sets (GOMP_SPINCOUNT) with OMP_WAIT_POLICY=passive when the user set neither: libgomp
// counts roughly 100 000 checks a millisecond, so about 0.3 ms. The fast path starts a parallel
// loop for every product block and element-wise op, a few hundred a step, and waking a
// sleeping worker for each cost the bench preset about a tenth of its speed; spinning longer
// (libgomp's own default, 300 000) slowed the composed path, whose OpenBLAS workers need the
// same cores between our loops (docs/performance.md, "Threads").
inline constexpr const char* kSpinCount = "30000";

}  // namespace rf
