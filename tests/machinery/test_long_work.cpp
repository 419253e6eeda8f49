// Long computations a caller can watch and stop (position/rope_base_bound.hpp's watch, used by
// `roformer base-bound`'s progress line and Ctrl-C), and the fortunes files' text check
// (finetune/fortunes.hpp, require_fortune_text).
#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "finetune/fortunes.hpp"
#include "position/rope_base_bound.hpp"

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
