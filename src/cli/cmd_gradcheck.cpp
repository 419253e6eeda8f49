// Room — cli: `roformer gradcheck`, a live central-difference check of one op in float32.
//
//   roformer gradcheck [--op rope|gelu|layer_norm|softmax|matmul] [--pairing interleaved|half]
//                      [--base 10000] [--seed 0] [--dim 8] [--seq 4] [--heads 1] [--offset 0]
//                      [--format table|csv] [--tol 1e-3] [--break-sin-sign]
//
// Legend: T = --seq rows (positions), D = --dim columns (head size for rope), H = --heads.
// Shapes per op:  rope x:[1,H,T,D]   gelu, softmax x:[T,D]   layer_norm x:[T,D] γ,β:[D]
//                 matmul a:[T,D] b:[D,T]
// Sizes: T·D·H ≤ 4096 elements, and T·T ≤ 4096 for matmul (its output), so every check
// stays a live demo (the largest, timed: docs/timing.md, "Commands without training steps").
// rope's table holds every position from 0 to offset + T − 1 (position/rope.hpp): at most
// 2^24 angles (offset + T)·D/2, and no more than memory and ulimit -v leave (issue 57: an
// --offset of 10^9 filled gigabytes for minutes before the check began).
//
// The check, for a fixed random R of the output's shape and L = Σ out ⊙ R (summed in double):
//   analytic  = what out.backward(R) leaves in each input's grad
//   numeric   = (L(x + h e_j) − L(x − h e_j)) / ((x + h) − (x − h)),  h = 1e-2 · max(1, |x_j|)
// for EVERY element j, one at a time. The denominator is the difference of the two float
// values actually stored, not 2h. In float32, h must be large (the rounding error of L is
// divided by h) and the error is reported as |analytic − numeric| / max(1, |numeric|).
// The rigorous double-precision checks live in tests/gradcheck/; this command is for watching
// one run live (notebooks/02_autograd_and_gradcheck.ipynb).
// --break-sin-sign (rope only) checks rf::rope_with_broken_backward (ropelab/rope_variants.hpp):
// a backward that turns dy by the forward's angles, the sines' sign not flipped — the classic
// RoPE backward bug — to show what a failure looks like.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/bounds.hpp"
#include "cli/commands.hpp"
#include "cli/long_work.hpp"
#include "config/memory_estimate.hpp"
#include "ops/ops.hpp"
#include "position/rope.hpp"
#include "ropelab/rope_variants.hpp"
#include "tensor/format.hpp"
#include "tensor/random.hpp"

