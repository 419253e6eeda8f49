// Tests for stage 7 — config: defaults, TOML files, --set overrides, errors naming the key,
// to_toml round trip, the shipped presets; and the learning-rate schedule.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>

#include "config/config.hpp"
#include "error_of.hpp"
#include "fast/onednn_bf16_products.hpp"
#include "fast/onednn_products.hpp"
#include "train/schedule.hpp"

namespace {

using rf::testing::contains;
using rf::testing::error_of;

namespace fs = std::filesystem;

// A fresh file under the build tree holding `text`; returns its path.
std::string write_temp(const std::string& file_name, const std::string& text) {
    const fs::path dir = fs::path(RF_BINARY_DIR) / "test_tmp" / "config";
    fs::create_directories(dir);
    const fs::path path = dir / file_name;
    std::ofstream(path) << text;
    return path.string();
}

std::string validate_error(const std::vector<std::string>& overrides) {
    return error_of([&] { rf::load_config(std::nullopt, overrides); });
}

}  // namespace

TEST_CASE("config: defaults are the documented values and validate") {
    const rf::Config c = rf::default_config();
    CHECK(c.model.vocab_size == 0);
    CHECK(c.model.hidden == 128);
    CHECK(c.model.num_heads == 4);
    CHECK(c.model.num_layers == 4);
    CHECK(c.model.ffn == 512);
    CHECK(c.model.layer_norm_eps == 1e-12);
    CHECK(c.position.scheme == rf::PositionKind::rope);
    CHECK(c.data.path == "data/kjv.txt");
    CHECK(c.data.tokenizer == "bpe");
    CHECK(c.data.mask_prob == 0.15);
    CHECK(c.train.schedule == rf::Schedule::cosine);
    CHECK(c.train.weight_decay == 0.01);
    CHECK_NOTHROW(rf::validate(c));
    CHECK(rf::load_config(std::nullopt) == c);
}

TEST_CASE("config: a TOML file changes only its keys; --set wins over the file") {
    const std::string path = write_temp("override.toml",
                                        "# comment\n"
                                        "[model]\nhidden = 64\nnum_heads = 2\n"
                                        "[position]\nscheme = \"learned\"\nmax_positions = 256\n"
                                        "[train]\nlr = 3e-4\nsteps = 50\nweight_decay = 0\n");
    const rf::Config c = rf::load_config(path);
    CHECK(c.model.hidden == 64);
    CHECK(c.model.num_heads == 2);
    CHECK(c.position.scheme == rf::PositionKind::learned);
    CHECK(c.position.max_positions == 256);
    CHECK(c.train.lr == 3e-4);
    CHECK(c.train.steps == 50);
    CHECK(c.train.weight_decay == 0.0);  // an integer is accepted for a float key
    // untouched keys keep their defaults
    const rf::Config d = rf::default_config();
    CHECK(c.model.num_layers == d.model.num_layers);
    CHECK(c.data.seq_len == d.data.seq_len);
    CHECK(c.train.beta2 == d.train.beta2);

    const rf::Config o = rf::load_config(
        path, {"train.lr=1e-2", "model.hidden = 96", "data.path=some dir/x.txt",
               "data.tokenizer=\"char\"", "position.max_positions=1024", "train.steps=7"});
    CHECK(o.train.lr == 1e-2);
    CHECK(o.model.hidden == 96);
    CHECK(o.data.path == "some dir/x.txt");  // bare string
    CHECK(o.data.tokenizer == "char");       // quoted string
    CHECK(o.position.max_positions == 1024);
    CHECK(o.train.steps == 7);
    CHECK(o.model.num_heads == 2);  // from the file
    // the last --set of a key wins
    CHECK(rf::load_config(path, {"train.steps=3", "train.steps=4"}).train.steps == 4);
}

TEST_CASE("config: unknown keys and tables are errors naming the key") {
    const std::string path = write_temp("typo.toml", "[train]\nlr = 1e-3\nlrr = 1e-3\n");
    std::string msg = error_of([&] { rf::load_config(path); });
    CHECK(contains(msg, "unknown key 'train.lrr'"));
    CHECK(contains(msg, path));
    CHECK(contains(msg, "line 3"));
    CHECK(contains(msg, "did you mean 'train.lr'"));
    CHECK(contains(msg, "warmup_steps"));  // the known keys are listed

    msg = error_of([&] { rf::load_config(write_temp("table.toml", "[trian]\nlr = 1\n")); });
    CHECK(contains(msg, "trian"));
    CHECK(contains(msg, "known tables"));

    msg = error_of([&] { rf::load_config(write_temp("top.toml", "lr = 1\n")); });
    CHECK(contains(msg, "'lr'"));

    msg = validate_error({"model.hiden=64"});
    CHECK(contains(msg, "model.hiden"));
    CHECK(contains(msg, "--set"));
    msg = validate_error({"train.lr"});  // no '='
    CHECK(contains(msg, "train.lr"));
    msg = validate_error({"lr=1"});  // no table
    CHECK(contains(msg, "lr=1"));
}

