// Tests for io — the operating system's own answers (io/platform.hpp), on this system's branch:
// the running program's path, where an open directory is (and a path through it that follows a
// rename), the address space mapped, a monotonic sleep, the parent-death signal.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/platform.hpp"

namespace fs = std::filesystem;
namespace platform = rf::platform;

TEST_CASE("platform: the running program's path is this test binary, links resolved") {
    const std::string exe = platform::executable_path();
    REQUIRE(!exe.empty());
    CHECK(fs::path(exe).is_absolute());
    CHECK(fs::path(exe).filename().string().rfind("test_", 0) == 0);  // test_roformer, test_lesson
    CHECK(fs::is_regular_file(exe));
    CHECK(fs::canonical(exe) == fs::path(exe));
}

TEST_CASE("platform: an open directory's place follows a rename; a path through it opens its files") {
    const fs::path base = fs::temp_directory_path() / ("rf_platform_" + std::to_string(::getpid()));
    fs::remove_all(base);
    fs::create_directories(base / "before");
    const int fd = ::open((base / "before").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    CHECK(platform::descriptor_place(fd) == fs::canonical(base / "before").string());
    fs::rename(base / "before", base / "after");
    CHECK(platform::descriptor_place(fd) == fs::canonical(base / "after").string());
    std::ofstream(base / "after" / "file") << "written after the rename";
    const fs::path through = fs::path(platform::descriptor_path(fd)) / "file";
    std::string text;
    std::getline(std::ifstream(through), text);
    CHECK(text == "written after the rename");
    ::close(fd);
    CHECK(platform::descriptor_place(fd).empty());  // closed: no place
    fs::remove_all(base);
}

TEST_CASE("platform: the address space mapped grows with a large allocation") {
    const double before = platform::mapped_bytes();
    CHECK(before > 0);
    std::vector<char> block(size_t(256) << 20, 1);  // 256 MiB, touched
    CHECK(platform::mapped_bytes() >= before + double(block.size()) * 0.9);
}

TEST_CASE("platform: sleep_until waits until a monotonic deadline, and not for one passed") {
    using Clock = std::chrono::steady_clock;
    timespec deadline{};
    ::clock_gettime(CLOCK_MONOTONIC, &deadline);
    const auto start = Clock::now();
    platform::sleep_until(deadline);  // already passed: at once
    CHECK(Clock::now() - start < std::chrono::milliseconds(50));
    deadline.tv_nsec += 80'000'000;
    if (deadline.tv_nsec >= 1'000'000'000) deadline.tv_sec += 1, deadline.tv_nsec -= 1'000'000'000;
    platform::sleep_until(deadline);
    CHECK(Clock::now() - start >= std::chrono::milliseconds(79));
}

TEST_CASE("platform: a child asks for a signal when its parent exits (Linux), or is told it cannot") {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {  // the child: its answer as its exit status
        const bool asked = platform::signal_when_parent_exits(SIGTERM);
#if defined(__linux__)
        ::_exit(asked ? 0 : 1);
#else
        ::_exit(asked ? 1 : 0);
#endif
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}