namespace {

// Angles in rope's table: (--offset + --seq) positions × --dim / 2 (about a second to fill).
constexpr size_t kMaxTableAngles = size_t(1) << 24;

using rf::Real;
using rf::Shape;
using rf::Tensor;

struct GradcheckCommandOptions {
    std::string op = "rope";
    std::string pairing = "interleaved";
    double base = 10000.0;
    uint64_t seed = 0;
    size_t dim = 8;
    size_t seq = 4;
    size_t heads = 1;
    size_t offset = 0;
    std::string format = "table";
    double tolerance = 1e-3;
    bool break_sin_sign = false;
};

// One input of the op under test: its name (printed) and the tensor.
struct NamedInput {
    std::string name;
    Tensor tensor;
};

// The op as a function of its inputs.
struct OpUnderTest {
    std::vector<NamedInput> inputs;
    std::function<Tensor(const std::vector<Tensor>&)> forward;
};

Tensor random_tensor(const Shape& shape, rf::Rng& rng) {
    Tensor t = Tensor::zeros(shape, true);
    for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<Real>(rng.normal());
    return t;
}

OpUnderTest make_op(const GradcheckCommandOptions& o, rf::Rng& rng,
                    std::shared_ptr<rf::RopeTable>& table) {
    const size_t T = o.seq, D = o.dim;
    OpUnderTest t;
    if (o.op == "rope") {
        rf::RopeOptions ro;
        ro.pairing = rf::parse_rope_pairing(o.pairing);
        ro.head_dim = D;
        ro.rotary_dims = D;
        ro.base = o.base;
        rf::validate_rope_options(ro);  // throws on an odd --dim or bad --base
        table = std::make_shared<rf::RopeTable>(ro);
        t.inputs = {{"x", random_tensor({1, o.heads, T, D}, rng)}};
        const size_t offset = o.offset;
        const bool broken = o.break_sin_sign;
        t.forward = [table, offset, broken](const std::vector<Tensor>& in) {
            return broken ? rf::rope_with_broken_backward(in[0], *table, offset)
                          : rf::rope(in[0], *table, offset);
        };
    } else if (o.op == "gelu") {
        t.inputs = {{"x", random_tensor({T, D}, rng)}};
        t.forward = [](const std::vector<Tensor>& in) { return rf::gelu(in[0]); };
    } else if (o.op == "softmax") {
        t.inputs = {{"x", random_tensor({T, D}, rng)}};
        t.forward = [](const std::vector<Tensor>& in) { return rf::softmax(in[0]); };
    } else if (o.op == "layer_norm") {
        t.inputs = {{"x", random_tensor({T, D}, rng)},
                    {"gamma", random_tensor({D}, rng)},
                    {"beta", random_tensor({D}, rng)}};
        t.forward = [](const std::vector<Tensor>& in) {
            return rf::layer_norm(in[0], in[1], in[2], Real(1e-5));
        };
    } else if (o.op == "matmul") {
        t.inputs = {{"a", random_tensor({T, D}, rng)}, {"b", random_tensor({D, T}, rng)}};
        t.forward = [](const std::vector<Tensor>& in) { return rf::matmul(in[0], in[1]); };
    } else {
        throw std::invalid_argument("--op " + o.op +
                                    " is unknown; use rope, gelu, layer_norm, softmax or matmul");
    }
    if (o.break_sin_sign && o.op != "rope")
        throw std::invalid_argument("--break-sin-sign only applies to --op rope");
    return t;
}

// "2:5" for the multi-index of flat element j in `shape` (row-major).
std::string coords_of(size_t j, const Shape& shape) {
    std::vector<size_t> idx(shape.size());
    for (size_t a = shape.size(); a-- > 0;) {
        idx[a] = j % shape[a];
        j /= shape[a];
    }
    std::string s;
    for (size_t a = 0; a < idx.size(); ++a) s += (a ? ":" : "") + std::to_string(idx[a]);
    return s;
}

// rope's table, checked before it is filled: positions 0 … offset + T − 1, D/2 angles each (a
// cos and a sin per angle), within kMaxTableAngles and what memory and ulimit -v leave.
void check_table_size(const GradcheckCommandOptions& o) {
    const size_t half = std::max<size_t>(1, o.dim / 2);
    const size_t largest_offset = kMaxTableAngles / half - std::min(kMaxTableAngles / half, o.seq);
    if (o.offset > largest_offset)
        throw std::invalid_argument(
            "--offset " + std::to_string(o.offset) + " is over the limit of " +
            std::to_string(largest_offset) + " at --dim " + std::to_string(o.dim) + " and --seq " +
            std::to_string(o.seq) + ": rope's table holds every position from 0 (" +
            std::to_string(kMaxTableAngles) + " angles at most, (offset + seq) × dim/2); "
            "use a smaller --offset or --dim");
    const double bytes = 2.0 * double(o.offset + o.seq) * double(half) * sizeof(Real);
    const double budget = rf::allocation_budget_bytes();
    if (budget > 0 && bytes > budget) {
        const double machine = rf::memory_budget_bytes();
        const bool ulimit =
            rf::address_space_limit_bytes() > 0 && !(machine > 0 && budget >= machine);
        const size_t fits = size_t(budget / (2.0 * double(half) * sizeof(Real)));
        throw std::invalid_argument(
            "--offset " + std::to_string(o.offset) + ": rope's table of " +
            std::to_string(o.offset + o.seq) + " positions needs " +
            rf::format_fixed(bytes / double(1 << 20), 0) + " MiB but " +
            (ulimit ? "ulimit -v leaves " : "80 % of this machine's memory is ") +
            rf::format_fixed(budget / double(1 << 20), 0) + " MiB; keep --offset below " +
            std::to_string(fits > o.seq ? fits - o.seq : 0) +
            (ulimit ? " or raise ulimit -v" : ""));
    }
}

void run_gradcheck(const GradcheckCommandOptions& o) {
    if (o.dim < 1 || o.seq < 1 || o.heads < 1)
        throw std::invalid_argument("--dim, --seq and --heads must be at least 1");
    // Multiplied without wrapping: --dim 4294967296 --seq 4294967296 must not pass as 0.
    rf::cli::bounded_product({o.dim, o.seq, o.heads}, 4096,
                             "--dim × --seq × --heads is over 4096 elements; this is a live "
                             "demo, keep it small (e.g. --dim 8 --seq 4)");
    // matmul's product is [T, T]: each of its 2·T·D inputs reruns it twice, so its cost grows
    // as T³·D², not with the inputs alone (T = 4096, D = 1 ran for over ten minutes).
    if (o.op == "matmul")
        rf::cli::bounded_product({o.seq, o.seq}, 4096,
                                 "--op matmul: --seq × --seq is over 4096 elements (the "
                                 "product a·b is [T, T] and every input element reruns it "
                                 "twice); keep --seq ≤ 64");
    if (o.op == "rope") check_table_size(o);
    if (!std::isfinite(o.base) || !std::isfinite(o.tolerance) || !(o.tolerance > 0))
        throw std::invalid_argument("--base and --tol must be finite numbers (--tol > 0)");
    if (o.format != "table" && o.format != "csv")
        throw std::invalid_argument("--format " + o.format + " is unknown; use table or csv");
    if (!(o.tolerance > 0.0)) throw std::invalid_argument("--tol must be > 0 (e.g. 1e-3)");
    if (o.op == "rope" && o.dim % 2 != 0)
        throw std::invalid_argument("--dim " + std::to_string(o.dim) +
                                    " must be even for rope (RoPE rotates pairs of dims)");
    if (o.op == "rope" && o.pairing != "interleaved" && o.pairing != "half")
        throw std::invalid_argument("--pairing " + o.pairing +
                                    " is unknown; use interleaved or half");

    rf::cli::LongWork work("gradcheck");  // progress, and a stop line on Ctrl-C / SIGTERM
    rf::Rng rng(o.seed);
    std::shared_ptr<rf::RopeTable> table;
    OpUnderTest op = make_op(o, rng, table);
    std::vector<Tensor> inputs;
    for (auto& in : op.inputs) inputs.push_back(in.tensor);

    // Analytic: out.backward(R) gives dL/dinput for L = Σ out ⊙ R.
    Tensor out = op.forward(inputs);
    rf::Array R = rf::Array::from_shape(out.value().shape());
    for (auto& r : R) r = static_cast<Real>(rng.normal());
    for (auto& x : inputs) x.zero_grad();
    out.backward(R);

    auto loss = [&]() {
        rf::NoGradGuard no_grad;
        const Tensor y = op.forward(inputs);
        double total = 0.0;
        for (size_t i = 0; i < y.numel(); ++i)
            total += static_cast<double>(y.data()[i]) * static_cast<double>(R.data()[i]);
        return total;
    };

    const bool csv = o.format == "csv";
    if (csv)
        std::printf("tensor,element,coords,analytic,numeric,abs_error,rel_error\n");
    else
        std::printf("%-6s %7s %-9s %13s %13s %10s %10s\n", "tensor", "element", "coords",
                    "analytic", "numeric", "abs_error", "rel_error");
    double worst = 0.0;
    std::string worst_where;
    size_t checked = 0, failures = 0, total = 0;
    for (const Tensor& x : inputs) total += x.numel();
    for (size_t k = 0; k < inputs.size(); ++k) {
        Tensor& x = inputs[k];
        const rf::Array analytic = x.grad();
        for (size_t j = 0; j < x.numel(); ++j) {
            if (work.stop_signal()) {
                std::fflush(stdout);
                work.exit_stopped("after " + std::to_string(checked) + " of " +
                                      std::to_string(total) + " elements",
                                  "the rows above are those checked, no summary");
            }
            if (work.due())
                work.show(std::to_string(checked) + " of " + std::to_string(total) +
                          " elements checked");
            const Real saved = x.data()[j];
            const Real h = static_cast<Real>(1e-2 * std::max(1.0, std::abs(double(saved))));
            const Real x_plus = saved + h, x_minus = saved - h;
            x.data()[j] = x_plus;
            const double plus = loss();
            x.data()[j] = x_minus;
            const double minus = loss();
            x.data()[j] = saved;
            const double numeric = (plus - minus) / (double(x_plus) - double(x_minus));
            const double a = analytic.data()[j];
            const double abs_error = std::abs(a - numeric);
            double rel_error = abs_error / std::max(1.0, std::abs(numeric));
            if (std::isnan(rel_error)) rel_error = INFINITY;
            const std::string where = coords_of(j, x.shape());
            ++checked;
            if (rel_error > o.tolerance) ++failures;
            if (rel_error > worst || worst_where.empty()) {
                worst = rel_error;
                worst_where = op.inputs[k].name + "[" + where + "]";
            }
            std::printf(csv ? "%s,%zu,%s,%.8g,%.8g,%.3g,%.3g\n"
                            : "%-6s %7zu %-9s %13.7f %13.7f %10.2e %10.2e\n",
                        op.inputs[k].name.c_str(), j, where.c_str(), a, numeric, abs_error,
                        rel_error);
        }
    }
    char label[96] = "";
    if (o.op == "rope")
        std::snprintf(label, sizeof label, " (%s, base %g%s)", o.pairing.c_str(), o.base,
                      o.break_sin_sign ? ", sin sign broken on purpose" : "");
    std::printf(
        "%ssummary: op %s%s, %zu elements, max rel_error %.3g at %s, "
        "%zu above tol %.1e: %s\n",
        csv ? "# " : "", o.op.c_str(), label, checked, worst, worst_where.c_str(), failures,
        o.tolerance, failures == 0 ? "PASS" : "FAIL");
    std::fflush(stdout);
    if (failures > 0)
        throw std::runtime_error("gradient check failed: " + std::to_string(failures) + " of " +
                                 std::to_string(checked) + " elements have rel_error above --tol");
}

void add_gradcheck(CLI::App& app) {
    auto options = std::make_shared<GradcheckCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "gradcheck",
        "Check one op's backward against central differences, element by element "
        "(float32, live)");
    cmd->add_option("--op", options->op, "rope | gelu | layer_norm | softmax | matmul")
        ->capture_default_str();
    cmd->add_option("--pairing", options->pairing, "RoPE pairing: interleaved | half")
        ->capture_default_str();
    cmd->add_option("--base", options->base, "RoPE base: theta_i = base^(-2i/r), r = --dim (every dim rotated)")
        ->capture_default_str();
    cmd->add_option("--seed", options->seed, "Seed of the random input and of R")
        ->check(rf::cli::unsigned_number())
        ->capture_default_str();
    cmd->add_option("--dim", options->dim, "Columns D (the head size for rope, even)")
        ->check(rf::cli::unsigned_number())
        ->capture_default_str();
    cmd->add_option("--seq", options->seq, "Rows T (positions for rope)")
        ->check(rf::cli::unsigned_number())
        ->capture_default_str();
    cmd->add_option("--heads", options->heads, "Heads H (rope only: x is [1, H, T, D])")
        ->check(rf::cli::unsigned_number())
        ->capture_default_str();
    cmd->add_option("--offset", options->offset,
                    "First position (rope only; its table holds (offset + seq) × dim/2 ≤ 2^24 "
                    "angles)")
        ->check(rf::cli::unsigned_number())
        ->capture_default_str();
    cmd->add_option("--format", options->format, "table | csv (summary as a final '# ' line)")
        ->capture_default_str();
    cmd->add_option("--tol", options->tolerance,
                    "Fail (exit 2) if any |analytic - numeric| / max(1, |numeric|) exceeds this")
        ->capture_default_str();
    cmd->add_flag("--break-sin-sign", options->break_sin_sign,
                  "rope only: use the forward's sin sign in the backward (a deliberate bug)");
    cmd->callback([options] { run_gradcheck(*options); });
}

}  // namespace

RF_COMMAND("gradcheck", add_gradcheck);
