// Room — cli: `roformer rope-precision`, how far RoPE's relative property drifts in f32
// and bf16 as a window moves to later positions (the computation:
// src/experiments/rope_precision.hpp; the question of Wang et al. 2024, arXiv:2411.13476).
//
//   roformer rope-precision [--run runs/NAME [--layer L]] [--out FILE.csv]
//                           [--max-position 16384] [--seed 0] [--head-dim 32] [--base 10000]
// q and k: with --run, the run's layer L projects them from its first validation window (its
// first 64 tokens at most), one group per head; without it, 8 groups of 64 random
// unit-variance vectors, head size and base as configs/classroom.toml (D = 32, base 10000).
// The window is measured at shifts p = 0, 1, 2, 3, 4, 6, 8, 11, 16, … (log-spaced) up to
// --max-position, for both pairings and every precision case.
//   CSV (stdout, or --out FILE.csv): "vectors,pairing,case,position,shift_error,
//       reference_error,first_token_error,other_tokens_error,score_scale,first_token_scale",
//       one row per (pairing, case, position). With --out, a summary table follows on stdout.
//       --out replaces only a file this program wrote (io/output_file.hpp).
//       scripts/plot_rope_precision.py draws it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/bounds.hpp"
#include "cli/commands.hpp"
#include "cli/long_work.hpp"
#include "cli/run_checks.hpp"
#include "config/memory_estimate.hpp"
#include "data/prepare.hpp"
#include "experiments/rope_precision.hpp"
#include "io/output_file.hpp"
#include "ropelab/rotating_layers.hpp"
#include "run/checkpoint.hpp"
#include "run/threads.hpp"

