// Room — data: the training objective (train.objective), i.e. what a batch's labels ask
// the model to predict.
//
//   mlm  masked-language modelling (BERT): windows [CLS] x … [SEP], a share data.mask_prob of
//        the tokens is hidden and labelled, attention sees the whole window      (mlm.hpp)
//   clm  causal language modelling (GPT): plain windows x[0..T), labels[t] = x[t+1] at every
//        position but the last, attention sees only positions ≤ t                  (clm.hpp)
// Both produce a Batch (batch.hpp) {input_ids, labels (−100 = no prediction)}, so the model's
// forward(), evaluate() and the trainer serve both unchanged.
#pragma once

#include <array>

#include "data/data_config.hpp"
#include "tensor/named_enum.hpp"

namespace rf::data {

enum class Objective { mlm, clm };
constexpr std::array<NamedValue<Objective>, 2> named_values(Objective) {
    return {{{Objective::mlm, "mlm"}, {Objective::clm, "clm"}}};
}

// What the labelled positions are, for printed lines: "… on 4768 masked tokens".
inline const char* labelled_tokens(Objective objective) {
    return objective == Objective::mlm ? "masked tokens" : "predicted tokens";
}

// The share of positions the head runs on (for the FLOP estimate): the masked share for mlm,
// every position for clm (T−1 of T, counted as 1).
inline double head_fraction(const DataConfig& config, Objective objective) {
    return objective == Objective::mlm ? config.mask_prob : 1.0;
}

}  // namespace rf::data
