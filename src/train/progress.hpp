// Room — train: what a run prints while it trains.
//
// On a terminal (stderr, not quiet) one line redrawn in place behind a bar, kept after each
// evaluation; elsewhere (files, pipes, notebooks) one plain line per logged step:
//   step 250/4000  loss 4.1234  val 4.0012 acc 0.231  lr 0.002  17000 tok/s  ETA 03m40s
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>

#include "train/metrics_log.hpp"

namespace rf {

// "03m40s", "1h02m05s"
std::string format_duration(double seconds);

class ProgressLine {
public:
    ProgressLine(std::ostream& log, bool quiet, size_t total_steps);
    void update(const MetricsRow& row, double eta_s);
    void finish();  // ends a terminal bar's line

private:
    std::ostream& log_;
    bool quiet_, terminal_;
    size_t total_steps_;
};

}  // namespace rf
