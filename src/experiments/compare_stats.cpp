// Stage 8 — experiments: Student t, paired tests and per-scheme summaries (see compare_stats.hpp).
#include "experiments/compare_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include "tensor/format.hpp"

namespace rf {

// ---- the regularized incomplete beta function ---------------------------------------------
// I_x(a,b) = x^a (1−x)^b / (a·B(a,b)) · 1 / (1 + d₁/(1 + d₂/(1 + …)))   with
//   d_{2m+1} = −(a+m)(a+b+m)·x / ((a+2m)(a+2m+1)),   d_{2m} = m(b−m)·x / ((a+2m−1)(a+2m)).
// The fraction converges fast for x < (a+1)/(a+b+2); above that, I_x(a,b) = 1 − I_{1−x}(b,a).
// Evaluated left to right with the modified Lentz recurrence.
static double beta_continued_fraction(double a, double b, double x) {
    const double tiny = 1e-300, eps = 1e-15;
    auto guard = [&](double v) { return std::abs(v) < tiny ? tiny : v; };
    double f = 1.0, c = 1.0, d = 0.0;  // f = b₀ = 1
    for (int j = 1; j <= 2000; ++j) {
        const int m = j / 2;
        const double dj = (j % 2 == 1)
                              ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
                              : m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
        d = 1.0 / guard(1.0 + dj * d);
        c = guard(1.0 + dj / c);
        f *= c * d;
        if (std::abs(c * d - 1.0) < eps) return f;
    }
    throw std::runtime_error(
        "regularized_incomplete_beta: no convergence for a=" + std::to_string(a) +
        " b=" + std::to_string(b) + " x=" + std::to_string(x));
}

double regularized_incomplete_beta(double a, double b, double x) {
    if (!(a > 0) || !(b > 0))
        throw std::invalid_argument("regularized_incomplete_beta: a and b must be > 0, got a=" +
                                    std::to_string(a) + " b=" + std::to_string(b));
    if (!(x >= 0 && x <= 1))
        throw std::invalid_argument("regularized_incomplete_beta: x must be in [0, 1], got " +
                                    std::to_string(x));
    if (x == 0 || x == 1) return x;
    if (x > (a + 1) / (a + b + 2)) return 1.0 - regularized_incomplete_beta(b, a, 1.0 - x);
    const double log_front =
        a * std::log(x) + b * std::log1p(-x) + std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b);
    return std::exp(log_front) / a / beta_continued_fraction(a, b, x);
}

double student_t_cdf(double t, double df) {
    if (!(df > 0))
        throw std::invalid_argument("student_t_cdf: df must be > 0, got " + std::to_string(df));
    if (std::isnan(t)) return t;
    if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
    // P(|T| > |t|) = I_{ν/(ν+t²)}(ν/2, ½)
    const double tail = regularized_incomplete_beta(df / 2, 0.5, df / (df + t * t));
    return t >= 0 ? 1.0 - tail / 2 : tail / 2;
}

// ---- sample statistics ----------------------------------------------------------------------
MeanStd mean_std(const std::vector<double>& values) {
    MeanStd r;
    r.n = values.size();
    if (r.n == 0) return r;
    for (double v : values) r.mean += v;
    r.mean /= double(r.n);
    if (r.n < 2) return r;
    double ss = 0;
    for (double v : values) ss += (v - r.mean) * (v - r.mean);
    r.std = std::sqrt(ss / double(r.n - 1));
    return r;
}

