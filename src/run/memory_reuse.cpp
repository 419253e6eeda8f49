// Room — run: keeping freed memory in the process (see memory_reuse.hpp).
#include "run/memory_reuse.hpp"

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace rf {

namespace {
bool g_kept = false;
}

bool user_set_malloc_tunables(const char* tunables) {
    return tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr;
}

bool keep_freed_memory() {
#if defined(__GLIBC__)
    if (user_set_malloc_tunables(std::getenv("GLIBC_TUNABLES"))) return false;
    // Setting either threshold also turns off glibc's own sliding of both (it raises them to
    // the largest block freed so far), so the values below hold for the whole process.
    g_kept = mallopt(M_MMAP_THRESHOLD, kKeptMmapThreshold) == 1 &&
             mallopt(M_TRIM_THRESHOLD, kKeptTrimThreshold) == 1;
#endif
    return g_kept;
}

std::string memory_reuse_line() {
    if (g_kept)
        return "memory: freed blocks kept for the next step (malloc: blocks up to 32 MiB from "
               "the heap, the heap never trimmed)";
    if (user_set_malloc_tunables(std::getenv("GLIBC_TUNABLES")))
        return "memory: malloc as GLIBC_TUNABLES sets it (yours: left alone)";
    return "memory: the C library's malloc defaults";
}

}  // namespace rf
