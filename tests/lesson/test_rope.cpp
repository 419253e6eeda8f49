// Stage 4 tests — RoPE properties in the float32 library users run (gradients: gradcheck/).
//
// Legend: B batch, H heads, T length, D head size, r rotary dims, m/n positions, P the fixed
// permutation between the pairings (2i → i, 2i+1 → i + r/2).
// Every forward check compares against an independent computation: an explicit D×D
// block-diagonal rotation matrix built in double (naive_rotation, tests/rope_naive.hpp), never the kernel.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "position/rope.hpp"
#include "rope_naive.hpp"
#include "rope_options.hpp"
#include "tensor/random.hpp"

using namespace rf;
using rf::testing::matvec;
using rf::testing::naive_rotation;
using rf::testing::random_tensor;

namespace {

double dot(const Real* a, const Real* b, size_t D) {
    double s = 0.0;
    for (size_t d = 0; d < D; ++d) s += static_cast<double>(a[d]) * static_cast<double>(b[d]);
    return s;
}

// One vector at one position: x:[D] → R_m x via the op (as a [1, 1, D] tensor at offset m).
Tensor rotate_one(const Tensor& x, RopeTable& table, size_t m) { return rope(x, table, m); }

// P: index j of the interleaved layout → its index in the half layout (first r dims only).
size_t permute_index(size_t j, size_t r) {
    return j < r ? (j % 2 == 0 ? j / 2 : j / 2 + r / 2) : j;
}

}  // namespace

TEST_CASE("rope: forward equals the naive block-diagonal matrix product (both pairings)") {
    Rng rng(7);
    const size_t B = 2, H = 3, T = 5, D = 8, offset = 11;
    for (RopePairing pairing : {RopePairing::interleaved, RopePairing::half}) {
        // full rotary / partial rotary + non-default bases (interpolation and NTK scaling, the
        // RoPE lab's: tests/lesson/test_rope_variants.cpp)
        for (const RopeOptions& o : {rf::testing::rope_options(pairing, D, 8),
                                     rf::testing::rope_options(pairing, D, 4, 500.0),
                                     rf::testing::rope_options(pairing, D, 6, 2000.0)}) {
            const std::string pairing_name = rope_pairing_name(pairing);
            CAPTURE(pairing_name);
            CAPTURE(o.rotary_dims);
            RopeTable table(o);
            Tensor x = random_tensor({B, H, T, D}, rng);
            Tensor y = rope(x, table, offset);
            REQUIRE(y.shape() == x.shape());
            double worst = 0.0;
            std::string first_mismatch = "none";  // the first wrong element, for the student
            std::string first_wrong_rotated = "none";  // the same among the rotated dims d < r
            for (size_t n = 0; n < B * H; ++n)
                for (size_t t = 0; t < T; ++t) {
                    const auto R = naive_rotation(o, static_cast<double>(offset + t));
                    const auto expected = matvec(R, x.data() + (n * T + t) * D, D);
                    for (size_t d = 0; d < D; ++d) {
                        const double got = y.data()[(n * T + t) * D + d];
                        const double error = std::abs(got - expected[d]);
                        if (error >= 2e-6 && first_mismatch == "none")
                            first_mismatch = "row n " + std::to_string(n) + ", position " +
                                             std::to_string(offset + t) + ", dim " +
                                             std::to_string(d) + ": expected " +
                                             std::to_string(expected[d]) + ", got " +
                                             std::to_string(got);
                        if (error >= 2e-6 && d < o.rotary_dims && first_wrong_rotated == "none")
                            first_wrong_rotated = "row n " + std::to_string(n) + ", position " +
                                                  std::to_string(offset + t) + ", dim " +
                                                  std::to_string(d);
                        worst = std::max(worst, error);
                    }
                }
            CAPTURE(first_mismatch);
            CAPTURE(first_wrong_rotated);
            CHECK(worst < 2e-6);
        }
    }
}

