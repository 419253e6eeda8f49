// Room — ropelab: the RoPE base bound of Men et al. 2024 (the search: rope_base_bound.hpp).
//
// Legend: D head size, h = D/2 pairs, θ_i = base^(−2i/D), L context length, m a distance,
//         B(m) = Σ_i cos(m·θ_i), k a scan point, Δ the scan step in ln(base).
#include "ropelab/rope_base_bound.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <string>

namespace rf {

namespace {

constexpr size_t kAnchorEvery = 64;      // positions between exact std::cos anchors
constexpr double kScanFrom = 1.0001;     // the scan's first base (base 1 turns every pair alike)
constexpr double kEdgeTolerance = 1e-9;  // edges refined to this relative width in base

std::vector<double> ladder(double base, size_t head_dim) {
    std::vector<double> theta(head_dim / 2);
    for (size_t i = 0; i < theta.size(); ++i)
        theta[i] = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
    return theta;
}

bool supports(double base, size_t head_dim, size_t length) {
    return base_bound_min_sum(base, head_dim, length) >= 0.0;
}

// Σ_i c_i: the least B(m) can be for any m ≤ L (rope_base_bound.hpp, step 1)
double certified_floor(double base, size_t head_dim, size_t length) {
    const double pi = std::acos(-1.0), L = static_cast<double>(length);
    double floor = 0.0;
    for (double theta : ladder(base, head_dim))
        floor += L * theta <= pi ? std::cos(L * theta) : -1.0;
    return floor;
}

// The watch of rope_base_bound, asked by one thread at a time; once it says stop, every
// thread's next ask says stop too.
class Watcher {
public:
    explicit Watcher(const BaseBoundWatch& watch) : watch_(watch) {}
    bool go_on(const BaseBoundProgress& progress) {
        if (stopped_) return false;
        if (!watch_) return true;
        const std::unique_lock<std::mutex> turn(asking_, std::try_to_lock);
        if (turn.owns_lock() && !watch_(progress)) stopped_ = true;
        return !stopped_;
    }
    bool stopped() const { return stopped_; }

private:
    const BaseBoundWatch& watch_;
    std::mutex asking_;
    std::atomic<bool> stopped_{false};
};

// One sign change between ln_lo (status `lo_holds`) and ln_hi: bisection to kEdgeTolerance,
// returns the base on the far side of the edge (the first base with the new status); asks
// `go_on` before each step (0 when it said stop).
double refine_edge(double ln_lo, double ln_hi, bool lo_holds, size_t head_dim, size_t length,
                   const std::function<bool()>& go_on) {
    while (ln_hi - ln_lo > kEdgeTolerance) {
        if (!go_on()) return 0.0;
        const double mid = 0.5 * (ln_lo + ln_hi);
        if (supports(std::exp(mid), head_dim, length) == lo_holds)
            ln_lo = mid;
        else
            ln_hi = mid;
    }
    return std::exp(ln_hi);
}

}  // namespace

// min_m B(m): blocks of kAnchorEvery positions; at each block's first m the pairs' (cos, sin)
// of m·θ_i come from std::cos/std::sin, then each step turns them by θ_i:
//   (c, s) ← (c·cos θ_i − s·sin θ_i,  s·cos θ_i + c·sin θ_i)
double base_bound_min_sum(double base, size_t head_dim, size_t length, bool exact_minimum) {
    const std::vector<double> theta = ladder(base, head_dim);
    const size_t h = theta.size();
    std::vector<double> step_cos(h), step_sin(h), c(h), s(h);
    for (size_t i = 0; i < h; ++i) {
        step_cos[i] = std::cos(theta[i]);
        step_sin[i] = std::sin(theta[i]);
    }
    double least = static_cast<double>(h);  // B(0)
    for (size_t block = 0; block <= length; block += kAnchorEvery) {
        for (size_t i = 0; i < h; ++i) {
            const double angle = static_cast<double>(block) * theta[i];
            c[i] = std::cos(angle);
            s[i] = std::sin(angle);
        }
        const size_t end = std::min(length + 1, block + kAnchorEvery);
        for (size_t m = block; m < end; ++m) {
            double sum = 0.0;
            for (size_t i = 0; i < h; ++i) sum += c[i];
            least = std::min(least, sum);
            if (least < 0.0 && !exact_minimum) return least;
            for (size_t i = 0; i < h; ++i) {
                const double next_c = c[i] * step_cos[i] - s[i] * step_sin[i];
                s[i] = s[i] * step_cos[i] + c[i] * step_sin[i];
                c[i] = next_c;
            }
        }
    }
    return least;
}

double base_bound_min_sum_reference(double base, size_t head_dim, size_t length) {
    const std::vector<double> theta = ladder(base, head_dim);
    double least = static_cast<double>(theta.size());
    for (size_t m = 0; m <= length; ++m) {
        double sum = 0.0;
        for (double t : theta) sum += std::cos(static_cast<double>(m) * t);
        least = std::min(least, sum);
    }
    return least;
}

// Σ_i c_i grows with the base: bisection in ln(base) over (0, ln 1e300].
double base_bound_certificate(size_t head_dim, size_t length) {
    double ln_lo = 0.0, ln_hi = std::log(1e300);
    if (certified_floor(std::exp(ln_hi), head_dim, length) < 0.0)
        throw std::invalid_argument("--head-dim " + std::to_string(head_dim) +
                                    ": no base up to 1e300 can be certified; use D >= 6");
    while (ln_hi - ln_lo > kEdgeTolerance) {
        const double mid = 0.5 * (ln_lo + ln_hi);
        if (certified_floor(std::exp(mid), head_dim, length) >= 0.0)
            ln_hi = mid;
        else
            ln_lo = mid;
    }
    return std::exp(ln_hi);
}

void validate_base_bound(size_t head_dim, size_t length, size_t steps_per_decade) {
    if (head_dim % 2 != 0 || head_dim < 6 || head_dim > 4096)
        throw std::invalid_argument(
            "--head-dim " + std::to_string(head_dim) +
            " must be an even number from 6 to 4096 (RoPE turns pairs of dims; with fewer "
            "than 3 pairs the fastest pair, θ_0 = 1, keeps the sum below 0 for any base)");
    if (length == 0)
        throw std::invalid_argument(
            "--length 0 asks nothing (B(0) = D/2 > 0 for every base); "
            "give the context length, e.g. --length 1024");
    if (length > (size_t(1) << 27) / (head_dim / 2))
        throw std::invalid_argument(
            "--length " + std::to_string(length) + " with --head-dim " + std::to_string(head_dim) +
            " sums more than 2^27 cosines per base tried (L·D/2); lower --length or --head-dim");
    if (steps_per_decade < 10 || steps_per_decade > 100000)
        throw std::invalid_argument("--steps-per-decade " + std::to_string(steps_per_decade) +
                                    " must be from 10 to 100000 (default 1000)");
}

BaseBound rope_base_bound(size_t head_dim, size_t length, size_t steps_per_decade,
                          const BaseBoundWatch& watch) {
    validate_base_bound(head_dim, length, steps_per_decade);
    BaseBound out;
    out.head_dim = head_dim;
    out.length = length;
    out.scan_from = kScanFrom;
    out.proved_from = base_bound_certificate(head_dim, length);
    if (out.proved_from <= kScanFrom) {  // every base from the scan's start on is certified
        out.smallest = out.all_above = kScanFrom;
        out.holds_at_scan_start = true;
        return out;
    }
    // 2. the scan: ln b_k = ln(scan_from) + k·Δ, the last point the certificate itself
    const double ln_from = std::log(kScanFrom), ln_to = std::log(out.proved_from);
    const double delta = std::log(10.0) / static_cast<double>(steps_per_decade);
    const size_t n = static_cast<size_t>(std::ceil((ln_to - ln_from) / delta)) + 1;
    std::vector<double> ln_base(n);
    std::vector<char> holds(n);
    for (size_t k = 0; k < n; ++k)
        ln_base[k] = std::min(ln_from + static_cast<double>(k) * delta, ln_to);
    Watcher watcher(watch);
    std::atomic<size_t> scanned{0};
#pragma omp parallel for schedule(dynamic, 4)
    for (long k = 0; k < static_cast<long>(n); ++k) {
        if (watcher.stopped()) continue;  // no break out of an OpenMP loop: skip the rest
        holds[k] = supports(std::exp(ln_base[k]), head_dim, length);
        watcher.go_on({++scanned, n, 0, 0});
    }
    if (!watcher.go_on({n, n, 0, 0})) throw BaseBoundStopped("stopped while scanning");
    holds[n - 1] = 1;  // the certificate: proved, whatever rounding says at B(m) = 0
    out.scan_points = n;
    // 3. every sign change refined inside its bracket
    std::vector<size_t> brackets;
    for (size_t k = 0; k + 1 < n; ++k)
        if (holds[k] != holds[k + 1]) brackets.push_back(k);
    std::vector<double> edges(brackets.size());
    std::atomic<size_t> refined{0};
    const std::function<bool()> go_on = [&] {
        return watcher.go_on({n, n, refined.load(), brackets.size()});
    };
#pragma omp parallel for schedule(dynamic, 1)
    for (long e = 0; e < static_cast<long>(brackets.size()); ++e) {
        const size_t k = brackets[e];
        edges[e] = refine_edge(ln_base[k], ln_base[k + 1], holds[k], head_dim, length, go_on);
        ++refined;
    }
    if (!watcher.go_on({n, n, brackets.size(), brackets.size()}))
        throw BaseBoundStopped("stopped while refining the edges");
    out.holds_at_scan_start = holds[0];
    out.smallest = holds[0] ? kScanFrom : edges.front();  // holds[n−1]: certified
    out.all_above = holds[0] && edges.empty() ? kScanFrom : edges.back();
    // edges alternate fall, rise, fall, …  after the first rise (or from a holding start)
    for (size_t e = holds[0] ? 0 : 1; e + 1 < edges.size(); e += 2)
        out.gaps.push_back({edges[e], edges[e + 1]});
    return out;
}

}  // namespace rf
