// One classroom training step on the composed path, with gcov's counters on for that step
// alone: the program behind docs/reading-path.md's "what ran" (tests/reading_path/check.py).
//
//   reading_path_step CONFIG [--set table.key=value …]
//
// Builds everything a step needs (the config with model.fused = false, the data, the model,
// AdamW), then resets the coverage counters, makes training batch 0 (BERT's masking) and runs
// train_step once, and writes the counters. Only the core's files, the masking and the step
// are compiled with --coverage (tests/CMakeLists.txt), so only they can show up as run.
extern "C" {
#include <gcov.h>  // __gcov_reset, __gcov_dump (a C header without extern "C")
}

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "data/prepare.hpp"
#include "run/checkpoint.hpp"
#include "run/threads.hpp"
#include "train/schedule.hpp"
#include "step/train_step.hpp"

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: reading_path_step CONFIG [--set table.key=value …]\n";
        return 2;
    }
    try {
        std::vector<std::string> overrides;
        for (int i = 2; i + 1 < argc; i += 2)
            if (std::string(argv[i]) == "--set") overrides.push_back(argv[i + 1]);
        overrides.push_back("model.fused=false");  // the composed path, the one a student reads
        const rf::Config config = rf::load_config(std::string(argv[1]), overrides);
        const rf::TrainConfig& tc = config.train;
        rf::apply_threading(config);
        std::unique_ptr<rf::data::Tokenizer> tokenizer;
        rf::PreparedData data =
            rf::prepare_data(config.data, tc.batch_size, tokenizer, tc.objective);
        const rf::TrainingBatches batches =
            rf::training_batches(config.data, tc.objective, std::move(data.train_ids),
                                 tokenizer->vocab_size(), tc.seed);
        rf::RoFormer model(rf::resolved_model_config(config, tokenizer->vocab_size()),
                           config.position, tc.seed);
        rf::AdamW optimizer(model.parameters(),
                            rf::AdamWOptions{tc.beta1, tc.beta2, tc.eps, tc.weight_decay});

        const double lr = rf::lr_at(0, tc);  // the loop's schedule, outside the step

        __gcov_reset();  // from here on: the step
        const rf::Batch batch = batches(0, tc.batch_size);
        const rf::StepResult r = rf::train_step(model, optimizer, batch, tc.seed, tc.grad_clip, lr, 0);
        __gcov_dump();

        std::cout << "reading_path_step: one step of " << argv[1] << " (composed), loss "
                  << r.loss << ", ‖g‖ " << r.grad_norm << std::endl;
        std::_Exit(0);  // no destructor runs after the dump: they are not part of the step
    } catch (const std::exception& e) {
        std::cerr << "reading_path_step: " << e.what() << "\n";
        return 1;
    }
}
