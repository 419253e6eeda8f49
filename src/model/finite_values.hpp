// Stage 5 — model: the one rule for numbers a model produces or holds — a value that is not
// finite (±inf, nan) is an error, never printed, sampled or saved.
//
// Legend: x[0..n) a block of values (logits [T, V], probabilities [K], attention weights
// [H, T, T], a loss, a parameter tensor); "finite" = std::isfinite.
//   first_non_finite(x, n) = min { i : x[i] is not finite }, or n when every x[i] is finite.
// Non-finite outputs come from finite weights too (a LayerNorm γ of 3e38 overflows the next
// product), so a loaded checkpoint that passed its own check (run/checkpoint.cpp) can still
// give them: every command that serves a model checks what it is about to show.
//
// Used by: eval and training's evaluation (train/evaluate.cpp), fill-mask, generate, attention,
// classify (src/cli/), and training before each checkpoint (train/trainer.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "nn/layers.hpp"

namespace rf {

// The index of the first value that is not finite, or n when there is none.
size_t first_non_finite(const Real* values, size_t n);

// Throws std::runtime_error, one line: "<what> hold nan (element i of n); the model's outputs
// are not finite — …". `what` names the run and the outputs (plural), e.g. "runs/x: the logits
// at [MASK] token 3".
void require_finite_outputs(const std::string& what, const Real* values, size_t n);
// The same rule for one number (a loss): "<what> is nan; the model's outputs are not finite …".
void require_finite_output(const std::string& what, double value);

// Throws std::runtime_error naming the first parameter tensor that holds a non-finite value:
// "<context>: parameter 'name' holds nan (element i of n); …". Checked before a checkpoint is
// committed, so a finished run never reports success with a model nobody can load.
void require_finite_parameters(const std::string& context,
                               const std::vector<NamedParameter>& parameters);

}  // namespace rf
