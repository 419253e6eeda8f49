// Room — experiments: summary.md and the plot script (see report.hpp).
#include "experiments/report.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <vector>

#include "io/durable_file.hpp"
#include "io/platform.hpp"
#include "io/read_file.hpp"
#include "io/shell_quote.hpp"

namespace rf {

namespace fs = std::filesystem;

const char* const kExtrapolationHeading = "## Length extrapolation";

// ---- summary.md -----------------------------------------------------------------------------
OutputRule summary_rule() { return {"summary.md", {}, "move it away or pick another --out"}; }

OutputRule csv_rule(const std::string& name) {
    return {name, {}, "move it away or pick another --out"};
}

OutputRule plot_rule(const std::string& name) {
    return {name, {"roformer-cpp scripts/plot_curves.py"}, "move it away or pick another --out"};
}

void write_summary(const std::string& dir, const std::optional<std::string>& comparison,
                   const std::optional<std::string>& extrapolation) {
    const std::string path = (fs::path(dir) / "summary.md").string();
    check_output_file(path, summary_rule());
    std::string old_comparison, old_extrapolation;
    if (fs::exists(path)) {
        old_comparison = read_file_bytes(path, 64 << 20);
        // Our own extrapolation part starts a line with the heading (not just mentions it).
        size_t at = old_comparison.rfind(std::string("\n") + kExtrapolationHeading + "\n");
        if (at != std::string::npos)
            ++at;
        else if (old_comparison.rfind(kExtrapolationHeading, 0) == 0)
            at = 0;
        if (at != std::string::npos) {
            old_extrapolation = old_comparison.substr(at);
            old_comparison.resize(at);
        }
    }
    std::string first = comparison ? *comparison : old_comparison;
    const std::string second = extrapolation ? *extrapolation : old_extrapolation;
    while (!first.empty() && first.back() == '\n') first.pop_back();
    std::string text;
    if (!first.empty()) text += first + "\n";
    if (!first.empty() && !second.empty()) text += "\n";
    text += second;
    write_output_file(path, text, summary_rule());
}

// ---- the plot script ---------------------------------------------------------------------------
std::string find_plot_script(const std::string& explicit_path) {
    if (!explicit_path.empty()) return fs::exists(explicit_path) ? explicit_path : "";
    std::vector<fs::path> candidates = {fs::path("scripts") / "plot_curves.py"};
    std::error_code ec;
    const fs::path exe = platform::executable_path();
    if (!exe.empty()) {
        candidates.push_back(exe.parent_path().parent_path() / "scripts" / "plot_curves.py");
        candidates.push_back(exe.parent_path().parent_path().parent_path() / "scripts" /
                             "plot_curves.py");
    }
    for (const fs::path& p : candidates)
        if (fs::exists(p, ec)) return p.string();
    return "";
}

void check_plot_script(const std::string& explicit_path, bool plot) {
    if (explicit_path.empty()) return;
    if (!plot)
        throw std::invalid_argument("--plot-script " + explicit_path +
                                    " names a script that --no-plot never runs; drop one of them");
    require_regular_file(explicit_path, "plot script",
                         "--plot-script takes scripts/plot_curves.py (or leave it out to search)");
}

bool run_plot_script(const std::string& script, const std::string& dir, const std::string& what,
                     std::ostream& log) {
    if (script.empty()) {
        log << "warning: scripts/plot_curves.py not found; no " << what << ".png (run it by hand: "
            << "python3 scripts/plot_curves.py " << dir << " " << what << ")\n";
        return false;
    }
    const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
    const std::string png = (fs::path(dir) / (what + ".png")).string();
    const OutputRule rule = plot_rule(what + ".png");
    check_output_file(png, rule);  // before drawing anything
    const std::string temp = temporary_name(png) + ".png";
    const std::string errors = temporary_name(png) + ".stderr";
    const std::string command = shell_command({python, script, dir, what, temp});
    log.flush();
    // The script's own "wrote <temporary name>" is not what the user keeps: silence stdout and
    // say where the picture went. Its stderr is kept aside: a failure is one warning line with
    // the script's last line (a Python traceback's verdict), never the traceback itself.
    const int status =
        std::system((command + " > /dev/null 2> " + shell_command({errors})).c_str());
    std::string last;
    {
        std::ifstream in(errors);
        for (std::string line; std::getline(in, line);)
            if (!line.empty()) last = line;
    }
    std::remove(errors.c_str());
    if (status != 0 || !fs::exists(temp)) {
        std::remove(temp.c_str());
        log << "warning: `" << command << "` failed (exit " << status
            << (last.empty() ? "" : ": " + last.substr(0, 300)) << "); no " << what
            << ".png — it needs python3 with matplotlib (Debian: apt install python3-matplotlib)\n";
        return false;
    }
    install_output_file(temp, png, rule);
    log << "wrote " << png << "\n";
    return true;
}

}  // namespace rf
