// Tests for the whole model — parity with an independent PyTorch reference, the llm.c way.
//
// Fixtures in tests/reference/ (docs/testing.md says how to regenerate them):
//   init.safetensors            written by OUR C++ (the skipped case at the bottom): the initial
//                               weights under HF names plus a fixed batch (ids, labels)
//   parity_<scheme>.safetensors written by make_reference.py: PyTorch (float64) logits at the
//                               labelled rows, loss, every parameter gradient, and the losses,
//                               gradient norms and learning rates of 10 AdamW steps
// Each test loads init.safetensors into our float32 model, runs the same computation and
// compares every tensor with the criterion below. Legend: M labelled rows, V vocabulary.
//
// Criterion (fp32 against a float64 reference). Element i of a tensor passes when
//     |ours_i − ref_i| ≤ kRelTol·|ref_i| + kScaleTol·S,   S = max_j |ref_j| over the tensor
// i.e. 1e-4 relative to the element, plus a floor of 1e-5 of the tensor's largest value for
// elements that are near zero only by cancellation (a sum of terms ≫ the result, where float32
// cannot do better than ~1e-7 of the terms). For a gradient S is at least 1 % of the largest
// gradient of the model: a gradient that is zero in exact arithmetic (the key bias's without
// RoPE — softmax ignores a constant added to a row of scores — is ~1e-17 in float64 and ~1e-9
// in float32) has no scale of its own, so it is held to 1e-7 of the model's gradients.
// A table per tensor prints S, the max absolute error, the max relative error (over elements
// ≥ 1e-3·S) and the worst error / allowed ratio (≤ 1 passes).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "io/safetensors.hpp"
#include "model/roformer.hpp"
#include "nn/adamw.hpp"
#include "train/schedule.hpp"

using namespace rf;

