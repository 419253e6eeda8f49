// Room — experiments: the comparison's report — summary.md and the plots.
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

#include "io/output_file.hpp"

namespace rf {

// The heading that starts the extrapolation part.
extern const char* const kExtrapolationHeading;

// What may be replaced in a comparison directory (io/output_file.hpp): summary.md, curves.csv
// and extrapolation.csv while their .written-by mark says roformer wrote them as they are; the
// two plots when they carry the plot script's PNG text chunk.
OutputRule summary_rule();
OutputRule csv_rule(const std::string& name);
OutputRule plot_rule(const std::string& name);

// Writes DIR/summary.md (write_output_file: atomic, checked, never over a user's file). nullopt
// keeps that part as it is in the existing file; an empty string removes it.
void write_summary(const std::string& dir, const std::optional<std::string>& comparison,
                   const std::optional<std::string>& extrapolation);

// scripts/plot_curves.py: `explicit_path` if given, else ./scripts/, else next to the binary
// (<exe dir>/../scripts, <exe dir>/../../scripts). Empty when not found.
std::string find_plot_script(const std::string& explicit_path = "");

// Refuses (std::invalid_argument, one line) a --plot-script that would be ignored (with
// --no-plot) or names no regular file (missing, a directory, a FIFO that would block python):
// checked before any training, so an explicit script never silently turns into "no plot".
void check_plot_script(const std::string& explicit_path, bool plot);

// Runs the plot script on `dir` for `what` ("curves" or "extrapolation"), into a temporary
// that install_output_file renames over DIR/<what>.png. A missing python3 / matplotlib /
// script is a warning on `log` (returns false); a failed write of the picture is an error.
bool run_plot_script(const std::string& script, const std::string& dir, const std::string& what,
                     std::ostream& log);

}  // namespace rf