double student_t_quantile(double p, double df) {
    if (!(p > 0 && p < 1) || !(df > 0))
        throw std::invalid_argument("student_t_quantile: needs 0 < p < 1 and df > 0");
    double lo = -1.0, hi = 1.0;
    while (student_t_cdf(lo, df) > p) lo *= 2;
    while (student_t_cdf(hi, df) < p) hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * std::max(1.0, std::abs(hi)); ++i) {
        const double mid = 0.5 * (lo + hi);
        (student_t_cdf(mid, df) < p ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
}

PairedTTest paired_t_test(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size())
        throw std::invalid_argument("paired_t_test: " + std::to_string(a.size()) + " vs " +
                                    std::to_string(b.size()) + " values; pairs need equal counts");
    std::vector<double> d(a.size());
    for (size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
    const MeanStd m = mean_std(d);
    PairedTTest r;
    r.pairs = d.size();
    r.mean_difference = m.mean;
    if (r.pairs < 2) {
        r.t = r.p = r.ci_low = r.ci_high = std::numeric_limits<double>::quiet_NaN();
        return r;
    }
    const double se = m.std / std::sqrt(double(r.pairs));
    const double half_width = student_t_quantile(0.975, double(r.pairs - 1)) * se;
    r.ci_low = m.mean - half_width;
    r.ci_high = m.mean + half_width;
    if (se == 0) {  // identical differences: no noise to compare with
        r.t = m.mean == 0 ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), m.mean);
        r.p = m.mean == 0 ? 1.0 : 0.0;
        return r;
    }
    r.t = m.mean / se;
    r.p = 2.0 * (1.0 - student_t_cdf(std::abs(r.t), double(r.pairs - 1)));
    return r;
}

double steps_to_threshold(const std::vector<CurvePoint>& curve, double threshold) {
    for (size_t i = 0; i < curve.size(); ++i) {
        if (curve[i].val_loss > threshold) continue;
        if (i == 0) return double(curve[0].step);
        const CurvePoint &before = curve[i - 1], &after = curve[i];
        const double share = (before.val_loss - threshold) / (before.val_loss - after.val_loss);
        return double(before.step) + share * double(after.step - before.step);
    }
    return -1.0;
}

// ---- per-scheme summary ---------------------------------------------------------------------
ComparisonSummary summarize_curves(const std::vector<CurveRow>& rows,
                                   const std::vector<std::string>& schemes, double threshold,
                                   const std::string& reference) {
    // scheme → seed → points in step order
    std::map<std::string, std::map<size_t, std::vector<CurvePoint>>> curves;
    for (const CurveRow& row : rows) curves[row.scheme][row.seed].push_back(row.point);
    for (auto& [scheme, by_seed] : curves)
        for (auto& [seed, points] : by_seed)
            std::sort(points.begin(), points.end(),
                      [](const CurvePoint& x, const CurvePoint& y) { return x.step < y.step; });

    ComparisonSummary out;
    out.reference = reference;
    for (const std::string& scheme : schemes) {
        SchemeSummary s;
        s.scheme = scheme;
        for (const auto& [seed, points] : curves[scheme]) {
            if (points.empty()) continue;
            s.seeds.push_back(seed);
            s.final_val_loss.push_back(points.back().val_loss);
            s.final_accuracy.push_back(points.back().val_accuracy);
            s.final_step = std::max(s.final_step, points.back().step);
        }
        s.final_loss = mean_std(s.final_val_loss);
        s.accuracy = mean_std(s.final_accuracy);
        out.schemes.push_back(s);
    }

    out.threshold = threshold;
    if (threshold <= 0) {
        out.threshold_automatic = true;
        double worst = -std::numeric_limits<double>::infinity();
        for (const SchemeSummary& s : out.schemes)
            if (s.scheme != "none" && s.final_loss.n) worst = std::max(worst, s.final_loss.mean);
        out.threshold = std::isfinite(worst) ? worst + 0.1 : 0.0;
    }

    const SchemeSummary* ref = nullptr;
    const SchemeSummary *interleaved = nullptr, *half = nullptr;
    for (const SchemeSummary& s : out.schemes) {
        if (s.scheme == reference) ref = &s;
        if (s.scheme == "rope_interleaved") interleaved = &s;
        if (s.scheme == "rope_half") half = &s;
    }
    // Pairs the final losses of a and b by seed: only the seeds both have.
    auto paired_finals = [](const SchemeSummary& a, const SchemeSummary& b) {
        std::pair<std::vector<double>, std::vector<double>> out;
        for (size_t i = 0; i < a.seeds.size(); ++i)
            for (size_t j = 0; j < b.seeds.size(); ++j)
                if (a.seeds[i] == b.seeds[j]) {
                    out.first.push_back(a.final_val_loss[i]);
                    out.second.push_back(b.final_val_loss[j]);
                }
        return out;
    };
    if (interleaved && half) {
        const auto [a, b] = paired_finals(*interleaved, *half);
        if (a.size() >= 2) {
            out.has_pairing_check = true;
            out.pairing_check = paired_t_test(a, b);
        }
    }
    for (SchemeSummary& s : out.schemes) {
        std::vector<double> reached;
        for (size_t seed : s.seeds) {
            const double at = steps_to_threshold(curves[s.scheme][seed], out.threshold);
            s.threshold_steps.push_back(at);
            if (at >= 0) reached.push_back(at);
        }
        s.reached = reached.size();
        s.steps = mean_std(reached);
        if (!ref || &s == ref) continue;
        const auto [mine, theirs] = paired_finals(s, *ref);
        if (mine.size() < 2) continue;
        s.has_reference = true;
        s.versus_reference = paired_t_test(mine, theirs);
    }
    return out;
}

