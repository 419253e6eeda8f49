// Room — data: the seed of a training batch (see batch_seed.hpp).
#include "data/batch_seed.hpp"

namespace rf::data {

uint64_t batch_seed(uint64_t seed, uint64_t index) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

}  // namespace rf::data
