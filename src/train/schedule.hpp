// Room — train: the learning-rate schedule, a pure function of the step.
//
// `step` counts the updates already applied (0 for the first update, steps−1 for the last);
// t = step + 1 is the number of the update about to be applied. With W = warmup_steps,
// S = steps, peak = lr, floor = min_lr_ratio · lr:
//   warmup   t ≤ W:   lr(t) = peak · t / W                   (peak/W first, peak at t = W)
//   decay    t > W:   p = (t − W) / (S − W) ∈ (0, 1]        (clamped to 1 past S)
//     cosine:   floor + (peak − floor) · ½(1 + cos πp)
//     linear:   peak − (peak − floor) · p
//     constant: peak
// So the last update (t = S) runs at exactly floor for cosine and linear.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "config/config.hpp"

namespace rf {

inline double lr_at(size_t step, const TrainConfig& train) {
    const double peak = train.lr;
    const double floor = train.min_lr_ratio * train.lr;
    const double t = static_cast<double>(step) + 1.0;
    const double warmup = static_cast<double>(train.warmup_steps);
    if (t <= warmup) return peak * t / warmup;
    if (train.schedule == Schedule::constant) return peak;
    const double decay_steps = static_cast<double>(train.steps) - warmup;
    const double progress = decay_steps > 0 ? std::min(1.0, (t - warmup) / decay_steps) : 1.0;
    if (train.schedule == Schedule::cosine)
        return floor + (peak - floor) * 0.5 * (1.0 + std::cos(M_PI * progress));
    return peak - (peak - floor) * progress;  // Schedule::linear
}

}  // namespace rf