// "m ± s" with both numbers in the same printf pattern.
static std::string plus_minus(const char* pattern, double mean, double std) {
    return format_printf(pattern, mean) + " ± " + format_printf(pattern, std);
}

std::string summary_markdown(const ComparisonSummary& summary) {
    std::ostringstream md;
    md << "Validation loss (nats; masked tokens for MLM runs, next tokens for causal LM runs) on the fixed validation set at the final step; mean ± sample "
          "std over seeds. Steps to "
       << format_printf("%.3f", summary.threshold)
       << " nats: the first "
          "validation point at or below it, interpolated linearly with the point before ("
       << (summary.threshold_automatic
               ? "threshold chosen automatically: the worst position scheme's mean final loss + 0.1"
               : "threshold fixed by the preset")
       << "). Versus " << summary.reference
       << ": the mean paired difference of the final loss across seeds with its 95 % interval, "
          "and the paired t-test (two-sided p, ν = seeds − 1).\n\n";
    md << "| scheme | seeds | final val loss | final accuracy | steps to "
       << format_printf("%.3f", summary.threshold) << " | Δ loss vs " << summary.reference
       << " [95 % CI] | t | p |\n";
    md << "|---|---|---|---|---|---|---|---|\n";
    for (const SchemeSummary& s : summary.schemes) {
        md << "| " << s.scheme << " | " << s.seeds.size() << " | ";
        if (s.seeds.empty()) {
            md << "no runs | | | | | |\n";
            continue;
        }
        md << plus_minus("%.4f", s.final_loss.mean, s.final_loss.std) << " | "
           << plus_minus("%.4f", s.accuracy.mean, s.accuracy.std) << " | ";
        if (s.reached == 0)
            md << "not reached";
        else
            md << plus_minus("%.0f", s.steps.mean, s.steps.std)
               << (s.reached < s.seeds.size() ? " (" + std::to_string(s.reached) + "/" +
                                                    std::to_string(s.seeds.size()) + " seeds)"
                                              : "");
        md << " | ";
        if (s.scheme == summary.reference)
            md << "— | — | —";
        else if (!s.has_reference)
            md << "needs ≥ 2 paired seeds | | ";
        else
            md << format_printf("%+.4f", s.versus_reference.mean_difference) << " ["
               << format_printf("%+.4f", s.versus_reference.ci_low) << ", "
               << format_printf("%+.4f", s.versus_reference.ci_high) << "] | "
               << format_printf("%.2f", s.versus_reference.t) << " | "
               << format_printf("%.3g", s.versus_reference.p);
        md << " |\n";
    }
    if (summary.has_pairing_check) {
        const PairedTTest& c = summary.pairing_check;
        md << "\nRoPE pairings (the same model up to a permutation of q/k dimensions, so any difference "
              "must be seed noise): rope_interleaved − rope_half = "
           << format_printf("%+.4f", c.mean_difference) << " nats (95 % CI "
           << format_printf("%+.4f", c.ci_low) << " … " << format_printf("%+.4f", c.ci_high)
           << "), t = " << format_printf("%.2f", c.t) << ", p = " << format_printf("%.3g", c.p)
           << " over " << c.pairs << " seeds.\n";
    }
    return md.str();
}

}  // namespace rf