// The forward alone is graded with the kernel (students/tasks.txt, rope_forward: "rope: *");
// the cases named "rope backward: …" also run RoPE's backward, a task of its own.
TEST_CASE("rope: a large input (32 768 elements) matches the naive product") {
    // 4·8·64·16 = 32 768 elements: many rows (n, t) of both pairings, each written once.
    Rng rng(9);
    const size_t N = 4 * 8, T = 64, D = 16;
    for (RopePairing pairing : {RopePairing::interleaved, RopePairing::half}) {
        const std::string pairing_name = rope_pairing_name(pairing);
        CAPTURE(pairing_name);
        const RopeOptions o = rf::testing::rope_options(pairing, D, 12, 1234.0);
        RopeTable table(o);
        Tensor x = random_tensor({4, 8, T, D}, rng);
        Tensor y = rope(x, table, 100);
        double worst_y = 0.0;
        for (size_t t = 0; t < T; ++t) {
            const auto R = naive_rotation(o, double(100 + t));
            for (size_t n = 0; n < N; ++n) {
                const size_t row = (n * T + t) * D;
                const auto expected = matvec(R, x.data() + row, D);
                for (size_t a = 0; a < D; ++a)
                    worst_y = std::max(worst_y, std::abs(y.data()[row + a] - expected[a]));
            }
        }
        CHECK(worst_y < 2e-6);
        Tensor again = rope(x, table, 100);  // deterministic: bit-identical on a second run
        bool identical = true;
        for (size_t i = 0; i < y.numel(); ++i)
            identical = identical && again.data()[i] == y.data()[i];
        CHECK(identical);
    }
}

TEST_CASE("rope backward: a large input (32 768 elements) gives dx = R_mᵀ dy") {
    Rng rng(9);
    const size_t N = 4 * 8, T = 64, D = 16;
    for (RopePairing pairing : {RopePairing::interleaved, RopePairing::half}) {
        const std::string pairing_name = rope_pairing_name(pairing);
        CAPTURE(pairing_name);
        const RopeOptions o = rf::testing::rope_options(pairing, D, 12, 1234.0);
        RopeTable table(o);
        Tensor x = random_tensor({4, 8, T, D}, rng).set_requires_grad(true);
        Tensor dy = random_tensor({4, 8, T, D}, rng);
        Tensor y = rope(x, table, 100);
        y.backward(dy.value());
        double worst_dx = 0.0;
        for (size_t t = 0; t < T; ++t) {
            const auto R = naive_rotation(o, double(100 + t));
            for (size_t n = 0; n < N; ++n) {
                const size_t row = (n * T + t) * D;
                for (size_t a = 0; a < D; ++a) {
                    double dx = 0.0;  // (Rᵀ dy)_a
                    for (size_t b = 0; b < D; ++b) dx += R[b * D + a] * dy.data()[row + b];
                    worst_dx = std::max(worst_dx, std::abs(x.grad().data()[row + a] - dx));
                }
            }
        }
        CHECK(worst_dx < 2e-6);
    }
}

TEST_CASE("rope: relative property <R_m q, R_n k> = <R_{m+s} q, R_{n+s} k>") {
    Rng rng(11);
    const size_t D = 16;
    for (const RopeOptions& o :
         {rf::testing::rope_options(RopePairing::interleaved, D, 16),
          rf::testing::rope_options(RopePairing::half, D, 16, 500.0),
          rf::testing::rope_options(RopePairing::interleaved, D, 8, 2000.0)}) {
        RopeTable table(o);
        for (int trial = 0; trial < 20; ++trial) {
            Tensor q = random_tensor({1, 1, D}, rng), k = random_tensor({1, 1, D}, rng);
            const size_t m = rng.below(2000), n = rng.below(2000), s = 1 + rng.below(2000);
            const double before =
                dot(rotate_one(q, table, m).data(), rotate_one(k, table, n).data(), D);
            const double after =
                dot(rotate_one(q, table, m + s).data(), rotate_one(k, table, n + s).data(), D);
            CAPTURE(m);
            CAPTURE(n);
            CAPTURE(s);
            CHECK(std::abs(before - after) < 1e-4 * (1.0 + std::abs(before)));
        }
    }
    // The property is about the *difference*: changing m − n must change the score.
    RopeTable table(rf::testing::rope_options(RopePairing::interleaved, D, D));
    Tensor q = random_tensor({1, 1, D}, rng), k = random_tensor({1, 1, D}, rng);
    const double a = dot(rotate_one(q, table, 5).data(), rotate_one(k, table, 9).data(), D);
    const double b = dot(rotate_one(q, table, 5).data(), rotate_one(k, table, 10).data(), D);
    CHECK(std::abs(a - b) > 1e-3);
}