namespace {

constexpr double kRelTol = 1e-4;
constexpr double kScaleTol = 1e-5;

std::string reference_path(const std::string& file) {
    return std::string(RF_SOURCE_DIR) + "/tests/reference/" + file;
}

// ---- the comparison ---------------------------------------------------------------------
struct Comparison {
    std::string name;
    double scale = 0, max_abs = 0, max_rel = 0, worst = 0;  // worst = max error / allowed
    bool ok() const { return worst <= 1.0; }
};

double largest_magnitude(const std::vector<float>& v) {
    double m = 0;
    for (float x : v) m = std::max(m, std::abs(double(x)));
    return m;
}

// scale_floor: the least S (see the criterion above)
Comparison compare(const std::string& name, const std::vector<double>& ours,
                   const std::vector<float>& ref, double scale_floor = 0) {
    REQUIRE_MESSAGE(ours.size() == ref.size(),
                    name << ": " << ours.size() << " values, the reference has " << ref.size());
    Comparison c{name};
    c.scale = std::max(largest_magnitude(ref), scale_floor);
    for (size_t i = 0; i < ref.size(); ++i) {
        const double r = ref[i], d = std::abs(ours[i] - r);
        const double allowed = kRelTol * std::abs(r) + kScaleTol * c.scale;
        c.max_abs = std::max(c.max_abs, d);
        if (std::abs(r) >= 1e-3 * c.scale && r != 0)
            c.max_rel = std::max(c.max_rel, d / std::abs(r));
        c.worst = std::max(c.worst, allowed > 0 ? d / allowed : (d > 0 ? INFINITY : 0.0));
        if (!std::isfinite(ours[i])) c.worst = INFINITY;
    }
    return c;
}

std::vector<double> values_of(const Array& a) { return std::vector<double>(a.begin(), a.end()); }

void print(const Comparison& c) {
    std::printf("  %-58s S %.3e  abs %.2e  rel %.2e  err/tol %.3f%s\n", c.name.c_str(), c.scale,
                c.max_abs, c.max_rel, c.worst, c.ok() ? "" : "  <-- MISMATCH");
}

// ---- the fixed set-up: config from metadata, weights and batch from init.safetensors ------
const SafetensorsFile& init_file() {
    static const SafetensorsFile file = read_safetensors(reference_path("init.safetensors"));
    return file;
}

std::string meta(const SafetensorsFile& f, const std::string& key) {
    const auto it = f.metadata.find(key);
    if (it == f.metadata.end()) throw std::runtime_error("fixture metadata has no '" + key + "'");
    return it->second;
}
double meta_number(const SafetensorsFile& f, const std::string& key) {
    return std::stod(meta(f, key));
}
size_t meta_size(const SafetensorsFile& f, const std::string& key) {
    return static_cast<size_t>(std::stoull(meta(f, key)));
}

struct Setup {
    ModelConfig model;
    PositionConfig position;
    TrainConfig train;
    size_t batch = 0, seq_len = 0;
    std::vector<int> ids, labels;
};

// Everything make_reference.py used, read back from the fixture's own metadata.
Setup setup_from(const SafetensorsFile& f) {
    Setup s;
    s.model.vocab_size = meta_size(f, "model.vocab_size");
    s.model.hidden = meta_size(f, "model.hidden");
    s.model.num_heads = meta_size(f, "model.num_heads");
    s.model.num_layers = meta_size(f, "model.num_layers");
    s.model.ffn = meta_size(f, "model.ffn");
    s.model.layer_norm_eps = meta_number(f, "model.layer_norm_eps");
    s.model.dropout = s.model.attention_dropout = 0.0;
    s.position.scheme = meta(f, "position.scheme");
    s.position.pairing = meta(f, "position.pairing");
    s.position.rotate_values = meta(f, "position.rotate_values") == "true";
    s.position.base = meta_number(f, "position.base");
    s.position.max_positions = meta_size(f, "position.max_positions");
    s.position.sinusoidal_scale = meta_number(f, "position.sinusoidal_scale");
    s.train.steps = meta_size(f, "train.steps");
    s.train.lr = meta_number(f, "train.lr");
    s.train.min_lr_ratio = meta_number(f, "train.min_lr_ratio");
    s.train.warmup_steps = meta_size(f, "train.warmup_steps");
    s.train.schedule = meta(f, "train.schedule");
    s.train.beta1 = meta_number(f, "train.beta1");
    s.train.beta2 = meta_number(f, "train.beta2");
    s.train.eps = meta_number(f, "train.eps");
    s.train.weight_decay = meta_number(f, "train.weight_decay");
    s.train.grad_clip = meta_number(f, "train.grad_clip");
    s.batch = meta_size(f, "data.batch_size");
    s.seq_len = meta_size(f, "data.seq_len");
    for (float v : f.at("batch.input_ids").data) s.ids.push_back(int(v));
    for (float v : f.at("batch.labels").data) s.labels.push_back(int(v));
    return s;
}

// The model of `s`, with every parameter copied from init.safetensors by name.
std::unique_ptr<RoFormerMLM> build_model(const Setup& s) {
    auto model = std::make_unique<RoFormerMLM>(s.model, s.position, 1);
    for (const NamedParameter& p : model->parameters()) {
        Tensor t = p.tensor;
        copy_into(init_file().at(t.name(), "tests/reference/init.safetensors"), t);
    }
    return model;
}

// One forward + backward; every comparison of logits, loss and gradients (in parameter order).
std::vector<Comparison> forward_backward_comparisons(RoFormerMLM& model, const Setup& s,
                                                     const SafetensorsFile& ref,
                                                     const std::string& corrupt_grad = "") {
    for (const NamedParameter& p : model.parameters()) Tensor(p.tensor).zero_grad();
    MlmOutput out = model.forward(s.ids, s.labels, s.batch, s.seq_len, false);
    out.loss.backward();
    std::vector<Comparison> result;
    result.push_back(compare("logits", values_of(out.logits.value()), ref.at("logits").data));
    result.push_back(compare("loss", {double(out.loss.item())}, ref.at("loss").data));
    double largest_gradient = 0;
    for (const NamedParameter& p : model.parameters())
        largest_gradient =
            std::max(largest_gradient, largest_magnitude(ref.at("grad." + p.tensor.name()).data));
    for (const NamedParameter& p : model.parameters()) {
        Tensor t = p.tensor;
        std::vector<double> g = values_of(t.grad());
        const NamedTensor& r = ref.at("grad." + t.name(), "the parity fixture");
        if (t.name() == corrupt_grad) {  // the can-it-fail test: one element off by 1 %
            size_t i = 0;
            for (size_t j = 0; j < r.data.size(); ++j)
                if (std::abs(r.data[j]) > std::abs(r.data[i])) i = j;
            g[i] *= 1.01;
        }
        result.push_back(compare("grad." + t.name(), g, r.data, 1e-2 * largest_gradient));
    }
    return result;
}

SafetensorsFile load_fixture(const std::string& scheme) {
    return read_safetensors(reference_path("parity_" + scheme + ".safetensors"));
}

void check_forward_backward(const std::string& scheme) {
    const SafetensorsFile ref = load_fixture(scheme);
    const Setup s = setup_from(ref);
    auto model = build_model(s);
    std::printf("parity %s (%s): forward + backward vs %s\n", scheme.c_str(),
                model->position().name().c_str(), meta(ref, "reference").c_str());
    const std::vector<Comparison> all = forward_backward_comparisons(*model, s, ref);
    // Same parameter set on both sides: PyTorch has no gradient we do not compare.
    size_t reference_gradients = 0;
    for (const NamedTensor& t : ref.tensors) reference_gradients += t.name.rfind("grad.", 0) == 0;
    CHECK(reference_gradients == model->parameters().size());
    CHECK(all.size() == 2 + model->parameters().size());
    for (const Comparison& c : all) {
        print(c);
        CHECK_MESSAGE(c.ok(), scheme << ": " << c.name << " differs from PyTorch: max abs "
                                     << c.max_abs << ", max rel " << c.max_rel << ", err/tol "
                                     << c.worst);
    }
}

// The trainer's loop order: forward → zero_grad → backward → clip → lr_at(step) → step.
struct Trajectory {
    std::vector<double> losses, grad_norms, lrs;  // losses has one more: after the last update
};

// lr_shift: ask the schedule for step + lr_shift (only the can-fail test sets it).
Trajectory run_adamw(RoFormerMLM& model, const Setup& s, size_t lr_shift = 0) {
    AdamW optimizer(model.parameters(),
                    AdamWOptions{s.train.beta1, s.train.beta2, s.train.eps, s.train.weight_decay});
    Trajectory t;
    for (size_t step = 0; step < s.train.steps; ++step) {
        MlmOutput out = model.forward(s.ids, s.labels, s.batch, s.seq_len, true);
        t.losses.push_back(out.loss.item());
        optimizer.zero_grad();
        out.loss.backward();
        t.grad_norms.push_back(optimizer.clip_grad_norm(s.train.grad_clip));
        t.lrs.push_back(lr_at(step + lr_shift, s.train));
        optimizer.step(t.lrs.back());
    }
    NoGradGuard no_grad;
    t.losses.push_back(model.forward(s.ids, s.labels, s.batch, s.seq_len, false).loss.item());
    return t;
}

void check_adamw(const std::string& scheme) {
    const SafetensorsFile ref = load_fixture(scheme);
    const Setup s = setup_from(ref);
    auto model = build_model(s);
    const Trajectory t = run_adamw(*model, s);
    std::printf("parity %s: %zu AdamW steps (clip %g, lr %g, %zu warmup, %s)\n", scheme.c_str(),
                s.train.steps, s.train.grad_clip, s.train.lr, s.train.warmup_steps,
                s.train.schedule.c_str());
    for (size_t i = 0; i < t.losses.size(); ++i)
        std::printf("    loss[%2zu]  ours %.7f  torch %.7f\n", i, t.losses[i],
                    double(ref.at("adamw.loss").data.at(i)));
    for (const Comparison& c :
         {compare("adamw.loss", t.losses, ref.at("adamw.loss").data),
          compare("adamw.grad_norm", t.grad_norms, ref.at("adamw.grad_norm").data),
          compare("adamw.lr", t.lrs, ref.at("adamw.lr").data)}) {
        print(c);
        CHECK_MESSAGE(c.ok(), scheme << ": " << c.name << " differs from PyTorch: max abs "
                                     << c.max_abs << ", err/tol " << c.worst);
    }
}

}  // namespace

