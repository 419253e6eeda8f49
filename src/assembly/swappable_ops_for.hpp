// Room — assembly: which ops a model is handed: the composed ops (model.fused = false) or the
// fast path's twins (src/fast/), wrapped in the linear-attention kernels (src/linear/) for
// model.attention = linear. The model itself never looks its ops up (src/model/roformer.hpp).
#pragma once

#include <cstdint>
#include <memory>

#include "fast/fast_config.hpp"
#include "model/roformer.hpp"
#include "model/swappable_ops.hpp"

namespace rf {

// The swappable ops of a model with this config, on the path `fast` names (linear attention
// draws its fixed tensors from init_seed and reads the position config); none for a softmax
// model on the composed path, which then calls the composed ops itself.
std::shared_ptr<const SwappableOps> swappable_ops_for(const ModelConfig& config,
                                                      const PositionConfig& position,
                                                      uint64_t init_seed,
                                                      const FastConfig& fast = {});

// A model with the ops its config asks for: RoFormer(config, position, init_seed,
// swappable_ops_for(config, position, init_seed, fast)).
std::unique_ptr<RoFormer> make_model(const ModelConfig& config, const PositionConfig& position,
                                     uint64_t init_seed, const FastConfig& fast = {});
// The same, as a value: RoFormer model = assembled_model(config, position, init_seed, fast);
inline RoFormer assembled_model(const ModelConfig& config, const PositionConfig& position,
                                uint64_t init_seed, const FastConfig& fast = {}) {
    return RoFormer(config, position, init_seed,
                    swappable_ops_for(config, position, init_seed, fast));
}

}  // namespace rf