TEST_CASE("rope: norm preservation |R_m x| = |x|") {
    Rng rng(12);
    for (RopePairing pairing : {RopePairing::interleaved, RopePairing::half}) {
        RopeTable table(rf::testing::rope_options(pairing, 32, 24, 300.0));
        Tensor x = random_tensor({3, 2, 7, 32}, rng);
        Tensor y = rope(x, table, 123456);
        for (size_t row = 0; row < 3 * 2 * 7; ++row) {
            const double nx = std::sqrt(dot(x.data() + row * 32, x.data() + row * 32, 32));
            const double ny = std::sqrt(dot(y.data() + row * 32, y.data() + row * 32, 32));
            CHECK(ny == doctest::Approx(nx).epsilon(1e-6));
        }
    }
}

TEST_CASE("rope: pairing equivalence, half(P·x) = P·interleaved(x)") {
    Rng rng(13);
    const size_t D = 12, T = 6;
    for (size_t r : {size_t(12), size_t(8)}) {
        RopeTable interleaved(rf::testing::rope_options(RopePairing::interleaved, D, r, 2000.0));
        RopeTable half(rf::testing::rope_options(RopePairing::half, D, r, 2000.0));
        Tensor x = random_tensor({2, T, D}, rng);
        Tensor px = Tensor::zeros({2, T, D});
        for (size_t row = 0; row < 2 * T; ++row)
            for (size_t j = 0; j < D; ++j)
                px.data()[row * D + permute_index(j, r)] = x.data()[row * D + j];
        Tensor y_int = rope(x, interleaved, 3);
        Tensor y_half = rope(px, half, 3);
        for (size_t row = 0; row < 2 * T; ++row)
            for (size_t j = 0; j < D; ++j)
                CHECK(y_half.data()[row * D + permute_index(j, r)] ==
                      doctest::Approx(y_int.data()[row * D + j]).epsilon(1e-6));
    }
}

TEST_CASE("rope: attention scores of the two pairings agree once Wq/Wk rows are permuted") {
    Rng rng(14);
    const size_t T = 7, C = 10, D = 8;
    Tensor X = random_tensor({T, C}, rng), Wq = random_tensor({D, C}, rng),
           Wk = random_tensor({D, C}, rng);
    // q = X·Wᵀ with W's rows optionally permuted: row P(j) of the new W is row j of W.
    auto project = [&](const Tensor& W, bool permuted) {
        Tensor out = Tensor::zeros({T, D});
        for (size_t t = 0; t < T; ++t)
            for (size_t j = 0; j < D; ++j) {
                double s = 0.0;
                for (size_t c = 0; c < C; ++c)
                    s += double(X.data()[t * C + c]) * W.data()[j * C + c];
                out.data()[t * D + (permuted ? permute_index(j, D) : j)] = static_cast<Real>(s);
            }
        return out;
    };
    auto scores = [&](const Tensor& q, const Tensor& k) {
        std::vector<double> s(T * T);
        for (size_t a = 0; a < T; ++a)
            for (size_t b = 0; b < T; ++b)
                s[a * T + b] = dot(q.data() + a * D, k.data() + b * D, D);
        return s;
    };
    RopeTable interleaved(rf::testing::rope_options(RopePairing::interleaved, D, D));
    RopeTable half(rf::testing::rope_options(RopePairing::half, D, D));
    const auto s_int =
        scores(rope(project(Wq, false), interleaved), rope(project(Wk, false), interleaved));
    const auto s_half = scores(rope(project(Wq, true), half), rope(project(Wk, true), half));
    const auto s_wrong = scores(rope(project(Wq, false), half), rope(project(Wk, false), half));
    double worst = 0.0, wrong = 0.0;
    for (size_t i = 0; i < T * T; ++i) {
        worst = std::max(worst, std::abs(s_int[i] - s_half[i]));
        wrong = std::max(wrong, std::abs(s_int[i] - s_wrong[i]));
    }
    CHECK(worst < 1e-4);
    CHECK(wrong > 1e-2);  // without the permutation the pairings really differ
}