TEST_CASE("config: wrong types are errors naming the key and the type") {
    std::string msg =
        error_of([&] { rf::load_config(write_temp("type.toml", "[train]\nsteps = \"abc\"\n")); });
    CHECK(contains(msg, "train.steps must be an integer, got string"));
    msg = error_of([&] { rf::load_config(write_temp("type2.toml", "[train]\nsteps = 1.5\n")); });
    CHECK(contains(msg, "train.steps must be an integer, got float"));
    msg =
        error_of([&] { rf::load_config(write_temp("type3.toml", "[model]\ndropout = \"x\"\n")); });
    CHECK(contains(msg, "model.dropout must be a number"));
    msg = error_of([&] { rf::load_config(write_temp("type4.toml", "[data]\npath = 3\n")); });
    CHECK(contains(msg, "data.path must be a string, got integer"));
    msg = error_of([&] { rf::load_config(write_temp("type5.toml", "model = 3\n")); });
    CHECK(contains(msg, "'model' must be a table"));

    CHECK(contains(validate_error({"train.steps=abc"}), "train.steps must be an integer"));
    CHECK(
        contains(validate_error({"train.steps=-5"}), "train.steps must be a non-negative integer"));
    CHECK(contains(validate_error({"position.rotate_values=3"}),
                   "position.rotate_values must be true or false"));
    CHECK(contains(validate_error({"train.lr=fast"}), "train.lr must be a number"));
}

TEST_CASE("config: inconsistent values are errors naming the key") {
    CHECK(contains(validate_error({"model.hidden=130"}), "model.hidden"));
    CHECK(contains(validate_error({"model.hidden=130"}), "model.num_heads"));
    // head size 12/4 = 3 is odd: RoPE rotates pairs
    const std::string odd = validate_error({"model.hidden=12", "model.ffn=12"});
    CHECK(contains(odd, "position.scheme"));
    CHECK(contains(odd, "even head size"));
    CHECK_NOTHROW(rf::load_config(std::nullopt, {"model.hidden=12", "position.scheme=alibi"}));
    // ALiBi acts on the T×T scores that linear attention never forms: both keys are named
    const std::string alibi = validate_error({"model.attention=linear", "position.scheme=alibi"});
    CHECK(contains(alibi, "position.scheme"));
    CHECK(contains(alibi, "model.attention"));
    CHECK_NOTHROW(
        rf::load_config(std::nullopt, {"model.attention=linear", "position.scheme=none"}));
    // FAVOR+ needs features, an even number of them for RoPE's pairs
    CHECK(contains(validate_error({"model.attention=linear", "model.feature_map=favor",
                                   "model.random_features=0"}),
                   "model.random_features"));
    CHECK(contains(validate_error({"model.attention=linear", "model.feature_map=favor",
                                   "model.random_features=63"}),
                   "even"));
    CHECK(contains(validate_error({"train.objective=mlmx"}), "train.objective"));
    // learned positions have max_positions rows
    const std::string learned =
        validate_error({"position.scheme=learned", "position.max_positions=64", "data.seq_len=65"});
    CHECK(contains(learned, "data.seq_len"));
    CHECK(contains(learned, "position.max_positions"));
    CHECK_NOTHROW(rf::load_config(
        std::nullopt, {"position.scheme=learned", "position.max_positions=64", "data.seq_len=64"}));
    CHECK_NOTHROW(rf::load_config(std::nullopt,  // rope has no table to run out of
                                  {"position.max_positions=64", "data.seq_len=65"}));
    // an embedding width other than hidden: the absolute tables are added at the hidden width
    const std::string narrow =
        validate_error({"model.embedding_size=64", "position.scheme=sinusoidal"});
    CHECK(contains(narrow, "model.embedding_size"));
    CHECK(contains(narrow, "position.scheme"));
    CHECK_NOTHROW(rf::load_config(std::nullopt, {"model.embedding_size=64"}));  // rope
    CHECK_NOTHROW(rf::load_config(std::nullopt, {"model.embedding_size=128",
                                                 "position.scheme=learned"}));  // = hidden
    // a scheme per layer: one entry per layer, softmax attention only
    CHECK(contains(validate_error({"position.layer_schemes=rope,none"}), "model.num_layers"));
    CHECK(contains(validate_error({"position.layer_schemes=rope,rope,rope,none",
                                   "model.attention=linear"}),
                   "position.layer_schemes"));
    CHECK_NOTHROW(rf::load_config(std::nullopt, {"position.layer_schemes=rope,rope,rope,none"}));
    // non-positive sizes
    CHECK(contains(validate_error({"model.type_vocab_size=0"}), "model.type_vocab_size"));
    for (const char* key : {"model.hidden", "model.num_heads", "model.num_layers", "model.ffn",
                            "data.seq_len", "data.val_windows", "train.batch_size", "train.steps"})
        CHECK(contains(validate_error({std::string(key) + "=0"}), key));
    // learning rate
    CHECK(contains(validate_error({"train.lr=0"}), "train.lr"));
    CHECK(contains(validate_error({"train.lr=-1e-3"}), "train.lr"));
    CHECK(contains(validate_error({"train.lr=nan"}), "train.lr"));
    // enumerations
    const std::string schedule = validate_error({"train.schedule=cosin"});
    CHECK(contains(schedule, "train.schedule"));
    CHECK(contains(schedule, "cosine, linear, constant"));
    CHECK(contains(validate_error({"data.tokenizer=word"}), "data.tokenizer"));
    CHECK(contains(validate_error({"position.scheme=xpos"}), "position.scheme"));
    // probabilities
    for (const char* value : {"0", "1", "1.5", "-0.1"})
        CHECK(contains(validate_error({std::string("data.mask_prob=") + value}), "data.mask_prob"));
    CHECK(contains(validate_error({"model.dropout=1"}), "model.dropout"));
    CHECK(contains(validate_error({"train.beta2=1"}), "train.beta2"));
    CHECK(contains(validate_error({"train.min_lr_ratio=1.5"}), "train.min_lr_ratio"));
    CHECK(contains(validate_error({"train.weight_decay=-0.1"}), "train.weight_decay"));
}

