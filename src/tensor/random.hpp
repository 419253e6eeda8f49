// Stage 1 — tensor: a small seeded random generator.
//
// std::mt19937_64 is specified bit for bit by the standard; the distributions in <random>
// are not, so uniform / normal / integer draws are written out here. Same seed → same
// numbers on every machine and compiler.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace rf {

class Rng {
public:
    explicit Rng(uint64_t seed = 0) : engine_(seed) {}

    // uniform in [0, 1) with 53 random bits
    double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

    // integer in [0, n), n > 0 (Lemire-free simple rejection keeps it unbiased)
    uint64_t below(uint64_t n) {
        const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
        uint64_t r;
        do r = engine_();
        while (r >= limit);
        return r % n;
    }

    // standard normal by Box–Muller (cached second value)
    double normal() {
        if (has_spare_) {
            has_spare_ = false;
            return spare_;
        }
        double u1 = uniform();
        while (u1 <= 0.0) u1 = uniform();
        const double u2 = uniform();
        const double r = std::sqrt(-2.0 * std::log(u1));
        const double angle = 2.0 * 3.14159265358979323846 * u2;  // π as M_PI (not standard C++)
        spare_ = r * std::sin(angle);
        has_spare_ = true;
        return r * std::cos(angle);
    }

    uint64_t next_u64() { return engine_(); }

private:
    std::mt19937_64 engine_;
    bool has_spare_ = false;
    double spare_ = 0.0;
};

// The seed of training batch `index`: splitmix64 of seed and index, which spreads them over
// all 64 bits, so batch k's generator is unrelated to batch k+1's and to another seed's.
// Every sampler (MlmSampler in data/mlm.hpp, ClmSampler in data/clm.hpp) seeds batch k's Rng
// with it, so batch k is the same whatever came before it (a resumed run draws the same
// batches).
inline uint64_t batch_seed(uint64_t seed, uint64_t index) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

}  // namespace rf
