// The RoPE kernel's contract, each part checked alone on rope_kernel against the naive matrix
// (graded with test_rope.cpp for the rope_forward task: students/tasks.txt).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "position/rope.hpp"
#include "rope_naive.hpp"
#include "rope_options.hpp"
#include "tensor/random.hpp"

using namespace rf;
using rf::testing::naive_rotation;
using rf::testing::random_tensor;

// The kernel's tables, its accumulate flag and its in-place use, each checked alone on
// rope_kernel itself against the naive matrix (a kernel can get one right and not the other;
// the grader's hint says which), each logging its first wrong element.
namespace {

// The kernel's rows (n, t) of [N, T, D] against the naive matrix at position first + t, plus
// `before` (the old contents of out) when given: the largest error, and the first element off
// by 2e-6 or more ("none" when every element agrees).
struct KernelCheck {
    double worst = 0.0;
    std::string first_wrong = "none";
};
KernelCheck check_rows(const RopeOptions& o, const Real* in, const Real* out, const Real* before,
                       size_t N, size_t T, size_t first) {
    const size_t D = o.head_dim;
    KernelCheck result;
    for (size_t t = 0; t < T; ++t) {
        const auto R = naive_rotation(o, double(first + t));
        for (size_t n = 0; n < N; ++n) {
            const size_t row = (n * T + t) * D;
            for (size_t a = 0; a < D; ++a) {
                double expected = before ? static_cast<double>(before[row + a]) : 0.0;
                for (size_t b = 0; b < D; ++b)
                    expected += R[a * D + b] * in[row + b];
                const double error = std::abs(out[row + a] - expected);
                if (error >= 2e-6 && result.first_wrong == "none")
                    result.first_wrong = "row n " + std::to_string(n) + ", position " +
                                         std::to_string(t) + ", dim " + std::to_string(a) +
                                         ": expected " + std::to_string(expected) + ", got " +
                                         std::to_string(out[row + a]);
                result.worst = std::max(result.worst, error);
            }
        }
    }
    return result;
}

// One use of the kernel on random rows [N, T, D] = [3, 5, 12], r = 8, base 500, checked:
//   later_rows   the tables' rows from position 9 on, into an out that starts at 7s:
//                out = R_{9+t} in, the angles the tables hold (a kernel that adds when it
//                should assign fails too);
//   accumulate   accumulate = true into random old contents: out = old + R_m in, the
//                pass-through dims d ≥ r too (out_d = old_d + in_d);
//   in_place     in == out: out = R_m in (each pair read before either is written).
enum class KernelUse { later_rows, accumulate, in_place };
KernelCheck kernel_case(RopePairing pairing, KernelUse use, Rng& rng) {
    const size_t N = 3, T = 5, D = 12;
    const RopeOptions o = rf::testing::rope_options(pairing, D, 8, 500.0);
    const size_t first = use == KernelUse::later_rows ? 9 : 0;
    RopeTable table(o);
    table.reserve(first + T);
    Tensor in = random_tensor({N, T, D}, rng), old = random_tensor({N, T, D}, rng);
    std::vector<Real> out(N * T * D, Real(7));
    if (use == KernelUse::accumulate) out.assign(old.data(), old.data() + N * T * D);
    if (use == KernelUse::in_place) out.assign(in.data(), in.data() + N * T * D);
    const Real* source = use == KernelUse::in_place ? out.data() : in.data();
    rope_kernel(source, out.data(), N, T, D, o.rotary_dims, pairing, table.cos_row(first),
                table.sin_row(first), use == KernelUse::accumulate);
    return check_rows(o, in.data(), out.data(),
                      use == KernelUse::accumulate ? old.data() : nullptr, N, T, first);
}

// The checks of one use, both pairings; the first wrong element is logged for the student.
void check_kernel_use(KernelUse use, uint64_t seed) {
    Rng rng(seed);
    for (RopePairing pairing : {RopePairing::interleaved, RopePairing::half}) {
        const std::string pairing_name = rope_pairing_name(pairing);
        CAPTURE(pairing_name);
        const KernelCheck result = kernel_case(pairing, use, rng);
        const std::string first_wrong = result.first_wrong;
        CAPTURE(first_wrong);
        CHECK(result.worst < 2e-6);
    }
}

}  // namespace

TEST_CASE("rope: the kernel turns by the angles of the table rows it is given") {
    check_kernel_use(KernelUse::later_rows, 21);
}

TEST_CASE("rope: the kernel with accumulate adds into out (out = old + R_m in)") {
    check_kernel_use(KernelUse::accumulate, 22);
}

TEST_CASE("rope: in place (in == out) the kernel equals the naive product") {
    check_kernel_use(KernelUse::in_place, 23);
}

