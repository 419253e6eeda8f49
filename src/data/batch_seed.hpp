// Room — data: the seed of a training batch, shared by every sampler.
#pragma once

#include <cstdint>

namespace rf::data {

// The seed of training batch `index`: splitmix64 of seed and index, which spreads them over
// all 64 bits, so batch k's generator is unrelated to batch k+1's and to another seed's.
// Every sampler (MlmSampler in mlm.hpp, ClmSampler in clm.hpp) seeds batch k's Rng with it,
// so batch k is the same whatever came before it (a resumed run draws the same batches).
uint64_t batch_seed(uint64_t seed, uint64_t index);

}  // namespace rf::data
