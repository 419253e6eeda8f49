// Room — ropelab: which layers of the resolved model RoPE turns, and the one rule for the
// keys that only RoPE reads.
//
// Legend: D head size, r rotary dims (r/2 pairs).
// Whether a RoPE key changes anything is decided on the model the config resolves to, not key
// by key: layer ℓ rotates when position.scheme = rope, position.layer_schemes does not mark it
// `none`, and position.rope_p leaves at least one of its pairs turning. When no layer
// rotates — position.scheme = alibi, every layer `none`, position.rope_p = 0 — every RoPE key
// (the base, the pairing, the scalings, rotate_values, the variants …) would change nothing,
// so a value away from its default is refused, naming the key and why: at train, at eval and
// for every --set, whatever the scheme. The tools that describe RoPE (frequencies, attention,
// graph) ask the same question, so they describe only the layers that rotate.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "position/position.hpp"

namespace rf {

// For each of `num_layers` layers, how many of RoPE's pairs turn there: r/2 on a RoPE layer
// (round(rope_p · r/2) under p-RoPE), 0 where the layer has no RoPE (position.scheme is not
// rope, or the layer is `none` in position.layer_schemes). Reads position.layer_schemes
// through layers_with_position, so a malformed value throws naming it.
std::vector<size_t> rope_turning_pairs(const PositionConfig& config, size_t num_layers,
                                       size_t head_dim);

// "" when at least one layer rotates; otherwise why none does, naming the key that decides it:
// "position.scheme = alibi has no RoPE", "every layer in position.layer_schemes =
// \"none,none\" is none", "position.rope_p = 0 turns none of the 16 pairs".
std::string why_no_layer_rotates(const PositionConfig& config, size_t num_layers, size_t head_dim);

// The one rule: when no layer rotates, throws std::invalid_argument (one line) for the first
// RoPE-only key whose value is not its default, saying what the key does, why it would change
// nothing here, and its default. Part of validate_position_config.
void refuse_rope_keys_without_rotation(const PositionConfig& config, size_t num_layers,
                                       size_t head_dim);

}  // namespace rf
