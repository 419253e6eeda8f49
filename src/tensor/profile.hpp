// Stage 1 — tensor: where the time of a training step goes, op by op (`roformer train --profile`).
//
// Off by default; when off, the engine's only cost is one test of a bool per op (measured:
// no difference in throughput, docs/performance.md). When on:
//   forward   every op computes its output and then calls make_result, so the time from the
//             previous op's make_result (or from mark()) to this one is this op's forward;
//   backward  Tensor::backward times each node's backward closure (its gradient buffers'
//             first zeroing included) under the node's op name;
//   engine    "graph: record" (making nodes), "graph: sort" (the topological order);
//   phases    the trainer times what is not an op itself ("optimizer", "free graph", …).
// Timings are wall-clock seconds summed over the profiled steps; with several threads an op's
// time is the wall time of its parallel region, so the shares still add up to the step.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace rf::profile {

bool enabled();
void enable(bool on);  // also restarts the forward clock
void reset();          // forget every row

// Restarts the forward clock: the next op's forward time counts from here.
void mark();
// Called by make_result: the time since the last mark goes to op's forward; then mark().
void forward_op(const char* op);
// Adds `seconds` to name's forward (backward = false) or backward column, one call.
void add(const char* name, bool backward, double seconds);

// Times a scope into `name` when profiling is on (a phase of the trainer, the graph sort, …).
class Scope {
public:
    Scope(const char* name, bool backward);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

private:
    const char* name_;
    bool backward_, on_;
    std::chrono::steady_clock::time_point start_;
};

struct Row {
    std::string name;
    size_t forward_calls = 0, backward_calls = 0;
    double forward_s = 0, backward_s = 0;
};
// Every row, largest total first.
std::vector<Row> rows();

// The table for `steps` profiled steps that took `step_seconds` in all: per op its calls per
// step (forward calls; backward-only phases: their calls), forward and backward ms per step and the share of the step; the last line is the
// time no row accounts for (the trainer's own work between ops).
std::string report(size_t steps, double step_seconds);

}  // namespace rf::profile
