// Room — assembly: which kernels a model runs (model/swappable_ops.hpp): the one place that reads
// model.fused and model.attention. The base is the composed ops (model.fused = false) or the
// fast path's twins (src/fast/); model.attention = linear wraps that base in the linear-
// attention kernels (src/linear/), which replace self-attention and delegate the rest.
#include <memory>

#include "fast/fast_kernels.hpp"
#include "linear/linear_kernels.hpp"
#include "model/swappable_ops.hpp"

namespace rf {

std::shared_ptr<const SwappableOps> swappable_ops_for(const ModelConfig& config,
                                           const PositionConfig& position, uint64_t init_seed) {
    std::shared_ptr<const SwappableOps> base =
        config.fused ? fast_kernels() : std::make_shared<const SwappableOps>();
    if (config.attention != AttentionKind::linear) return base;
    return std::make_shared<const LinearAttentionKernels>(std::move(base), config, position,
                                                          init_seed);
}

}  // namespace rf