namespace {

struct RopePrecisionOptions {
    std::string run_dir;  // empty: random vectors
    size_t layer = 0;
    std::string out;
    size_t max_position = 16384;
    uint64_t seed = 0;
    size_t head_dim = 32;  // configs/classroom.toml: hidden 128 / 4 heads
    double base = 10000.0;
    // Which options were typed: each belongs to one source of vectors.
    bool layer_given = false, seed_given = false, head_dim_given = false, base_given = false;
};

// f32 holds every integer position exactly only up to 2^24; the shift stays well below it.
constexpr size_t kMaxShift = size_t(1) << 20;
constexpr size_t kMaxHeadDim = 1024;
constexpr size_t kWindowTokens = 64;  // tokens measured per window: (T² / 2) pairs each
constexpr size_t kRandomGroups = 8;

bool names_csv(const std::string& path) {
    return path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
}

// q and k of every head of the run's layer L over its first validation window.
rf::RopePrecisionVectors run_vectors(const RopePrecisionOptions& o, rf::RopeGeometry& geometry,
                                     std::string& source) {
    const rf::DirectoryState state = rf::require_model_run(o.run_dir, "--run");
    rf::LoadedRun run = rf::load_run(o.run_dir);
    rf::state_unfinished(state, o.run_dir, run.step);
    const rf::Config& c = run.config;
    const size_t D = rf::attention_head_size(c.model.hidden, c.model.num_heads);
    if (o.layer >= c.model.num_layers)
        throw std::invalid_argument("--layer " + std::to_string(o.layer) + " is out of range: " +
                                    o.run_dir + " has " + std::to_string(c.model.num_layers) +
                                    " layers (0 … " + std::to_string(c.model.num_layers - 1) + ")");
    const rf::PositionConfig& p = c.position;
    const std::vector<size_t> turning = rf::rope_turning_pairs(p, c.model.num_layers, D);
    if (turning[o.layer] != D / 2 || p.learned_frequencies || p.xpos ||
        p.scaling != rf::RopeScaling::none || p.interpolation_factor != 1.0 ||
        p.ntk_factor != 1.0)
        throw std::invalid_argument(
            o.run_dir + " layer " + std::to_string(o.layer) +
            " does not turn every pair by the paper's θ_i = base^(−2i/D) (position.scheme = rope "
            "with rope_p = 1, rotary_fraction = 1, no scaling, xpos or learned frequencies); "
            "give such a run, or leave --run out for random vectors");
    rf::check_evaluation_memory(c, 1, c.data.seq_len, "rope-precision",
                                "lower data.seq_len in the run's config");
    rf::apply_threading(run.config);
    rf::PreparedData data = rf::prepare_data(c.data, 1, run.tokenizer, c.train.objective);
    if (data.validation.empty())
        throw std::invalid_argument(o.run_dir + " has no validation window to take q and k from; "
                                    "give a run whose data has a validation split");
    const rf::Batch& batch = data.validation[0];
    const size_t T = batch.seq_len, H = c.model.num_heads;
    const std::vector<int> ids(batch.input_ids.begin(), batch.input_ids.begin() + T);
    rf::RoFormer& model = *run.model;
    rf::NoGradGuard no_grad;
    rf::Rng unused(0);  // dropout is off: training = false
    rf::Tensor h = model.embed(ids, 1, T, false);  // [1,T,C]
    for (size_t l = 0; l < o.layer; ++l)
        h = model.layers()[l].forward(h, model.layer_position(l), false, rf::Real(0), unused);
    const auto heads = model.layers()[o.layer].attention.project(h);  // q, k:[1,H,T,D], unturned
    const size_t used = std::min(T, kWindowTokens);
    rf::RopePrecisionVectors v{H, used, D, {}, {}};
    v.q.resize(H * used * D);
    v.k.resize(v.q.size());
    for (size_t g = 0; g < H; ++g)
        for (size_t x = 0; x < used * D; ++x) {
            v.q[g * used * D + x] = static_cast<float>(heads.q.data()[g * T * D + x]);
            v.k[g * used * D + x] = static_cast<float>(heads.k.data()[g * T * D + x]);
        }
    for (float x : v.q)
        if (!std::isfinite(x))
            throw std::runtime_error(o.run_dir + ": the layer's q is not finite (NaN or inf); "
                                                 "the checkpoint is damaged — train again");
    geometry.head_dim = D;
    geometry.base = p.base;
    source = o.run_dir + " (step " + std::to_string(run.step) + "), layer " +
             std::to_string(o.layer) + ": q and k of its " + std::to_string(H) +
             " heads over the first " + std::to_string(used) + " tokens of validation window 0";
    return v;
}

std::string precision_csv(const std::vector<rf::RopePrecisionRow>& rows, const char* vectors) {
    std::ostringstream out;
    out << "vectors,pairing,case,position,shift_error,reference_error,first_token_error,"
           "other_tokens_error,score_scale,first_token_scale\n";
    char line[320];
    for (const rf::RopePrecisionRow& r : rows) {
        std::snprintf(line, sizeof line, "%s,%s,%s,%zu,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e\n", vectors,
                      rf::rope_pairing_name(r.pairing), rf::rope_precision_case_name(r.precision),
                      r.position, r.shift_error, r.reference_error, r.first_token_error,
                      r.other_tokens_error, r.score_scale, r.first_token_scale);
        out << line;
    }
    return out.str();
}

// Shift error / mean |score| by position (powers of 4, and the last), one column per case;
// then, at the last position, the first token's shift error against the others'.
void print_precision_summary(const std::vector<rf::RopePrecisionRow>& rows, size_t max_position) {
    const std::vector<rf::RopePrecisionCase> cases = rf::all_rope_precision_cases();
    for (rf::RopePairing pairing : {rf::RopePairing::interleaved, rf::RopePairing::half}) {
        std::printf("\n%s pairing: shift error / mean |score| (0 = the relative property holds)\n",
                    rf::rope_pairing_name(pairing));
        std::printf("%9s", "position");
        for (rf::RopePrecisionCase c : cases) std::printf(" %21s", rf::rope_precision_case_name(c));
        std::printf("\n");
        for (size_t p = 1; p <= max_position; p = (p * 4 > max_position && p != max_position)
                                                       ? max_position
                                                       : p * 4) {
            std::printf("%9zu", p);
            for (rf::RopePrecisionCase c : cases)
                for (const rf::RopePrecisionRow& r : rows)
                    if (r.pairing == pairing && r.precision == c && r.position == p)
                        std::printf(" %21.3e", r.shift_error / r.score_scale);
            std::printf("\n");
            if (p == max_position) break;
        }
        std::printf("first token (key at position p) at p = %zu: its shift error / the other "
                    "keys' (its mean |score| / every key's)\n",
                    max_position);
        for (rf::RopePrecisionCase c : cases)
            for (const rf::RopePrecisionRow& r : rows)
                if (r.pairing == pairing && r.precision == c && r.position == max_position)
                    std::printf("  %-21s %8.3f  (%.3f)\n", rf::rope_precision_case_name(c),
                                r.other_tokens_error > 0 ? r.first_token_error / r.other_tokens_error
                                                         : 0.0,
                                r.first_token_scale / r.score_scale);
    }
}

// Both pairings, every case, as measure_rope_precision gives them for all cases at once (the
// same rows, in the same order), but one (pairing, case) at a time: a long measurement
// (D = 1024 up to 2^20 runs for minutes) shows progress on stderr and stops on Ctrl-C or
// SIGTERM with one line and exit 128 + the signal, before anything is written (`left`).
// The signals are ours only while measuring: writing, SIGPIPE ends us as it always did.
std::vector<rf::RopePrecisionRow> measure_watched(const rf::RopePrecisionVectors& vectors,
                                                  rf::RopeGeometry geometry,
                                                  const std::vector<size_t>& positions,
                                                  const std::string& left) {
    rf::cli::LongWork work("rope-precision");
    const std::vector<rf::RopePrecisionCase> cases = rf::all_rope_precision_cases();
    const std::string parts = std::to_string(2 * cases.size());
    std::vector<rf::RopePrecisionRow> rows;
    for (rf::RopePairing pairing : {rf::RopePairing::interleaved, rf::RopePairing::half}) {
        geometry.pairing = pairing;
        for (rf::RopePrecisionCase c : cases) {
            const std::string done = std::to_string(rows.size() / positions.size());
            if (work.stop_signal())
                work.exit_stopped(
                    "after " + done + " of " + parts + " (pairing, case) measurements", left);
            if (work.due())
                work.show(std::string(rf::rope_pairing_name(pairing)) + " pairing, " +
                          rf::rope_precision_case_name(c) + ": " + done + " of " + parts +
                          " (pairing, case) measured");
            const std::vector<rf::RopePrecisionRow> part =
                rf::measure_rope_precision(vectors, geometry, positions, {c});
            rows.insert(rows.end(), part.begin(), part.end());
        }
    }
    if (work.stop_signal())  // during the last one
        work.exit_stopped("after " + parts + " of " + parts + " (pairing, case) measurements",
                          left);
    return rows;
}

void run_rope_precision(const RopePrecisionOptions& o) {
    if (o.run_dir.empty() && o.layer_given)
        throw std::invalid_argument("--layer picks a layer of --run; give --run DIR with it, or "
                                    "leave --layer out for random vectors");
    if (!o.run_dir.empty() && (o.seed_given || o.head_dim_given || o.base_given))
        throw std::invalid_argument(std::string(o.seed_given       ? "--seed"
                                                : o.head_dim_given ? "--head-dim"
                                                                   : "--base") +
                                    " is for random vectors; with --run the run's own q, k, "
                                    "head size and base are used — leave it out");
    if (o.max_position < 1 || o.max_position > kMaxShift)
        throw std::invalid_argument("--max-position " + std::to_string(o.max_position) +
                                    " must be from 1 to " + std::to_string(kMaxShift) +
                                    " (the largest shift of the window; e.g. 16384)");
    if (o.head_dim < 2 || o.head_dim % 2 != 0 || o.head_dim > kMaxHeadDim)
        throw std::invalid_argument("--head-dim " + std::to_string(o.head_dim) +
                                    " must be an even number from 2 to " +
                                    std::to_string(kMaxHeadDim) + " (e.g. 32, the classroom's)");
    if (!(o.base > 0.0) || !std::isfinite(o.base))
        throw std::invalid_argument("--base must be a finite number > 0 (the paper uses 10000)");
    if (!o.out.empty() && !names_csv(o.out))
        throw std::invalid_argument("--out " + o.out + ": name a .csv file");
    const rf::OutputRule rule{"the rope-precision CSV", {}};
    if (!o.out.empty()) rf::check_output_file(o.out, rule);  // before the work

    rf::RopeGeometry geometry{o.head_dim, o.base, rf::RopePairing::interleaved};
    std::string source;
    rf::RopePrecisionVectors vectors;
    if (!o.run_dir.empty()) {
        vectors = run_vectors(o, geometry, source);
    } else {
        vectors = rf::random_rope_vectors(kRandomGroups, kWindowTokens, o.head_dim, o.seed);
        source = std::to_string(kRandomGroups) + " groups of " + std::to_string(kWindowTokens) +
                 " random unit-variance q and k (seed " + std::to_string(o.seed) + ")";
    }
    const std::vector<size_t> positions = rf::log_spaced_positions(o.max_position);
    const std::vector<rf::RopePrecisionRow> rows = measure_watched(
        vectors, geometry, positions,
        o.out.empty() ? "nothing printed" : "nothing printed, no --out written");
    const std::string table = precision_csv(rows, o.run_dir.empty() ? "random" : "run");
    if (o.out.empty()) {
        std::cout << table;
        return;
    }
    rf::write_output_file(o.out, table, rule);
    std::printf("%s; D = %zu, base %g; %zu shifts up to %zu → wrote %s\n", source.c_str(),
                geometry.head_dim, geometry.base, positions.size(), o.max_position, o.out.c_str());
    print_precision_summary(rows, o.max_position);
}

void add_rope_precision(CLI::App& app) {
    auto options = std::make_shared<RopePrecisionOptions>();
    CLI::App* cmd = app.add_subcommand(
        "rope-precision",
        "How far RoPE's scores move when a window moves to later positions, in f32 and bf16 "
        "(Wang et al. 2024), as CSV");
    cmd->add_option("--run", options->run_dir,
                    "Take q and k from this run's layer (default: random vectors)")
        ->check(rf::cli::non_empty("leave --run out for random vectors"));
    CLI::Option* layer = cmd->add_option("--layer", options->layer, "With --run: the layer whose q and k are used")
        ->check(rf::cli::unsigned_number())
        ->capture_default_str();
    cmd->add_option("--out", options->out,
                    "Write the CSV to FILE.csv (and print a summary) instead of standard output; "
                    "replaces only a file it wrote itself")
        ->check(rf::cli::non_empty("leave --out out to write the CSV to standard output"));
    cmd->add_option("--max-position", options->max_position,
                    "Largest shift p of the window (log-spaced shifts from 0)")
        ->check(rf::cli::unsigned_number())
        ->capture_default_str();
    CLI::Option* seed = cmd->add_option("--seed", options->seed, "Without --run: the random vectors' seed")
        ->check(rf::cli::unsigned_number())
        ->capture_default_str();
    CLI::Option* head_dim = cmd->add_option("--head-dim", options->head_dim, "Without --run: the head size D (even)")
        ->check(rf::cli::unsigned_number())
        ->capture_default_str();
    CLI::Option* base = cmd->add_option("--base", options->base, "Without --run: θ_i = base^(-2i/D)")
        ->check(rf::cli::finite_number())
        ->capture_default_str();
    cmd->callback([options, layer, seed, head_dim, base] {
        options->layer_given = layer->count() > 0;
        options->seed_given = seed->count() > 0;
        options->head_dim_given = head_dim->count() > 0;
        options->base_given = base->count() > 0;
        run_rope_precision(*options);
    });
}

}  // namespace

RF_COMMAND("rope-precision", add_rope_precision);
