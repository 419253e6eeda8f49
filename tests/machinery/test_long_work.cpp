// Long computations a caller can watch and stop (ropelab/rope_base_bound.hpp's watch, used by
// `roformer base-bound`'s progress line and Ctrl-C), and the fortunes files' text check
// (finetune/fortunes.hpp, require_fortune_text), and the bound on every stop: the watchdog of
// the first stop signal (run/interrupt.hpp), which waits out a checkpoint commit's hold.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "finetune/fortunes.hpp"
#include "ropelab/rope_base_bound.hpp"
#include "run/interrupt.hpp"

using namespace rf;

TEST_CASE("rope_base_bound's watch sees every scan point and every edge, and changes nothing") {
    const BaseBound plain = rope_base_bound(64, 512, 100);
    size_t calls = 0, last_scanned = 0, last_refined = 0, edges = 0;
    const BaseBound watched = rope_base_bound(64, 512, 100, [&](const BaseBoundProgress& p) {
        ++calls;
        CHECK(p.scan_points == plain.scan_points);
        CHECK(p.scanned <= p.scan_points);
        if (p.edges == 0) last_scanned = std::max(last_scanned, p.scanned);
        last_refined = std::max(last_refined, p.edges_refined);
        edges = std::max(edges, p.edges);
        return true;
    });
    CHECK(calls > 2);
    CHECK(last_scanned == plain.scan_points);  // the last call of step 2 sees it complete
    CHECK(edges >= 1);
    CHECK(last_refined == edges);  // and step 3's
    CHECK(watched.smallest == plain.smallest);
    CHECK(watched.all_above == plain.all_above);
    CHECK(watched.gaps.size() == plain.gaps.size());
}

TEST_CASE("rope_base_bound stops when its watch says so, in the scan or in the refinement") {
    size_t calls = 0;
    CHECK_THROWS_AS(
        rope_base_bound(64, 512, 100, [&](const BaseBoundProgress&) { return ++calls < 5; }),
        BaseBoundStopped);
    CHECK(calls >= 5);
    // said at the first call of step 3: the scan went through, the refinement stops
    CHECK_THROWS_AS(
        rope_base_bound(64, 512, 100, [&](const BaseBoundProgress& p) { return p.edges == 0; }),
        BaseBoundStopped);
}

TEST_CASE("require_fortune_text refuses a NUL or a non-UTF-8 byte, naming its offset") {
    CHECK_NOTHROW(
        data::require_fortune_text("Plain ASCII.\n%\nCafé, naïve, “quotes”, \xEF\xBF\xBD.\n", "f"));
    CHECK_NOTHROW(data::require_fortune_text("bell \a and back\bspace are text\n", "f"));
    const auto message = [](const std::string& text) {
        try {
            data::require_fortune_text(text, "dir/law");
        } catch (const std::runtime_error& e) { return std::string(e.what()); }
        return std::string("accepted");
    };
    const std::string latin1 = message("ok\nCaf\xE9\n");
    CHECK(latin1.find("'dir/law' is not UTF-8 at byte offset 6 (0xE9)") != std::string::npos);
    CHECK(latin1.find("iconv") != std::string::npos);
    CHECK(message(std::string("ab\0c", 4)).find("'dir/law' has a NUL byte at byte offset 2") !=
          std::string::npos);
    CHECK(message("caf\xC3").find("byte offset 3 (0xC3)") != std::string::npos);  // cut short
    CHECK(message("\xC0\xAF").find("byte offset 0") != std::string::npos);        // overlong
}

TEST_CASE("a stop signal ends the process on its own after the grace, never inside a hold") {
    // A child that takes the first SIGTERM and then never checks for it (a stuck step), inside
    // a StopExitHold that it releases one second after the grace: the watchdog must wait for
    // the hold, then exit with 128 + SIGTERM by itself — no second signal.
    using Clock = std::chrono::steady_clock;
    const auto hold_for = std::chrono::seconds(kStopGraceSeconds + 1);
    const auto start = Clock::now();
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        if (null >= 0) ::dup2(null, 2);  // the watchdog's line: not in the test's output
        {
            const InterruptGuard guard;
            std::optional<StopExitHold> hold(std::in_place);
            ::raise(SIGTERM);  // the handler only notes it
            std::this_thread::sleep_until(start + hold_for);
            hold.reset();
            std::this_thread::sleep_for(std::chrono::seconds(30));  // stuck: never returns
        }
        ::_exit(0);
    }
    int status = 0;
    pid_t done = 0;
    while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 &&
           Clock::now() - start < std::chrono::seconds(kStopGraceSeconds + 10))
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double took = std::chrono::duration<double>(Clock::now() - start).count();
    if (done == 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        FAIL("still running " << took << " s after one SIGTERM");
    }
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 128 + SIGTERM);
    CHECK(took >= double(kStopGraceSeconds + 1) - 0.05);  // not before the hold was released
    CHECK(took < double(kStopGraceSeconds + 4));
}
