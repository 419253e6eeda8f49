// Room — cli: `roformer rope-decay`, the RoFormer paper's long-range decay curve as CSV.
//
//   roformer rope-decay --dim 64 --base 10000 --max-distance 256 [--step 1]
// prints `distance,bound` for distance = 0, step, 2·step, … ≤ max-distance, where bound is
// rope_decay_bound (src/ropelab/rope_decay.hpp). Plot it to redraw the paper's Fig. 2.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "cli/bounds.hpp"
#include "cli/commands.hpp"
#include "ropelab/rope_decay.hpp"
#include "tensor/format.hpp"

namespace {

struct RopeDecayOptions {
    int64_t dim = 128;
    double base = 10000.0;
    double max_distance = 256.0;
    double step = 1.0;
};

// Each row sums dim/2 terms: the limit keeps a row cheap (and rows × dim bounded below).
constexpr int64_t kMaxDim = 65536;

void run_rope_decay(const RopeDecayOptions& o) {
    if (o.dim < 2 || o.dim % 2 != 0 || o.dim > kMaxDim)
        throw std::invalid_argument("--dim " + std::to_string(o.dim) +
                                    " must be an even number from 2 to " + std::to_string(kMaxDim) +
                                    " (RoPE rotates pairs of dims; heads are 64 or 128)");
    if (!std::isfinite(o.base))
        throw std::invalid_argument("--base must be a finite number > 0 (the paper uses 10000)");
    if (!(o.base > 0.0)) throw std::invalid_argument("--base must be > 0 (the paper uses 10000)");
    if (!(o.max_distance >= 0.0) || !std::isfinite(o.max_distance))
        throw std::invalid_argument("--max-distance must be a finite number ≥ 0");
    // A base so small that an angle Δ·θ is inf would print nan rows: refused before any row.
    const double smallest =
        rf::rope_decay_smallest_base(static_cast<size_t>(o.dim), o.max_distance);
    if (o.base < smallest)
        throw std::invalid_argument(
            "--base " + rf::format_shortest(o.base) + " makes θ_i = base^(-2i/" +
            std::to_string(o.dim) +
            ") so large that distance × θ overflows a double (inf, every "
            "bound nan); with --dim " +
            std::to_string(o.dim) + " and --max-distance " + rf::format_shortest(o.max_distance) +
            " give --base ≥ " + rf::format_printf("%.3g", smallest) + " (the paper uses 10000)");
    if (!(o.step > 0.0) || !std::isfinite(o.step))
        throw std::invalid_argument("--step must be > 0 (e.g. 1)");
    const double count = std::floor(o.max_distance / o.step + 1e-9);
    if (count * double(o.dim) > 1e9)
        throw std::invalid_argument(
            "--max-distance / --step × --dim asks for more than 10⁹ terms; raise --step or "
            "lower --dim");
    if (count > 1e7)
        throw std::invalid_argument(
            "--max-distance / --step asks for more than 10 million rows; "
            "raise --step");

    std::printf("distance,bound\n");
    for (int64_t k = 0; k <= static_cast<int64_t>(count); ++k) {
        const double distance = static_cast<double>(k) * o.step;
        std::printf("%.10g,%.6f\n", distance,
                    rf::rope_decay_bound(static_cast<size_t>(o.dim), o.base, distance));
    }
}

void add_rope_decay(CLI::App& app) {
    auto options = std::make_shared<RopeDecayOptions>();
    CLI::App* cmd = app.add_subcommand(
        "rope-decay", "Print the RoPE long-range decay bound (paper Fig. 2) as CSV distance,bound");
    cmd->add_option("--dim", options->dim, "Rotary dims r (even; the head size when every dim is rotated)")
        ->check(rf::cli::integer_number())
        ->capture_default_str();
    cmd->add_option("--base", options->base, "Frequency base: theta_i = base^(-2i/r)")
        ->capture_default_str();
    cmd->add_option("--max-distance", options->max_distance, "Largest relative distance m - n")
        ->check(rf::cli::integer_number())
        ->capture_default_str();
    cmd->add_option("--step", options->step, "Distance increment")
        ->check(rf::cli::integer_number())
        ->capture_default_str();
    cmd->callback([options] { run_rope_decay(*options); });
}

}  // namespace

RF_COMMAND("rope-decay", add_rope_decay);
