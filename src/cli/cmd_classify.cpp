// Room — cli: `roformer classify`, a fine-tuned run's label and probabilities for a text,
// or its whole test split scored again with the confusion matrix.
//
//   roformer classify --run runs/ft "And Jesus said unto them" ["text b" for a pair task]
//   roformer classify --run runs/ft --test-split [--confusion confusion.csv]
#include <algorithm>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "cli/bounds.hpp"
#include "cli/commands.hpp"
#include "io/csv_quote.hpp"
#include "io/output_file.hpp"
#include "tensor/format.hpp"
#include "finetune/finetune.hpp"
#include "finetune/finetune_progress.hpp"
#include "model/finite_values.hpp"

namespace {

struct ClassifyOptions {
    std::string run;
    std::vector<std::string> texts;
    size_t top = 10;
    bool test_split = false;
    std::string confusion;  // the confusion matrix's CSV (with --test-split)
    size_t max_text_bytes = rf::cli::kDefaultMaxTextBytes;
};

// The confusion CSV: a header of the predicted labels, then one row per true label.
constexpr const char* kConfusionHeader = "true\\predicted,";
rf::OutputRule confusion_rule() {
    return {"the confusion matrix", {}, "move it away or pick another --confusion"};
}

std::string confusion_csv(const rf::ClassificationScore& s, const std::vector<std::string>& labels) {
    std::string out = kConfusionHeader;
    for (size_t k = 0; k < labels.size(); ++k) out += (k ? "," : "") + rf::csv_quoted(labels[k]);
    out += "\n";
    for (size_t t = 0; t < labels.size(); ++t) {
        out += rf::csv_quoted(labels[t]);
        for (size_t p = 0; p < labels.size(); ++p) out += "," + std::to_string(s.confusion[t][p]);
        out += "\n";
    }
    return out;
}

// A model from a fine-tune that has not finished is served with one line on stderr saying so.
void warn_if_unfinished(const std::string& run_dir) {
    const std::string warning = rf::served_model_warning(run_dir);
    if (!warning.empty()) std::fprintf(stderr, "warning: %s\n", warning.c_str());
}

// --test-split: the scores, the matrix printed when it fits a terminal, the CSV when asked.
void score_split(const ClassifyOptions& o) {
    if (!o.texts.empty())
        throw std::invalid_argument("classify: --test-split scores the run's own test split; "
                                    "drop the text, or drop --test-split to classify it");
    if (!o.confusion.empty()) rf::check_output_file(o.confusion, confusion_rule());
    rf::ClassifierRun run = rf::load_classifier_run(o.run);
    warn_if_unfinished(o.run);
    const rf::ClassificationScore s = rf::score_test_split(run, o.run);
    rf::require_finite_output(o.run + ": the test-split loss", s.loss);
    std::printf("test split of %s: %zu examples, model %s\n", run.task.c_str(), s.n,
                run.weights.c_str());
    std::printf("accuracy %s  macro-F1 %s  loss %s\n", rf::format_fixed(s.accuracy, 4).c_str(),
                rf::format_fixed(s.macro_f1, 4).c_str(), rf::format_fixed(s.loss, 4).c_str());
    const size_t K = run.labels.size();
    if (K <= 8) {
        std::printf("confusion (rows: true label, columns: predicted, in this order):\n");
        for (size_t t = 0; t < K; ++t) {
            std::printf("  %-16.16s", run.labels[t].c_str());
            for (size_t p = 0; p < K; ++p) std::printf(" %6zu", s.confusion[t][p]);
            std::printf("\n");
        }
    } else if (o.confusion.empty()) {
        std::printf("(%zu classes: --confusion FILE.csv writes the confusion matrix)\n", K);
    }
    if (!o.confusion.empty()) {
        rf::write_output_file(o.confusion, confusion_csv(s, run.labels), confusion_rule());
        std::printf("confusion matrix: %s\n", o.confusion.c_str());
    }
}

void run_classify(const ClassifyOptions& o) {
    if (o.test_split) return score_split(o);
    if (!o.confusion.empty())
        throw std::invalid_argument("classify: --confusion is written by --test-split; add it");
    if (o.texts.empty() || o.texts.size() > 2)
        throw std::invalid_argument(
            "classify: give one text, or two for a sentence-pair task (got " +
            std::to_string(o.texts.size()) + ")");
    for (size_t i = 0; i < o.texts.size(); ++i)
        rf::cli::check_text_size(o.texts[i], o.max_text_bytes,
                                 o.texts.size() == 1 ? "the text" : i == 0 ? "text a" : "text b");
    rf::ClassifierRun run = rf::load_classifier_run(o.run);
    warn_if_unfinished(o.run);
    const std::vector<double> p =
        rf::classify(run, o.texts[0], o.texts.size() == 2 ? &o.texts[1] : nullptr);
    for (size_t k = 0; k < p.size(); ++k)
        rf::require_finite_output(o.run + ": the probability of '" + run.labels[k] + "'", p[k]);
    std::vector<size_t> order(p.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
    std::printf("label: %s\n", run.labels[order[0]].c_str());
    for (size_t i = 0; i < std::min(o.top, order.size()); ++i)
        std::printf("  %.4f  %s\n", p[order[i]], run.labels[order[i]].c_str());
    if (order.size() > o.top) std::printf("  (%zu more classes)\n", order.size() - o.top);
}

void add_classify(CLI::App& app) {
    auto o = std::make_shared<ClassifyOptions>();
    CLI::App* cmd = app.add_subcommand(
        "classify", "Print a fine-tuned run's label and class probabilities for a text (or pair)");
    cmd->add_option("--run", o->run, "The fine-tune run directory")
        ->required()
        ->check(rf::cli::non_empty("give the --out directory of `roformer finetune`"));
    cmd->add_option("texts", o->texts, "The text, or text a and text b for a pair task");
    cmd->add_option("--top", o->top, "How many classes to list (most probable first)")
        ->check(rf::cli::unsigned_number());
    cmd->add_flag("--test-split", o->test_split,
                  "Score the run's test split again: accuracy, macro-F1, the confusion matrix");
    cmd->add_option("--confusion", o->confusion,
                    "With --test-split: write the confusion matrix as CSV (rows: true label)")
        ->check(rf::cli::non_empty("name a .csv file, or leave --confusion out"));
    rf::cli::add_text_limit(cmd, o->max_text_bytes);
    cmd->callback([o] { run_classify(*o); });
}

}  // namespace

RF_COMMAND("classify", add_classify);
