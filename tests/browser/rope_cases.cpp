// The browser test's expected numbers: what docs/explorer/rope.html must show for a few
// settings, computed by the library (double build, roformer_core_f64), printed as JSON for
// tests/browser/check_page.js.
//
// Legend: D head size = 2·pairs (all dims rotary, r = D), m, n positions of q and k,
//         θ_i = base^(−2i/D), s a shift applied to both positions.
// Per case:
//   theta[i]     RopeTable::frequencies()                         (src/position/rope.hpp)
//   angle_q[i]   m·θ_i read back from the table: atan2(sin_row(m)[i], cos_row(m)[i]) ∈ (−π, π]
//   score        ⟨R_m q, R_n k⟩ with R_m x = rope_kernel on one row
//   score_shifted ⟨R_{m+s} q, R_{n+s} k⟩, computed, not assumed equal to score
//   decay, decay_zero  rope_decay_bound(D, base, m − n) and (D, base, 0)  (rope_decay.hpp)
//   q_norm2      |q|², the largest score of the page's curve with k = R₋₁q or k = R₁q
//   k_minus, score_k_minus   k = R₋₁q = rope_kernel with position 1's sines negated, and
//                ⟨R_m q, R_n k⟩ for it (the page's "k = R₋₁q"); k_plus, score_k_plus: R₁q
//   score_interleaved, score_half, score_half_permuted  ⟨R_m q, R_n k⟩ with each pairing's
//                table, the last on q, k permuted (dims 2i, 2i+1 → i, i + D/2): the page's
//                "permute q and k", which must give score_interleaved again
// q and k are the page's formula of the dim index d (the page prints it):
//   q_d = cos(0.7·d + 0.3) + 0.5·sin(1.9·d),   k_d = sin(1.1·d + 0.9) − 0.4·cos(2.3·d)
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "position/rope.hpp"
#include "ropelab/rope_decay.hpp"

namespace {

static_assert(sizeof(rf::Real) == sizeof(double),
              "link roformer_core_f64: the page computes in double");

struct Setting {
    size_t m, n, pairs;
    double base;
    rf::RopePairing pairing;
    size_t shift;
    bool drag_base;  // the driver sets the base by dragging the slider to its right end (10⁶)
};

// R_position x for one head row, by the library's kernel and table.
// sin_sign −1 turns the other way: R_{−position} x (the row's sines negated).
std::vector<double> rotated(const std::vector<double>& x, rf::RopeTable& table, size_t position,
                            double sin_sign = 1.0) {
    const size_t D = x.size();
    table.reserve(position + 1);
    std::vector<double> sin(table.sin_row(position), table.sin_row(position) + D / 2);
    for (double& s : sin) s *= sin_sign;
    std::vector<double> y(D);
    rf::rope_kernel(x.data(), y.data(), 1, 1, D, D, table.options().pairing,
                    table.cos_row(position), sin.data(), false);
    return y;
}

// dims (2i, 2i+1) → (i, i + D/2)
std::vector<double> permuted_to_half(const std::vector<double>& x) {
    const size_t D = x.size();
    std::vector<double> y(D);
    for (size_t i = 0; i < D / 2; ++i) {
        y[i] = x[2 * i];
        y[i + D / 2] = x[2 * i + 1];
    }
    return y;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double sum = 0;
    for (size_t d = 0; d < a.size(); ++d) sum += a[d] * b[d];
    return sum;
}

nlohmann::json expected(const Setting& s) {
    const size_t D = 2 * s.pairs;
    rf::RopeOptions options;
    options.head_dim = D;
    options.rotary_dims = D;
    options.base = s.base;
    options.pairing = s.pairing;
    rf::validate_rope_options(options);
    rf::RopeTable table(options);

    std::vector<double> q(D), k(D);
    for (size_t d = 0; d < D; ++d) {
        q[d] = std::cos(0.7 * double(d) + 0.3) + 0.5 * std::sin(1.9 * double(d));
        k[d] = std::sin(1.1 * double(d) + 0.9) - 0.4 * std::cos(2.3 * double(d));
    }
    std::vector<double> angle_q, angle_k;
    table.reserve(std::max(s.m, s.n) + 1);
    for (size_t i = 0; i < s.pairs; ++i) {
        angle_q.push_back(std::atan2(table.sin_row(s.m)[i], table.cos_row(s.m)[i]));
        angle_k.push_back(std::atan2(table.sin_row(s.n)[i], table.cos_row(s.n)[i]));
    }
    const double delta = double(s.m) - double(s.n);
    const std::vector<double> k_minus = rotated(q, table, 1, -1.0), k_plus = rotated(q, table, 1);
    auto score_with = [&](rf::RopePairing pairing, const std::vector<double>& qq,
                          const std::vector<double>& kk) {
        rf::RopeOptions o = options;
        o.pairing = pairing;
        rf::RopeTable t(o);
        return dot(rotated(qq, t, s.m), rotated(kk, t, s.n));
    };
    return {
        {"m", s.m},
        {"n", s.n},
        {"base", s.base},
        {"pairs", s.pairs},
        {"pairing", rf::rope_pairing_name(s.pairing)},
        {"shift", s.shift},
        {"drag_base", s.drag_base},
        {"q", q},
        {"k", k},
        {"theta", table.frequencies()},
        {"angle_q", angle_q},
        {"angle_k", angle_k},
        {"score", dot(rotated(q, table, s.m), rotated(k, table, s.n))},
        {"score_shifted", dot(rotated(q, table, s.m + s.shift), rotated(k, table, s.n + s.shift))},
        {"decay", rf::rope_decay_bound(D, s.base, delta)},
        {"decay_zero", rf::rope_decay_bound(D, s.base, 0.0)},
        {"q_norm2", dot(q, q)},
        {"k_minus", k_minus},
        {"score_k_minus", dot(rotated(q, table, s.m), rotated(k_minus, table, s.n))},
        {"k_plus", k_plus},
        {"score_k_plus", dot(rotated(q, table, s.m), rotated(k_plus, table, s.n))},
        {"score_interleaved", score_with(rf::RopePairing::interleaved, q, k)},
        {"score_half", score_with(rf::RopePairing::half, q, k)},
        {"score_half_permuted",
         score_with(rf::RopePairing::half, permuted_to_half(q), permuted_to_half(k))}};
}

}  // namespace

int main() {
    using P = rf::RopePairing;
    // Both pairings, 1 … 64 pairs, Δ of both signs, a fractional base and both slider ends.
    const std::vector<Setting> settings = {
        {7, 3, 4, 10000.0, P::interleaved, 37, false}, {120, 5, 16, 500.0, P::half, 11, false},
        {3, 250, 64, 1e6, P::interleaved, 100, true},  {1000, 999, 1, 10.0, P::half, 1, false},
        {42, 100, 33, 12345.6, P::half, 5, false},
    };
    nlohmann::json cases = nlohmann::json::array();
    for (const Setting& s : settings) cases.push_back(expected(s));
    std::printf("%s\n", nlohmann::json{{"cases", cases}}.dump(1).c_str());
    return 0;
}
