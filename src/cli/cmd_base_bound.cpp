// Room — cli: `roformer base-bound`, the smallest RoPE base for a context length (Men et al.
// 2024, "Base of RoPE Bounds Context Length"; the math and the search: src/position/
// rope_base_bound.hpp).
//
//   roformer base-bound --head-dim 128 --length 1024 8192 [--steps-per-decade 1000] [--csv FILE]
// prints, per length L, the smallest base with B(m) = Σ_i cos(m·base^(−2i/D)) ≥ 0 for every
// m ≤ L, the base above which every scanned base satisfies it, and the gaps between them (bases
// that fail again). --csv FILE writes every edge, one row each (io/output_file.hpp's rules).
// A search at the cap (L·D/2 = 2^27) runs for many minutes: after 2 s a progress line on
// stderr, and Ctrl-C / SIGTERM stop it within a second with one line, exit 130 / 143, nothing
// written (cli/long_work.hpp).
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/bounds.hpp"
#include "cli/commands.hpp"
#include "cli/long_work.hpp"
#include "io/output_file.hpp"
#include "ropelab/rope_base_bound.hpp"

namespace {

struct BaseBoundOptions {
    size_t head_dim = 0;
    std::vector<size_t> lengths;
    size_t steps_per_decade = 1000;
    std::string csv;
};

constexpr size_t kGapsShown = 8;  // per length on the terminal; --csv has them all

std::string number(double base) {
    char text[64];
    std::snprintf(text, sizeof text, base < 1e6 ? "%.1f" : "%.4g", base);
    return text;
}

// head_dim,length,what,base_from,base_to — what: smallest | gap | all_above | proved_from
std::string csv_rows(const std::vector<rf::BaseBound>& bounds) {
    std::ostringstream out;
    out << "head_dim,length,what,base_from,base_to\n";
    char line[256];
    for (const rf::BaseBound& b : bounds) {
        const auto row = [&](const char* what, double from, double to) {
            std::snprintf(line, sizeof line, "%zu,%zu,%s,%.10g,%.10g\n", b.head_dim, b.length, what,
                          from, to);
            out << line;
        };
        row("smallest", b.smallest, b.smallest);
        for (const rf::BaseRange& gap : b.gaps) row("gap", gap.from, gap.to);
        row("all_above", b.all_above, b.all_above);
        row("proved_from", b.proved_from, b.proved_from);
    }
    return out.str();
}

// Each length's search, with a progress line and Ctrl-C (cli/long_work.hpp) while it runs.
std::vector<rf::BaseBound> search_each_length(const BaseBoundOptions& o) {
    const std::string left =
        std::string(o.csv.empty() ? "nothing printed" : "nothing printed, no --csv written") +
        "; fewer --length values or a lower --steps-per-decade finish sooner";
    std::vector<rf::BaseBound> bounds;
    rf::cli::LongWork work("base-bound");
    for (size_t i = 0; i < o.lengths.size(); ++i) {
        const std::string which = "L = " + std::to_string(o.lengths[i]) +
                                  (o.lengths.size() > 1 ? " (" + std::to_string(i + 1) + " of " +
                                                              std::to_string(o.lengths.size()) + ")"
                                                        : "");
        const auto watch = [&](const rf::BaseBoundProgress& p) {
            if (work.stop_signal()) return false;
            if (work.due())
                work.show(which + ": " +
                          (p.edges == 0 ? std::to_string(p.scanned) + " of " +
                                              std::to_string(p.scan_points) + " bases scanned"
                                        : std::to_string(p.edges_refined) + " of " +
                                              std::to_string(p.edges) + " edges refined"));
            return true;
        };
        try {
            bounds.push_back(
                rf::rope_base_bound(o.head_dim, o.lengths[i], o.steps_per_decade, watch));
        } catch (const rf::BaseBoundStopped&) { work.exit_stopped("at " + which, left); }
        if (work.stop_signal()) work.exit_stopped("after " + which, left);
    }
    return bounds;
}

void run_base_bound(const BaseBoundOptions& o) {
    for (size_t length : o.lengths) rf::validate_base_bound(o.head_dim, length, o.steps_per_decade);
    const rf::OutputRule rule{"the base-bound CSV", {}};
    if (!o.csv.empty()) rf::check_output_file(o.csv, rule);  // before the work, not after
    const std::vector<rf::BaseBound> bounds = search_each_length(o);

    std::printf(
        "RoPE base bound (Men et al. 2024): B(m) = sum_i cos(m * base^(-2i/D)) >= 0 "
        "for every m <= L, D = %zu\n",
        o.head_dim);
    std::printf(
        "scan: %zu points a decade of the base, from %.4f to a certified end; edges "
        "refined by bisection\n\n",
        o.steps_per_decade, bounds.front().scan_from);
    std::printf("%10s  %14s  %18s  %5s  %12s\n", "length", "smallest base", "holds for all above",
                "gaps", "proved from");
    for (const rf::BaseBound& b : bounds)
        std::printf("%10zu  %14s  %18s  %5zu  %12.4g\n", b.length,
                    ((b.holds_at_scan_start ? "<= " : "") + number(b.smallest)).c_str(),
                    number(b.all_above).c_str(), b.gaps.size(), b.proved_from);
    for (const rf::BaseBound& b : bounds) {
        if (b.gaps.empty()) continue;
        std::printf("\nL = %zu: bases that fail again between the two (gaps):", b.length);
        for (size_t g = 0; g < b.gaps.size() && g < kGapsShown; ++g)
            std::printf(" [%s, %s)", number(b.gaps[g].from).c_str(), number(b.gaps[g].to).c_str());
        if (b.gaps.size() > kGapsShown)
            std::printf(" ... %zu more%s", b.gaps.size() - kGapsShown,
                        o.csv.empty() ? " (--csv FILE lists them all)" : "");
        std::printf("\n");
    }
    std::printf(
        "\nA gap narrower than one scan step can hide; raise --steps-per-decade to look "
        "closer.\n");
    if (!o.csv.empty()) rf::write_output_file(o.csv, csv_rows(bounds), rule);
}

void add_base_bound(CLI::App& app) {
    auto options = std::make_shared<BaseBoundOptions>();
    CLI::App* cmd = app.add_subcommand(
        "base-bound",
        "The smallest RoPE base for a context length (Men et al. 2024), with the gaps above it");
    cmd->add_option("--head-dim", options->head_dim, "Head size D (even, 6 to 4096)")
        ->required()
        ->check(rf::cli::unsigned_number());
    cmd->add_option("--length", options->lengths, "Context length(s) L, e.g. 1024 8192")
        ->required()
        ->check(rf::cli::unsigned_number());
    cmd->add_option("--steps-per-decade", options->steps_per_decade,
                    "Scan points per factor 10 of the base (10 to 100000)")
        ->check(rf::cli::unsigned_number())
        ->capture_default_str();
    cmd->add_option("--csv", options->csv,
                    "Also write every edge to FILE (head_dim,length,what,base_from,base_to); "
                    "replaces only a file it wrote itself")
        ->check(rf::cli::non_empty("leave --csv out to print the table only"));
    cmd->callback([options] { run_base_bound(*options); });
}

}  // namespace

RF_COMMAND("base-bound", add_base_bound);