TEST_CASE("config: missing file and malformed TOML are errors with the place") {
    const std::string missing = (fs::path(RF_BINARY_DIR) / "no_such_config.toml").string();
    std::string msg = error_of([&] { rf::load_config(missing); });
    CHECK(contains(msg, missing));
    CHECK(contains(msg, "not found"));

    const std::string bad = write_temp("bad.toml", "[model]\nhidden = 64\nnum_heads = = 2\n");
    msg = error_of([&] { rf::load_config(bad); });
    CHECK(contains(msg, bad + ":3:"));  // path:line:column from the parser
    CHECK(contains(msg, "malformed TOML"));
}

TEST_CASE("config: to_toml lists every key and loads back to an identical Config") {
    // Every key changed from its default, including floats that need all 17 digits.
    const std::vector<std::string> overrides = {
        "model.vocab_size=777",
        "model.hidden=96",
        "model.embedding_size=96",  // = hidden: position.scheme = learned below needs it
        "model.type_vocab_size=3",
        "model.num_heads=6",
        "model.num_layers=3",
        "model.ffn=300",
        "model.dropout=0.1",
        "model.attention_dropout=0.30000000000000004",
        "model.layer_norm_eps=1e-5",
        "model.init_std=0.017",
        "model.fused=false",
        "position.scheme=learned",
        "position.max_positions=1024",
        "data.path=dir with \"quotes\"\\and backslash/ü.txt",
        "data.tokenizer=char",
        "data.vocab_size=1234",
        "data.seq_len=100",
        "data.validation_fraction=0.123456789",
        "data.val_windows=17",
        "train.objective=clm",
        "train.seed=42",
        "train.batch_size=5",
        "train.steps=99",
        "train.lr=3.3e-4",
        "train.min_lr_ratio=0",
        "train.warmup_steps=7",
        "train.schedule=linear",
        "train.beta1=0.8",
        "train.beta2=0.999",
        "train.eps=1e-8",
        "train.weight_decay=0.05",
        "train.grad_clip=0.5",
        "train.eval_every=11",
        "train.eval_batches=3",
        "train.log_every=2",
        "train.threads=2",
        "train.checkpoint_every=13"};
    // The RoPE variants' keys cannot all leave their defaults in one valid config (scaling is
    // refused with a learned table and with interpolation_factor, xpos with linear attention,
    // every RoPE key where no layer rotates — the learned scheme above —, xpos with
    // learned_frequencies, per-layer schemes with a learned table): they round-trip in rope
    // configs of their own. So do the keys that act only under a setting of their own (a key
    // away from its default where it changes nothing is refused: config/validate_effects.hpp).
    const std::vector<std::vector<std::string>> variant_overrides = {
        {"train.objective=clm", "position.scaling=yarn", "position.scaling_factor=3.5",
         "position.original_max_positions=48", "position.yarn_beta_fast=16",
         "position.yarn_beta_slow=2", "position.yarn_attention_factor=1.1", "position.xpos=true",
         "position.xpos_gamma=0.3", "position.xpos_scale_base=256"},
        {"position.scaling=llama3", "position.scaling_factor=2",
         "position.original_max_positions=64", "position.low_freq_factor=0.5",
         "position.high_freq_factor=3"},
        {"position.learned_frequencies=true", "position.layer_schemes=rope, none,rope,rope",
         "position.rotary_fraction=0.5"},
        {"position.interpolation_factor=2.5", "position.ntk_factor=1.25", "position.rope_p=0.5",
         "position.pairing=half", "position.base=500000",
         "position.rotate_values=true"},  // RoPE's, not learned's
        // oneDNN's products need the fast path and a build with oneDNN (openblas, away from
        // the default auto, needs neither), bf16 products oneDNN's and a CPU with AVX512_BF16
        {std::string("model.products=") + (rf::onednn_built() ? "onednn" : "openblas"),
         std::string("model.precision=") + (rf::bf16_unavailable().empty() ? "bf16" : "fp32")},
        // linear attention's keys; rope_placement is read by linear attention only
        {"model.attention=linear", "model.feature_map=favor", "model.random_features=32",
         "position.rope_placement=before_feature_map"},
        // the fast path's instructions (sse2: every x86-64 CPU has it), a masked LM's share
        {"model.isa=sse2", "data.mask_prob=0.2"},
        {"position.scheme=sinusoidal", "position.sinusoidal_scale=0.25"}};
    std::set<std::string> covered;  // the lists cover every key
    for (const std::string& o : overrides) covered.insert(o.substr(0, o.find('=')));
    for (const std::vector<std::string>& variant : variant_overrides)
        for (const std::string& o : variant) covered.insert(o.substr(0, o.find('=')));
    CHECK(covered.size() == rf::config_keys().size());
    for (const std::vector<std::string>& variant : variant_overrides) {
        const rf::Config v = rf::load_config(std::nullopt, variant);
        CHECK(v != rf::default_config());
        CHECK(rf::load_config(write_temp("variant.toml", rf::to_toml(v))) == v);
    }
    const rf::Config c = rf::load_config(std::nullopt, overrides);
    CHECK(c != rf::default_config());

    const std::string text = rf::to_toml(c);
    for (const std::string& key : rf::config_keys())
        CHECK_MESSAGE(contains(text, "\n" + key.substr(key.find('.') + 1) + " = "), key);
    const rf::Config back = rf::load_config(write_temp("resolved.toml", text));
    CHECK(back == c);
    // spot checks by hand, independent of operator==
    CHECK(back.model.attention_dropout == 0.1 + 0.2);
    CHECK(back.data.path == "dir with \"quotes\"\\and backslash/ü.txt");
    CHECK(back.position.max_positions == 1024);
    CHECK(back.train.lr == 3.3e-4);
    CHECK(back.data.validation_fraction == 0.123456789);
    CHECK(back.train.checkpoint_every == 13);
    CHECK(rf::to_toml(back) == text);

    // defaults round-trip too, and operator== sees a single changed key
    const rf::Config d = rf::default_config();
    CHECK(rf::load_config(write_temp("defaults.toml", rf::to_toml(d))) == d);
    rf::Config e = d;
    e.train.eps = 1.0000001e-6;
    CHECK(e != d);
}

