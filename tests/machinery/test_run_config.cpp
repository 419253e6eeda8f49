// A run's config.toml as a reader takes it (run/run_config.hpp): the keys that choose this
// CPU's instructions are read portably where this process cannot honour them, with one note
// each; the keys that define the model, and what the user asks for with --set, are not.
// Processes on a CPU without them (RF_MAX_CPU_ISA): tests/machinery/cli_portable_run.sh.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "error_of.hpp"
#include "fast/onednn_bf16_products.hpp"
#include "fast/onednn_products.hpp"
#include "fast/simd.hpp"
#include "run/run_config.hpp"

using namespace rf;
using rf::testing::contains;
using rf::testing::error_of;
namespace fs = std::filesystem;

TEST_CASE("run config: model.precision and model.isa this CPU lacks are read portably, noted") {
    FastConfig model = default_config().fast;
    model.precision = Precision::bf16;
    model.isa = SimdIsa::avx512;
    const std::vector<std::string> notes = make_portable(model);
    const bool bf16 = bf16_unavailable().empty(), avx512 = cpu_supports(SimdIsa::avx512);
    CHECK(notes.size() == size_t(!bf16) + size_t(!avx512));
    CHECK(model.precision == (bf16 ? Precision::bf16 : Precision::fp32));
    CHECK(model.isa == (avx512 ? SimdIsa::avx512 : SimdIsa::automatic));
    for (const std::string& note : notes) CHECK(contains(note, "this run was trained with model."));
    if (!bf16) CHECK(contains(notes.back(), "model.precision = bf16; this "));
    if (!bf16) CHECK(contains(notes.back(), "reading it in fp32"));
    if (!avx512) CHECK(contains(notes.front(), "model.isa = avx512; this CPU has " + supported_isas()));

    FastConfig plain = default_config().fast;  // nothing to change: no note
    CHECK(make_portable(plain).empty());
    CHECK(plain.precision == Precision::fp32);
    CHECK(plain.isa == SimdIsa::automatic);
}

TEST_CASE("run config: a config.toml of another CPU loads; --set still asks for what it names") {
    const fs::path dir = fs::path(RF_BINARY_DIR) / "test_runs" / "run_config";
    fs::create_directories(dir);
    Config trained = default_config();
    trained.fast.precision = Precision::bf16;  // as train wrote it on a CPU with AVX512_BF16
    trained.fast.isa = SimdIsa::avx512;
    trained.train.steps = 7;
    const std::string path = (dir / "config.toml").string();
    std::ofstream(path) << to_toml(trained);
    std::vector<std::string> notes;
    const Config read = load_run_config(path, {}, &notes);
    CHECK(read.train.steps == 7);
    CHECK(model_signature(read) == model_signature(trained));  // the same model
    if (!bf16_unavailable().empty()) {
        CHECK(read.fast.precision == Precision::fp32);
        CHECK(contains(error_of([&] { load_run_config(path, {"model.precision=bf16"}, &notes); }),
                       "model.precision = bf16"));
    }
    if (!cpu_supports(SimdIsa::avx512))
        CHECK(contains(error_of([&] { load_run_config(path, {"model.isa=avx512"}, &notes); }),
                       "model.isa = avx512: this CPU lacks it"));
    // The rules that are not about this CPU still hold.
    CHECK(contains(error_of([&] { load_run_config(path, {"model.hidden=0"}, &notes); }),
                   "model.hidden"));
}
