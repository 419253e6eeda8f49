// Tests for stage 8 — experiments: the Student t quantiles and p-values (Boost.Math) against a
// printed t table, the paired t-test against closed forms, per-scheme summaries of a hand-made
// curves table, the preset's [compare] table, and a real (seconds-long) comparison: train, skip
// finished runs, resume an interrupted one, then length extrapolation.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/compare.hpp"
#include "experiments/compare_stats.hpp"
#include "experiments/extrapolate.hpp"
#include "run/checkpoint.hpp"
#include "train/trainer.hpp"

namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
    const fs::path dir = fs::path(RF_BINARY_DIR) / "test_tmp" / "compare" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

size_t count_of(const std::string& text, const std::string& part) {
    size_t n = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
}

std::string smoke_preset() { return std::string(RF_SOURCE_DIR) + "/configs/compare_smoke.toml"; }
std::string corpus_override() {
    return "data.path=" + std::string(RF_SOURCE_DIR) + "/data/kjv.txt";
}

}  // namespace

TEST_CASE("compare: Student t quantiles and p-values against a printed t table") {
    // NIST/SEMATECH e-Handbook of Statistical Methods, §1.3.6.7.2 "Critical Values of the
    // Student's t Distribution" (3 decimals): t with P(T > t) = 0.025 and 0.005, for ν =
    // 1, 2, 4, 10, 30. The distribution is Boost.Math's; this checks that we call it right.
    struct Row {
        double df, t_025, t_005;
    };
    const std::vector<Row> table = {{1, 12.706, 63.657},
                                    {2, 4.303, 9.925},
                                    {4, 2.776, 4.604},
                                    {10, 2.228, 3.169},
                                    {30, 2.042, 2.750}};
    for (const Row& row : table) {
        CAPTURE(row.df);
        // the quantile rounds to the printed value (half a unit of the third decimal)
        CHECK(std::abs(rf::student_t_quantile(0.975, row.df) - row.t_025) <= 5e-4);
        CHECK(std::abs(rf::student_t_quantile(0.025, row.df) + row.t_025) <= 5e-4);
        CHECK(std::abs(rf::student_t_quantile(0.995, row.df) - row.t_005) <= 5e-4);
        // and the printed values give back the two-sided 5 % and 1 % (to their rounding)
        CHECK(rf::student_t_two_sided_p(row.t_025, row.df) == doctest::Approx(0.05).epsilon(0.01));
        CHECK(rf::student_t_two_sided_p(-row.t_025, row.df) == doctest::Approx(0.05).epsilon(0.01));
        CHECK(rf::student_t_two_sided_p(row.t_005, row.df) == doctest::Approx(0.01).epsilon(0.01));
    }
    CHECK(rf::student_t_two_sided_p(0.0, 3) == doctest::Approx(1.0));
    CHECK(rf::student_t_two_sided_p(INFINITY, 3) == 0.0);
    CHECK(std::isnan(rf::student_t_two_sided_p(NAN, 3)));
    CHECK_THROWS_AS(rf::student_t_quantile(1.0, 3), std::invalid_argument);
    CHECK_THROWS_AS(rf::student_t_quantile(0.5, 0), std::invalid_argument);
    CHECK_THROWS_AS(rf::student_t_two_sided_p(1.0, -1), std::invalid_argument);
}

TEST_CASE("compare: paired t-test by hand") {
    // d = a − b = {0.5, 1, 1.5}: mean 1, sd 0.5, t = 1 / (0.5/√3) = 2√3, ν = 2, and for ν = 2
    // the two-sided p is 1 − t/√(2 + t²) = 1 − √12/√14.
    const rf::PairedTTest r = rf::paired_t_test({1.0, 2.0, 4.0}, {0.5, 1.0, 2.5});
    CHECK(r.pairs == 3);
    CHECK(r.mean_difference == doctest::Approx(1.0));
    CHECK(r.t == doctest::Approx(2 * std::sqrt(3.0)));
    CHECK(r.p == doctest::Approx(1 - std::sqrt(12.0 / 14.0)));
    // 95 % interval: mean ± t_{0.975, 2} · sd/√3 with t_{0.975, 2} = 4.303 (printed table)
    CHECK(r.ci_low == doctest::Approx(1.0 - 4.303 * 0.5 / std::sqrt(3.0)).epsilon(1e-4));
    CHECK(r.ci_high == doctest::Approx(1.0 + 4.303 * 0.5 / std::sqrt(3.0)).epsilon(1e-4));
    // Swapping the samples flips t, keeps p.
    const rf::PairedTTest swapped = rf::paired_t_test({0.5, 1.0, 2.5}, {1.0, 2.0, 4.0});
    CHECK(swapped.t == doctest::Approx(-r.t));
    CHECK(swapped.p == doctest::Approx(r.p));
    // A constant shift has no noise: p = 0; no difference at all: p = 1.
    CHECK(rf::paired_t_test({1, 2, 3}, {0, 1, 2}).p == 0.0);
    CHECK(rf::paired_t_test({1, 2, 3}, {1, 2, 3}).p == 1.0);
    CHECK(std::isnan(rf::paired_t_test({1}, {2}).p));
    CHECK_THROWS_AS(rf::paired_t_test({1, 2}, {1}), std::invalid_argument);
}