// The seven schemes make_reference.py writes; a missing fixture fails (read_safetensors throws).
#define RF_PARITY_CASES(scheme)                                                       \
    TEST_CASE("parity " scheme ": logits, loss and every gradient match PyTorch") {   \
        check_forward_backward(scheme);                                               \
    }                                                                                 \
    TEST_CASE("parity " scheme ": 10 AdamW steps follow PyTorch's loss trajectory") { \
        check_adamw(scheme);                                                          \
    }
RF_PARITY_CASES("rope_interleaved")
RF_PARITY_CASES("rope_half")
RF_PARITY_CASES("rope_values")
RF_PARITY_CASES("sinusoidal")
RF_PARITY_CASES("learned")
RF_PARITY_CASES("none")
RF_PARITY_CASES("alibi")
#undef RF_PARITY_CASES

TEST_CASE("parity can fail: a corrupted weight, gradient or schedule step is detected") {
    const SafetensorsFile ref = load_fixture("rope_interleaved");
    const Setup s = setup_from(ref);
    auto count_failures = [](const std::vector<Comparison>& all, std::string* first) {
        size_t n = 0;
        for (const Comparison& c : all)
            if (!c.ok() && n++ == 0 && first) *first = c.name;
        return n;
    };
    {  // the untouched model passes (so the failures below are caused by the corruption)
        auto model = build_model(s);
        CHECK(count_failures(forward_backward_comparisons(*model, s, ref), nullptr) == 0);
    }
    SUBCASE("one weight element 1e-3 off") {
        auto model = build_model(s);
        for (const NamedParameter& p : model->parameters())
            if (p.tensor.name() == "roformer.encoder.layer.1.attention.self.key.weight")
                Tensor(p.tensor).data()[5] += Real(1e-3);
        std::string first;
        const size_t failures =
            count_failures(forward_backward_comparisons(*model, s, ref), &first);
        MESSAGE("a 1e-3 change in one key weight makes "
                << failures << " tensors mismatch (first: " << first << ")");
        CHECK(failures > 0);
    }
    SUBCASE("one gradient element 1 % off") {
        auto model = build_model(s);
        const std::string target = "roformer.encoder.layer.0.intermediate.dense.weight";
        std::vector<Comparison> all = forward_backward_comparisons(*model, s, ref, target);
        std::string first;
        CHECK(count_failures(all, &first) == 1);
        CHECK(first == "grad." + target);
    }
    SUBCASE("the schedule one step ahead changes the loss trajectory") {
        auto model = build_model(s);
        const Trajectory t = run_adamw(*model, s, 1);
        const Comparison c = compare("adamw.loss", t.losses, ref.at("adamw.loss").data);
        MESSAGE("lr_at(step + 1): loss trajectory err/tol " << c.worst);
        CHECK(!c.ok());
    }
}