TEST_CASE("config: the shipped presets load and validate") {
    for (const char* name : {"tiny", "classroom", "bench"}) {
        const std::string path = std::string(RF_SOURCE_DIR) + "/configs/" + name + ".toml";
        CAPTURE(path);
        CHECK_NOTHROW(rf::load_config(path));
    }
    const rf::Config tiny = rf::load_config(std::string(RF_SOURCE_DIR) + "/configs/tiny.toml");
    CHECK(tiny.model.hidden == 64);
    CHECK(tiny.train.steps == 200);
    const rf::Config bench = rf::load_config(std::string(RF_SOURCE_DIR) + "/configs/bench.toml");
    CHECK(bench.data.vocab_size == 2048);
    CHECK(bench.model.num_layers == 4);
    CHECK(bench.data.seq_len == 128);
    CHECK(bench.train.batch_size == 32);
}

// ---- the learning-rate schedule -------------------------------------------------------------
TEST_CASE("schedule: linear warmup to the peak, then decay to min_lr") {
    rf::TrainConfig t;
    t.lr = 2e-3;
    t.min_lr_ratio = 0.1;
    t.warmup_steps = 10;
    t.steps = 110;
    const double floor = 2e-4;
    for (const rf::Schedule schedule : {rf::Schedule::cosine, rf::Schedule::linear}) {
        CAPTURE(std::string(rf::enum_name(schedule)));
        t.schedule = schedule;
        CHECK(rf::lr_at(0, t) == doctest::Approx(2e-4));  // 1/10 of the peak: near zero
        for (size_t s = 0; s < 10; ++s)                   // linear: lr·(s+1)/W
            CHECK(rf::lr_at(s, t) == doctest::Approx(2e-3 * double(s + 1) / 10.0));
        CHECK(rf::lr_at(9, t) == doctest::Approx(2e-3));  // peak at the end of warmup
        for (size_t s = 10; s < 110; ++s) CHECK(rf::lr_at(s, t) <= rf::lr_at(s - 1, t));
        CHECK(rf::lr_at(109, t) == doctest::Approx(floor));  // the last update runs at min_lr
        CHECK(rf::lr_at(500, t) == doctest::Approx(floor));  // clamped past the end
        // halfway through the decay (t = W + 50 of 100): both schedules are at the midpoint
        CHECK(rf::lr_at(59, t) == doctest::Approx((2e-3 + floor) / 2));
    }
    // a quarter of the way: cosine is above linear (cos(π/4) ≈ 0.7071)
    t.schedule = rf::Schedule::cosine;
    CHECK(rf::lr_at(34, t) == doctest::Approx(floor + (2e-3 - floor) * 0.5 * (1 + std::sqrt(0.5))));
    t.schedule = rf::Schedule::linear;
    CHECK(rf::lr_at(34, t) == doctest::Approx(2e-3 - (2e-3 - floor) * 0.25));
    t.schedule = rf::Schedule::constant;
    CHECK(rf::lr_at(4, t) == doctest::Approx(1e-3));
    for (size_t s = 9; s < 200; ++s) CHECK(rf::lr_at(s, t) == doctest::Approx(2e-3));
    // no warmup: the very first update is already (almost) at the peak
    t.schedule = rf::Schedule::cosine;
    t.warmup_steps = 0;
    CHECK(rf::lr_at(0, t) ==
          doctest::Approx(floor + (2e-3 - floor) * 0.5 * (1 + std::cos(M_PI / 110))));
    rf::Config unknown = rf::default_config();  // an unknown schedule is refused when it is read
    CHECK_THROWS_AS(rf::apply_override(unknown, "train.schedule=step"), std::invalid_argument);
}