TEST_CASE("compare: steps to a threshold interpolate between validation points") {
    const std::vector<rf::CurvePoint> curve = {{10, 0, 3.0, 0}, {20, 0, 2.0, 0}, {30, 0, 1.5, 0}};
    CHECK(rf::steps_to_threshold(curve, 2.5) == doctest::Approx(15.0));
    CHECK(rf::steps_to_threshold(curve, 1.75) == doctest::Approx(25.0));
    CHECK(rf::steps_to_threshold(curve, 2.0) == doctest::Approx(20.0));
    CHECK(rf::steps_to_threshold(curve, 3.5) ==
          doctest::Approx(10.0));                   // already below at the first point
    CHECK(rf::steps_to_threshold(curve, 1.0) < 0);  // never reached
}

TEST_CASE("compare: summary statistics of a hand-made curves table") {
    // Two validation points per run; final losses per seed 1, 2, 3:
    //   learned 2.0 2.2 2.4   rope 1.9 2.0 2.2   none 3.0 3.1 3.2
    // Rows are deliberately out of order (seed 3 first, steps reversed).
    auto row = [](const char* scheme, size_t seed, size_t step, double loss) {
        return rf::CurveRow{scheme, seed, {step, loss + 0.1, loss, 0.5}};
    };
    std::vector<rf::CurveRow> rows;
    const std::vector<double> learned = {2.0, 2.2, 2.4}, rope = {1.9, 2.0, 2.2},
                              none = {3.0, 3.1, 3.2};
    for (size_t seed = 3; seed >= 1; --seed) {
        rows.push_back(row("learned", seed, 200, learned[seed - 1]));
        rows.push_back(row("learned", seed, 100, learned[seed - 1] + 1.0));
        rows.push_back(row("rope", seed, 200, rope[seed - 1]));
        rows.push_back(row("rope", seed, 100, rope[seed - 1] + 0.2));
        rows.push_back(row("none", seed, 200, none[seed - 1]));
        rows.push_back(row("none", seed, 100, none[seed - 1] + 0.5));
    }
    const rf::ComparisonSummary s = rf::summarize_curves(rows, {"rope", "learned", "none"}, 0.0);

    // Automatic threshold: worst non-`none` mean final loss (learned, 2.2) + 0.1.
    CHECK(s.threshold_automatic);
    CHECK(s.threshold == doctest::Approx(2.3));
    REQUIRE(s.schemes.size() == 3);
    const rf::SchemeSummary &r = s.schemes[0], &l = s.schemes[1], &n = s.schemes[2];
    CHECK(r.scheme == "rope");
    CHECK(r.seeds == std::vector<size_t>{1, 2, 3});
    CHECK(r.final_step == 200);
    CHECK(r.final_loss.mean == doctest::Approx((1.9 + 2.0 + 2.2) / 3));
    // sample std of {1.9, 2.0, 2.2}: mean 2.0333…, squares 0.017778 + 0.001111 + 0.027778 =
    // 0.046667, /2 → √0.023333
    CHECK(r.final_loss.std == doctest::Approx(std::sqrt(0.0466667 / 2)).epsilon(1e-4));
    // rope reaches 2.3 at step 100 for seeds 1, 2 (2.1, 2.2 ≤ 2.3); seed 3 goes 2.4 → 2.2: 100 +
    // 0.1/0.2·100 = 150
    CHECK(r.reached == 3);
    REQUIRE(r.threshold_steps.size() == 3);
    CHECK(r.threshold_steps[0] == doctest::Approx(100.0));
    CHECK(r.threshold_steps[1] == doctest::Approx(100.0));
    CHECK(r.threshold_steps[2] == doctest::Approx(150.0));
    CHECK(r.steps.mean == doctest::Approx(350.0 / 3));
    // learned: 3.0 → 2.0 crosses at 100 + 0.7·100 = 170; 3.2 → 2.2 at 190; 3.4 → 2.4 never
    CHECK(l.reached == 2);
    CHECK(l.steps.mean == doctest::Approx(180.0));
    CHECK(n.reached == 0);
    // rope − learned = {−0.1, −0.2, −0.2}: mean −1/6, sample sd computed directly
    const std::vector<double> d = {-0.1, -0.2, -0.2};
    const double mean = (-0.5) / 3,
                 sd = std::sqrt(
                     ((d[0] - mean) * (d[0] - mean) + 2 * (d[1] - mean) * (d[1] - mean)) / 2);
    REQUIRE(r.has_reference);
    CHECK(r.versus_reference.mean_difference == doctest::Approx(mean));
    CHECK(r.versus_reference.t == doctest::Approx(mean / (sd / std::sqrt(3.0))));
    CHECK_FALSE(l.has_reference);  // the reference itself
    // none − learned = {1, 0.9, 0.8}
    CHECK(n.versus_reference.mean_difference == doctest::Approx(0.9));

    CHECK_FALSE(s.has_pairing_check);  // no rope_interleaved / rope_half in this table

    // The pairing check: rope_interleaved − rope_half paired by seed (seed 4 has no partner).
    std::vector<rf::CurveRow> pairings;
    const std::vector<double> inter = {1.5, 1.7, 1.4}, half = {1.6, 1.6, 1.6};
    for (size_t seed = 1; seed <= 3; ++seed) {
        pairings.push_back(row("rope_interleaved", seed, 100, inter[seed - 1]));
        pairings.push_back(row("rope_half", seed, 100, half[seed - 1]));
    }
    pairings.push_back(row("rope_half", 4, 100, 9.0));
    const rf::ComparisonSummary ps =
        rf::summarize_curves(pairings, {"rope_interleaved", "rope_half"}, 0.0);
    REQUIRE(ps.has_pairing_check);
    CHECK(ps.pairing_check.pairs == 3);
    CHECK(ps.pairing_check.mean_difference == doctest::Approx((-0.1 + 0.1 - 0.2) / 3));
    CHECK(rf::summary_markdown(ps).find("RoPE pairings") != std::string::npos);

    // A fixed threshold is used as given; the markdown names every scheme once per row.
    const rf::ComparisonSummary fixed =
        rf::summarize_curves(rows, {"rope", "learned", "none"}, 2.05);
    CHECK_FALSE(fixed.threshold_automatic);
    CHECK(fixed.schemes[0].reached == 2);  // rope seed 3 ends at 2.2
    const std::string md = rf::summary_markdown(fixed);
    CHECK(count_of(md, "| rope |") == 1);
    CHECK(count_of(md, "| none |") == 1);
    CHECK(md.find("not reached") != std::string::npos);  // none never gets to 2.05
}

