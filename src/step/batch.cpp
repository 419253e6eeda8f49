// Stage 6 — step: one batch of token windows (see batch.hpp).
#include "step/batch.hpp"

#include <algorithm>

namespace rf {

size_t Batch::n_selected() const {
    return static_cast<size_t>(
        std::count_if(labels.begin(), labels.end(), [](int l) { return l != kIgnoreLabel; }));
}

}  // namespace rf
