// Room — experiments: a comparison's runs over the ranks of an MPI job (see compare_mpi.hpp).
#include "experiments/compare_mpi.hpp"

#include <chrono>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "run/interrupt.hpp"
#include "train/communicator.hpp"
#include "dist/mpi_communicator.hpp"
#include "train/trainer.hpp"

namespace rf {

namespace {

// The list rank 0 sends: one run a line, "scheme \t seed \t resume \t dir".
std::string encode_runs(const std::vector<RankRun>& runs) {
    std::ostringstream out;
    for (const RankRun& r : runs)
        out << r.scheme << '\t' << r.seed << '\t' << int(r.resume) << '\t' << r.dir << '\n';
    return out.str();
}

std::vector<RankRun> decode_runs(const std::string& text) {
    std::vector<RankRun> runs;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        RankRun r;
        std::string seed, resume;
        std::getline(fields, r.scheme, '\t');
        std::getline(fields, seed, '\t');
        std::getline(fields, resume, '\t');
        std::getline(fields, r.dir);
        r.seed = std::stoul(seed);
        r.resume = resume == "1";
        runs.push_back(r);
    }
    return runs;
}

// Trains this rank's share (runs i with i % P == rank) and returns its report: one line a run,
// "index \t ok \t seconds \t error".
std::string train_my_share(const ComparePreset& preset, const std::vector<RankRun>& runs) {
    const size_t P = dist::world_size(), me = dist::world_rank();
    SingleProcess alone;  // each run is a 1-process run on this rank, whatever the others do
    std::ostringstream report;
    for (size_t i = me; i < runs.size(); i += P) {
        const RankRun& run = runs[i];
        const auto t0 = std::chrono::steady_clock::now();
        std::string error;
        try {
            TrainOptions options;
            options.out_dir = run.dir;
            options.resume = run.resume;
            options.quiet = true;
            options.communicator = &alone;
            const InterruptGuard interrupts;  // a stop signal: checkpoint after this step
            options.stop = InterruptGuard::after_work;
            std::ostringstream quiet;
            const TrainSummary summary = train(
                comparison_run_config(preset.base, run.scheme, run.seed, preset.settings.variants),
                options, quiet);
            if (summary.interrupted_by)  // checkpointed; the same command resumes it
                error = "interrupted by signal " + std::to_string(summary.interrupted_by) +
                        " at step " + std::to_string(summary.steps);
        } catch (const std::exception& e) { error = e.what(); }
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        for (char& c : error)
            if (c == '\n' || c == '\t') c = ' ';
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%.3f", s);
        report << i << '\t' << int(error.empty()) << '\t' << seconds << '\t' << error << '\n';
        if (!error.empty()) break;  // a failed or interrupted rank takes no further run
    }
    return report.str();
}

}  // namespace

std::vector<RankRunResult> train_across_ranks(const ComparePreset& preset,
                                              const std::vector<RankRun>& runs) {
    std::string list = encode_runs(runs);
    dist::broadcast_world(list);
    const std::vector<std::string> reports = dist::gather_world(train_my_share(preset, runs));
    std::vector<RankRunResult> results(runs.size());
    for (const std::string& report : reports) {
        std::istringstream in(report);
        std::string line;
        while (std::getline(in, line)) {
            std::istringstream fields(line);
            std::string index, ok, seconds, error;
            std::getline(fields, index, '\t');
            std::getline(fields, ok, '\t');
            std::getline(fields, seconds, '\t');
            std::getline(fields, error);
            RankRunResult& r = results.at(std::stoul(index));
            r.ok = ok == "1";
            r.seconds = std::stod(seconds);
            r.error = error;
        }
    }
    return results;
}

void serve_compare_ranks(const ComparePreset& preset) {
    std::string list;
    dist::broadcast_world(list);
    dist::gather_world(train_my_share(preset, decode_runs(list)));
}

}  // namespace rf
