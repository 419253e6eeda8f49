// Room — ropelab: the RoPE lab, everything past the paper's RoPE — the scalings of a trained
// model (linear, NTK, dynamic NTK, YaRN, Llama 3: rope_scaling.hpp), p-RoPE, xPos, learned
// frequencies and 2-D RoPE (rope_variants.hpp), a scheme per layer (layer_schemes.hpp), the
// rule for RoPE's keys where no layer rotates (rotating_layers.hpp), and the base and decay
// bounds (rope_base_bound.hpp, rope_decay.hpp). It plugs into the core's socket
// (position/rope_lab_socket.hpp); the core never includes a file of this room.
#pragma once

#include "position/rope_lab_socket.hpp"

namespace rf {

// The lab, as the core's socket takes it: plug_in_rope_lab(&rope_lab_room()).
const RopeLab& rope_lab_room();

}  // namespace rf
