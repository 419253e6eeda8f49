// Room — run: keeping freed memory in the process, so that step n + 1 reuses step n's buffers.
//
// A training step allocates its activations and gradients (hundreds of MiB for the bench
// presets) and frees them all when the graph is dropped. glibc's malloc hands large blocks
// back to the kernel: blocks over its mmap threshold are unmapped on free, and free space at
// the top of the heap beyond its trim threshold is returned with brk. The next step then
// takes every page again through a page fault, and the kernel zeroes each one first: on
// configs/bench.toml that was a sixth of the step's time (docs/performance.md, "Per-step
// fixed costs"). The roformer binary therefore asks malloc to keep what is freed — the
// same memory is asked for again a moment later — unless the user chose malloc's settings.
#pragma once

#include <string>

namespace rf {

// The settings: blocks up to kKeptMmapThreshold bytes come from the heap (not mappings of
// their own), and the heap is never trimmed while the process runs (its peak stays mapped).
constexpr int kKeptMmapThreshold = 32 << 20;  // glibc's largest allowed: HEAP_MAX_SIZE / 2
constexpr int kKeptTrimThreshold = 1 << 30;

// True when `tunables` (the value of $GLIBC_TUNABLES, or nullptr) sets any glibc.malloc.*
// tunable: the user chose malloc's behaviour, and it is left alone.
bool user_set_malloc_tunables(const char* tunables);

// Applies the settings above with mallopt unless $GLIBC_TUNABLES sets a malloc tunable.
// Returns true when they were applied. Called once, at the start of the roformer binary.
bool keep_freed_memory();

// The run log's line: "memory: freed blocks kept for reuse (…)", or that the user's
// GLIBC_TUNABLES decides; after keep_freed_memory.
std::string memory_reuse_line();

}  // namespace rf
