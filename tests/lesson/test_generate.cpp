// Stage 7 — tests: sampling from a causal LM — greedy is the arg-max chain of logits_all,
// seeds decide samples, top-k and temperature do what generate.hpp says, bad options and
// the wrong objective are refused, and streamed text decodes exactly like the whole.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "assembly/swappable_ops_for.hpp"
#include "cli/run_checks.hpp"
#include "config/config.hpp"
#include "data/stream_decode.hpp"
#include "model/generate.hpp"
#include "tiny_model.hpp"

using namespace rf;

namespace {

RoFormer tiny_causal_lm(uint64_t seed = 3) {
    // init_std 0.3: spread-out logits, no near-ties between the top tokens
    ModelConfig m = testing::tiny_model_config(24, 0.3);
    m.causal = true;
    return assembled_model(m, PositionConfig{}, seed);
}

// |observed − expected| within 5 binomial standard deviations
void check_share(size_t hits, size_t trials, double p) {
    const double sd = std::sqrt(p * (1.0 - p) / double(trials));
    CAPTURE(hits);
    CAPTURE(p);
    CHECK(std::abs(double(hits) / double(trials) - p) < 5.0 * sd);
}

SamplingOptions options(double temperature, long long top_k, uint64_t seed = 1,
                        long long max_new_tokens = 12) {
    SamplingOptions o;
    o.temperature = temperature;
    o.top_k = top_k;
    o.seed = seed;
    o.max_new_tokens = max_new_tokens;
    return o;
}

}  // namespace

TEST_CASE("greedy generation is the arg-max chain of logits_all over the last ≤ L tokens") {
    RoFormer model = tiny_causal_lm();
    const std::vector<int> prompt = {7, 12, 5};
    const size_t context = 5;  // shorter than prompt + new tokens: the window slides
    std::vector<int> streamed;
    const std::vector<int> fresh =
        generate(model, prompt, context, options(0.0, 40), [&](int id) { streamed.push_back(id); });
    // by hand
    NoGradGuard no_grad;
    std::vector<int> ids = prompt, expected;
    for (int i = 0; i < 12; ++i) {
        const size_t T = std::min(context, ids.size());
        const std::vector<int> window(ids.end() - long(T), ids.end());
        const Tensor logits = model.logits_all(window, 1, T);
        const Real* last = logits.data() + (T - 1) * 24;
        int best = 0;
        for (int v = 1; v < 24; ++v)
            if (last[v] > last[best]) best = v;
        ids.push_back(best);
        expected.push_back(best);
    }
    CHECK(fresh == expected);
    CHECK(streamed == fresh);  // on_token saw every token, in order
    CHECK(generate(model, prompt, context, options(0.0, 40)) == fresh);      // deterministic
    CHECK(generate(model, prompt, context, options(0.0, 40, 99)) == fresh);  // seed unused
    // top-k 1 is greedy at any temperature
    CHECK(generate(model, prompt, context, options(1.5, 1, 7)) == fresh);
}

TEST_CASE("sampling: the same seed gives the same text, another seed (almost surely) not") {
    RoFormer model = tiny_causal_lm();
    const std::vector<int> prompt = {9, 4};
    const auto a = generate(model, prompt, 8, options(1.0, 0, 1, 40));
    const auto b = generate(model, prompt, 8, options(1.0, 0, 1, 40));
    const auto c = generate(model, prompt, 8, options(1.0, 0, 2, 40));
    CHECK(a.size() == 40);
    CHECK(a == b);
    CHECK(a != c);  // 40 draws from ~24 tokens each: equal with negligible probability
}

TEST_CASE("sample_next_token: ties, top-k and temperature follow the rule of generate.hpp") {
    Rng rng(11);
    const std::vector<Real> tie = {1, 3, 2, 3};
    CHECK(sample_next_token(tie.data(), 4, options(0.0, 0), rng) == 1);  // lowest id on a tie
    CHECK(sample_next_token(tie.data(), 4, options(0.7, 1), rng) == 1);

    // top-k 2 keeps ids 1 and 3 (the two 3s): nothing else is ever drawn, both are
    std::set<int> drawn;
    for (int i = 0; i < 200; ++i)
        drawn.insert(sample_next_token(tie.data(), 4, options(1.0, 2), rng));
    CHECK(drawn == std::set<int>{1, 3});

    // p ∝ exp(z/τ): logits (0, ln 3) give 1/4, 3/4 at τ = 1 and 1/10, 9/10 at τ = 0.5
    const std::vector<Real> two = {0.0f, Real(std::log(3.0))};
    const std::vector<std::pair<double, double>> cases = {{1.0, 0.75}, {0.5, 0.9}};
    for (const auto& [tau, p_second] : cases) {
        size_t second = 0;
        const size_t trials = 4000;
        for (size_t i = 0; i < trials; ++i)
            second += sample_next_token(two.data(), 2, options(tau, 0), rng) == 1;
        check_share(second, trials, p_second);
    }
}

