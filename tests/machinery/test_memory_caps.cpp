// Tests for stage 7 — config: the memory caps of what a user's input sizes (issue 35's
// "Unbounded"): `roformer attention`'s T² maps and the corpus in training's estimate
// (config/memory_estimate.hpp), the too-short split known before tokenising (data/corpus.hpp),
// and the address space under ulimit -v (issue 57: OpenBLAS's buffer per thread).
#include <doctest/doctest.h>

#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "config/config.hpp"
#include "config/memory_estimate.hpp"
#include "data/corpus.hpp"
#include "error_of.hpp"

namespace {

using rf::testing::contains;
using rf::testing::error_of;

rf::Config tiny() {  // configs/tiny.toml's shape: 2 layers of 2 heads
    return rf::load_config(std::nullopt, {"model.hidden=64", "model.num_heads=2",
                                          "model.num_layers=2", "model.ffn=128",
                                          "data.vocab_size=500"});
}

}  // namespace

TEST_CASE("attention memory: at least every layer's T×T maps, growing with T²") {
    const rf::Config c = tiny();
    for (rf::AttentionOutput out : {rf::AttentionOutput::csv_stdout, rf::AttentionOutput::npy,
                                    rf::AttentionOutput::csv_file, rf::AttentionOutput::json}) {
        // AttentionMaps holds L tensors [H,T,T] of float32 (model/attention_maps.hpp)
        for (double T : {10.0, 1000.0, 10000.0})
            CHECK(rf::attention_bytes(c, T, 4, out) >= 4.0 * 2 * 2 * T * T);
        const double small = rf::attention_bytes(c, 1000, 4, out);
        const double large = rf::attention_bytes(c, 2000, 4, out);
        CHECK(large > 3.5 * small);  // quadratic once the maps dominate the weights
    }
    // each format holds at least the stdout CSV's memory; JSON (a number object per weight)
    // the most
    CHECK(rf::attention_bytes(c, 1000, 4, rf::AttentionOutput::json) >
          rf::attention_bytes(c, 1000, 4, rf::AttentionOutput::npy));
    CHECK(rf::attention_output_of("") == rf::AttentionOutput::csv_stdout);
    CHECK(rf::attention_output_of("a.json") == rf::AttentionOutput::json);
    CHECK(rf::attention_output_of("a.npy") == rf::AttentionOutput::npy);
    CHECK(rf::attention_output_of("a.csv") == rf::AttentionOutput::csv_file);
}

TEST_CASE("attention memory: a text one token over the budget is refused, naming what fits") {
    const rf::Config c = tiny();
    const auto json = rf::AttentionOutput::json;
    const double budget = rf::attention_bytes(c, 3000, 4, json);  // exactly 3000 tokens fit
    CHECK_NOTHROW(rf::check_attention_memory(c, 3000, 4, json, budget));
    CHECK_NOTHROW(rf::check_attention_memory(c, 10, 4, json, budget));
    const std::string over = error_of([&] { rf::check_attention_memory(c, 3001, 4, json, budget); });
    CHECK(contains(over, "attention maps of 3001 tokens need about"));
    CHECK(contains(over, "the longest text that fits is 3000 tokens"));
    CHECK(contains(over, "the limit is"));
    // a huge text is refused on any machine: 10⁶ tokens are 2·2·10¹² float32 weights (16 TB)
    CHECK_THROWS_AS(rf::check_attention_memory(c, 1000000, 4, json), std::invalid_argument);
    // an unknown machine (budget 0) refuses nothing
    CHECK_NOTHROW(rf::check_attention_memory(c, 1000000, 4, json, 0));
}

