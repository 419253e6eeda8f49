// Tests for the run room's memory reuse (src/run/memory_reuse.hpp): after keep_freed_memory,
// a step that allocates and frees the same blocks again takes (almost) no new pages from the
// kernel; with the C library's defaults, as a control, it takes them every time — so the
// test would fail if the settings stopped working. Each side runs in its own child process,
// because mallopt's settings last for the process.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "run/memory_reuse.hpp"

namespace {

long minor_faults() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

// A stand-in for a training step: 64 blocks of 1–4 MiB (like activations and gradients),
// each written through, then all freed, as dropping the graph does.
void one_step() {
    std::vector<char*> blocks;
    for (size_t i = 0; i < 64; ++i) {
        const size_t bytes = (size_t(1) << 20) * (1 + i % 4);
        char* p = static_cast<char*>(std::malloc(bytes));
        if (p == nullptr) std::_Exit(3);
        std::memset(p, int(i), bytes);
        blocks.push_back(p);
    }
    for (char* p : blocks) std::free(p);
}

// The page faults of steps 2–6 in a child, after `keep` decides the settings. 160 MiB a step.
long faults_after_first_step(bool keep) {
    int pipe_fds[2];
    REQUIRE(pipe(pipe_fds) == 0);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        close(pipe_fds[0]);
        if (keep && !rf::keep_freed_memory()) std::_Exit(4);
        one_step();
        const long before = minor_faults();
        for (int step = 0; step < 5; ++step) one_step();
        const long faults = minor_faults() - before;
        const bool wrote = write(pipe_fds[1], &faults, sizeof faults) == sizeof faults;
        std::_Exit(wrote ? 0 : 5);
    }
    close(pipe_fds[1]);
    long faults = -1;
    const bool got = read(pipe_fds[0], &faults, sizeof faults) == sizeof faults;
    close(pipe_fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    REQUIRE(got);
    return faults;
}

}  // namespace

#if defined(__SANITIZE_ADDRESS__)
#define RF_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RF_ASAN 1
#endif
#endif

TEST_CASE("memory reuse: a repeated step takes no new pages once freed memory is kept") {
#ifdef RF_ASAN
    return;  // AddressSanitizer's allocator replaces malloc: glibc's settings do not apply
#endif
    // 5 steps × 160 MiB = 204 800 pages of 4 KiB if every page were taken again.
    const long pages_touched = 5L * 160 * 256;
    const long with_defaults = faults_after_first_step(false);
    const long kept = faults_after_first_step(true);
    CAPTURE(with_defaults);
    CAPTURE(kept);
    CHECK(with_defaults > pages_touched / 2);  // the control: the defaults fault again
    CHECK(kept < pages_touched / 100);         // kept: under 1 % of the pages
}

TEST_CASE("memory reuse: a user's glibc.malloc tunable is left alone") {
    CHECK_FALSE(rf::user_set_malloc_tunables(nullptr));
    CHECK_FALSE(rf::user_set_malloc_tunables(""));
    CHECK_FALSE(rf::user_set_malloc_tunables("glibc.cpu.hwcaps=-AVX512F"));
    CHECK(rf::user_set_malloc_tunables("glibc.malloc.trim_threshold=131072"));
    CHECK(rf::user_set_malloc_tunables(
        "glibc.cpu.x86_rep_movsb_threshold=1:glibc.malloc.arena_max=2"));
}
