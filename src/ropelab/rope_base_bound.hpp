// Room — ropelab: the smallest RoPE base that lets a head tell a similar token far away
// from a random one near (Men et al., "Base of RoPE Bounds Context Length", NeurIPS 2024,
// arXiv:2405.14591, §4: the bound of their Table / Fig. 1). `roformer base-bound` prints it.
//
// Legend: D head size, h = D/2 pairs, θ_i = base^(−2i/D) (i < h), L the context length,
//         m a relative distance.
//
// Their condition: for q = k (a token and its copy) the expected RoPE score at distance m is
// proportional to
//     B(m) = Σ_{i<h} cos(m·θ_i)
// and a similar token keeps more attention than a random one only while B(m) ≥ 0. A base
// "supports" length L when min_{0 ≤ m ≤ L} B(m) ≥ 0 (every integer m, evaluated in double).
//
// The bases that support L are NOT an interval [b*, ∞): raising the base can break the
// condition again for a while, so there are gaps, and bisecting on "holds / fails" lands on
// whichever edge its brackets happen to catch. The search here:
//   1. an upper end where the condition provably holds for every larger base: each term is
//      at least c_i = cos(L·θ_i) when L·θ_i ≤ π and −1 otherwise, whatever m ≤ L is; each c_i
//      only grows with the base, so the first base with Σ c_i ≥ 0 (found by bisection — this
//      one IS monotone) is a certificate: `proved_from`;
//   2. a scan of log(base) from 1.0001 to that certificate, `steps_per_decade` points a
//      decade, evaluating min_m B(m) at each point;
//   3. every sign change between neighbouring points refined by bisection inside its bracket
//      (each bracket holds an edge; a gap narrower than one step can hide between two points
//      that agree — raise steps_per_decade to look closer).
// It reports the smallest base that supports L at all, the smallest base above which every
// scanned base does, and the gaps between them.
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <vector>

namespace rf {

// min_{0 ≤ m ≤ L} Σ_{i<D/2} cos(m·base^(−2i/D)), every integer m. Each cos(m·θ_i) comes from
// std::cos every 64 positions and from complex rotation steps by θ_i in between (≤ 63 steps:
// a few 1e-14 per term; tests/lesson/test_rope_base_bound.cpp checks it against std::cos at
// every m). Stops early once a negative sum is found: the value is then the first
// negative sum, not the minimum (`exact_minimum` = true evaluates every m).
double base_bound_min_sum(double base, size_t head_dim, size_t length, bool exact_minimum = false);

// The same with std::cos at every (m, i): the slow reference the tests compare against.
double base_bound_min_sum_reference(double base, size_t head_dim, size_t length);

// Step 1 above: the smallest base (to 1e-9 relative) from which Σ_i c_i ≥ 0.
double base_bound_certificate(size_t head_dim, size_t length);

struct BaseRange {
    double from = 0, to = 0;  // bases, from < to
};

struct BaseBound {
    size_t head_dim = 0, length = 0;
    double smallest = 0;          // the smallest base that supports L (a gap may follow it)
    double all_above = 0;         // every scanned base above this one supports L
    std::vector<BaseRange> gaps;  // bases in (smallest, all_above) that do not support L
    double scan_from = 0, proved_from = 0;  // the scan's ends; proved_from: step 1's certificate
    size_t scan_points = 0;
    bool holds_at_scan_start = false;  // then `smallest` is only the scan's start
};

// Throws std::invalid_argument (naming --head-dim / --length / --steps-per-decade) for an odd
// or too small D (D ≥ 6: with fewer pairs no finite base can be certified), L = 0, or sizes
// whose scan would be absurd (L·D/2 > 2^27, D > 4096).
void validate_base_bound(size_t head_dim, size_t length, size_t steps_per_decade);

// How far a search has got (a caller's progress line): step 2's bases tried of those planned,
// then step 3's edges refined of those found.
struct BaseBoundProgress {
    size_t scanned = 0, scan_points = 0;
    size_t edges_refined = 0, edges = 0;
};

// Asked after every base tried and every bisection step, by one thread at a time (a thread
// that finds another asking goes on without asking), and once at the end of each step, so the
// last call sees the step complete; false stops the search (Ctrl-C), and
// rope_base_bound throws BaseBoundStopped within one evaluation of min_m B(m) per thread. At
// L·D/2 = 2^27 a search runs for many minutes: the caller shows progress and can stop it.
// It must not throw (it runs inside the parallel loop).
using BaseBoundWatch = std::function<bool(const BaseBoundProgress&)>;

struct BaseBoundStopped : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Steps 1–3. Parallel over the scan points (OpenMP); the result does not depend on threads.
BaseBound rope_base_bound(size_t head_dim, size_t length, size_t steps_per_decade = 1000,
                          const BaseBoundWatch& watch = {});

}  // namespace rf
