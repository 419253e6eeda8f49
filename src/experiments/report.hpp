// Stage 8 — experiments: the comparison's report — summary.md and the plots.
//
// summary.md has two parts, and this file alone writes it:
//   the comparison (written by `roformer compare`: settings, final losses, steps to a threshold)
//   "## Length extrapolation" (written by `roformer extrapolate`)
// Each command replaces its own part and keeps the other — except that a compare which
// (re)trained runs drops the extrapolation part, whose numbers came from the old runs.
// The plots are drawn by scripts/plot_curves.py (the C++ writes no images).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

namespace rf {

// The heading that starts the extrapolation part.
extern const char* const kExtrapolationHeading;

// Writes DIR/summary.md. nullopt keeps that part as it is in the existing file; an empty
// string removes it.
void write_summary(const std::string& dir, const std::optional<std::string>& comparison,
                   const std::optional<std::string>& extrapolation);

// scripts/plot_curves.py: `explicit_path` if given, else ./scripts/, else next to the binary
// (<exe dir>/../scripts, <exe dir>/../../scripts). Empty when not found.
std::string find_plot_script(const std::string& explicit_path = "");

// Runs the plot script on `dir` for `what` ("curves" or "extrapolation"); on failure
// (no python3 / matplotlib / script) prints a warning to `log` and returns false.
bool run_plot_script(const std::string& script, const std::string& dir, const std::string& what,
                     std::ostream& log);

}  // namespace rf