TEST_CASE("compare: curves.csv round trip") {
    const fs::path dir = temp_dir("csv");
    const std::vector<rf::CurveRow> rows = {{"alibi", 2, {40, 3.25, 3.125, 0.25}},
                                            {"none", 1, {20, 4.5, 4.0625, 0.125}}};
    rf::write_curves_csv((dir / "curves.csv").string(), rows);
    const auto back = rf::read_curves_csv((dir / "curves.csv").string());
    REQUIRE(back.size() == 2);
    CHECK(back[0].scheme == "alibi");
    CHECK(back[0].seed == 2);
    CHECK(back[0].point.step == 40);
    CHECK(back[0].point.val_loss == 3.125);
    CHECK(back[1].point.val_accuracy == 0.125);
}

TEST_CASE("compare: scheme names and the preset's [compare] table") {
    rf::Config c = rf::default_config();
    rf::apply_comparison_scheme(c, "rope_half");
    CHECK(c.position.scheme == rf::PositionKind::rope);
    CHECK(c.position.pairing == rf::RopePairing::half);
    rf::apply_comparison_scheme(c, "alibi");
    CHECK(c.position.scheme == rf::PositionKind::alibi);
    CHECK_THROWS_WITH_AS(rf::apply_comparison_scheme(c, "rotary"),
                         doctest::Contains("rope_interleaved"), std::invalid_argument);

    const std::string path = std::string(RF_SOURCE_DIR) + "/configs/compare.toml";
    const rf::ComparePreset preset = rf::load_compare_preset(path);
    CHECK(preset.settings.schemes == rf::comparison_schemes());
    CHECK(preset.settings.seeds == 3);
    CHECK(preset.settings.loss_threshold > 0);
    // The other tables mean exactly what they mean to the ordinary config loader.
    const fs::path dir = temp_dir("preset");
    std::string text = read_text(path);
    const size_t begin = text.find("\n[compare]"), end = text.find("\n[model]");
    REQUIRE(begin < end);
    text.erase(begin, end - begin);
    std::ofstream(dir / "plain.toml") << text;
    CHECK(preset.base == rf::load_config((dir / "plain.toml").string()));
    // Every run of every shipped preset validates, and learned's table is exactly the window
    // length (so extrapolation reports "cannot run" for it rather than using untrained rows).
    for (const char* name : {"compare", "compare_long", "compare_smoke", "compare_placement",
                             "compare_placement_long"}) {
        CAPTURE(std::string(name));
        const rf::ComparePreset p =
            rf::load_compare_preset(std::string(RF_SOURCE_DIR) + "/configs/" + name + ".toml");
        for (const std::string& scheme : p.settings.schemes)
            rf::comparison_run_config(p.base, scheme, 2, p.settings.variants);
        CHECK(p.base.position.max_positions == p.base.data.seq_len);
    }

    // Errors name the file, the line and the key.
    std::ofstream(dir / "bad.toml") << "[compare]\nseeds = 2\nrepeats = 4\n";
    const std::string expected = "compare.repeats' in " + (dir / "bad.toml").string() + " (line 3)";
    CHECK_THROWS_WITH(rf::load_compare_preset((dir / "bad.toml").string()),
                      doctest::Contains(expected.c_str()));
    std::ofstream(dir / "bad2.toml") << "[compare]\nseeds = 2\n\n[model]\nhiden = 4\n";
    CHECK_THROWS_WITH(rf::load_compare_preset((dir / "bad2.toml").string()),
                      doctest::Contains("(line 5)"));
}

