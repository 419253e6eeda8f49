// Stage 4 tests — the paper's long-range decay bound (RoFormer §3.4.3, Fig. 2; docs/rope.md §9):
// rope_decay_bound against a direct double sum and the paper's figure, read to one decimal.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "ropelab/rope_decay.hpp"

using rf::rope_decay_bound;

// Reference values for the decay bound, computed from the paper's formula (RoFormer §3.4.3,
// Fig. 2; docs/rope.md §9) and rounded to one decimal: d = 64: ≈16.5 at 0, ≈5.7 at 64, ≈3.8 at 256;
// d = 128: ≈32.5 at 0, ≈9.3 at 128, ≈6.5 at 256.
namespace {
// Independent straightforward version: every S_j summed from scratch with real cos/sin.
double decay_bound_direct(size_t d, double base, double distance) {
    double total = 0.0;
    for (size_t j = 1; j <= d / 2; ++j) {
        double re = 0.0, im = 0.0;
        for (size_t i = 0; i < j; ++i) {
            const double theta = std::exp(-(2.0 * double(i) / double(d)) * std::log(base));
            re += std::cos(distance * theta);
            im += std::sin(distance * theta);
        }
        total += std::hypot(re, im);
    }
    return total / double(d / 2);
}
}  // namespace

TEST_CASE("rope decay bound: matches a direct computation and the reference values") {
    for (size_t d : {size_t(2), size_t(16), size_t(64), size_t(128)})
        for (double base : {10000.0, 500.0})
            for (double distance : {0.0, 1.0, 7.5, 64.0, 300.0})
                CHECK(rope_decay_bound(d, base, distance) ==
                      doctest::Approx(decay_bound_direct(d, base, distance)).epsilon(1e-10));
    CHECK(std::abs(rope_decay_bound(64, 1e4, 0) - 16.5) < 0.05);
    CHECK(std::abs(rope_decay_bound(64, 1e4, 64) - 5.7) < 0.05);
    CHECK(std::abs(rope_decay_bound(64, 1e4, 256) - 3.8) < 0.05);
    CHECK(std::abs(rope_decay_bound(128, 1e4, 0) - 32.5) < 0.05);
    CHECK(std::abs(rope_decay_bound(128, 1e4, 128) - 9.3) < 0.05);
    CHECK(std::abs(rope_decay_bound(128, 1e4, 256) - 6.5) < 0.05);
    CHECK_THROWS_AS(rope_decay_bound(63, 1e4, 1), std::invalid_argument);
}
