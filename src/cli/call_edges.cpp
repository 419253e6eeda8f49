// Room — cli: the calls between functions that one turn of the training loop makes, recorded in
// a coverage build only (CMakeLists.txt, RF_COVERAGE: every source of ours compiled with
// -finstrument-functions, so the compiler calls __cyg_profile_func_enter on entering each of
// our functions). tests/reading_path/check.py reads the file and counts the calls that leave
// one file of src/ for another: the jumps a reader makes following one step.
#include "cli/call_edges.hpp"

#ifdef RF_COVERAGE
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <utility>

namespace {

bool g_recording = false;
// (function, call site) as offsets into the program's image, each pair once.
std::set<std::pair<std::uintptr_t, std::uintptr_t>>* g_edges = nullptr;

__attribute__((no_instrument_function)) std::uintptr_t offset_of(void* address) {
    Dl_info info;
    if (dladdr(address, &info) == 0 || info.dli_fbase == nullptr) return 0;
    return reinterpret_cast<std::uintptr_t>(address) -
           reinterpret_cast<std::uintptr_t>(info.dli_fbase);
}

}  // namespace

extern "C" __attribute__((no_instrument_function)) void __cyg_profile_func_enter(void* function,
                                                                                  void* site) {
    if (!g_recording) return;
    g_recording = false;  // (what the set itself calls is not the program's)
    g_edges->emplace(offset_of(function), offset_of(site));
    g_recording = true;
}
extern "C" __attribute__((no_instrument_function)) void __cyg_profile_func_exit(void*, void*) {}

namespace rf {

__attribute__((no_instrument_function)) void start_call_edges() {
    if (!std::getenv("RF_CALL_EDGES_OUT")) return;
    if (!g_edges) g_edges = new std::set<std::pair<std::uintptr_t, std::uintptr_t>>();
    g_edges->clear();
    g_recording = true;
}

__attribute__((no_instrument_function)) void write_call_edges() {
    const char* path = std::getenv("RF_CALL_EDGES_OUT");
    if (!path || !g_edges) return;
    g_recording = false;
    if (FILE* f = std::fopen(path, "w")) {
        for (const auto& [function, site] : *g_edges)
            std::fprintf(f, "%#jx %#jx\n", std::uintmax_t(function), std::uintmax_t(site));
        std::fclose(f);
    }
}

}  // namespace rf
#else
namespace rf {
void start_call_edges() {}
void write_call_edges() {}
}  // namespace rf
#endif
