// Stage 5 — model: the rules between the model's options (see model_config.hpp).
#include "model/model_config.hpp"

#include <stdexcept>
#include <string>

#include "position/position.hpp"

namespace rf {

void validate_model_options(const ModelConfig& m, const PositionConfig& position) {
    const bool rope = position.scheme == PositionKind::rope;
    if (rope && position.xpos && !m.causal)
        throw std::invalid_argument(
            "position.xpos = true needs train.objective = clm: its decay ζ^((m−n)/B) shrinks "
            "keys behind a query but would grow the keys ahead that a masked LM also sees");
    if (m.attention != AttentionKind::linear) return;
    if (rope && (position.xpos || position.learned_frequencies))
        throw std::invalid_argument(
            std::string(position.xpos ? "position.xpos" : "position.learned_frequencies") +
            " = true is implemented for model.attention = softmax only; use model.attention = "
            "softmax or set it to false");
    if (position.scheme == PositionKind::alibi)
        throw std::invalid_argument(
            "position.scheme = alibi cannot be combined with model.attention = linear: ALiBi "
            "adds to the T×T scores, which linear attention never forms; use rope, learned, "
            "sinusoidal or none");
    if (m.feature_map != FeatureMap::favor) return;
    if (m.random_features == 0)
        throw std::invalid_argument(
            "model.random_features must be positive, got 0: favor needs at least one random "
            "feature per head (e.g. 64)");
    if (position.scheme == PositionKind::rope &&
        position.rope_placement == RopePlacement::eq19_features && m.random_features % 2 != 0)
        throw std::invalid_argument(
            "model.random_features = " + std::to_string(m.random_features) +
            " must be even with position.scheme = rope (eq. 19 rotates pairs of features in "
            "linear attention; position.rope_placement = before_feature_map rotates q, k "
            "instead)");
}

}  // namespace rf
