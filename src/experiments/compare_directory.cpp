// Room — experiments: the comparison directory: locked first, then owned or refused (see
// compare_directory.hpp).
#include "experiments/compare_directory.hpp"

#include <exception>
#include <filesystem>
#include <stdexcept>

#include "experiments/report.hpp"
#include "io/output_file.hpp"
#include "run/directory_kind.hpp"

namespace rf {

namespace fs = std::filesystem;

namespace {

// compare writes curves.csv, summary.md and curves.png into --out; a file of that name it did
// not write is the user's, and is refused before any training (io/output_file.hpp).
void refuse_foreign_outputs(const std::string& out_dir, bool plot) {
    const fs::path dir(out_dir);
    check_output_file((dir / "summary.md").string(), summary_rule());
    check_output_file((dir / "curves.csv").string(), csv_rule("curves.csv"));
    if (plot) check_output_file((dir / "curves.png").string(), plot_rule("curves.png"));
}

// compare writes its lock record and its runs only into a directory it owns: a new or empty one,
// or one that already holds a comparison (a lock record, one of its scheme directories, or a
// summary.md / curves.csv of ours). `--out ~/Documents` is refused before anything is written.
void refuse_foreign_directory(const std::string& out_dir,
                                     const std::vector<std::string>& schemes) {
    std::error_code ec;
    if (!fs::is_directory(out_dir, ec) || fs::is_empty(out_dir, ec)) return;
    // A run, a fine-tune, an HF directory: named by the one reader (run/directory_kind.hpp).
    refuse_other_directory(out_dir, "compare: --out", "a comparison", DirectoryKind::comparison);
    const fs::path dir(out_dir);
    // A `lock` of any kind: RunLock::acquire says whether it is ours, by name.
    bool ours = fs::exists(fs::symlink_status(dir / RunLock::kFileName, ec));
    for (const std::string& scheme : schemes) ours = ours || fs::is_directory(dir / scheme, ec);
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
        ours = ours || (e.is_directory() && fs::exists(e.path() / "seed1" / "config.toml", ec));
    try {
        check_output_file((dir / "summary.md").string(), summary_rule());
        check_output_file((dir / "curves.csv").string(), csv_rule("curves.csv"));
        ours = ours || fs::exists(dir / "summary.md", ec) || fs::exists(dir / "curves.csv", ec);
    } catch (const std::runtime_error&) {  // reported by refuse_foreign_outputs, by name
        ours = true;
    }
    if (!ours)
        throw std::runtime_error(
            "compare: --out '" + out_dir +
            "' is not empty and holds no comparison; pick a new --out (compare "
            "writes only into a new directory or one of its own)");
}

}  // namespace

RunLock lock_comparison_directory(const std::string& out_dir,
                                  const std::vector<std::string>& schemes, bool plot) {
    RunLock lock = RunLock::acquire(out_dir, false);
    try {
        refuse_foreign_directory(out_dir, schemes);
        lock.record_holder();
        refuse_foreign_outputs(out_dir, plot);
    } catch (...) {
        lock.remove_created();  // only if empty, with the parents it made
        throw;
    }
    return lock;
}

EmptyComparisonCleanup::EmptyComparisonCleanup(const RunLock& lock, std::string out_dir)
    : lock_(lock),
      out_dir_(std::move(out_dir)),
      exceptions_(std::uncaught_exceptions()) {}

EmptyComparisonCleanup::~EmptyComparisonCleanup() {
    if (std::uncaught_exceptions() <= exceptions_ || !lock_.in_place()) return;
    // Nothing here may throw (it runs while an exception unwinds): every call takes an
    // error_code. fs::remove takes a directory only when it is empty: a run's files stay.
    auto subdirectories = [](const fs::path& dir) {
        std::vector<fs::path> found;
        std::error_code ec;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
            if (!it->is_symlink(ec) && it->is_directory(ec)) found.push_back(it->path());
        return found;
    };
    std::error_code ec;
    for (const fs::path& scheme : subdirectories(out_dir_)) {
        for (const fs::path& seed : subdirectories(scheme)) fs::remove(seed, ec);
        fs::remove(scheme, ec);
    }
    size_t left = 0;
    for (fs::directory_iterator it(out_dir_, ec), end; !ec && it != end; it.increment(ec))
        left += it->path().filename() != RunLock::kFileName;
    if (ec || left > 0 || !lock_.holds_record()) return;
    fs::remove(fs::path(out_dir_) / RunLock::kFileName, ec);
    lock_.remove_created();
}

}  // namespace rf
