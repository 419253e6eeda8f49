// Room — assembly: which ops a model is handed (see swappable_ops_for.hpp). The base is none,
// the composed ops (model.fused = false), or the fast path's twins (src/fast/); model.attention
// = linear wraps that base in the linear-attention kernels (src/linear/), which replace
// self-attention and delegate the rest.
#include "assembly/swappable_ops_for.hpp"

#include "linear/linear_kernels.hpp"

namespace rf {

std::shared_ptr<const SwappableOps> swappable_ops_for(const ModelConfig& config,
                                                      const PositionConfig& position,
                                                      uint64_t init_seed, const FastConfig& fast) {
    std::shared_ptr<const SwappableOps> base = path_ops(fast);  // none, or the fast twins
    if (config.attention != AttentionKind::linear) return base;
    // Linear attention delegates the other four places to a base: the composed ops' own class.
    if (!base) base = std::make_shared<const SwappableOps>();
    return std::make_shared<const LinearAttentionKernels>(std::move(base), config, position,
                                                          init_seed);
}

std::unique_ptr<RoFormer> make_model(const ModelConfig& config, const PositionConfig& position,
                                     uint64_t init_seed, const FastConfig& fast) {
    return std::make_unique<RoFormer>(config, position, init_seed,
                                      swappable_ops_for(config, position, init_seed, fast));
}

}  // namespace rf