TEST_CASE("corpus memory: in the training estimate, at least the text, its splits and the ids") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(RF_BINARY_DIR) / "test_tmp" / "memory_caps";
    fs::create_directories(dir);
    const std::string path = (dir / "corpus.txt").string();
    std::ofstream(path) << std::string(100000, 'a');
    rf::Config c = tiny();
    c.data.path = path;
    // by construction: the text, the two splits (as many bytes again) and 4-byte ids, up to one
    // per byte (the char tokenizer on ASCII text): 1 + 1 + 4 bytes per byte
    CHECK(rf::corpus_memory_bytes(c) >= 6.0 * 100000);
    c.data.path = (dir / "missing.txt").string();
    CHECK(rf::corpus_memory_bytes(c) == 0);  // the reader names a missing file
}

TEST_CASE("corpus: a split too short for one window is known from its bytes") {
    // 10 bytes hold at most 10 tokens; seq_len 16 with [CLS]/[SEP] needs 14
    const std::string msg = error_of(
        [] { rf::data::require_window_fits_bytes("c.txt", "validation", 10, 16, 2); });
    CHECK(contains(msg, "its validation split has 10 bytes, so at most 10 tokens"));
    CHECK(contains(msg, "needs 14"));
    CHECK_NOTHROW(rf::data::require_window_fits_bytes("c.txt", "validation", 14, 16, 2));
}

TEST_CASE("address space: an OpenBLAS buffer per thread, and each extra thread's stack and arena") {
    const double one = rf::training_address_space_bytes(0, 1);
    CHECK(one >= rf::kOpenBlasBufferBytes);
    CHECK(rf::training_address_space_bytes(0, 0) == one);  // 0 threads are at least one
    // by construction: per thread a 128 MiB buffer, 64 MiB of malloc arena and a stack
    CHECK(rf::training_address_space_bytes(0, 4) - one >=
          3 * (rf::kOpenBlasBufferBytes + 64.0 * (1 << 20)));
    CHECK(rf::training_address_space_bytes(1e9, 1) - one == doctest::Approx(1e9));
}

TEST_CASE("address space: refused under a ulimit -v that cannot hold it, naming the limit") {
    rlimit before{};
    REQUIRE(getrlimit(RLIMIT_AS, &before) == 0);
    if (before.rlim_cur != RLIM_INFINITY) return;  // the run's own limit: not ours to change
    CHECK(rf::address_space_limit_bytes() == 0);  // none: nothing refused
    CHECK_NOTHROW(rf::check_address_space(1e15, "x", "y", "z"));
    const double mapped = rf::address_space_mapped_bytes();
    REQUIRE(mapped > 0);
    // a soft limit 1 GiB above what is mapped, lowered for this check alone (raised back below:
    // the hard limit stays unlimited)
    rlimit lowered = before;
    lowered.rlim_cur = rlim_t(mapped) + (rlim_t(1) << 30);
    REQUIRE(setrlimit(RLIMIT_AS, &lowered) == 0);
    const double limit = rf::address_space_limit_bytes();
    const double left = limit - rf::address_space_mapped_bytes();
    const double budget = rf::allocation_budget_bytes();
    std::string msg;
    try {
        rf::check_address_space(2.0 * (1 << 30), "this config", "2048 MiB to train",
                                "make it smaller");
    } catch (const std::invalid_argument& e) { msg = e.what(); }
    const bool fits_half = [] {
        try {
            rf::check_address_space(0.5 * (1 << 30), "x", "y", "z");
            return true;
        } catch (const std::invalid_argument&) { return false; }
    }();
    setrlimit(RLIMIT_AS, &before);
    CHECK(limit == double(lowered.rlim_cur));
    CHECK(budget <= left + 1);  // what is left under the limit, not the machine's 80 %
    CHECK(fits_half);
    CHECK(contains(msg, "this config needs about "));
    CHECK(contains(msg, "MiB of address space (2048 MiB to train, beside the "));
    CHECK(contains(msg, "but ulimit -v allows "));
    CHECK(contains(msg, "raise it to at least ulimit -v "));
    CHECK(contains(msg, ", or make it smaller"));
    CHECK(rf::address_space_limit_bytes() == 0);  // raised back
}
