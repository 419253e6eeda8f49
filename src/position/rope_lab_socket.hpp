// Stage 4 — position: the socket the RoPE lab plugs into (src/ropelab/ropelab.hpp).
//
// The core builds the paper's RoPE and the baselines. What else a [position] table may ask
// for — the scalings (position.interpolation_factor, ntk_factor, scaling), p-RoPE (rope_p),
// xPos, learned frequencies, a scheme per layer (layer_schemes) — is the RoPE lab's, a room of
// its own that a program plugs in once, at its start (`roformer`: src/cli/main.cpp; the test
// programs: tests/with_rope_lab.cpp; the graded tasks' programs run without it). Without it
// the core refuses such a config, naming the key; the paper's RoPE never calls the lab.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "position/position.hpp"
#include "position/rope.hpp"

namespace rf {

class RopeLab {
public:
    virtual ~RopeLab() = default;
    // The lab's rules for a config, asked by validate_position_config where they belong:
    // position.layer_schemes, the RoPE keys of a model where no layer rotates, p-RoPE, xPos,
    // learned frequencies. Each throws std::invalid_argument naming the key.
    virtual void validate(const PositionConfig& config, size_t num_layers,
                          size_t head_dim) const = 0;
    // position.scaling's rules for one table (asked by validate_rope_options).
    virtual void validate_scaling(const RopeOptions& options) const = 0;
    // The paper's θ_i (rope_frequencies) adjusted by the options' scaling, interpolation, NTK
    // factor and p-RoPE; length: the sequence length (dynamic NTK).
    virtual void adjust_frequencies(const RopeOptions& options, size_t length,
                                    RopeFrequencies& frequencies) const = 0;
    // Whether a sequence of `length` positions turns by a table of its own (dynamic NTK past
    // the trained length).
    virtual bool table_for_length(const RopeOptions& options, size_t length) const = 0;
    // The scheme of a RoPE variant trained in: xPos or learned frequencies.
    virtual std::unique_ptr<PositionScheme> make_variant(const PositionConfig& config,
                                                         size_t head_dim) const = 0;
    // Per layer, whether it uses position.scheme (position.layer_schemes, set).
    virtual std::vector<bool> parse_layer_schemes(const PositionConfig& config,
                                                  size_t num_layers) const = 0;
};

// Plugs the lab in (nullptr: takes it out). Once, before any config is read.
void plug_in_rope_lab(const RopeLab* lab);

// The first key of a table's options that needs the lab ("position.scaling"), or nullptr for
// the paper's RoPE (any base, pairing and rotary fraction).
const char* rope_table_lab_key(const RopeConfig& config);
// The same for a whole [position] table: the table's keys, then xpos, learned_frequencies,
// layer_schemes.
const char* position_lab_key(const PositionConfig& config);

// The lab plugged in, or nullptr when none is and `key` is nullptr; when none is and a key
// needs it, throws std::invalid_argument naming the key.
const RopeLab* rope_lab(const char* key = nullptr);

}  // namespace rf
