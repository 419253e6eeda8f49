// Stage 9 — cli: `roformer classify`, a fine-tuned run's label and probabilities for a text.
//
//   roformer classify --run runs/ft "And Jesus said unto them" ["text b" for a pair task]
#include <algorithm>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "cli/bounds.hpp"
#include "cli/commands.hpp"
#include "train/finetune.hpp"

namespace {

struct ClassifyOptions {
    std::string run;
    std::vector<std::string> texts;
    size_t top = 10;
};

void run_classify(const ClassifyOptions& o) {
    if (o.texts.empty() || o.texts.size() > 2)
        throw std::invalid_argument(
            "classify: give one text, or two for a sentence-pair task (got " +
            std::to_string(o.texts.size()) + ")");
    rf::ClassifierRun run = rf::load_classifier_run(o.run);
    const std::vector<double> p =
        rf::classify(run, o.texts[0], o.texts.size() == 2 ? &o.texts[1] : nullptr);
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
    cmd->add_option("--run", o->run, "The fine-tune run directory")->required();
    cmd->add_option("texts", o->texts, "The text, or text a and text b for a pair task")
        ->required();
    cmd->add_option("--top", o->top, "How many classes to list (most probable first)")
        ->check(rf::cli::unsigned_number());
    cmd->callback([o] { run_classify(*o); });
}

}  // namespace

RF_COMMAND("classify", add_classify);