TEST_CASE("bad sampling options and the wrong objective are refused, naming the fix") {
    CHECK_THROWS_WITH_AS(options(0.8, -1).validate(), doctest::Contains("top_k must be ≥ 0"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(options(-0.5, 40).validate(), doctest::Contains("temperature must"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(options(std::nan(""), 40).validate(),
                         doctest::Contains("temperature must"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(options(INFINITY, 40).validate(), doctest::Contains("finite"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(options(0.8, 40, 1, 0).validate(),
                         doctest::Contains("max_new_tokens must be at least 1"),
                         std::invalid_argument);
    CHECK_NOTHROW(options(0.0, 0, 1, 1).validate());  // the edges are allowed

    RoFormer model = tiny_causal_lm();
    CHECK_THROWS_WITH_AS(generate(model, {}, 8, options(0.0, 0)),
                         doctest::Contains("prompt is empty"), std::invalid_argument);

    Config mlm = default_config(), clm = default_config();
    clm.train.objective = data::Objective::clm;
    CHECK_THROWS_WITH_AS(
        cli::require_objective(mlm, "runs/x", data::Objective::clm),
        doctest::Contains("generate needs a causal LM run (train.objective = clm); "
                          "runs/x was trained with mlm — use fill-mask"),
        std::invalid_argument);
    CHECK_THROWS_WITH_AS(cli::require_objective(clm, "runs/y", data::Objective::mlm),
                         doctest::Contains("fill-mask needs a masked LM run"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(cli::require_objective(clm, "runs/y", data::Objective::mlm),
                         doctest::Contains("use generate"), std::invalid_argument);
    CHECK_NOTHROW(cli::require_objective(clm, "runs/y", data::Objective::clm));
    CHECK_NOTHROW(cli::require_objective(mlm, "runs/x", data::Objective::mlm));
}

TEST_CASE("the context of a run: its seq_len, capped by a learned table's rows") {
    Config c = default_config();
    c.data.seq_len = 64;
    RoFormer rope = tiny_causal_lm();
    CHECK(cli::generation_context(c, rope) == 64);
    ModelConfig m = rope.config();
    PositionConfig learned;
    learned.scheme = PositionKind::learned;
    learned.max_positions = 32;
    RoFormer table = assembled_model(m, learned, 1);
    CHECK(cli::generation_context(c, table) == 32);
}

TEST_CASE("streamed decoding: the pieces add up to decode(), multi-byte and merged tokens too") {
    const std::string text = "Zoë said: the café — naïve? the café, the café! ";
    const auto tokenizer = data::train_tokenizer("bpe", text + text, 40);
    const std::vector<int> prompt = tokenizer->encode("Zoë");
    std::vector<int> rest = tokenizer->encode(" said: the café — naïve?");
    rest.push_back(data::kMaskId);  // a literal after a word gets its space from decode()
    rest.push_back(data::kClsId);   // framing prints nothing
    std::vector<int> all = prompt;
    all.insert(all.end(), rest.begin(), rest.end());

    data::StreamDecoder decoder(*tokenizer, prompt);
    std::string streamed;
    for (int id : rest) streamed += decoder.push(id);
    streamed += decoder.finish();
    const std::string whole = tokenizer->decode(all, true);
    CHECK(whole == "Zoë said: the café — naïve? [MASK]");
    CHECK(tokenizer->decode(prompt, true) + streamed == whole);

    CHECK(data::complete_utf8_prefix("ab") == 2);
    CHECK(data::complete_utf8_prefix("ab\xC3") == 2);      // é cut after its lead byte
    CHECK(data::complete_utf8_prefix("ab\xC3\xA9") == 4);  // é complete
    CHECK(data::complete_utf8_prefix("a\xE2\x80") == 1);   // — missing its last byte
    CHECK(data::complete_utf8_prefix("a\xE2\x80\x94") == 4);
    CHECK(data::complete_utf8_prefix("") == 0);
}