// ---- the fixture writer (run by hand, never by ctest) --------------------------------------
// build/tests/test_roformer -tc="parity: write*" --no-skip
// writes tests/reference/init.safetensors; then run make_reference.py (docs/testing.md).
// Weights: our own initialiser with init_std 0.2 (so attention is far from uniform and the
// position schemes matter), a learned-position model so the file holds every tensor any
// scheme needs, and every bias / LayerNorm γ, β moved off its 0 / 1 start so no parameter
// is trivially zero. Batch: B sequences of T random tokens, 4 labelled positions each.
TEST_CASE("parity: write tests/reference/init.safetensors (by hand, --no-skip)" * doctest::skip()) {
    const uint64_t seed = 20240605;
    ModelConfig mc;
    mc.vocab_size = 37;
    mc.hidden = 32;
    mc.num_heads = 2;
    mc.num_layers = 2;
    mc.ffn = 64;
    mc.init_std = 0.2;
    PositionConfig pc;
    pc.scheme = "learned";
    pc.max_positions = 20;  // > T: rows T … 19 must get exactly zero gradient
    const size_t B = 4, T = 16, labelled_per_row = 4;
    RoFormerMLM model(mc, pc, seed);

    Rng rng(seed + 1);
    std::vector<NamedTensor> tensors;
    for (const NamedParameter& p : model.parameters()) {
        Tensor t = p.tensor;
        const std::string& name = t.name();
        const bool is_gamma =
            name.size() > 16 && name.substr(name.size() - 16) == "LayerNorm.weight";
        Real* v = t.data();
        for (size_t i = 0; i < t.numel(); ++i) {
            if (is_gamma)
                v[i] = Real(1.0 + 0.1 * rng.normal());
            else if (t.dim() == 1)
                v[i] = Real(0.1 * rng.normal());
            else if (name == "roformer.embeddings.position_embeddings.weight")
                v[i] *= Real(10);
        }
        tensors.push_back(to_named_tensor(t));
    }
    std::vector<float> ids(B * T), labels(B * T, -100.0f);
    for (size_t b = 0; b < B; ++b) {
        for (size_t t = 0; t < T; ++t) ids[b * T + t] = float(5 + rng.below(mc.vocab_size - 5));
        for (size_t k = 0; k < labelled_per_row;) {
            const size_t i = b * T + rng.below(T);
            if (labels[i] != -100.0f) continue;
            labels[i] = ids[i];
            if (k++ > 0) ids[i] = 4.0f;  // [MASK]; the first stays visible (BERT's 10 % case)
        }
    }
    tensors.push_back({"batch.input_ids", {B, T}, ids});
    tensors.push_back({"batch.labels", {B, T}, labels});

    auto num = [](double v) {
        std::ostringstream s;
        s.precision(17);
        s << v;
        return s.str();
    };
    std::map<std::string, std::string> m = {
        {"format", "roformer-cpp parity init"},
        {"written_by", "tests/test_parity.cpp: test_roformer -tc=\"parity: write*\" --no-skip"},
        {"seed", std::to_string(seed)},
        {"model.vocab_size", std::to_string(mc.vocab_size)},
        {"model.hidden", std::to_string(mc.hidden)},
        {"model.num_heads", std::to_string(mc.num_heads)},
        {"model.num_layers", std::to_string(mc.num_layers)},
        {"model.ffn", std::to_string(mc.ffn)},
        {"model.layer_norm_eps", num(mc.layer_norm_eps)},
        {"position.base", num(pc.base)},
        {"position.max_positions", std::to_string(pc.max_positions)},
        {"data.batch_size", std::to_string(B)},
        {"data.seq_len", std::to_string(T)},
        {"train.steps", "10"},
        {"train.lr", "0.01"},
        {"train.min_lr_ratio", "0.1"},
        {"train.warmup_steps", "3"},
        {"train.schedule", "cosine"},
        {"train.beta1", "0.9"},
        {"train.beta2", "0.98"},
        {"train.eps", "1e-06"},
        {"train.weight_decay", "0.01"},
        {"train.grad_clip", "1"},
    };
    write_safetensors(reference_path("init.safetensors"), tensors, m);
    MESSAGE("wrote " << reference_path("init.safetensors"));
}