TEST_CASE("rope: precision at position 100 000 (double angle vs float multiplication)") {
    const size_t m = 100000, r = 64;
    RopeTable table(rf::testing::rope_options(RopePairing::interleaved, r, r));
    table.reserve(m + 1);
    double table_error = 0.0, float_product_error = 0.0;
    for (size_t i = 0; i < r / 2; ++i) {
        const double theta = std::pow(10000.0, -2.0 * double(i) / double(r));
        const double exact_cos = std::cos(double(m) * theta),
                     exact_sin = std::sin(double(m) * theta);
        table_error = std::max({table_error, std::abs(table.cos_row(m)[i] - exact_cos),
                                std::abs(table.sin_row(m)[i] - exact_sin)});
        // The common bug: θ and m·θ in float32.
        const float theta_f = std::pow(10000.0f, -2.0f * float(i) / float(r));
        const float angle_f = float(m) * theta_f;
        float_product_error =
            std::max({float_product_error, std::abs(std::cos(angle_f) - exact_cos),
                      std::abs(std::sin(angle_f) - exact_sin)});
    }
    MESSAGE("max |error| of cos/sin at m = 100000, r = 64: table from double angle "
            << table_error << ", float32 m*theta " << float_product_error);
    CHECK(table_error < 1e-6);
    CHECK(float_product_error > 100 * table_error);
    CHECK(float_product_error > 1e-4);
}

TEST_CASE("rope: the angle table grows on demand and a longer table gives identical values") {
    const RopeOptions o = rf::testing::rope_options(RopePairing::half, 8, 8, 3000.0);
    RopeTable grown(o);
    CHECK(grown.capacity() == 0);
    grown.reserve(8);
    CHECK(grown.capacity() == 8);
    const std::vector<Real> first_rows(grown.cos_row(0), grown.cos_row(0) + 8 * grown.half());
    grown.reserve(3);  // shorter request: keeps the longest
    CHECK(grown.capacity() == 8);
    grown.reserve(5000);
    CHECK(grown.capacity() == 5000);
    for (size_t k = 0; k < first_rows.size(); ++k) CHECK(grown.cos_row(0)[k] == first_rows[k]);

    RopeTable fresh(o);
    fresh.reserve(5000);
    CHECK(rf::testing::same_rows(fresh, grown, 5000, o.rotary_dims / 2));

    // The op grows the table itself, and its output does not depend on how long it is.
    Rng rng(15);
    Tensor x = random_tensor({2, 4, 8}, rng);
    RopeTable small(o);
    Tensor y_small = rope(x, small, 10);
    CHECK(small.capacity() == 14);
    Tensor y_long = rope(x, grown, 10);
    for (size_t i = 0; i < x.numel(); ++i) CHECK(y_small.data()[i] == y_long.data()[i]);
}

TEST_CASE("rope backward: after the table grew it still uses the forward's angles") {
    Rng rng(16);
    const RopeOptions o = rf::testing::rope_options(RopePairing::interleaved, 6, 6, 900.0);
    RopeTable table(o);
    Tensor x = random_tensor({1, 3, 6}, rng).set_requires_grad(true);
    Tensor y = rope(x, table, 2);
    rope(random_tensor({1, 3, 6}, rng), table, 50000);  // grows (and moves) the table
    Tensor dy = random_tensor({1, 3, 6}, rng);
    y.backward(dy.value());
    for (size_t t = 0; t < 3; ++t) {
        const auto R = naive_rotation(o, double(2 + t));
        for (size_t a = 0; a < 6; ++a) {
            double expected = 0.0;  // dx = Rᵀ dy
            for (size_t b = 0; b < 6; ++b) expected += R[b * 6 + a] * dy.data()[t * 6 + b];
            CHECK(x.grad().data()[t * 6 + a] == doctest::Approx(expected).epsilon(1e-5));
        }
    }
}
