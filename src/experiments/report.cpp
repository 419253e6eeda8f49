// Stage 8 — experiments: summary.md and the plot script (see report.hpp).
#include "experiments/report.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <vector>

namespace rf {

namespace fs = std::filesystem;

const char* const kExtrapolationHeading = "## Length extrapolation";

// ---- summary.md -----------------------------------------------------------------------------
void write_summary(const std::string& dir, const std::optional<std::string>& comparison,
                   const std::optional<std::string>& extrapolation) {
    const fs::path path = fs::path(dir) / "summary.md";
    std::string old_comparison, old_extrapolation;
    if (std::ifstream in{path}) {
        std::ostringstream text;
        text << in.rdbuf();
        old_comparison = text.str();
        const size_t at = old_comparison.find(kExtrapolationHeading);
        if (at != std::string::npos) {
            old_extrapolation = old_comparison.substr(at);
            old_comparison.resize(at);
        }
    }
    std::string first = comparison ? *comparison : old_comparison;
    const std::string second = extrapolation ? *extrapolation : old_extrapolation;
    while (!first.empty() && first.back() == '\n') first.pop_back();
    std::ofstream out(path);
    if (!first.empty()) out << first << "\n";
    if (!first.empty() && !second.empty()) out << "\n";
    out << second;
}

// ---- the plot script ---------------------------------------------------------------------------
static std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return out + "'";
}

std::string find_plot_script(const std::string& explicit_path) {
    if (!explicit_path.empty()) return fs::exists(explicit_path) ? explicit_path : "";
    std::vector<fs::path> candidates = {fs::path("scripts") / "plot_curves.py"};
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        candidates.push_back(exe.parent_path().parent_path() / "scripts" / "plot_curves.py");
        candidates.push_back(exe.parent_path().parent_path().parent_path() / "scripts" /
                             "plot_curves.py");
    }
    for (const fs::path& p : candidates)
        if (fs::exists(p, ec)) return p.string();
    return "";
}

bool run_plot_script(const std::string& script, const std::string& dir, const std::string& what,
                     std::ostream& log) {
    if (script.empty()) {
        log << "warning: scripts/plot_curves.py not found; no " << what << ".png (run it by hand: "
            << "python3 scripts/plot_curves.py " << dir << " " << what << ")\n";
        return false;
    }
    const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
    const std::string command =
        python + " " + shell_quote(script) + " " + shell_quote(dir) + " " + what;
    log.flush();
    const int status = std::system(command.c_str());
    if (status != 0) {
        log << "warning: `" << command << "` failed (exit " << status << "); no " << what
            << ".png — it needs python3 with matplotlib (Debian: apt install python3-matplotlib)\n";
        return false;
    }
    return true;
}

}  // namespace rf
