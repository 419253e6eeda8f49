// Stage 4 tests — the RoPE base bound (src/ropelab/rope_base_bound.hpp; Men et al., "Base of
// RoPE Bounds Context Length", NeurIPS 2024, arXiv:2405.14591).
//
// Legend: D head size, L context length, B(m) = Σ_i cos(m·base^(−2i/D)).
// Every "holds / fails" below is decided by base_bound_min_sum_reference (std::cos at every
// m and pair), never by the scan it checks.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "ropelab/rope_base_bound.hpp"

using namespace rf;

namespace {

bool holds(double base, size_t D, size_t L) { return base_bound_min_sum_reference(base, D, L) >= 0; }

std::string refusal(size_t D, size_t L, size_t steps = 1000) {
    try {
        validate_base_bound(D, L, steps);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("base bound: the fast min over m equals std::cos at every m") {
    for (size_t D : {8, 64, 128})
        for (double base : {3.0, 500.0, 10000.0, 1e6})
            for (size_t L : {1, 63, 64, 65, 1000}) {
                CAPTURE(D);
                CAPTURE(base);
                CAPTURE(L);
                CHECK(std::abs(base_bound_min_sum(base, D, L, true) -
                               base_bound_min_sum_reference(base, D, L)) < 1e-10);
            }
}

TEST_CASE("base bound against Men et al. 2024 (head dim 128: about 4.3e3 at L = 1024, 8.4e4 at 8192)") {
    // The paper's table of lower bounds for head dim 128 (arXiv:2405.14591, beside Fig. 1,
    // base ≈ 0.0424·L^1.628): 4.3·10³ for 1k and 8.4·10⁴ for 8k, given to two digits.
    const BaseBound b1k = rope_base_bound(128, 1024, 300);
    CHECK(b1k.smallest == doctest::Approx(4.3e3).epsilon(0.012));
    const BaseBound b8k = rope_base_bound(128, 8192, 300);
    CHECK(b8k.smallest == doctest::Approx(8.4e4).epsilon(0.006));
    for (const BaseBound& b : {b1k, b8k}) {
        CAPTURE(b.length);
        // each reported edge is an edge: fails just below, holds just above
        CHECK_FALSE(holds(b.smallest * (1 - 1e-6), 128, b.length));
        CHECK(holds(b.smallest * (1 + 1e-6), 128, b.length));
        CHECK_FALSE(holds(b.all_above * (1 - 1e-6), 128, b.length));
        CHECK(holds(b.all_above * (1 + 1e-6), 128, b.length));
        CHECK(holds(b.proved_from, 128, b.length));
        CHECK(b.smallest < b.all_above);  // the paper's number is the first edge, not the last
    }
}

TEST_CASE("base bound: the satisfying bases have gaps, and the search reports them") {
    // D = 128, L = 1024: holds just above the bound, fails again at 5000, holds at 7000.
    CHECK(holds(4310.0, 128, 1024) == true);
    CHECK(holds(5000.0, 128, 1024) == false);
    CHECK(holds(7000.0, 128, 1024) == true);
    const BaseBound b = rope_base_bound(128, 1024, 300);
    REQUIRE_FALSE(b.gaps.empty());
    bool reported = false;
    for (const BaseRange& gap : b.gaps) {
        CHECK(gap.from < gap.to);
        CHECK(gap.from > b.smallest);
        CHECK(gap.to <= b.all_above);
        CHECK_FALSE(holds(std::sqrt(gap.from * gap.to), 128, 1024));  // inside: fails
        reported = reported || (gap.from < 5000.0 && 5000.0 < gap.to);
    }
    CHECK(reported);
    // a bisection between the scan's ends would stop at one edge of many: both ends agree
    // ("fails" at the start, "holds" at the end) whatever lies between.
    CHECK_FALSE(holds(b.scan_from, 128, 1024));
}

TEST_CASE("base bound: the certificate holds for larger bases, and L = 1 holds everywhere") {
    const double proved = base_bound_certificate(16, 64);
    for (double factor : {1.0, 1.5, 10.0, 1e3}) CHECK(holds(proved * factor, 16, 64));
    const BaseBound one = rope_base_bound(16, 1, 100);
    CHECK(one.holds_at_scan_start);
    CHECK(one.gaps.empty());
}

TEST_CASE("base bound refuses odd, zero or tiny head dims, L = 0 and absurd sizes") {
    CHECK(refusal(128, 1024) == "");
    CHECK(refusal(127, 1024).find("--head-dim 127") != std::string::npos);
    CHECK(refusal(0, 1024).find("--head-dim 0") != std::string::npos);
    CHECK(refusal(4, 1024).find("--head-dim 4") != std::string::npos);
    CHECK(refusal(8192, 16).find("--head-dim 8192") != std::string::npos);
    CHECK(refusal(128, 0).find("--length 0") != std::string::npos);
    CHECK(refusal(128, 100000000).find("--length 100000000") != std::string::npos);
    CHECK(refusal(128, 1024, 5).find("--steps-per-decade 5") != std::string::npos);
    CHECK_THROWS_AS(rope_base_bound(7, 10), std::invalid_argument);
}
