// Room — cli: `roformer generate`, text from a causal LM run (train.objective = clm).
//
//   roformer generate --run runs/classroom_clm "In the beginning" [--max-new-tokens 200]
//                     [--temperature 0.8] [--top-k 40] [--seed 1]
// Prints the prompt, then each sampled token the moment it is chosen (stdout, flushed per
// token); one line about the run and the sampling on stderr. The sampling rule is in
// src/model/generate.hpp. Ctrl-C / SIGTERM stop it after the token being sampled, with one line
// saying how many tokens came (exit 130 / 143; cli/long_work.hpp): the tokens are its progress.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "cli/bounds.hpp"
#include "cli/commands.hpp"
#include "cli/long_work.hpp"
#include "cli/run_checks.hpp"
#include "config/memory_estimate.hpp"
#include "data/stream_decode.hpp"
#include "model/generate.hpp"
#include "tensor/format.hpp"
#include "run/checkpoint.hpp"
#include "run/threads.hpp"

namespace {

struct GenerateOptions {
    std::string run_dir;
    std::string prompt;
    rf::SamplingOptions sampling;
    size_t max_text_bytes = rf::cli::kDefaultMaxTextBytes;
};

// Generation is one forward pass per token: a bound keeps a typo from running for days.
constexpr long long kMaxNewTokens = 100000;

// The library's rule (SamplingOptions::validate) names its fields; say them as this command's
// flags: "top_k must be ≥ 0 …" → "--top-k must be ≥ 0 …".
void validate_flags(const rf::SamplingOptions& sampling) {
    try {
        sampling.validate();
    } catch (const std::invalid_argument& e) {
        std::string message = e.what();
        const size_t field = message.find(' ');
        std::string flag = "--" + message.substr(0, field);
        std::replace(flag.begin(), flag.end(), '_', '-');
        throw std::invalid_argument(flag + message.substr(field));
    }
}

void run_generate(const GenerateOptions& o) {
    validate_flags(o.sampling);  // before the (slower) loading
    if (o.sampling.max_new_tokens > kMaxNewTokens)
        throw std::invalid_argument("--max-new-tokens " +
                                    std::to_string(o.sampling.max_new_tokens) +
                                    " is over the limit of " + std::to_string(kMaxNewTokens) +
                                    "; generate in several calls");
    rf::cli::check_text_size(o.prompt, o.max_text_bytes, "the prompt");
    const rf::DirectoryState state = rf::require_model_run(o.run_dir, "--run");
    rf::LoadedRun run = rf::load_run(o.run_dir);
    rf::state_unfinished(state, o.run_dir, run.step);
    rf::cli::require_objective(run.config, o.run_dir, rf::data::Objective::clm);
    rf::apply_threading(run.config);
    const std::vector<int> prompt = run.tokenizer->encode(o.prompt);
    if (prompt.empty())
        throw std::invalid_argument(
            "the prompt is empty; give some text to continue, e.g. \"In the beginning\"");
    const size_t context = rf::cli::generation_context(run.config, *run.model);
    rf::check_evaluation_memory(run.config, 1, context,
                                "generate's window of " + std::to_string(context) + " tokens",
                                "generate from a run trained with a smaller data.seq_len");
    std::fprintf(
        stderr,
        "%s (step %zu): %zu prompt tokens, context %zu, temperature %s, top-k %lld, seed %llu\n",
        o.run_dir.c_str(), run.step, prompt.size(), context,
        rf::format_shortest(o.sampling.temperature).c_str(), o.sampling.top_k,
        static_cast<unsigned long long>(o.sampling.seed));
    std::fputs(o.prompt.c_str(), stdout);
    std::fflush(stdout);
    rf::data::StreamDecoder decoder(*run.tokenizer, prompt);
    rf::cli::LongWork work("generate");
    struct Stopped {};
    long long generated = 0;
    try {
        rf::generate(*run.model, prompt, context, o.sampling, [&](int id) {
            std::fputs(decoder.push(id).c_str(), stdout);
            std::fflush(stdout);  // show each token as soon as it is sampled
            ++generated;
            if (work.stop_signal()) throw Stopped{};
        });
    } catch (const Stopped&) {
        std::fputs((decoder.finish() + "\n").c_str(), stdout);
        work.exit_stopped("after " + std::to_string(generated) + " of " +
                              std::to_string(o.sampling.max_new_tokens) + " tokens",
                          "the text above is what it generated");
    } catch (const std::runtime_error& e) {  // non-finite logits (model/finite_values.hpp)
        std::fputs("\n", stdout);              // the error line starts on a line of its own
        throw std::runtime_error(o.run_dir + ": " + e.what());
    }
    std::fputs((decoder.finish() + "\n").c_str(), stdout);
}

void add_generate(CLI::App& app) {
    auto options = std::make_shared<GenerateOptions>();
    rf::SamplingOptions& s = options->sampling;
    CLI::App* cmd = app.add_subcommand(
        "generate", "Continue a prompt with a causal LM run (train.objective = clm)");
    cmd->add_option("--run", options->run_dir, "Run directory from `roformer train`")->required();
    cmd->add_option("prompt", options->prompt, "The text to continue")->required();
    cmd->add_option("--max-new-tokens", s.max_new_tokens, "Tokens to generate")
        ->check(rf::cli::integer_number())
        ->capture_default_str();
    cmd->add_option("--temperature", s.temperature,
                    "Softmax temperature; 0 = greedy (always the most likely token)")
        ->capture_default_str();
    cmd->add_option("--top-k", s.top_k, "Sample among the k most likely tokens; 0 = no limit")
        ->check(rf::cli::integer_number())
        ->capture_default_str();
    cmd->add_option("--seed", s.seed, "Seed of the sampling")
        ->check(rf::cli::unsigned_number())
        ->capture_default_str();
    rf::cli::add_text_limit(cmd, options->max_text_bytes);
    cmd->callback([options] { run_generate(*options); });
}

}  // namespace

RF_COMMAND("generate", add_generate);
