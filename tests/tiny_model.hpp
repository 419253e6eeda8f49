// The tiny encoder the model-level unit tests build (hidden 16, 2 heads, 2 layers, FFN 32),
// and a position config with room for their sequences. Tests change what they need.
#pragma once

#include <string>

#include "model/model_config.hpp"
#include "position/position.hpp"

namespace rf::testing {

inline ModelConfig tiny_model_config(size_t vocab_size, double init_std = 0.02) {
    ModelConfig c;
    c.vocab_size = vocab_size;
    c.hidden = 16;
    c.num_heads = 2;
    c.num_layers = 2;
    c.ffn = 32;
    c.init_std = init_std;
    return c;
}

inline PositionConfig tiny_position_config(const std::string& scheme = "rope") {
    PositionConfig p;
    p.scheme = parse_enum<PositionKind>(scheme, "position.scheme");
    p.max_positions = 32;
    return p;
}

}  // namespace rf::testing
