// Room — inspect: where the time of a training step goes, op by op (`roformer train --profile`).
//
// The profiler is an EngineObserver (tensor/tensor.hpp): the engine tells it about each op and
// each backward closure, and knows nothing else of it. Installed only while enabled, so a run
// without --profile pays one pointer test per op. When on:
//   forward   every op computes its output and then calls make_result, so the time from the
//             previous event (an op, or the end of a marked stretch) to this one is this op's
//             forward;
//   backward  each node's backward closure (its gradient buffers' first zeroing included)
//             under the node's op name;
//   engine    "graph: record" (making nodes; the backward's topological sort is left in
//             "(not in a row)");
//   phases    whatever the caller marks with ObservedScope (the loop's "optimizer", …).
// Timings are wall-clock seconds summed over the profiled steps; with several threads an op's
// time is the wall time of its parallel region, so the shares still add up to the step.
#pragma once

#include <string>
#include <vector>

#include "tensor/tensor.hpp"

namespace rf::profile {

bool enabled();
// Installs the profiler as the engine's observer (on) or removes it (off).
void enable(bool on);
void reset();  // forget every row
// The profiler as an observer, for a caller that installs it around its own work
// (`roformer train --profile` wraps each training step: src/cli/cmd_train.cpp); enable(true)
// does the same for the whole process.
EngineObserver* observer();

struct Row {
    std::string name;
    size_t forward_calls = 0, backward_calls = 0;
    double forward_s = 0, backward_s = 0;
};
// Every row, largest total first.
std::vector<Row> rows();

// The table for `steps` profiled steps that took `step_seconds` in all: per op its calls per
// step (forward calls; backward-only phases: their calls), forward and backward ms per step
// and the share of the step; the last line is the time no row accounts for (the caller's own
// work between ops).
std::string report(size_t steps, double step_seconds);

}  // namespace rf::profile
