// Room — run: a run's config.toml as a reader (eval, fill-mask, export-hf, tokenize, classify, …)
// takes it.
//
// Three keys choose how this machine computes, not what the model is (model.isa, model.products,
// model.precision; eval_time in config_fields): a run trained with model.precision = bf16 on a
// CPU with AVX512_BF16, or model.isa = avx512, is as healthy on a CPU without them. Where this
// process cannot do what such a key names, the reader takes the portable value instead —
// model.precision = fp32, model.isa = auto, model.products = auto — and says so in one note,
// rather than refusing the run. Training and --resume keep the strict rule (validate()): they
// compute in what the config names, or not at all.
#pragma once

#include <string>
#include <vector>

#include "config/config.hpp"

namespace rf {

// defaults → `path` (a run's config.toml) → make_portable → the overrides in order →
// validate(). Each note goes to stderr once per process ("note: …"), or into *notes when given.
Config load_run_config(const std::string& path, const std::vector<std::string>& overrides = {},
                       std::vector<std::string>* notes = nullptr);

}  // namespace rf
