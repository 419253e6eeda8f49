// Room — ropelab: a scheme per layer (position.layer_schemes), for RoPE/NoPE hybrids.
//
// Some models leave position encoding out of some layers: Llama 4's iRoPE has every fourth
// layer without it, and Yang et al. ("Rope to Nope and Back Again", arXiv:2501.18795) find
// that RoPE layers interleaved with NoPE layers extrapolate better than all-RoPE. The key
//   position.layer_schemes = "rope,rope,rope,none"
// names each encoder layer's scheme in order: position.scheme's own name (that layer rotates,
// or biases the scores, as usual) or `none` (that layer's attention sees no positions). Empty
// (the default) gives every layer position.scheme. Only the schemes that act inside a layer
// (rope, alibi) can be switched off per layer; learned and sinusoidal add their table once,
// at the embedding.
#pragma once

#include <cstddef>
#include <vector>

#include "position/position.hpp"

namespace rf {

// For each of `num_layers` layers: true where it uses position.scheme, false where `none`.
// Throws std::invalid_argument naming position.layer_schemes (a wrong count, an unknown or
// foreign name, a scheme that does not act per layer) — the one place the key is read. The
// core's layers_with_position (position.hpp) asks it through the lab's socket.
std::vector<bool> parse_layer_schemes(const PositionConfig& config, size_t num_layers);

}  // namespace rf
