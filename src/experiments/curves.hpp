// Room — experiments: learning curves as CSV — a run's validation points from its
// metrics.csv, and the comparison's curves.csv (scheme,seed,step,train_loss,val_loss,val_accuracy).
#pragma once

#include <string>
#include <vector>

#include "experiments/compare_stats.hpp"

namespace rf {

// curves.csv's header line (without the newline).
inline constexpr const char* kCurvesHeader = "scheme,seed,step,train_loss,val_loss,val_accuracy";

// The validation points (rows with a val_loss) of a run's metrics.csv.
std::vector<CurvePoint> read_run_curve(const std::string& run_dir);

// Written with write_output_file (atomic, checked; replaces only a curves.csv of ours).
void write_curves_csv(const std::string& path, const std::vector<CurveRow>& rows);
std::vector<CurveRow> read_curves_csv(const std::string& path);

}  // namespace rf