TEST_CASE("config: a setting that makes a factor non-finite is refused naming its key") {
    // Decoupled weight decay multiplies a weight by 1 − lr·wd per step (Loshchilov & Hutter
    // 2019; nn/adamw.hpp): lr·wd ≥ 1 no longer shrinks it. lr = 1e-3: the limit is wd = 1000.
    const std::string decay = validate_error({"train.lr=1e-3", "train.weight_decay=1000"});
    CHECK(contains(decay, "train.weight_decay = 1000"));
    CHECK(contains(decay, "train.lr = 0.001"));
    CHECK_NOTHROW(rf::load_config(std::nullopt, {"train.lr=1e-3", "train.weight_decay=999"}));
    // YaRN multiplies q and k by a, every score by a²; float32's largest number is
    // 3.4028235e38 (IEEE 754 binary32), so a = 1e20 (a² = 1e40) overflows and 1e19 does not.
    const std::vector<std::string> yarn = {"position.scaling=yarn",
                                           "position.original_max_positions=64"};
    auto with = [&](const std::string& factor) {
        std::vector<std::string> o = yarn;
        o.push_back("position.yarn_attention_factor=" + factor);
        return o;
    };
    CHECK(contains(validate_error(with("1e20")), "position.yarn_attention_factor = 1e+20"));
    CHECK_NOTHROW(rf::load_config(std::nullopt, with("1e19")));
}
