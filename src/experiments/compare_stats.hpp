// Room — experiments: the statistics behind the comparison's summary.md.
//
// Legend: S seeds (paired samples), ν = S − 1 degrees of freedom, F_ν Student's t CDF
//   (from Boost.Math, boost::math::students_t: a library where one is made for the job).
//   Paired t-test:  d_s = a_s − b_s,  t = mean(d) / (sd(d) / √S),  p = 2 (1 − F_ν(|t|)).
//   Steps to a threshold: the first validation point at or below it, linearly interpolated
//     with the point before (so "crossed between 300 and 400" reads as e.g. 342).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace rf {

// Student's t with `df` > 0 degrees of freedom (Boost.Math; std::invalid_argument on bad
// arguments). The quantile: the t with P(T ≤ t) = p, for 0 < p < 1.
double student_t_quantile(double p, double df);
// The two-sided p-value P(|T| ≥ |t|) = 2 (1 − F_ν(|t|)); NaN for a NaN t, 0 for an infinite one.
double student_t_two_sided_p(double t, double df);

struct MeanStd {
    double mean = 0, std = 0;  // std: sample standard deviation (n − 1); 0 for n < 2
    size_t n = 0;
};
MeanStd mean_std(const std::vector<double>& values);

struct PairedTTest {
    double mean_difference = 0;  // mean of a − b
    // 95 % interval of the mean difference: mean ± t_{0.975, ν}·sd/√S (NaN with < 2 pairs)
    double ci_low = 0, ci_high = 0;
    double t = 0;  // ±inf when every difference is the same nonzero value
    double p = 1;  // two-sided; NaN when fewer than 2 pairs
    size_t pairs = 0;
};
// Throws std::invalid_argument when the sizes differ.
PairedTTest paired_t_test(const std::vector<double>& a, const std::vector<double>& b);

// One validation point of one run.
struct CurvePoint {
    size_t step = 0;
    double train_loss = 0, val_loss = 0, val_accuracy = 0;
};

// One row of curves.csv: a scheme, a seed, and a validation point.
struct CurveRow {
    std::string scheme;
    size_t seed = 0;
    CurvePoint point;
};

// The interpolated step at which `curve` (ascending steps) first reaches val_loss ≤ threshold;
// a negative value when it never does.
double steps_to_threshold(const std::vector<CurvePoint>& curve, double threshold);

// Per scheme, over seeds. Schemes appear in the order of `schemes`.
struct SchemeSummary {
    std::string scheme;
    std::vector<size_t> seeds;           // ascending
    std::vector<double> final_val_loss;  // per seed: val_loss at the last step
    std::vector<double> final_accuracy;
    std::vector<double> threshold_steps;  // per seed; negative = never reached
    size_t final_step = 0;
    MeanStd final_loss, accuracy, steps;  // steps: over the seeds that reached the threshold
    size_t reached = 0;                   // seeds that reached the threshold
    bool has_reference = false;           // a paired test against the reference was possible
    PairedTTest versus_reference;         // final val loss: this scheme − reference
};

struct ComparisonSummary {
    double threshold = 0;
    bool threshold_automatic = false;
    std::string reference;  // the scheme every other is tested against
    std::vector<SchemeSummary> schemes;
    // rope_interleaved − rope_half, paired by seed (both present with ≥ 2 common seeds): the
    // two pairings are the same model up to a permutation, so this must be noise.
    bool has_pairing_check = false;
    PairedTTest pairing_check;
};

// threshold ≤ 0: automatic — the highest mean final validation loss among the schemes other
// than `none`, plus 0.1 nats (so every position scheme reaches it and the steps measure speed).
ComparisonSummary summarize_curves(const std::vector<CurveRow>& rows,
                                   const std::vector<std::string>& schemes, double threshold,
                                   const std::string& reference = "learned");

// The markdown table(s) of summary.md, without a title.
std::string summary_markdown(const ComparisonSummary& summary);

}  // namespace rf
