// Room — experiments: paired tests and per-scheme summaries (see compare_stats.hpp).
#include "experiments/compare_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include <boost/math/distributions/students_t.hpp>

#include "tensor/format.hpp"

namespace rf {

// ---- Student's t: Boost.Math ----------------------------------------------------------------
// The distribution is a library's job; these two only check their arguments, so a bad one is
// our one-line std::invalid_argument, not Boost's domain error.
double student_t_quantile(double p, double df) {
    if (!(p > 0 && p < 1) || !(df > 0))
        throw std::invalid_argument("student_t_quantile: needs 0 < p < 1 and df > 0");
    return boost::math::quantile(boost::math::students_t(df), p);
}

double student_t_two_sided_p(double t, double df) {
    if (!(df > 0))
        throw std::invalid_argument("student_t_two_sided_p: df must be > 0, got " +
                                    std::to_string(df));
    if (std::isnan(t)) return t;
    // the upper tail as Boost's complement: no 1 − F cancellation when p is tiny
    return 2.0 *
           boost::math::cdf(boost::math::complement(boost::math::students_t(df), std::abs(t)));
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
    r.p = student_t_two_sided_p(r.t, double(r.pairs - 1));
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
               ? "threshold chosen automatically: the worst mean final loss among the schemes other than none, + 0.1"
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
