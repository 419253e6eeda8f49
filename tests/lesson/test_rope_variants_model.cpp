// The RoPE variants inside a whole model: learned frequencies saved in model.safetensors and
// loaded back; every variant gives the same logits with model.fused = true and false (the
// ones the fused kernel cannot express opt out of it, the ones it can — YaRN's table — agree).
//
// Legend: B batch, T length, V vocabulary.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "assembly/swappable_ops_for.hpp"
#include "config/config.hpp"
#include "io/safetensors.hpp"
#include "model/roformer.hpp"
#include "tiny_model.hpp"
#include "run/checkpoint.hpp"

using namespace rf;
namespace fs = std::filesystem;

namespace {

const size_t V = 40, B = 2, T = 24;

std::vector<int> ids() {
    std::vector<int> out(B * T);
    for (size_t i = 0; i < out.size(); ++i) out[i] = int(5 + (i * 7) % (V - 5));
    return out;
}

std::vector<Real> logits(const ModelConfig& m, const PositionConfig& p,
                         const FastConfig& fast = {}) {
    RoFormer model = assembled_model(m, p, 3, fast);
    NoGradGuard no_grad;
    const Tensor l = model.logits_all(ids(), B, T);
    return std::vector<Real>(l.data(), l.data() + l.numel());
}

double worst_gap(const std::vector<Real>& a, const std::vector<Real>& b) {
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i)
        worst =
            std::max(worst, std::abs(double(a[i]) - double(b[i])) / (1 + std::abs(double(b[i]))));
    return worst;
}

}  // namespace

TEST_CASE("learned frequencies are saved in model.safetensors and loaded back") {
    const fs::path dir = fs::path(RF_BINARY_DIR) / "test_runs" / "learned_frequencies_checkpoint";
    fs::remove_all(dir);
    fs::create_directories(dir);
    Config config = default_config();
    config.model = testing::tiny_model_config(V);
    config.position = testing::tiny_position_config();
    config.position.learned_frequencies = true;
    RoFormer trained = assembled_model(config.model, config.position, 8);
    Tensor theta = trained.position().parameters().at(0);
    for (size_t i = 0; i < theta.numel(); ++i) theta.data()[i] *= Real(1.5 + 0.1 * i);  // "trained"
    save_checkpoint(dir.string(), trained, config, 5, nullptr);
    const std::string path = (dir / "model.safetensors").string();
    const SafetensorsFile file = read_safetensors(path);
    REQUIRE(file.find("roformer.embeddings.rotary_frequencies") != nullptr);
    CHECK(file.at("roformer.embeddings.rotary_frequencies").data ==
          std::vector<float>(theta.data(), theta.data() + theta.numel()));
    RoFormer loaded = assembled_model(config.model, config.position, 8);
    Tensor fresh = loaded.position().parameters().at(0);
    CHECK(fresh.data()[3] != theta.data()[3]);
    CHECK(load_model_weights(loaded, config, path) == 5);
    for (size_t i = 0; i < theta.numel(); ++i) CHECK(fresh.data()[i] == theta.data()[i]);
}

TEST_CASE("every RoPE variant: the same logits with model.fused = true and false") {
    // init_std 0.5: scores large enough that the positions visibly change the logits
    ModelConfig m = testing::tiny_model_config(V, 0.5);
    m.causal = true;
    std::vector<PositionConfig> variants;
    PositionConfig p = testing::tiny_position_config();
    p.xpos = true;
    p.xpos_scale_base = 8;  // a strong decay over T = 24
    variants.push_back(p);
    p = testing::tiny_position_config();
    p.learned_frequencies = true;
    variants.push_back(p);
    p = testing::tiny_position_config();
    p.rope_p = 0.5;  // p-RoPE: half the pairs turn
    variants.push_back(p);
    for (RopeScaling scaling : {RopeScaling::dynamic_ntk, RopeScaling::yarn, RopeScaling::llama3}) {
        p = testing::tiny_position_config();
        p.scaling = scaling;
        p.scaling_factor = 3;
        p.original_max_positions = 8;  // T = 24 = 3·L₀: dynamic NTK's base has grown
        variants.push_back(p);
    }
    const std::vector<Real> plain = logits(m, testing::tiny_position_config());
    for (const PositionConfig& v : variants) {
        CAPTURE(v.xpos);
        const std::string scaling = enum_name(v.scaling);
        CAPTURE(scaling);
        FastConfig fast;
        fast.fused = true;
        const std::vector<Real> fused = logits(m, v, fast);
        fast.fused = false;
        const std::vector<Real> composed = logits(m, v, fast);
        CHECK(worst_gap(fused, composed) < 1e-5);
        if (!v.learned_frequencies)  // learned θ start at the fixed ones: equal to plain RoPE
            CHECK(worst_gap(composed, plain) > 1e-4);
    }
}