TEST_CASE("compare: a smoke comparison trains, skips finished runs, resumes an interrupted one") {
    const fs::path dir = temp_dir("smoke");
    rf::ComparePreset preset = rf::load_compare_preset(smoke_preset(), {corpus_override()});
    REQUIRE(preset.settings.schemes.size() == 2);
    REQUIRE(preset.settings.seeds == 2);
    REQUIRE(preset.settings.jobs == 2);  // the first invocation trains in forked processes
    rf::CompareOptions options;
    options.out_dir = (dir / "out").string();
    options.plot = false;
    std::ostringstream log;

    const rf::CompareReport first = rf::run_compare(preset, options, log);
    CHECK(first.trained == 4);
    CHECK(first.skipped == 0);
    const auto rows = rf::read_curves_csv((dir / "out" / "curves.csv").string());
    // every eval_every steps, plus the untrained model at step 0 (the same start for all)
    const size_t evals = preset.base.train.steps / preset.base.train.eval_every + 1;
    CHECK(rows.size() == 4 * evals);
    CHECK(rows.front().point.step == 0);
    const std::string summary = read_text(dir / "out" / "summary.md");
    for (const std::string& scheme : preset.settings.schemes)
        CHECK(count_of(summary, "| " + scheme + " |") == 1);
    CHECK(first.summary.schemes[0].versus_reference.pairs == 2);  // rope vs learned, 2 seeds

    // The same comparison trained in-process, one run at a time, gives identical curves.
    {
        rf::ComparePreset serial = preset;
        serial.settings.jobs = 1;
        rf::CompareOptions serial_options = options;
        serial_options.out_dir = (dir / "serial").string();
        rf::run_compare(serial, serial_options, log);
        CHECK(read_text(dir / "serial" / "curves.csv") == read_text(dir / "out" / "curves.csv"));
    }

    // Again: nothing is retrained (the checkpoints keep their modification times).
    const fs::path model =
        fs::path(rf::comparison_run_dir(options.out_dir, "learned", 2)) / "model.safetensors";
    const auto written = fs::last_write_time(model);
    const rf::CompareReport second = rf::run_compare(preset, options, log);
    CHECK(second.trained == 0);
    CHECK(second.skipped == 4);
    CHECK(fs::last_write_time(model) == written);
    CHECK(rf::read_curves_csv((dir / "out" / "curves.csv").string()).size() == rows.size());

    // An interrupted third scheme is resumed, not restarted; a brand-new seed is trained.
    const rf::Config none = rf::comparison_run_config(preset.base, "none", 1);
    rf::TrainOptions partial;
    partial.out_dir = rf::comparison_run_dir(options.out_dir, "none", 1);
    partial.stop_after = 2;
    partial.quiet = true;
    rf::train(none, partial, log);
    preset.settings.schemes.push_back("none");
    preset.settings.jobs = 1;  // and this one in-process
    const rf::CompareReport third = rf::run_compare(preset, options, log);
    CHECK(third.skipped == 4);
    CHECK(third.resumed == 1);
    CHECK(third.trained == 1);
    CHECK(rf::read_run_curve(partial.out_dir).back().step == preset.base.train.steps);

    // A changed config is refused rather than silently mixed in.
    rf::ComparePreset changed =
        rf::load_compare_preset(smoke_preset(), {corpus_override(), "train.lr=0.002"});
    CHECK_THROWS_WITH(rf::run_compare(changed, options, log),
                      doctest::Contains("different config: train.lr is "));
    CHECK_THROWS_WITH(rf::run_compare(changed, options, log),
                      doctest::Contains(" there but 0.002 now"));

    // Length extrapolation of those runs.
    {
        rf::ExtrapolateOptions ex;
        ex.runs_dir = options.out_dir;
        ex.max_tokens = 600;
        ex.plot = false;
        const auto found = rf::find_comparison_runs(ex.runs_dir);
        REQUIRE(found.size() == 6);
        CHECK(found[0].scheme == "rope_interleaved");  // the comparison's order
        CHECK(found[0].seed == 1);
        const std::vector<rf::ExtrapolationRow> result = rf::run_extrapolation(ex, log);
        const size_t L = preset.base.data.seq_len;
        size_t learned_refused = 0, rope_scaled = 0;
        for (const rf::ExtrapolationRow& r : result) {
            CHECK(r.length == r.factor * L);
            if (r.scheme == "learned" && r.factor > 1) {
                CHECK_FALSE(r.ran);
                CHECK(r.note.find("max_positions") != std::string::npos);
                ++learned_refused;
            } else {
                CHECK(r.ran);
                CHECK(std::isfinite(r.loss));
                CHECK(r.predictions > 0);
            }
            if (r.scheme == "rope_interleaved" && r.method != "plain") ++rope_scaled;
            if (r.scheme == "none") CHECK(r.method == "plain");
        }
        CHECK(learned_refused == 2 * 2);  // 2 seeds × lengths 2L, 4L
        // 2 seeds × 3 lengths × {interpolation, ntk, dynamic_ntk, yarn, llama3}
        CHECK(rope_scaled == 2 * 3 * 5);
        // every scaling really reached the model at 4L: its loss differs from plain's
        auto loss_of = [&](const std::string& method, size_t factor) {
            for (const rf::ExtrapolationRow& r : result)
                if (r.scheme == "rope_interleaved" && r.seed == 1 && r.method == method &&
                    r.factor == factor)
                    return r.loss;
            return -1.0;
        };
        for (const std::string& method : rf::extrapolation_methods())
            if (method != "plain") CHECK(loss_of(method, 4) != loss_of("plain", 4));
        // Run twice: the summary keeps one extrapolation section, after the comparison table.
        rf::run_extrapolation(ex, log);
        const std::string md = read_text(dir / "out" / "summary.md");
        CHECK(count_of(md, "## Length extrapolation") == 1);
        CHECK(md.find("## Final validation loss") < md.find("## Length extrapolation"));
        CHECK(fs::exists(dir / "out" / "extrapolation.csv"));
        // A compare that retrains nothing keeps the extrapolation section.
        rf::run_compare(preset, options, log);
        CHECK(count_of(read_text(dir / "out" / "summary.md"), "## Length extrapolation") == 1);
    }
}
